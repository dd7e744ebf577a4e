"""Line positions in a large text file, for the output viewer: index, read, search. No Textual.

``LineIndex(path)`` finds where lines start without holding the file in memory:

- ``build()`` (run it in a worker thread) reads the file in chunks (1 MiB first, so the first
  screen is quick, then 2 MiB, into one reused buffer) and records the byte offset of every ``STRIDE``-th line start in an
  ``array('Q')`` (checkpoints). Line ``i`` is found by reading forward from checkpoint
  ``i // STRIDE``, so the index costs 8 bytes per ``STRIDE`` lines (about 0.35 MB for a 100 MB
  file of 75-byte lines) instead of 8 bytes per line.
- ``line_count`` grows while ``build()`` runs (complete lines only); once ``done``, a last line
  without a trailing newline counts too. Readers on other threads may use every line below
  ``line_count`` at any time.
- ``read_lines(start, count)`` returns raw lines (bytes without the newline) with ``os.pread``
  (positional, so threads do not share a file position). A line longer than ``max_line_bytes``
  is cut to that many bytes and flagged.
- ``search(...)`` looks for a byte string in the file in chunks, forward or backward, optionally
  ignoring ASCII case; ``line_of_offset`` turns a match offset into a line number.

``count_lines(path)`` is the cheap standalone count (size and lines) used by tool-block badges.
All file errors surface as ``OSError`` from the method that met them.
"""

from __future__ import annotations

import os
import re
import threading
from array import array
from bisect import bisect_right
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Callable

#: Every STRIDE-th line start is stored; reading line i scans at most STRIDE - 1 lines first.
STRIDE = 32
#: First chunk read by ``build`` (bytes): small, so the first screen of lines appears quickly.
FIRST_CHUNK = 1 << 20
#: Later chunks read by ``build``, ``search`` and ``count_lines`` (bytes): large enough that
#: system calls cost nothing, small enough that the transient buffers stay a few MB.
CHUNK = 2 << 20
#: Bytes of one line kept for display; the rest of a longer line is skipped.
MAX_LINE_BYTES = 8192
#: First block read by ``read_lines`` (bytes); doubled up to ``CHUNK`` while more is needed.
READ_BLOCK = 64 << 10

_GROUP = re.compile(rb"(?:[^\n]*\n){%d}" % STRIDE)


@dataclass(frozen=True)
class RawLine:
    """One line as read from the file: ``data`` (bytes, no newline, at most the read cap) and
    ``cut`` (the line is longer than ``data``)."""

    data: bytes
    cut: bool = False


def format_size(size: int) -> str:
    """Return a byte count as text: ``512 bytes``, ``1.2 KB``, ``5.4 MB``, ``1.1 GB`` (base 1024)."""
    if size < 1024:
        return f"{size} byte{'s' if size != 1 else ''}"
    value = float(size)
    for unit in ("KB", "MB", "GB", "TB"):
        value /= 1024
        if value < 1024 or unit == "TB":
            break
    return f"{value:.1f} {unit}"


def format_count(count: int) -> str:
    """Return an integer with spaces between thousands: ``48 213``."""
    return f"{count:,}".replace(",", " ")


def count_lines(path: str | Path, cancel: threading.Event | None = None) -> tuple[int, int]:
    """Return ``(size_bytes, lines)`` of a file, reading it in 2 MiB chunks (memory stays flat).

    A last line without a trailing newline counts as a line. Raises ``OSError`` when the file
    cannot be read; returns what was counted so far when ``cancel`` is set.
    """
    size = lines = 0
    last = b""
    buffer = bytearray(CHUNK)
    view = memoryview(buffer)
    with open(path, "rb", buffering=0) as fh:
        while cancel is None or not cancel.is_set():
            got = fh.readinto(view)
            if not got:
                break
            size += got
            lines += buffer.count(b"\n", 0, got)
            last = bytes(buffer[got - 1:got])
    if size and last != b"\n":
        lines += 1
    return size, lines


