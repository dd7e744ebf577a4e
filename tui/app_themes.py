"""Themes for ``OpenCLIApp``: the first frame's theme (a quick check of the setting), the theme files
loaded and validated after it, their live reload, and Ctrl+T.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work

from .theme_loader import DEFAULT_DARK, THEME_VARIABLE_DEFAULTS, counterpart, first_frame_theme, load_themes

if TYPE_CHECKING:

    pass


class ThemesMixin:
    """The theme part of ``OpenCLIApp``."""

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Fallbacks for our CSS variables, so built-in Textual themes work too."""
        return dict(THEME_VARIABLE_DEFAULTS)

    # -- themes --------------------------------------------------------------------------------
    def _choose_first_theme(self, wanted: Any) -> None:
        """Set the theme of the first frame, from ``__init__``. Theme files are read by the quick
        check of ``first_frame_theme``; ``_load_themes`` validates them after the paint."""
        wanted = str(wanted or DEFAULT_DARK)
        self._wanted_theme = wanted
        if wanted in self.available_themes:  # a built-in Textual theme
            self._set_theme_before_run(wanted)
            return
        for name in dict.fromkeys((wanted, DEFAULT_DARK)):
            theme = first_frame_theme(name, self.themes_dir)
            if theme is not None:
                self.register_theme(theme)
                self._first_frame_theme = theme.name
                self._set_theme_before_run(theme.name)
                return
        self._set_theme_before_run("textual-dark")

    def _set_theme_before_run(self, name: str) -> None:
        """Make ``name`` (a registered theme) current before the app runs.

        Assigning ``self.theme`` would call Textual's theme watcher, which queues a full CSS
        re-parse; queued before the first parse, it repeats that parse (~20 ms) right after it,
        with the same result. So the value is set without the watcher, and what the watcher
        does besides (textual 8.2.8, pinned): the theme and dark/light classes, the ANSI filter,
        and the CSS variables the first parse will use."""
        self.set_reactive(type(self).theme, name)
        self.stylesheet.set_variables(self.get_css_variables())
        dark = self.current_theme.dark
        classes = {cls: False for cls in self.classes if cls.startswith("-theme-")}
        self.update_classes({**classes, f"-theme-{name}": True, "-dark-mode": dark, "-light-mode": not dark},
                            update=False)
        self._refresh_truecolor_filter(self.ansi_theme)

    def load_themes_after_paint(self) -> None:
        """Validate the theme files after the next paint (``_load_themes``) and start watching
        them (importing watchfiles costs ~30 ms); only the first call does anything."""
        if self._themes_scheduled:
            return
        self._themes_scheduled = True
        self.call_after_refresh(self._load_themes)
        if self.watch_themes:
            self.call_after_refresh(self.watch_theme_files)

    def _load_themes(self) -> None:
        """Load and validate every theme file, register the good ones and report the bad ones.

        Runs after the first paint and again whenever a theme file changes. The first run also
        settles the theme: the wanted one when valid, else our default with a notice."""
        themes, problems = load_themes(self.themes_dir)
        for theme in themes:
            # The same theme again (the first frame's, or a file saved unchanged) keeps its object:
            # a new one under the current name counts as a theme change, and every block drawn
            # with the old one is drawn again (a resumed conversation's markdown, issue 18).
            if self.available_themes.get(theme.name) != theme:
                self.register_theme(theme)
        for problem in problems:
            self.notify(problem, title="Theme file skipped", severity="warning", timeout=8)
        wanted, self._wanted_theme = self._wanted_theme, None
        if wanted is None:  # a reload: show the changed colours
            self.refresh_css(animate=False)
            return
        valid = {theme.name for theme in themes}
        quick, self._first_frame_theme = self._first_frame_theme, None
        rejected = quick is not None and quick not in valid  # reported among the problems
        fallback = DEFAULT_DARK if DEFAULT_DARK in valid else "textual-dark"
        if wanted not in self.available_themes or (rejected and wanted == quick):
            if not rejected:
                self.notify(f"Unknown theme {wanted!r}; using {fallback}.", severity="warning")
            self.theme = fallback
        elif self.theme != wanted:
            self.theme = wanted
        if rejected:
            self.unregister_theme(quick)

    @work(exclusive=True, group="theme-watch")
    async def watch_theme_files(self) -> None:
        """Reload the theme files whenever one changes (runs until the app exits)."""
        try:
            from watchfiles import awatch
        except ImportError:  # optional nicety
            return
        if not self.themes_dir.is_dir():
            return
        async for _changes in awatch(self.themes_dir, debounce=200, recursive=False):
            self._load_themes()

    def action_toggle_theme(self) -> None:
        """Switch between the dark and the light theme."""
        if self._wanted_theme is not None:  # pressed before the theme files were validated
            self._load_themes()
        self._theme_toggled = True  # the user's choice now; the settings no longer override it
        other = counterpart(self.theme, self.current_theme.dark)
        if other not in self.available_themes:
            other = "textual-light" if self.current_theme.dark else "textual-dark"
        self.theme = other
