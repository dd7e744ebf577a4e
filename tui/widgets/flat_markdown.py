"""A finished markdown document drawn as one widget.

Textual's ``Markdown`` widget builds a widget per paragraph, list item and code block; that is
right while a reply streams, but a long conversation of them makes every layout pass slower.
``FlatMarkdownView`` renders the same text once per width with rich's markdown renderer (left
headings, colours from the app theme) into cached lines, so an old block costs one widget.
"""

from __future__ import annotations

from rich.console import Console
from rich.markdown import Heading as RichHeading
from rich.markdown import Markdown as RichMarkdown
from rich.style import Style
from rich.text import Text
from rich.theme import Theme as RichTheme
from textual.color import Color, ColorParseError
from textual.theme import Theme as TextualTheme
from textual.widget import Widget


class _LeftHeading(RichHeading):
    """A heading aligned left, as Textual's Markdown widget draws headings."""

    LEVEL_ALIGN = {tag: "left" for tag in ("h1", "h2", "h3", "h4", "h5", "h6")}


class FlatMarkdown(RichMarkdown):
    """Rich's markdown renderer with left-aligned headings."""

    elements = {**RichMarkdown.elements, "heading_open": _LeftHeading}


def _hex(value: str | None, fallback: str) -> str:
    try:
        return Color.parse(value).hex if value else fallback
    except ColorParseError:
        return fallback


def theme_colours(theme: TextualTheme) -> dict[str, str]:
    """Return plain ``#rrggbb`` colours for markdown from a Textual theme (primary, accent,
    muted text, code background)."""
    foreground = _hex(theme.foreground, "#D8DEE9" if theme.dark else "#1E2329")
    background = _hex(theme.background, "#16181D" if theme.dark else "#FAFAF7")
    muted = Color.parse(foreground).blend(Color.parse(background), 0.4).hex
    return {
        "primary": _hex(theme.primary, "#6CA6E8"),
        "accent": _hex(theme.accent, "#E8B46C"),
        "muted": muted,
        "panel": _hex(theme.surface, background),
    }


def _rich_theme(colours: dict[str, str]) -> RichTheme:
    primary = colours["primary"]
    accent = colours["accent"]
    muted = colours["muted"]
    panel = colours["panel"]
    return RichTheme({
        "markdown.h1": Style(color=primary, bold=True, underline=True),
        "markdown.h2": Style(color=primary, bold=True),
        "markdown.h3": Style(color=primary, bold=True),
        "markdown.h4": Style(color=primary, italic=True),
        "markdown.code": Style(color=accent, bgcolor=panel),
        "markdown.code_block": Style(bgcolor=panel),
        "markdown.block_quote": Style(color=muted, italic=True),
        "markdown.item.bullet": Style(color=primary, bold=True),
        "markdown.item.number": Style(color=primary),
        "markdown.list": Style(color=primary),
        "markdown.link": Style(color=primary, underline=True),
        "markdown.link_url": Style(color=primary, underline=True),
        "markdown.hr": Style(color=muted),
    }, inherit=True)


def render_markdown(text: str, width: int, colours: dict[str, str], dark: bool = True) -> Text:
    """Return ``text`` rendered as markdown at ``width`` cells, as one ``Text`` of lines.

    ``colours`` is what ``theme_colours`` returns."""
    console = Console(width=max(width, 10), theme=_rich_theme(colours), color_system="truecolor",
                      force_terminal=True, legacy_windows=False, emoji=False, highlight=False)
    document = FlatMarkdown(text, code_theme="monokai" if dark else "friendly")
    lines = console.render_lines(document, console.options, pad=False)
    out = Text(no_wrap=True, overflow="crop")
    for index, line in enumerate(lines):
        if index:
            out.append("\n")
        for segment in line:
            if not segment.control:
                out.append(segment.text, segment.style)
    out.rstrip()
    return out


class FlatMarkdownView(Widget):
    """Shows finished markdown as one widget; rendering is cached per width."""

    DEFAULT_CSS = """
    FlatMarkdownView { height: auto; }
    """

    def __init__(self, markdown: str, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.markdown = markdown
        self._cache: tuple[int, str, Text, int] | None = None  # width, theme, text, line count

    def _rendered_lines(self, width: int) -> tuple[Text, int]:
        theme = self.app.current_theme
        key = theme.name
        if self._cache is None or self._cache[0] != width or self._cache[1] != key:
            text = render_markdown(self.markdown, width, theme_colours(theme), theme.dark)
            self._cache = (width, key, text, text.plain.count("\n") + 1)
        return self._cache[2], self._cache[3]

    def get_content_height(self, container, viewport, width: int) -> int:
        """Height in lines of the document drawn at ``width`` (counted once per width and theme:
        layout asks on every pass)."""
        return self._rendered_lines(width)[1]

    def render(self) -> Text:
        """The cached lines for the current width."""
        return self._rendered_lines(self.content_region.width or self.size.width)[0]
