"""A line-API scroll view over a file of any size: the body of the output viewer.

``FileView(path)`` draws only the rows on screen (``render_line``); nothing holds the file. A
``LineIndex`` is built in a thread worker and the view grows as lines are found
(``FileView.Indexed`` messages), so the first screen shows while a 100 MB file is still being
indexed. Visible lines are read with ``os.pread`` in one batch per cache miss, decoded as UTF-8
with replacement characters, cleaned by ``display_text`` (ANSI escapes and control characters
removed, tabs expanded) and kept in an LRU cache of ``CACHE_LINES`` lines: memory is the index
(8 bytes per 32 lines), the cache and the screen.

A cursor line (``cursor``) is highlighted; ``search_query`` highlights matches. Keys: arrows,
PageUp/PageDown, Home/End and g/G move the cursor; left/right scroll sideways. A click moves the
cursor to the clicked line. Text is never parsed as markup.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from rich.cells import cell_len

from ..line_index import LineIndex, RawLine

#: Cleaned lines kept in the LRU cache.
CACHE_LINES = 2000
#: Extra lines read after the screen on a cache miss (one read serves a few scroll steps).
READ_AHEAD = 64
#: Seconds between two progress messages of the indexing thread.
PROGRESS_INTERVAL_S = 0.05
#: Width (cells) used until lines have been measured.
MIN_TEXT_WIDTH = 40

_ANSI = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: titles, hyperlinks
    r"|[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC
    r"|[ -/]*[0-~])?"  # other escapes; a lone ESC goes too
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def display_text(raw: bytes) -> str:
    """Return one raw line (bytes, no newline) as plain display text.

    Decodes UTF-8 with U+FFFD for bad bytes, drops a trailing CR, removes ANSI/VT escape
    sequences, keeps the last non-empty frame of a CR-redrawn line (progress bars), expands tabs
    to 8 columns, shows NUL as U+2400 and drops other control characters.
    """
    text = raw.decode("utf-8", "replace")
    if text.endswith("\r"):
        text = text[:-1]
    if "\x1b" in text or "\x9b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        frames = [frame for frame in text.split("\r") if frame]
        text = frames[-1] if frames else ""
    if "\t" in text:
        text = text.expandtabs(8)
    if "\x00" in text:
        text = text.replace("\x00", "\u2400")
    return _CONTROL.sub("", text)


class FileView(ScrollView, can_focus=True):
    """Shows the lines of ``path`` with line numbers; see the module docstring.

    Attributes: ``index`` (the ``LineIndex``), ``first_screen_at`` (``time.monotonic()`` when a
    full screen of file lines was first drawn; the benchmark reads it), ``indexed_at`` (when the
    index was complete).
    """

    COMPONENT_CLASSES = {"file-view--gutter", "file-view--cursor", "file-view--match", "file-view--note"}

    DEFAULT_CSS = """
    FileView { background: $surface; }
    FileView > .file-view--gutter { color: $text-muted; }
    FileView > .file-view--cursor { background: $accent 25%; }
    FileView > .file-view--match { background: $warning 60%; color: $text; }
    FileView > .file-view--note { color: $text-muted; text-style: italic; }
    """

    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown,space", "page_down", "Page down", show=False),
        Binding("home,g", "first", "Start", show=False),
        Binding("end,G", "last", "End", show=False),
        Binding("left", "scroll_left", "Left", show=False),
        Binding("right", "scroll_right", "Right", show=False),
    ]

    cursor: reactive[int] = reactive(0)

    class Indexed(Message):
        """The index grew: ``lines`` known so far; ``done`` when complete; ``error`` one line."""

        def __init__(self, lines: int, done: bool, error: str | None = None) -> None:
            super().__init__()
            self.lines = lines
            self.done = done
            self.error = error

    def __init__(self, path: str, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.index = LineIndex(path)
        self.line_count = 0
        self.indexing = True
        self.error: str | None = None
        self.search_query = ""
        self.ignore_case = True
        self.first_screen_at: float | None = None
        self.indexed_at: float | None = None
        self._cache: OrderedDict[int, tuple[str, bool]] = OrderedDict()
        self._text_width = MIN_TEXT_WIDTH
        self._cancel = threading.Event()
        self._follow_end = False

    # -- indexing ----------------------------------------------------------------------------
    def on_mount(self) -> None:
        self.run_worker(self._build_index, thread=True, name="line-index", group="line-index",
                        exit_on_error=False)

    def _build_index(self) -> None:
        last_post = [0.0]

        def progress(lines: int, done: bool) -> None:
            # The first chunk is posted at once (first screen); then at most every 50 ms.
            now = time.monotonic()
            if done or now - last_post[0] >= PROGRESS_INTERVAL_S:
                last_post[0] = now
                self.post_message(self.Indexed(lines, done, self.index.error if done else None))

        self.index.build(progress, self._cancel)

    def on_file_view_indexed(self, message: "FileView.Indexed") -> None:
        self.line_count = self.index.line_count
        if message.done:
            self.indexing = False
            self.error = message.error
            self.indexed_at = time.monotonic()
        self._update_virtual_size()
        if self._follow_end and self.line_count:
            self._move(self.line_count - 1)
        self.refresh()

    def on_unmount(self) -> None:
        self._cancel.set()
        self.index.close()

    # -- geometry ----------------------------------------------------------------------------
    @property
    def gutter_width(self) -> int:
        """Cells used by the line numbers (digits of the largest known line number, plus a space)."""
        return max(4, len(str(max(self.line_count, 1)))) + 1

    def _update_virtual_size(self) -> None:
        self.virtual_size = Size(self.gutter_width + self._text_width + 1, self.line_count)

    # -- lines -------------------------------------------------------------------------------
    def line_text(self, line: int) -> tuple[str, bool]:
        """Return ``(text, cut)`` for a known line (cleaned; ``cut`` when longer than shown).

        Reads a batch from the file on a cache miss; a read error gives an explanatory text.
        """
        cached = self._cache.get(line)
        if cached is not None:
            self._cache.move_to_end(line)
            return cached
        height = max(self.size.height, 1)
        count = min(height + READ_AHEAD, max(self.line_count - line, 1))
        try:
            raws = self.index.read_lines(line, count)
        except OSError as exc:
            return (f"(cannot read the file: {exc.strerror or exc})", False)
        widest = self._text_width
        for offset, raw in enumerate(raws):
            entry = self._clean(raw)
            self._cache[line + offset] = entry
            widest = max(widest, cell_len(entry[0]) + (2 if entry[1] else 0))
        while len(self._cache) > CACHE_LINES:
            self._cache.popitem(last=False)
        if widest > self._text_width:
            self._text_width = widest
            self.call_later(self._update_virtual_size)
        return self._cache.get(line, ("", False))

    @staticmethod
    def _clean(raw: RawLine) -> tuple[str, bool]:
        return display_text(raw.data), raw.cut

    @property
    def cache_size(self) -> int:
        """Lines held in the LRU cache."""
        return len(self._cache)

    def visible_range(self) -> range:
        """Line numbers currently on screen."""
        top = int(self.scroll_offset.y)
        return range(top, min(top + self.size.height, self.line_count))

    # -- rendering ---------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        """Draw screen row ``y``: line number, then the text cropped to the horizontal scroll."""
        scroll_x, scroll_y = self.scroll_offset
        line = scroll_y + y
        width = self.size.width
        base = self.rich_style
        if line >= self.line_count:
            if line == 0 and not self.indexing:
                note = "(empty file)" if not self.error else f"(cannot read the file: {self.error})"
                return Strip([Segment(note, base + self.get_component_rich_style("file-view--note"))]
                             ).crop_extend(0, width, base)
            return Strip.blank(width, base)
        text, cut = self.line_text(line)
        style = base
        if line == self.cursor:
            style = base + self.get_component_rich_style("file-view--cursor")
        gutter_width = self.gutter_width
        gutter = Segment(f"{line + 1:>{gutter_width - 1}} ", style + self.get_component_rich_style("file-view--gutter"))
        segments = self._segments(text, style)
        if cut:
            segments.append(Segment(" …", style + self.get_component_rich_style("file-view--note")))
        body = Strip(segments).crop_extend(scroll_x, scroll_x + max(0, width - gutter_width), style)
        if self.first_screen_at is None and y == self.size.height - 1:
            self.first_screen_at = time.monotonic()
        return Strip([gutter, *body], width).apply_offsets(scroll_x, line)

    def _segments(self, text: str, style: Style) -> list[Segment]:
        """Split ``text`` into segments, the search matches in the match style."""
        query = self.search_query
        if not query or not text:
            return [Segment(text, style)]
        haystack = text.lower() if self.ignore_case else text
        needle = query.lower() if self.ignore_case else query
        match_style = style + self.get_component_rich_style("file-view--match")
        segments: list[Segment] = []
        pos = 0
        while True:
            hit = haystack.find(needle, pos)
            if hit < 0:
                break
            if hit > pos:
                segments.append(Segment(text[pos:hit], style))
            segments.append(Segment(text[hit:hit + len(needle)], match_style))
            pos = hit + len(needle)
        if pos < len(text):
            segments.append(Segment(text[pos:], style))
        return segments

    def set_search(self, query: str) -> None:
        """Highlight ``query`` (smart case: ignore case unless it has a capital letter)."""
        self.search_query = query
        self.ignore_case = query == query.lower()
        self.refresh()

    # -- cursor ------------------------------------------------------------------------------
    def _move(self, line: int, *, center: bool = False) -> None:
        """Put the cursor on ``line`` (clamped) and scroll so it is visible."""
        line = max(0, min(line, self.line_count - 1)) if self.line_count else 0
        self.cursor = line
        height = max(self.size.height, 1)
        top = int(self.scroll_offset.y)
        if center and not top <= line < top + height:
            self.scroll_to(y=max(0, line - height // 2), animate=False, immediate=True)
        elif line < top:
            self.scroll_to(y=line, animate=False, immediate=True)
        elif line >= top + height:
            self.scroll_to(y=line - height + 1, animate=False, immediate=True)

    def go_to_line(self, line: int) -> None:
        """Move the cursor to ``line`` (0-based), centring it when it was off screen."""
        self._follow_end = False
        self._move(line, center=True)

    def action_cursor_up(self) -> None:
        """Cursor one line up."""
        self._follow_end = False
        self._move(self.cursor - 1)

    def action_cursor_down(self) -> None:
        """Cursor one line down."""
        self._follow_end = False
        self._move(self.cursor + 1)

    def action_page_up(self) -> None:
        """Cursor and view one screen up."""
        self._follow_end = False
        height = max(self.size.height, 1)
        self.scroll_to(y=max(0, self.scroll_offset.y - height), animate=False, immediate=True)
        self._move(self.cursor - height)

    def action_page_down(self) -> None:
        """Cursor and view one screen down."""
        self._follow_end = False
        height = max(self.size.height, 1)
        self.scroll_to(y=self.scroll_offset.y + height, animate=False, immediate=True)
        self._move(self.cursor + height)

    def action_first(self) -> None:
        """Cursor to the first line."""
        self._follow_end = False
        self._move(0)

    def action_last(self) -> None:
        """Cursor to the last line (keeps following the end while the file is being indexed)."""
        self._follow_end = self.indexing
        self._move(self.line_count - 1)

    def on_click(self, event: Click) -> None:
        line = int(self.scroll_offset.y) + event.y
        if 0 <= line < self.line_count:
            self._follow_end = False
            self.cursor = line

    # -- copying -----------------------------------------------------------------------------
    def current_line_text(self) -> str:
        """The cleaned text of the cursor line ("" when the file is empty)."""
        if not self.line_count:
            return ""
        return self.line_text(self.cursor)[0]

    def visible_text(self) -> str:
        """The cleaned text of the lines on screen, joined by newlines."""
        return "\n".join(self.line_text(line)[0] for line in self.visible_range())
