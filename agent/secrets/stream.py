"""Redacting a byte stream written in chunks (the saved full output of a tool call).

Secrets do not span lines, except private key blocks: a chunk is redacted up to its last
newline and the rest is held for the next chunk; an open ``BEGIN ... PRIVATE KEY`` block is held
until its end. What is held is bounded (``MAX_HELD_BYTES``): past it, it is redacted and written
as it is.
"""

from __future__ import annotations

import re

from .redact import Redactor, default_redactor

#: The most bytes held back between chunks (a line or an unfinished key block).
MAX_HELD_BYTES = 64 * 1024
_OPEN_KEY = re.compile(rb"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_CLOSE_KEY = re.compile(rb"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")


class StreamRedactor:
    """Feed chunks in order (``feed``), then ``flush``; each returns the redacted bytes ready to
    be written. ``redactor``: the process-wide one by default. Not thread-safe (one writer)."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        self._redactor = redactor or default_redactor()
        self._held = b""

    def feed(self, chunk: bytes | bytearray | memoryview) -> bytes:
        """Return the redacted part of ``held + chunk`` that can be written now."""
        data = self._held + bytes(chunk)
        cut = data.rfind(b"\n") + 1
        opened = None
        for opened in _OPEN_KEY.finditer(data):
            pass
        if opened is not None and not _CLOSE_KEY.search(data, opened.end()):
            cut = min(cut, opened.start()) if cut else opened.start()
        if len(data) - cut > MAX_HELD_BYTES:
            cut = len(data)
        self._held = data[cut:]
        return self._redactor.data(data[:cut])

    def flush(self) -> bytes:
        """Return whatever is still held, redacted (call once at the end)."""
        data, self._held = self._held, b""
        return self._redactor.data(data)
