"""Splitting a file into lines for ``read``, with memory bounded however long a line is.

Each line comes out as a ``Line``: a window of at most ``MAX_LINE_CHARS`` characters starting at
a given character of the line, plus the line's exact length in characters, so ``read`` can show
one part of a very long line and say how to see the next part (its ``column`` argument).

Decoding: a line of at most ``LINE_KEEP_BYTES`` bytes is decoded alone (UTF-8, else cp1252, else
latin-1), so a stray legacy line in a UTF-8 file still shows correctly; a longer line is decoded
incrementally as UTF-8 (an invalid byte becomes U+FFFD). The same line always decodes the same
way, so character positions agree from one call to the next.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import BinaryIO, Iterator

#: Characters of one line shown per call; the rest is paged with ``column``.
MAX_LINE_CHARS = 2000
#: A line up to this many bytes is decoded whole; a longer one streams through a decoder.
LINE_KEEP_BYTES = 4 * MAX_LINE_CHARS + 16
#: Bytes read from the file at a time.
_PIECE_BYTES = 1 << 20


@dataclass(frozen=True)
class Line:
    """One line of a file: ``text`` holds its characters ``first .. first+len(text)-1`` (0-based,
    at most ``MAX_LINE_CHARS`` of them), ``length`` is the whole line's length in characters,
    without its line ending (``\\n`` or ``\\r\\n``)."""

    text: str
    first: int
    length: int

    @property
    def rest(self) -> int:
        """Characters of the line after ``text`` (0 when ``text`` reaches the line's end)."""
        return max(0, self.length - self.first - len(self.text))


def decode_line(raw: bytes, encoding: str | None) -> str:
    """Decode one line's bytes with ``encoding`` (invalid bytes replaced), or when it is ``None``
    with the first of UTF-8, cp1252, latin-1 that decodes it strictly (latin-1 always does)."""
    if encoding is not None:
        return raw.decode(encoding, "replace")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        try:
            return raw.decode("cp1252")
        except UnicodeDecodeError:
            return raw.decode("latin-1")


def window(text: str, first: int) -> Line:
    """The ``Line`` for a whole decoded line ``text`` (its ending already removed or not)."""
    if text.endswith("\n"):
        text = text[:-1]
    if text.endswith("\r"):
        text = text[:-1]
    return Line(text[first : first + MAX_LINE_CHARS], first, len(text))


class _LineBuilder:
    """Collects one line piece by piece, keeping only its window and counting its characters."""

    def __init__(self, first: int) -> None:
        self.first = first
        self.raw = bytearray()
        self.decoder: codecs.IncrementalDecoder | None = None
        self.parts: list[str] = []
        self.kept = 0
        self.pos = 0
        self.last = ""

    def add(self, piece: bytes) -> None:
        if self.decoder is None:
            self.raw += piece
            if len(self.raw) <= LINE_KEEP_BYTES:
                return
            self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
            data, self.raw = bytes(self.raw), bytearray()
        else:
            data = piece
        self._take(self.decoder.decode(data))

    def _take(self, text: str) -> None:
        if not text:
            return
        low = max(self.first - self.pos, 0)
        high = self.first + MAX_LINE_CHARS + 2 - self.pos  # two more: a line ending to strip
        if high > 0 and low < len(text) and self.kept < MAX_LINE_CHARS + 2:
            part = text[low:high]
            self.parts.append(part)
            self.kept += len(part)
        self.pos += len(text)
        self.last = (self.last + text[-2:])[-2:]

    def finish(self) -> Line:
        if self.decoder is None:
            return window(decode_line(bytes(self.raw), None), self.first)
        self._take(self.decoder.decode(b"", final=True))
        length = self.pos
        if self.last.endswith("\n"):
            length -= 2 if self.last == "\r\n" else 1
        elif self.last.endswith("\r"):
            length -= 1
        shown = "".join(self.parts)[: max(0, min(MAX_LINE_CHARS, length - self.first))]
        return Line(shown, self.first, length)


def byte_lines(handle: BinaryIO, number: int = 1, start_at: tuple[int, int] | None = None) -> Iterator[Line]:
    """Yield a ``Line`` per ``\\n``-separated line of a byte-oriented file, from the handle's
    position, which is the start of line ``number`` (1-based).

    ``start_at``: ``(line number, first character)``, 1-based line and 0-based character: that
    line's window starts at that character; every other line's at its start. Reads pieces of at
    most 1 MiB, so memory stays bounded. Stopping early leaves the handle at the start of the
    line after the last one yielded.
    """
    builder: _LineBuilder | None = None
    number -= 1
    while True:
        piece = handle.readline(_PIECE_BYTES)
        if not piece:
            break
        if builder is None:
            number += 1
            builder = _LineBuilder(start_at[1] if start_at and start_at[0] == number else 0)
        builder.add(piece)
        if piece.endswith(b"\n"):
            yield builder.finish()
            builder = None
    if builder is not None:
        yield builder.finish()


def skip_lines(handle: BinaryIO, count: int) -> int:
    """Move the handle past ``count`` lines at C speed (no decoding); return how many lines were
    passed: ``count``, or fewer when the file ends first (a last line without ``\\n`` counts)."""
    passed = 0
    last = b"\n"
    while passed < count:
        start = handle.tell()
        chunk = handle.read(_PIECE_BYTES)
        if not chunk:
            return passed + (last != b"\n")
        found = chunk.count(b"\n")
        if passed + found < count:
            passed += found
            last = chunk[-1:]
            continue
        cut = -1
        for _ in range(count - passed):
            cut = chunk.index(b"\n", cut + 1)
        handle.seek(start + cut + 1)
        return count
    return passed


def count_lines(handle: BinaryIO) -> int:
    """Count the lines from the handle's position to the end at C speed (a last line without
    ``\\n`` counts)."""
    total = 0
    last = b"\n"
    while chunk := handle.read(_PIECE_BYTES):
        total += chunk.count(b"\n")
        last = chunk[-1:]
    return total + (last != b"\n")


def wide_lines(data: bytes, encoding: str, skip: int,
               start_at: tuple[int, int] | None = None) -> Iterator[Line]:
    """Yield a ``Line`` per line of a UTF-16/32 file held whole in ``data`` (BOM of ``skip`` bytes);
    ``start_at`` as for ``byte_lines``."""
    text = data[skip:].decode(encoding, "replace")
    if text.endswith("\n"):
        text = text[:-1]
    if not text and not data[skip:]:
        return
    for number, line in enumerate(text.split("\n"), start=1):
        yield window(line, start_at[1] if start_at and start_at[0] == number else 0)
