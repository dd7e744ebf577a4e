"""The output viewer: the saved full output of a truncated tool result, in a full screen.

``OutputViewerScreen(path)`` shows the file through a ``FileView`` (a line-API scroll view: only
the rows on screen are read and drawn, the line index is built in a thread), so a 100 MB file
opens at once and memory stays small. Keys:

- ``/`` opens the search box; Enter searches from the cursor line (smart case: ignore case
  unless the query has a capital letter); ``n`` / ``N`` find the next / previous match, wrapping
  at the ends. The search runs in a thread worker over the file's bytes.
- ``g`` / Home and ``G`` / End jump to the start / end; arrows and PageUp/PageDown move.
- ``c`` copies the cursor line, ``C`` the lines on screen (``App.copy_to_clipboard``).
- ``q`` / Esc close the viewer (Esc first closes the search box when it is open).
"""

from __future__ import annotations

import bisect
import os
import threading
from pathlib import Path
from typing import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input, Static
from textual.worker import Worker, WorkerState

from ..line_index import format_count, format_size
from ..widgets.file_view import FileView

KEY_HINTS = "/ search · n/N match · g/G start/end · c/C copy line/page · q close"


def in_memory_file(text: str) -> tuple[str, Callable[[], None]]:
    """A readable file holding ``text`` (UTF-8) for the viewer, and the function that releases
    it. On Linux an anonymous memory file (``memfd_create``, opened through ``/proc/self/fd``):
    nothing reaches the disk, so a secret in a result is never written out. Elsewhere a 0600
    temporary file, deleted on release."""
    data = text.encode("utf-8", "surrogateescape")
    if hasattr(os, "memfd_create") and Path("/proc/self/fd").is_dir():
        fd = os.memfd_create("opencli-tool-output")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        return f"/proc/self/fd/{fd}", lambda: os.close(fd)
    import tempfile

    handle, name = tempfile.mkstemp(prefix="opencli-output-", suffix=".txt")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    return name, lambda: Path(name).unlink(missing_ok=True)


