"""The status bar at the bottom: mode, model, context meter, permission mode, activity, key hints.

Everything shown comes from reactives, so the app only assigns values. The context figures
(``prepared``, ``context_window``, ``used_tokens``, ``context_approximate``) are drawn by the
``ContextMeter`` on the right (tui/widgets/context_meter.py: "~12k/200k ▕█░░░░░░░│░░▏6%",
colour-coded, click for the breakdown); ``context_text`` is the plain summary of them.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Static

KEY_HINTS = "esc cancel · ctrl+o tool · ctrl+t theme · f1 help"


def format_tokens(tokens: int) -> str:
    """Return a compact token count: ``950``, ``12k``, ``1.5k``, ``200k``, ``1M``, ``1.05M``."""
    if tokens < 1000:
        return str(tokens)
    if tokens < 1_000_000:
        value = tokens / 1000
        return f"{value:.1f}k".replace(".0k", "k") if value < 10 else f"{value:.0f}k"
    value = tokens / 1_000_000
    return f"{value:.2f}".rstrip("0").rstrip(".") + "M"


class StatusBar(Horizontal):
    """One line: left the session facts, right the key hints."""

    mode: reactive[str] = reactive("Act")
    model: reactive[str] = reactive("")
    prepared: reactive[bool] = reactive(False)
    context_window: reactive[int | None] = reactive(None)
    used_tokens: reactive[int | None] = reactive(None)
    permission_mode: reactive[str] = reactive("ask")
    activity: reactive[str] = reactive("")
    embedded: reactive[bool] = reactive(False)
    #: The context figure is a local estimate (the meter marks it "~").
    context_approximate: reactive[bool] = reactive(True)

    def compose(self) -> ComposeResult:
        from .context_meter import ContextMeter  # imports format_tokens from here

        yield Static(id="status-info", markup=False)
        yield ContextMeter(id="status-context")
        yield Static(Text(KEY_HINTS), id="status-keys", markup=False)

    def context_text(self) -> str:
        """Return the context part of the bar (see the module docstring)."""
        if not self.prepared:
            return "loading model info..."
        window = self.context_window
        if self.used_tokens is not None and window:
            pct = round(100 * self.used_tokens / window)
            return f"{format_tokens(self.used_tokens)}/{format_tokens(window)} ctx ({pct}%)"
        if window:
            return f"{format_tokens(window)} ctx"
        return "ctx unknown"

    def info_text(self) -> Text:
        """Return the left part of the bar as styled text."""
        text = Text(no_wrap=True, overflow="ellipsis")
        if self.mode == "Plan":  # Plan mode stands out: the theme's warning colour, not reverse video
            colours = getattr(self.app, "theme_variables", {}) if self.is_attached else {}
            text.append(f" {self.mode} ", style=f"bold {colours.get('background', 'black')} on "
                                                f"{colours.get('warning', 'yellow')}")
        else:
            text.append(f" {self.mode} ", style="bold reverse")
        text.append("  ")
        text.append(self.model, style="bold")
        if self.embedded:
            text.append(" (small local model)", style="italic")
        text.append(f" · perm {self.permission_mode}")
        if self.activity:
            text.append(f" · {self.activity}", style="italic")
        return text

    def _update(self) -> None:
        if self.is_mounted:
            self.query_one("#status-info", Static).update(self.info_text())
            self._sync_meter()

    def _sync_meter(self) -> None:
        """Hand the context figures to the context meter (tui/widgets/context_meter.py)."""
        from .context_meter import ContextMeter

        for meter in self.query(ContextMeter):
            meter.prepared = self.prepared
            meter.window_tokens = self.context_window
            meter.approximate = self.context_approximate
            meter.used_tokens = self.used_tokens

    def on_mount(self) -> None:
        self._update()

    def watch_mode(self) -> None:
        self._update()

    def watch_model(self) -> None:
        self._update()

    def watch_prepared(self) -> None:
        self._update()

    def watch_context_window(self) -> None:
        self._update()

    def watch_used_tokens(self) -> None:
        self._update()

    def watch_context_approximate(self) -> None:
        self._update()

    def watch_permission_mode(self) -> None:
        self._update()

    def watch_activity(self) -> None:
        self._update()

    def watch_embedded(self) -> None:
        self._update()
