"""File names that are not valid UTF-8, shown to the model and read back from it.

Inside the agent a name is a ``str`` as ``os.fsdecode`` gives it: each byte that is not part of
valid UTF-8 is a lone surrogate U+DC80..U+DCFF (Python's ``surrogateescape``), so the name maps
back to the exact bytes on disk. Such a string cannot be sent as UTF-8 (JSON, the terminal), so in
tool output each of those bytes is written as the four characters ``\\xNN`` (``café`` in latin-1
is ``caf\\xe9.txt``), and path arguments accept the same escape.

To keep the two directions exact, a backslash in a real name that is followed by ``xNN`` is shown
as ``\\x5c`` (so a file literally named ``a\\xe9`` is shown ``a\\x5cxe9``); every other backslash
is shown as it is.
"""

from __future__ import annotations

import os
import re

from ..context.truncation.normalise import escape_undecodable

__all__ = ["escape_undecodable", "parse_name", "show_bytes", "show_name"]

#: ``\\xNN`` as the model writes it (two hex digits, either case).
_ESCAPE_RE = re.compile(r"\\x([0-9a-fA-F]{2})")
#: A real backslash that would read as an escape.
_AMBIGUOUS_RE = re.compile(r"\\(?=x[0-9a-fA-F]{2})")


def show_name(name: str) -> str:
    """Return ``name`` (a ``str`` with surrogate-escaped bytes) as valid UTF-8 text for output.

    Each byte U+DC80..U+DCFF becomes ``\\xNN`` (lower-case hex), a backslash that starts
    ``\\xNN`` becomes ``\\x5c``, any other lone surrogate becomes U+FFFD. ``parse_name`` reverses it.
    """
    if "\\" in name:
        name = _AMBIGUOUS_RE.sub(r"\\x5c", name)
    return escape_undecodable(name)


def parse_name(text: str) -> str:
    """Return the internal name (surrogate-escaped) for a path written by the model.

    ``\\xNN`` with NN from 80 to ff becomes that raw byte, ``\\x5c`` a backslash; other text is
    kept as written (``\\x41`` stays the four characters). The result is normalised through the
    file-system encoding, so escaped bytes that form valid UTF-8 (``caf\\xc3\\xa9``) name the same
    file as the characters they encode (``café``). Never raises.
    """
    if "\\x" not in text:
        return text

    def unescape(match: re.Match[str]) -> str:
        value = int(match.group(1), 16)
        if value == 0x5C:
            return "\\"
        return chr(0xDC00 + value) if value >= 0x80 else match.group()

    parsed = _ESCAPE_RE.sub(unescape, text)
    try:
        return os.fsdecode(os.fsencode(parsed))
    except UnicodeError:
        return parsed


def show_bytes(data: bytes) -> str:
    """Decode ``data`` (bytes, e.g. command output) as UTF-8, each invalid byte shown as ``\\xNN``."""
    return escape_undecodable(data.decode("utf-8", "surrogateescape"))