class OutputViewerScreen(Screen[None]):
    """Views one file (``path``); ``title`` replaces the default heading ("Full output").

    Attributes for callers and tests: ``view`` (the ``FileView``), ``message`` (the last status
    message, e.g. "match on line 12", "not found: foo").
    """

    DEFAULT_CSS = """
    OutputViewerScreen { layout: vertical; }
    OutputViewerScreen #viewer-title { height: 1; padding: 0 1; background: $panel; color: $foreground; }
    OutputViewerScreen #viewer-lines { height: 1fr; }
    OutputViewerScreen #viewer-search { display: none; height: 3; margin: 0 1; }
    OutputViewerScreen.-searching #viewer-search { display: block; }
    OutputViewerScreen #viewer-status { height: 1; background: $footer-background; }
    OutputViewerScreen #viewer-message { width: 1fr; height: 1; padding: 0 1; }
    OutputViewerScreen #viewer-keys { width: auto; height: 1; padding: 0 1; color: $text-muted; }
    """

    BINDINGS = [
        Binding("q,escape", "close", "Close"),
        Binding("slash", "start_search", "Search"),
        Binding("n", "search_next", "Next match"),
        Binding("N", "search_previous", "Previous match"),
        Binding("c", "copy_line", "Copy line"),
        Binding("C", "copy_page", "Copy page"),
    ]

    def __init__(self, path: str | Path, *, title: str = "Full output",
                 on_close: Callable[[], None] | None = None) -> None:
        """``on_close`` runs when the viewer goes (releases an ``in_memory_file``)."""
        super().__init__()
        self.path = Path(path)
        self._on_close = on_close
        self.heading = title
        self.message = ""
        self._cancel_search = threading.Event()
        self._match_line: int | None = None  # the line the last search jumped to
        self._matches: tuple[str, bool, list[int]] | None = None  # (query, ignore_case, offsets)

    def compose(self) -> ComposeResult:
        from textual.containers import Horizontal

        yield Static(id="viewer-title", markup=False)
        yield FileView(str(self.path), id="viewer-lines")
        yield Input(placeholder="Search: Enter finds, Esc closes", id="viewer-search")
        with Horizontal(id="viewer-status"):
            yield Static(id="viewer-message", markup=False)
            yield Static(Text(KEY_HINTS), id="viewer-keys", markup=False)

    @property
    def view(self) -> FileView:
        """The line view."""
        return self.query_one(FileView)

    def on_mount(self) -> None:
        self.view.focus()
        self.watch(self.view, "cursor", self._cursor_moved, init=False)
        self._show_title()
        self._show_message()

    def on_unmount(self) -> None:
        self._cancel_search.set()
        if self._on_close is not None:
            self._on_close()
            self._on_close = None

    # -- header and status ---------------------------------------------------------------------
    def _show_title(self) -> None:
        view = self.view
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(self.heading, style="bold")
        text.append(f"  {self.path.name}")
        try:
            size = view.index.size
        except OSError as exc:
            text.append(f" · cannot open: {exc.strerror or exc}")
            self.query_one("#viewer-title", Static).update(text)
            return
        text.append(f" · {format_size(size)}")
        lines = format_count(view.line_count)
        if view.indexing:
            share = round(100 * view.index.scanned_bytes / size) if size else 100
            text.append(f" · {lines} lines so far (indexing {share}%)", style="italic")
        else:
            text.append(f" · {lines} line{'s' if view.line_count != 1 else ''}")
        self.query_one("#viewer-title", Static).update(text)

    def _show_message(self, message: str | None = None) -> None:
        if message is not None:
            self.message = message
        view = self.view
        text = Text(no_wrap=True, overflow="ellipsis")
        if view.line_count:
            text.append(f"line {format_count(view.cursor + 1)}/{format_count(view.line_count)}")
        if self.message:
            text.append(f"  {self.message}", style="italic")
        self.query_one("#viewer-message", Static).update(text)

    def _cursor_moved(self, line: int) -> None:
        """A match message is about the match's line: moving off it (g, G, arrows) clears it."""
        if self._match_line is not None and line != self._match_line:
            self._match_line = None
            self.message = ""
        self._show_message()

    def on_file_view_indexed(self, message: FileView.Indexed) -> None:
        self._show_title()
        self._show_message()

    # -- closing -------------------------------------------------------------------------------
    def action_close(self) -> None:
        """Close the search box if it is open, else the viewer."""
        if self.has_class("-searching"):
            self._end_search_input()
            return
        self.dismiss(None)

    # -- search --------------------------------------------------------------------------------
    def action_start_search(self) -> None:
        """Open the search box."""
        self.add_class("-searching")
        search = self.query_one("#viewer-search", Input)
        search.value = self.view.search_query
        search.focus()

    def _end_search_input(self) -> None:
        self.remove_class("-searching")
        self.view.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        query = event.value
        self._end_search_input()
        self.view.set_search(query)
        if query:
            self.search(from_line=self.view.cursor)

    def action_search_next(self) -> None:
        """Find the next match after the cursor line."""
        if not self.view.search_query:
            self.action_start_search()
            return
        self.search(from_line=self.view.cursor + 1)

    def action_search_previous(self) -> None:
        """Find the previous match before the cursor line."""
        if not self.view.search_query:
            self.action_start_search()
            return
        self.search(from_line=self.view.cursor, backward=True)

    def search(self, from_line: int, backward: bool = False) -> None:
        """Search the file for the view's query from ``from_line`` in a thread worker; the
        cursor jumps to the match (wrapping around the file's ends)."""
        view = self.view
        query = view.search_query
        self._show_message(f"searching for {query!r}...")
        self.run_worker(lambda: self._search_work(query, from_line, backward, view.ignore_case),
                        thread=True, exclusive=True, group="viewer-search", name="viewer-search",
                        exit_on_error=False)

    def _search_work(self, query: str, from_line: int, backward: bool,
                     ignore_case: bool) -> tuple[str, int | None, bool, int, int]:
        index = self.view.index
        cancel = self._cancel_search
        while not index.done.wait(0.05):  # line numbers need the whole index
            if cancel.is_set():
                return query, None, False
        needle = query.encode("utf-8")
        # Its own descriptor: the view may close the index's descriptor while this runs.
        with open(index.path, "rb", buffering=0) as fh:
            fd = fh.fileno()
            start = index.offset_of_line(from_line, fd) if from_line < index.line_count else index.size
            hit = index.search(needle, start, backward=backward, ignore_case=ignore_case, cancel=cancel)
            wrapped = False
            if hit is None:
                wrapped = True
                hit = index.search(needle, index.size if backward else 0, backward=backward,
                                   ignore_case=ignore_case, cancel=cancel)
            if hit is None:
                return query, None, False, 0, 0
            offsets = self._offsets_of(query, needle, ignore_case)
            rank = bisect.bisect_left(offsets, hit) + 1 if offsets else 0
            return query, index.line_of_offset(hit, fd), wrapped, rank, len(offsets)

    def _offsets_of(self, query: str, needle: bytes, ignore_case: bool) -> list[int]:
        """Every match's offset for ``query`` (worker thread; computed once per query)."""
        cached = self._matches
        if cached is not None and cached[:2] == (query, ignore_case):
            return cached[2]
        offsets = self.view.index.match_offsets(needle, ignore_case=ignore_case, cancel=self._cancel_search) or []
        self._matches = (query, ignore_case, offsets)
        return offsets

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "viewer-search":
            return
        if event.state == WorkerState.ERROR:
            self._show_message(f"search failed: {event.worker.error}")
        elif event.state == WorkerState.SUCCESS and event.worker.result is not None:
            query, line, wrapped, rank, total = event.worker.result
            if line is None:
                self._show_message(f"not found: {query}")
                return
            self._match_line = line
            self.view.go_to_line(line)
            of = f"match {format_count(rank)} of {format_count(total)}" if total else "match"
            self._show_message(f"{of} on line {format_count(line + 1)}" + (" (wrapped)" if wrapped else ""))

    # -- copy ----------------------------------------------------------------------------------
    def action_copy_line(self) -> None:
        """Copy the cursor line to the clipboard."""
        view = self.view
        if not view.line_count:
            return
        self.app.copy_to_clipboard(view.current_line_text())
        self._show_message(f"copied line {format_count(view.cursor + 1)}")

    def action_copy_page(self) -> None:
        """Copy the lines on screen to the clipboard."""
        view = self.view
        lines = view.visible_range()
        if not lines:
            return
        self.app.copy_to_clipboard(view.visible_text())
        self._show_message(f"copied lines {format_count(lines.start + 1)}-{format_count(lines.stop)}")
