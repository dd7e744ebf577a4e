"""Markdown drawn as one widget: the assistant's replies, while they stream and after.

Textual's ``Markdown`` widget builds a widget per paragraph, list item and code block, and every
append remounts the last of them and lays out the screen again; a long conversation of them makes
every layout pass slower. ``FlatMarkdownView`` renders the text with rich's markdown renderer
(left headings, colours from the app theme) into lines cached per width and theme, so a block
costs one widget, and new text that adds no line is a repaint without a layout pass.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock as RichCodeBlock
from rich.markdown import Heading as RichHeading
from rich.markdown import Markdown as RichMarkdown
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from rich.theme import Theme as RichTheme
from textual.color import Color, ColorParseError
from textual.selection import Selection
from textual.strip import Strip
from textual.theme import BUILTIN_THEMES
from textual.theme import Theme as TextualTheme
from textual.widget import Widget


class _LeftHeading(RichHeading):
    """A heading aligned left, as Textual's Markdown widget draws headings."""

    LEVEL_ALIGN = {tag: "left" for tag in ("h1", "h2", "h3", "h4", "h5", "h6")}


class _SeamCodeBlock(RichCodeBlock):
    """A fenced code block; where a long one is split across two conversation blocks
    (``tui/markdown_split.py``), the two parts have no padding line at the seam, so they read
    as one code block."""

    top_padding = bottom_padding = 1

    @classmethod
    def create(cls, markdown: RichMarkdown, token) -> "_SeamCodeBlock":
        block = super().create(markdown, token)
        first, end = token.map or (0, 0)
        if getattr(markdown, "code_continues_above", False) and first == 0:
            block.top_padding = 0
        if getattr(markdown, "code_continues_below", False) and end >= markdown.markup.count("\n"):
            block.bottom_padding = 0
        return block

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text)
        # Blank code lines before a seam stay (they continue in the next part); at the end of
        # a code block rich drops them.
        code = code[:-1] if self.bottom_padding == 0 and code.endswith("\n") else code.rstrip()
        if not code and self.top_padding == 0:
            # Only blank code lines (dropped, as rich drops them at a block's end) and the
            # closing fence followed the seam: draw just the bottom padding.
            if self.bottom_padding:
                background = Syntax.get_theme(self.theme).get_background_style()
                yield Segment(" " * options.max_width, background)
                yield Segment.line()
            return
        yield Syntax(code, self.lexer_name, theme=self.theme, word_wrap=True,
                     padding=(self.top_padding, 1, self.bottom_padding, 1))


class FlatMarkdown(RichMarkdown):
    """Rich's markdown renderer with left-aligned headings and code blocks that can continue
    across conversation blocks (``code_continues_above`` / ``code_continues_below``)."""

    elements = {**RichMarkdown.elements, "heading_open": _LeftHeading, "fence": _SeamCodeBlock}

    def __init__(self, markup: str, *, code_continues_above: bool = False,
                 code_continues_below: bool = False, **kwargs) -> None:
        super().__init__(markup, **kwargs)
        self.code_continues_above = code_continues_above
        self.code_continues_below = code_continues_below


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


def render_markdown(text: str, width: int, colours: dict[str, str], dark: bool = True, *,
                    code_continues_above: bool = False, code_continues_below: bool = False) -> list[Text]:
    """Return ``text`` rendered as markdown at ``width`` cells, as a list of one ``Text`` per
    line (trailing blank lines dropped; an empty list for empty text).

    ``colours`` is what ``theme_colours`` returns. ``code_continues_above`` / ``_below``: the
    text starts / ends inside a code fence split across blocks (no padding at that edge)."""
    console = Console(width=max(width, 10), theme=_rich_theme(colours), color_system="truecolor",
                      force_terminal=True, legacy_windows=False, emoji=False, highlight=False)
    document = FlatMarkdown(text, code_theme="monokai" if dark else "friendly",
                            code_continues_above=code_continues_above,
                            code_continues_below=code_continues_below)
    out: list[Text] = []
    for line in console.render_lines(document, console.options, pad=False):
        segments = [segment for segment in line if not segment.control]
        # Rich pads every line to the width; unstyled padding is dropped so that copied text has
        # no trailing spaces (a code block's padding carries its background and stays).
        while segments and not segments[-1].text.strip() and not _has_background(segments[-1]):
            segments.pop()
        if segments and not _has_background(segments[-1]):
            segments[-1] = segments[-1]._replace(text=segments[-1].text.rstrip())
        row = Text(no_wrap=True, overflow="crop")
        for segment in segments:
            row.append(segment.text, segment.style)
        out.append(row)
    # Rich opens a list, quote or table with a blank line and may end with one; the block's
    # margins space the conversation (rows with a background, such as code padding, stay).
    while out and not out[-1].plain:
        out.pop()
    first = next((index for index, row in enumerate(out) if row.plain), len(out))
    return out[first:]


def _has_background(segment) -> bool:
    return bool(segment.style and segment.style.bgcolor)


