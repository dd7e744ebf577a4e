"""Normalising tool output before it is measured and sent to the model.

ANSI escape sequences (SGR colours, cursor moves, OSC titles) are removed, CRLF becomes LF, a
line made of CR-separated progress frames keeps only its last frame, backspace overstrikes are
resolved, NUL becomes U+2400 and other control characters are dropped, a byte that is not UTF-8
(decoded with ``surrogateescape``) becomes the text ``\\xNN`` and other lone surrogates U+FFFD. Binary output (NUL bytes or mostly invalid UTF-8 in the first 8 KB) is recognised by
``looks_binary_output``. ``display_output`` keeps the colours for the UI.
"""

from __future__ import annotations

import codecs
import re

#: Bytes inspected to decide whether output is binary.
BINARY_SAMPLE_BYTES = 8192

_ESCAPE_RE = re.compile(
    r"\x1b(?:"
    r"\[[0-?]*[ -/]*(?:[@-~]|\Z)"  # CSI (SGR colours, cursor moves); unfinished at the end too
    r"|\][^\x07\x1b]*(?:\x07|\x1b\\|\Z)"  # OSC (titles, hyperlinks), ended by BEL or ST
    r"|[PX^_][^\x1b]*(?:\x1b\\|\Z)"  # DCS, SOS, PM, APC strings
    r"|[ -/]+[0-~]?"  # nF escapes such as charset selection
    r"|[0-~]"  # two-character escapes (ESC 7, ESC M, ESC c ...)
    r"|\Z)"
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
_CR_LINE_RE = re.compile(r"[^\n]*\r[^\n]*")
_OVERSTRIKE_RE = re.compile(r"[^\n\x08]\x08")
_CONTROL_RE = re.compile(r"[\x01-\x08\x0b-\x1f\x7f-\x9f]")
_BINARY_CONTROL_RE = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


_SGR_RE = re.compile(r"\x1b\[[0-9;:]*m")


def display_output(text: str) -> str:
    """Return ``text`` normalised like ``normalize_output`` but with SGR colour codes kept (for
    the UI, which renders them; every other escape sequence is removed)."""
    if "\x1b" not in text:
        return normalize_output(text)
    kept: list[str] = []

    def stash(match: re.Match[str]) -> str:
        kept.append(match.group())
        return f"\ue000{len(kept) - 1}\ue001"

    protected = normalize_output(_SGR_RE.sub(stash, text.replace("\ue000", "").replace("\ue001", "")))
    return re.sub("\ue000(\\d+)\ue001", lambda m: kept[int(m.group(1))], protected)


def normalize_output(text: str) -> str:
    """Return ``text`` as the model and the UI should see it (characters in, characters out).

    Removes ANSI/VT escape sequences, turns CRLF into LF, keeps only the last non-empty
    CR-separated frame of each line (progress bars), resolves ``x\\b`` overstrikes, replaces NUL
    with U+2400, drops other C0/C1 control characters except tab and newline, and shows each
    surrogate-escaped byte as ``\\xNN`` (``escape_undecodable``). Line count is preserved: a line of the input is a line of the output.
    """
    if "\x1b" in text or "\x9b" in text:
        text = _ESCAPE_RE.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:
            text = _CR_LINE_RE.sub(_last_frame, text)
    if "\x08" in text:
        text = _OVERSTRIKE_RE.sub("", text)
    if "\x00" in text:
        text = text.replace("\x00", "\u2400")
    text = _CONTROL_RE.sub("", text)
    return escape_undecodable(text)


def escape_undecodable(text: str, backslash: str = "\\") -> str:
    """Return ``text`` as valid UTF-8 text: each surrogate-escaped byte (U+DC80..U+DCFF, as
    ``os.fsdecode`` and the ``surrogateescape`` handler produce) becomes ``\\xNN`` (lower-case
    hex); any other lone surrogate becomes U+FFFD. ``backslash`` is what is written for the
    backslash: ``"\\\\"`` for text that is already JSON, where a backslash is written twice."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        def show(match: re.Match[str]) -> str:
            code = ord(match.group())
            return f"{backslash}x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else "\ufffd"

        return _SURROGATE_RE.sub(show, text)
    return text


def _last_frame(match: re.Match[str]) -> str:
    for frame in reversed(match.group().split("\r")):
        if frame:
            return frame
    return ""


def looks_binary_output(sample: bytes) -> bool:
    """Return whether command output looks binary, judging its first 8 KB (bytes).

    Binary means at least 4 suspicious bytes making up more than 10% of the sample, counting NUL,
    control characters other than tab/newline/CR/FF/ESC, and bytes that are not valid UTF-8.
    Text with a few stray NULs (``find -print0``) or one odd byte (a latin-1 file name) stays
    text. (A lower bar than ``git``'s any-NUL rule, which is meant for files.)
    """
    sample = sample[:BINARY_SAMPLE_BYTES]
    text = codecs.getincrementaldecoder("utf-8")("ignore").decode(sample, final=False)
    if not sample:
        return False
    invalid = max(0, len(sample) - len(text.encode("utf-8")) - _incomplete_tail(sample))
    bad = invalid + len(_BINARY_CONTROL_RE.findall(text))
    return bad >= 4 and bad * 10 > len(sample)


def _incomplete_tail(data: bytes) -> int:
    """Bytes of a UTF-8 sequence cut at the end of ``data`` (0-3), not counted as invalid."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return 0
        if byte >= 0xC0:
            if not 0xC2 <= byte <= 0xF4:
                return 0  # never a valid lead byte
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return back if back < need else 0
    return 0


def encode_text(text: str) -> bytes:
    """UTF-8 bytes of ``text``; surrogate-escaped bytes become the bytes they stand for (other
    lone surrogates, when present, are encoded as they are)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def decode_prefix(data: bytes) -> str:
    """Decode a byte prefix as UTF-8, holding back a sequence cut at the end; an invalid byte
    becomes a surrogate (``surrogateescape``), which ``normalize_output`` shows as ``\\xNN``."""
    return codecs.getincrementaldecoder("utf-8")("surrogateescape").decode(data, final=False)


def decode_suffix(data: bytes) -> str:
    """Decode a byte suffix as UTF-8, skipping continuation bytes of a sequence cut at the start;
    an invalid byte becomes a surrogate (``surrogateescape``)."""
    start = 0
    while start < min(3, len(data)) and 0x80 <= data[start] < 0xC0:
        start += 1
    return data[start:].decode("utf-8", "surrogateescape")
