"""Theme files: TOML validated by pydantic, converted to Textual ``Theme`` objects.

Importing pydantic costs about 40 ms, too much before the first paint, so the first frame uses
``first_frame_theme``: the wanted theme's file read with tomllib and checked by Textual's own
colour parser, no pydantic. The app runs the validated ``load_themes`` right after the first
paint; it is the authority (a file it rejects is reported and its theme not kept).

A theme file (``themes/*.toml``) holds ``name``, ``dark`` and the base colours Textual derives its
palette from (``primary`` is required, the rest optional), plus a ``[variables]`` table of
app-specific CSS variables (``$diff-added`` and friends, see ``THEME_VARIABLE_DEFAULTS``).
Colours are anything ``textual.color.Color.parse`` accepts (``#rrggbb``, ``rgb(...)``, names).

``load_theme_file`` raises ``ThemeError`` (one line naming the file and the field) for a bad file;
``load_themes`` skips bad files and reports them, so one broken file never stops the app.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from typing import TYPE_CHECKING, Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

if TYPE_CHECKING:
    from pydantic import BaseModel

#: Folder with the theme files shipped with the app (the repository's ``themes/``).
THEMES_DIR = Path(__file__).resolve().parent.parent / "themes"

DEFAULT_DARK = "opencli-dark"
DEFAULT_LIGHT = "opencli-light"

#: App-specific CSS variables used by ``app.tcss``; a theme that does not set one (a built-in
#: Textual theme, say) gets these values, so every theme works with our stylesheet.
THEME_VARIABLE_DEFAULTS: dict[str, str] = {
    "user-border": "#6CA6E8",
    "tool-border": "#4A505C",
    "diff-added": "#5FB86F",
    "diff-removed": "#E06C75",
    "diff-hunk": "#56B6C2",
    "reasoning-text": "#8A91A0",
    "footer-background": "#1E2128",
}


class ThemeError(Exception):
    """A theme file that cannot be used; the message names the file and the problem."""


def _check_colour(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        Color.parse(value)
    except ColorParseError as exc:
        raise ValueError(f"not a colour: {value!r}") from exc
    return value


#: Keys of a theme file that hold a colour (``primary`` is required, the rest optional).
COLOUR_KEYS = ("primary", "secondary", "accent", "foreground", "background", "surface", "panel",
               "boost", "success", "warning", "error")


def _theme_file_model() -> "type[BaseModel]":
    """The pydantic model of a theme file, built on first use (pydantic is imported lazily)."""
    global _THEME_FILE_MODEL
    if _THEME_FILE_MODEL is None:
        from pydantic import BaseModel, ConfigDict, Field, field_validator

        class ThemeFile(BaseModel):
            """The contents of one theme file (TOML). Unknown keys are rejected so typos show up."""

            model_config = ConfigDict(extra="forbid")

            name: str = Field(min_length=1, description="Theme name used by settings.theme.")
            dark: bool = Field(True, description="True for a dark theme (Textual derives shades from it).")
            primary: str = Field(description="Main accent colour (borders, focus).")
            secondary: str | None = None
            accent: str | None = None
            foreground: str | None = None
            background: str | None = None
            surface: str | None = None
            panel: str | None = None
            boost: str | None = None
            success: str | None = None
            warning: str | None = None
            error: str | None = None
            variables: dict[str, str] = Field(default_factory=dict, description="App-specific CSS variables.")

            @field_validator(*COLOUR_KEYS)
            @classmethod
            def _colour(cls, value: str | None) -> str | None:
                return _check_colour(value)

            @field_validator("variables")
            @classmethod
            def _variable_colours(cls, value: dict[str, str]) -> dict[str, str]:
                for key, colour in value.items():
                    try:
                        _check_colour(colour)
                    except ValueError as exc:
                        raise ValueError(f"variable {key}: {exc}") from None
                return value

        _THEME_FILE_MODEL = ThemeFile
    return _THEME_FILE_MODEL


_THEME_FILE_MODEL: "type[BaseModel] | None" = None


def _to_theme(data: dict[str, Any]) -> Theme:
    """Return the Textual ``Theme`` for validated theme-file ``data``; app variables missing from
    the file get the defaults."""
    return Theme(name=data["name"], dark=data.get("dark", True),
                 variables={**THEME_VARIABLE_DEFAULTS, **(data.get("variables") or {})},
                 **{key: data.get(key) for key in COLOUR_KEYS})


def load_theme_file(path: Path) -> Theme:
    """Read and validate one theme file; return its ``Theme``.

    Raises ``ThemeError`` when the file cannot be read, is not TOML, or fails validation.
    """
    try:
        with Path(path).open("rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ThemeError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ThemeError(f"{path}: not valid TOML ({exc})") from exc
    from pydantic import ValidationError

    try:
        return _to_theme(_theme_file_model().model_validate(data).model_dump())
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "file"
        raise ThemeError(f"{path}: {loc}: {err['msg']}") from None


def load_themes(directory: Path = THEMES_DIR) -> tuple[list[Theme], list[str]]:
    """Load every ``*.toml`` in ``directory`` (sorted by file name).

    Returns ``(themes, problems)``: the valid themes, and one line per file that was skipped.
    A missing directory gives no themes and no problems.
    """
    themes: list[Theme] = []
    problems: list[str] = []
    if not Path(directory).is_dir():
        return themes, problems
    for path in sorted(Path(directory).glob("*.toml")):
        try:
            themes.append(load_theme_file(path))
        except ThemeError as exc:
            problems.append(str(exc))
    return themes, problems


def first_frame_theme(name: str, directory: Path = THEMES_DIR) -> Theme | None:
    """Return the theme called ``name`` from the files in ``directory`` for the first frame, or
    None when no file holds it or the file does not pass this quick check.

    The check (tomllib, known keys only, strings that ``Color.parse`` accepts, ``dark`` a bool)
    accepts no file that ``load_theme_file`` would reject for its colours or keys, so the first
    frame never needs a theme the validated load then drops."""
    if not Path(directory).is_dir():
        return None
    allowed = {"name", "dark", "variables", *COLOUR_KEYS}
    for path in sorted(Path(directory).glob("*.toml")):
        try:
            with path.open("rb") as fh:
                data = tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
            continue
        if data.get("name") != name:
            continue
        variables = data.get("variables", {})
        colours = [data[key] for key in COLOUR_KEYS if key in data]
        if (set(data) - allowed or "primary" not in data or not isinstance(data.get("dark", True), bool)
                or not isinstance(variables, dict)):
            return None
        colours += list(variables.values())
        try:
            if not all(isinstance(colour, str) and Color.parse(colour) for colour in colours):
                return None
        except ColorParseError:
            return None
        return _to_theme(data)
    return None


def counterpart(theme_name: str, dark: bool) -> str:
    """Return the theme ctrl+t switches to from ``theme_name`` (``dark`` tells what it is now).

    ``x-dark`` <-> ``x-light`` when the name follows that pattern; otherwise our default of the
    opposite brightness.
    """
    if theme_name.endswith("-dark"):
        return theme_name[: -len("-dark")] + "-light"
    if theme_name.endswith("-light"):
        return theme_name[: -len("-light")] + "-dark"
    return DEFAULT_LIGHT if dark else DEFAULT_DARK