def warm_up() -> None:
    """Import rich's markdown renderer, markdown-it and pygments' Python lexer by rendering a
    small document (about 30 ms the first time). Called from a thread worker after the first
    paint, so the first reply does not stall the event loop on those imports. Never raises."""
    try:
        render_markdown("# a\n\n- `b` **c**\n\n```python\nx = 1\n```\n", 40,
                        theme_colours(BUILTIN_THEMES["textual-dark"]))
    except Exception:  # noqa: BLE001 - a warm-up failing only means the first reply imports
        pass


class FlatMarkdownView(Widget):
    """Shows markdown as one widget, drawn line by line from a cache (Textual's line API).

    The document is rendered once per text, width and theme into lines of rich ``Text``; each
    line becomes a ``Strip`` the first time it is drawn and is kept until the text, width or
    theme changes, so the layout passes of a streaming reply (the screen scrolls, the block moves)
    redraw nothing. Mouse selection works as in Textual's ``Log``: the selected span is
    highlighted and ``get_selection`` returns the plain text.

    ``set_markdown`` replaces the text (a streaming reply calls it with the text so far).
    ``code_continues_above`` / ``code_continues_below``: the text starts / ends inside a code
    fence split across blocks (see ``render_markdown``)."""

    DEFAULT_CSS = """
    FlatMarkdownView { height: auto; }
    """

    def __init__(self, markdown: str, *, classes: str | None = None,
                 code_continues_above: bool = False, code_continues_below: bool = False) -> None:
        super().__init__(classes=classes)
        self.markdown = markdown
        self.code_continues_above = code_continues_above
        self.code_continues_below = code_continues_below
        # (width, theme, the document's lines); strips of drawn lines by line number. The theme
        # object is the key: a theme file reloaded under the same name is a new object.
        self._cache: tuple[int, TextualTheme, list[Text]] | None = None
        self._strips: dict[int, Strip] = {}

    def _rendered(self, width: int) -> list[Text]:
        theme = self.app.current_theme
        if self._cache is None or self._cache[0] != width or self._cache[1] is not theme:
            lines = render_markdown(self.markdown, width, theme_colours(theme), theme.dark,
                                    code_continues_above=self.code_continues_above,
                                    code_continues_below=self.code_continues_below)
            self._cache = (width, theme, lines)
            self._strips.clear()
        return self._cache[2]

    def get_content_height(self, container, viewport, width: int) -> int:
        """Height in lines of the document drawn at ``width`` (rendered once per text, width and
        theme: layout asks on every pass)."""
        return len(self._rendered(width))

    def render(self) -> Text:
        """The whole document at the current width, as one ``Text`` (Textual draws it through
        ``render_line``)."""
        return Text("\n", no_wrap=True, overflow="crop").join(self._rendered(self.size.width))

    def render_line(self, y: int) -> Strip:
        """Line ``y`` of the document as a ``Strip`` of the widget's width."""
        width = self.size.width
        lines = self._rendered(width)
        base = self.rich_style
        if y >= len(lines):
            return Strip.blank(width, base)
        selection = self.text_selection
        if selection is None and y in self._strips:
            return self._strips[y]
        line = lines[y].copy()
        line.stylize_before(base)
        if selection is not None and (span := selection.get_span(y)) is not None:
            start, end = span
            line.stylize(self._selection_style(), start, len(line) if end == -1 else end)
        strip = Strip(line.render(self.app.console), line.cell_len)
        strip = strip.crop_extend(0, width, base).apply_offsets(0, y)
        if selection is None:
            self._strips[y] = strip
        return strip

    def _selection_style(self) -> Style:
        """The selected span's style: the theme's ``screen--selection`` background, and its
        foreground unless that is transparent (Textual's default: the text keeps its colours).
        Textual turns a transparent foreground into the background colour in the Rich style, so
        applied whole it drew the selected text in the colour behind it: a blank bar."""
        screen = self.screen
        style = screen.get_component_rich_style("screen--selection")
        if screen.get_component_styles("screen--selection").color.a == 0:
            return Style(bgcolor=style.bgcolor)
        return style

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The plain text under ``selection`` (for copying)."""
        lines = self._rendered(self.size.width)
        # Trailing spaces (a code block's padding) are not copied; columns keep their places.
        return selection.extract("\n".join(line.plain.rstrip() for line in lines)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        """Redraw with the new selection highlighted."""
        self._strips.clear()
        self.refresh()

    def notify_style_update(self) -> None:
        """CSS changed (theme, hover): the drawn strips carry the old base style."""
        super().notify_style_update()
        self._strips.clear()

    def set_markdown(self, markdown: str, *, code_continues_below: bool = False) -> None:
        """Show ``markdown`` instead of the current text.

        The text is rendered at once at the current width; when the number of lines is the same
        as before, only this widget is repainted (no layout pass of the screen)."""
        if markdown == self.markdown and code_continues_below == self.code_continues_below:
            return
        previous, strips = self._cache, self._strips
        self.markdown = markdown
        self.code_continues_below = code_continues_below
        self._cache = None
        self._strips = {}
        if previous is not None and self.is_mounted:
            width, _theme, old_lines = previous
            lines = self._rendered(width)
            # Lines that did not change keep their strips: a growing reply redraws its tail.
            self._strips = {y: strip for y, strip in strips.items()
                            if y < len(lines) and lines[y] == old_lines[y]}
            if len(lines) == len(old_lines):
                self.refresh()
                return
        self.refresh(layout=True)