class LineIndex:
    """Sparse line index of one file (see the module docstring).

    ``path``: the file; ``stride``: lines between two stored offsets; ``max_line_bytes``: bytes of
    a line kept by ``read_lines``. Opening is lazy: the constructor does no I/O. Call ``close()``
    when done (the build thread uses its own file handle).
    """

    def __init__(self, path: str | Path, *, stride: int = STRIDE, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self.path = Path(path)
        self.stride = stride
        self.max_line_bytes = max_line_bytes
        self._group = _GROUP if stride == STRIDE else re.compile(rb"(?:[^\n]*\n){%d}" % stride)
        self._checkpoints = array("Q", [0])
        self._lock = threading.Lock()
        self._newlines = 0
        self._scanned = 0
        self._size: int | None = None
        self._ends_with_newline = True
        self._fd: int | None = None
        self.done = threading.Event()
        self.error: str | None = None

    # -- facts -------------------------------------------------------------------------------
    @property
    def line_count(self) -> int:
        """Lines known so far: complete lines while building; all lines once ``done``."""
        if self.done.is_set() and not self._ends_with_newline and self._scanned:
            return self._newlines + 1
        return self._newlines

    @property
    def scanned_bytes(self) -> int:
        """Bytes of the file indexed so far."""
        return self._scanned

    @property
    def size(self) -> int:
        """File size in bytes (``stat`` on first use)."""
        if self._size is None:
            self._size = self.path.stat().st_size
        return self._size

    @property
    def index_bytes(self) -> int:
        """Memory held by the stored offsets (bytes)."""
        return self._checkpoints.itemsize * len(self._checkpoints)

    # -- building ----------------------------------------------------------------------------
    def build(self, progress: Callable[[int, bool], None] | None = None,
              cancel: threading.Event | None = None) -> None:
        """Index the whole file (blocking: run it in a worker thread).

        ``progress(line_count, done)`` is called after each chunk and once at the end (also
        after an error, then ``error`` holds one line). Stops early when ``cancel`` is set.
        """
        stride = self.stride
        try:
            with open(self.path, "rb", buffering=0) as fh:
                self._size = os.fstat(fh.fileno()).st_size
                buffer = bytearray(CHUNK)  # reused: the scan allocates nothing per chunk
                view = memoryview(buffer)
                base = 0
                pending = 0  # lines started since the last checkpoint
                want = FIRST_CHUNK
                last = b"\n"
                while cancel is None or not cancel.is_set():
                    size = fh.readinto(view[:min(want, CHUNK)])
                    want = CHUNK
                    if not size:
                        break
                    last = buffer[size - 1:size]
                    newlines = buffer.count(b"\n", 0, size)
                    offsets: list[int] = []
                    if pending + newlines >= stride:
                        pos = 0
                        for _ in range(stride - pending):  # complete the open group
                            pos = buffer.index(b"\n", pos, size) + 1
                        offsets.append(base + pos)
                        groups = (newlines - (stride - pending)) // stride
                        if groups:
                            matches = self._group.finditer(buffer, pos, size)
                            offsets.extend(base + m.end() for m in islice(matches, groups))
                        pending = (newlines - (stride - pending)) % stride
                    else:
                        pending += newlines
                    with self._lock:
                        if offsets:
                            self._checkpoints.extend(offsets)
                        self._newlines += newlines
                        self._scanned = base + size
                    base += size
                    if progress is not None:
                        progress(self._newlines, False)
                self._ends_with_newline = last == b"\n"
        except OSError as exc:
            self.error = f"{exc.strerror or exc}"
        self.done.set()
        if progress is not None:
            progress(self.line_count, True)

    # -- reading -----------------------------------------------------------------------------
    def _descriptor(self) -> int:
        with self._lock:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDONLY)
            return self._fd

    def close(self) -> None:
        """Close the reading descriptor (safe to call twice)."""
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def _checkpoint(self, line: int) -> tuple[int, int]:
        """Return ``(first_line, offset)`` of the stored line start at or before ``line``."""
        with self._lock:
            k = min(line // self.stride, len(self._checkpoints) - 1)
            return k * self.stride, self._checkpoints[k]

    def read_lines(self, start: int, count: int) -> list[RawLine]:
        """Return up to ``count`` lines from line ``start`` (0-based) as ``RawLine`` objects.

        Fewer come back at the end of the file. Lines past ``line_count`` may be incomplete
        while the index is being built; callers ask only for known lines. Raises ``OSError``.
        """
        if count <= 0 or start < 0:
            return []
        first, pos = self._checkpoint(start)
        skip = start - first
        cap = self.max_line_bytes
        fd = self._descriptor()
        out: list[RawLine] = []
        parts: list[bytes] = []
        kept = 0  # bytes of the current line kept
        length = 0  # bytes of the current line seen (kept or not)
        cut = False
        block = READ_BLOCK
        while True:
            data = os.pread(fd, block, pos)
            if not data:
                if skip == 0 and length:  # a last line without a newline
                    out.append(RawLine(b"".join(parts), cut))
                return out
            pos += len(data)
            block = min(block * 2, CHUNK)
            i = 0
            while True:
                nl = data.find(b"\n", i)
                end = len(data) if nl < 0 else nl
                length += end - i
                if skip == 0 and end > i:
                    room = cap - kept
                    if end - i > room:
                        if room > 0:
                            parts.append(data[i:i + room])
                            kept += room
                        cut = True
                        if len(out) == count - 1:  # the last line wanted: its end is not needed
                            out.append(RawLine(b"".join(parts), True))
                            return out
                    else:
                        parts.append(data[i:end])
                        kept += end - i
                if nl < 0:
                    break
                if skip:
                    skip -= 1
                else:
                    out.append(RawLine(b"".join(parts), cut))
                    if len(out) == count:
                        return out
                parts, kept, length, cut = [], 0, 0, False
                i = nl + 1

    def offset_of_line(self, line: int, fd: int | None = None) -> int:
        """Return the byte offset where line ``line`` starts (the file size past the end).

        ``fd``: a descriptor of the same file to read with (another thread's own), else the
        index's descriptor.
        """
        first, pos = self._checkpoint(line)
        skip = line - first
        fd = self._descriptor() if fd is None else fd
        block = READ_BLOCK
        while skip:
            data = os.pread(fd, block, pos)
            if not data:
                return pos
            i = 0
            while skip:
                nl = data.find(b"\n", i)
                if nl < 0:
                    break
                skip -= 1
                i = nl + 1
            pos += i if not skip else len(data)
            block = min(block * 2, CHUNK)
        return pos

    def line_of_offset(self, offset: int, fd: int | None = None) -> int:
        """Return the 0-based line holding byte ``offset`` (counts newlines from a checkpoint);
        ``fd`` as for ``offset_of_line``."""
        with self._lock:
            k = bisect_right(self._checkpoints, offset) - 1
            pos = self._checkpoints[k]
        line = k * self.stride
        fd = self._descriptor() if fd is None else fd
        while pos < offset:
            data = os.pread(fd, min(CHUNK, offset - pos), pos)
            if not data:
                break
            line += data.count(b"\n")
            pos += len(data)
        return line

    # -- searching ---------------------------------------------------------------------------
    def match_offsets(self, needle: bytes, *, ignore_case: bool = False, cancel: threading.Event | None = None,
                      limit: int = 100_000) -> list[int] | None:
        """The byte offsets where ``needle`` starts, in order (non-overlapping, as ``search``
        finds them one after another), at most ``limit`` of them; None when ``cancel`` was set.
        ``ignore_case`` folds ASCII letters. Reads 2 MiB at a time with its own descriptor."""
        if not needle:
            return []
        if ignore_case:
            needle = needle.lower()
        offsets: list[int] = []
        overlap = len(needle) - 1
        with open(self.path, "rb", buffering=0) as fh:
            fd = fh.fileno()
            size = os.fstat(fd).st_size
            pos = 0
            while pos < size and len(offsets) < limit:
                if cancel is not None and cancel.is_set():
                    return None
                data = os.pread(fd, CHUNK + overlap, pos)
                if not data:
                    break
                if ignore_case:
                    data = data.lower()
                at = data.find(needle)
                while at >= 0 and at < CHUNK and len(offsets) < limit:
                    if not offsets or pos + at >= offsets[-1] + len(needle):
                        offsets.append(pos + at)
                    at = data.find(needle, at + len(needle))
                pos += CHUNK
        return offsets

    def search(self, needle: bytes, start: int, *, backward: bool = False, ignore_case: bool = False,
               cancel: threading.Event | None = None) -> int | None:
        """Return the byte offset of a match of ``needle``, or None.

        Forward: the first match starting at or after ``start``. Backward: the last match
        starting before ``start``. ``ignore_case`` folds ASCII letters. Reads 2 MiB at a time
        with its own descriptor; returns None early when ``cancel`` is set.
        """
        if not needle:
            return None
        if ignore_case:
            needle = needle.lower()
        overlap = len(needle) - 1
        with open(self.path, "rb", buffering=0) as fh:
            fd = fh.fileno()
            size = os.fstat(fd).st_size
            if not backward:
                pos = max(0, start)
                while pos < size and (cancel is None or not cancel.is_set()):
                    data = os.pread(fd, CHUNK + overlap, pos)
                    if not data:
                        break
                    if ignore_case:
                        data = data.lower()
                    hit = data.find(needle)
                    if hit >= 0:
                        return pos + hit
                    pos += max(1, len(data) - overlap)
                return None
            hi = min(start, size)
            while hi > 0 and (cancel is None or not cancel.is_set()):
                lo = max(0, hi - CHUNK)
                data = os.pread(fd, hi - lo + overlap, lo)
                if ignore_case:
                    data = data.lower()
                hit = data.rfind(needle, 0, hi - lo + overlap)
                if hit >= 0 and lo + hit < hi:
                    return lo + hit
                hi = lo
            return None
