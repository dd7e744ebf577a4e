"""Redacting a byte stream written in chunks (the saved full output of a tool call).

Secrets do not span lines, except private key blocks: a chunk is redacted up to its last
newline and the rest is held for the next chunk; an open ``BEGIN ... PRIVATE KEY`` block is held
until its end. What is held is bounded (``MAX_HELD_BYTES``): a longer line is redacted and written
as it is, and a longer key block is replaced by one ``[redacted private key]`` and dropped up to
its ``END`` line.
"""

from __future__ import annotations

import re

from .redact import Redactor, default_redactor

#: The most bytes held back between chunks (a line or an unfinished key block).
MAX_HELD_BYTES = 64 * 1024
#: Bytes kept while skipping a key block, so that an END line cut by a chunk boundary is found.
_END_OVERLAP = 128
_OPEN_KEY = re.compile(rb"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_CLOSE_KEY = re.compile(rb"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_KEY_TAG = b"[redacted private key]"
#: In every match of ``_OPEN_KEY`` and ``_CLOSE_KEY``: data without it holds no key block edge.
_KEY_WORDS = b"PRIVATE KEY"


class StreamRedactor:
    """Feed chunks in order (``feed``), then ``flush``; each returns the redacted bytes ready to
    be written. ``redactor``: the process-wide one by default. Not thread-safe (one writer)."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        self._redactor = redactor or default_redactor()
        self._held = b""
        self._in_key = False  # inside a key block too long to hold: dropping up to its END

    def feed(self, chunk: bytes | bytearray | memoryview) -> bytes:
        """Return the redacted part of ``held + chunk`` that can be written now."""
        return b"".join(self.feed_parts(chunk))

    def feed_parts(self, chunk: bytes | bytearray | memoryview) -> list[bytes | bytearray | memoryview]:
        """Like ``feed``, as pieces to write in order (``b"".join`` of them is what ``feed``
        returns). A piece may be a view into ``chunk`` (nothing redacted there), so write the
        pieces before reusing ``chunk``'s buffer."""
        return self._feed_clean(chunk) or [self._feed_general(chunk)]

    def _feed_clean(self, chunk: bytes | bytearray | memoryview) -> list[bytes | bytearray | memoryview] | None:
        """The usual case at the cost of one RE2 pass and no copy of ``chunk``: no key block is
        open, ``chunk`` has a newline and holds nothing to redact (``Redactor.clean``: no needle
        of any pattern, no secret value, no ``PRIVATE KEY``), the held bytes with ``chunk``'s
        first line hold no ``PRIVATE KEY`` either (an edge cut by the chunk boundary), and no
        secret value spans lines. Then only the held partial line with ``chunk``'s first line can hold a secret (a
        line-local one): that is redacted, the whole lines after it are passed on as a view, and
        what follows the last newline is held, exactly as ``_feed_general`` would cut it.
        ``None``: not that case."""
        if self._in_key or not self._redactor.line_local:
            return None
        view, buf = _bytes_view(chunk)
        first = buf.find(b"\n") + 1
        if not first:
            return None
        head = self._held + bytes(view[:first])
        # A key block edge cut by the chunk boundary ends in ``head`` (it holds no newline).
        if _KEY_WORDS in head or not self._redactor.clean(view):
            return None
        size = len(buf)
        last = buf.rfind(b"\n") + 1
        if size - last > MAX_HELD_BYTES:
            last = size  # an overlong last line is written as it is (as _feed_general does)
        parts: list[bytes | bytearray | memoryview] = [self._redactor.data(head)]
        if last > first:
            parts.append(view[first:last])
        self._held = bytes(view[last:])
        return parts

    def _feed_general(self, chunk: bytes | bytearray | memoryview) -> bytes:
        """Any chunk: ``held + chunk`` redacted up to its last newline, key blocks held whole."""
        data = self._held + bytes(chunk)
        self._held = b""
        out: list[bytes] = []
        while data:
            if self._in_key:
                end = _CLOSE_KEY.search(data)
                if end is None:
                    self._held = data[-_END_OVERLAP:]
                    break
                data = data[end.end():]
                self._in_key = False
                continue
            opened = None
            for opened in _OPEN_KEY.finditer(data):
                pass
            if opened is not None and not _CLOSE_KEY.search(data, opened.end()):
                out.append(self._redactor.data(data[:opened.start()]))
                rest = data[opened.start():]
                if len(rest) <= MAX_HELD_BYTES:
                    self._held = rest
                else:
                    out.append(_KEY_TAG)
                    self._in_key = True
                    self._held = rest[-_END_OVERLAP:]
                break
            cut = data.rfind(b"\n") + 1
            if opened is not None:
                cut = _cut_outside_key_blocks(data, cut)
            if len(data) - cut > MAX_HELD_BYTES:
                cut = len(data)
            out.append(self._redactor.data(data[:cut]))
            self._held = data[cut:]
            break
        return b"".join(out)

    def flush(self) -> bytes:
        """Return whatever is still held, redacted (call once at the end)."""
        data, self._held = self._held, b""
        if self._in_key:
            self._in_key = False
            return b""
        opened = _OPEN_KEY.search(data)
        if opened is not None and not _CLOSE_KEY.search(data, opened.end()):  # a key cut off by the end
            return self._redactor.data(data[:opened.start()]) + _KEY_TAG
        return self._redactor.data(data)


def _cut_outside_key_blocks(data: bytes, cut: int) -> int:
    """``cut`` (an offset in ``data`` just after a newline), moved back to the start of the key
    block it would split: one that opens before it and closes after it (the data ended on its
    END line). Redacted apart, neither half of a block would match the key pattern."""
    nearest = None
    for nearest in _OPEN_KEY.finditer(data, 0, cut):  # a BEGIN line holds no newline
        pass
    if nearest is None:
        return cut
    closed = _CLOSE_KEY.search(data, nearest.end())
    return nearest.start() if closed is not None and closed.end() > cut else cut


def _bytes_view(chunk: bytes | bytearray | memoryview) -> tuple[memoryview, bytes | bytearray]:
    """``chunk`` as a byte view, and as a ``bytes``/``bytearray`` of the same bytes to search
    (its own buffer when the view covers a whole one, else a copy)."""
    view = memoryview(chunk).cast("B")
    base = view.obj
    if isinstance(base, (bytes, bytearray)) and view.contiguous and len(view) == len(base):
        return view, base
    return view, bytes(view)
