"""The ``read`` tool: a text file with line numbers, paged by ``offset`` / ``limit``.

Output follows ``cat -n`` (a right-aligned line number, a tab, the line), as Claude Code's Read
does, so the model can quote exact text back to ``edit``. Defaults follow Claude Code too: 2000
lines per call, lines over 2000 characters cut with a note. ``read`` is never middle-truncated
(DESIGN.md 4): it pages instead, so exact line spans survive.

Also here: the text-file decoding helpers shared with ``edit`` and ``write`` (encoding and BOM
detection, binary-file check).
"""

from __future__ import annotations

import codecs
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from pydantic import Field, ValidationInfo, field_validator

from .base import Capability, Tool, ToolArgs, ToolContext, ToolError, ToolOutput
from .view import ToolView, one_line
from .paths import display_path, resolve_in_workspace

#: Bytes at the start of a file inspected for NUL bytes (git's binary heuristic uses 8000).
BINARY_CHECK_BYTES = 8192
#: Lines returned when ``limit`` is not given.
DEFAULT_LIMIT = 2000
#: Longer lines are cut to this many characters with a note.
MAX_LINE_CHARS = 2000
#: Soft cap on one read's output (characters): whole lines stop being added past it.
MAX_READ_CHARS = 250_000
#: Bytes of one line kept for display (the rest is only counted).
_LINE_KEEP_BYTES = 4 * MAX_LINE_CHARS + 16
#: UTF-16/32 files (whole-file decode) larger than this are refused (bytes).
_MAX_WIDE_FILE_BYTES = 64 << 20

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(frozen=True)
class DecodedText:
    """A decoded text file: ``text`` (BOM removed), the codec ``encoding`` that round-trips it, and
    the ``bom`` bytes to write back first (``b""`` when none)."""

    text: str
    encoding: str
    bom: bytes = b""


def detect_bom(data: bytes) -> tuple[str, bytes] | None:
    """Return ``(codec, bom_bytes)`` when ``data`` starts with a Unicode BOM, else ``None``."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding, bom
    return None


def is_binary_sample(sample: bytes) -> bool:
    """Return whether a file whose first bytes are ``sample`` is binary: a NUL byte in the first
    8 KB, unless a UTF-16/32 BOM explains the NULs."""
    if detect_bom(sample) is not None:
        return False
    return b"\x00" in sample[:BINARY_CHECK_BYTES]


def decode_bytes(data: bytes) -> DecodedText:
    """Decode a whole text file without ever failing.

    Order: a BOM's codec; strict UTF-8; strict cp1252 (Windows Western text); latin-1, which maps
    every byte and so round-trips anything. ``encode_text`` reverses it byte for byte.
    """
    found = detect_bom(data)
    if found is not None:
        encoding, bom = found
        return DecodedText(data[len(bom) :].decode(encoding, "replace"), encoding, bom)
    for encoding in ("utf-8", "cp1252"):
        try:
            return DecodedText(data.decode(encoding), encoding)
        except UnicodeDecodeError:
            continue
    return DecodedText(data.decode("latin-1"), "latin-1")


def encode_text(text: str, like: DecodedText) -> bytes:
    """Encode ``text`` with the encoding and BOM of ``like``.

    Raises ``UnicodeEncodeError`` when ``text`` has characters that encoding cannot represent.
    """
    return like.bom + text.encode(like.encoding)


def _decode_line(raw: bytes, encoding: str | None) -> str:
    if encoding is not None:
        return raw.decode(encoding, "replace")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        try:
            return raw.decode("cp1252")
        except UnicodeDecodeError:
            return raw.decode("latin-1")


class ReadArgs(ToolArgs):
    """Arguments of ``read``."""

    path: str = Field(min_length=1, description="Path of the file, relative to the workspace root.")
    offset: int = Field(default=1, ge=1, description="1-based line number to start at (default 1).")
    limit: int = Field(
        default=DEFAULT_LIMIT, ge=1, description=f"Maximum number of lines to return (default {DEFAULT_LIMIT})."
    )

    @field_validator("offset", "limit", mode="before")
    @classmethod
    def _null_is_default(cls, value: Any, info: ValidationInfo) -> Any:
        """Models often send ``null`` for an optional argument: treat it as absent."""
        return cls.model_fields[info.field_name].default if value is None else value


class ReadTool(Tool):
    """Read a text file with line numbers; refuses binary files and directories."""

    name = "read"
    description = (
        "Read a text file. Lines come numbered like `cat -n` (number, tab, text); the numbers are not "
        f"part of the file. Returns up to {DEFAULT_LIMIT} lines from `offset` (1-based); the last line "
        "says how many lines the file has and how to read more. Also reads saved full outputs of "
        "truncated tool results. Use glob to list files and grep to search them."
    )
    Args = ReadArgs
    capability = Capability.READ
    truncates_output = False

    def preview(self, args: ReadArgs, ctx: ToolContext) -> str:
        """Return ``read PATH`` with the line range when given."""
        span = f" from line {args.offset}" if args.offset > 1 else ""
        return f"read {args.path}{span}"


    def describe(self, args: ReadArgs) -> ToolView:
        """The path, with the line range when one was asked for: ``a.py [10:+5]``."""
        span = f" [{args.offset}:+{args.limit}]" if args.offset > 1 or args.limit != DEFAULT_LIMIT else ""
        return ToolView(title=self.name, summary=one_line(args.path) + span)

    def run(self, args: ReadArgs, ctx: ToolContext) -> ToolOutput:
        """Return numbered lines ``offset .. offset+limit-1`` of the file and a footer line.

        Raises ``ToolError`` for a path outside the workspace, a missing file (with close names
        from the same folder), a directory or special file, a binary file, an offset past the end.
        """
        path = resolve_in_workspace(args.path, ctx, reading=True)
        shown = display_path(path, ctx)
        _check_readable(path, args.path)
        size = path.stat().st_size
        with open(path, "rb") as handle:
            sample = handle.read(BINARY_CHECK_BYTES)
            if is_binary_sample(sample):
                raise ToolError(
                    f"{args.path} is a binary file ({size} bytes; NUL bytes near its start); "
                    "read shows text files only"
                )
            handle.seek(0)
            found = detect_bom(sample)
            if found is not None and found[0] != "utf-8":
                if size > _MAX_WIDE_FILE_BYTES:
                    raise ToolError(f"{args.path} is a {found[0]} file over 64 MB; read cannot page it")
                lines: Iterator[tuple[str, bool]] = _wide_lines(handle.read(), found[0], len(found[1]))
            else:
                lines = _byte_lines(handle, skip=len(found[1]) if found else 0)
            page = _collect(lines, args.offset, args.limit)
        if page.total == 0:
            return ToolOutput(text=f"(empty file: {shown} has 0 lines)", metadata={"path": shown, "total_lines": 0})
        if page.start > page.total:
            raise ToolError(
                f"offset {page.start} is past the end of {args.path}, which has {page.total} lines"
            )
        if page.end < page.total:
            reason = " (output size limit)" if page.size_limited else ""
            footer = (
                f"[lines {page.start}-{page.end} of {page.total}{reason}; more remain: "
                f"read(path={args.path!r}, offset={page.end + 1})]"
            )
        else:
            footer = f"[end of file: {page.total} lines in total]"
        text = "\n".join(page.rendered + [footer])
        return ToolOutput(
            text=text,
            metadata={"path": shown, "total_lines": page.total, "start": page.start, "end": page.end},
        )


@dataclass
class _Page:
    start: int
    end: int
    total: int
    rendered: list[str]
    size_limited: bool


def _collect(lines: Iterator[tuple[str, bool]], start: int, limit: int) -> _Page:
    """Render lines ``start .. start+limit-1`` and count the rest (memory: one page)."""
    rendered: list[str] = []
    used = 0
    end = start - 1
    size_limited = False
    total = 0
    for number, (line, whole) in enumerate(lines, start=1):
        total = number
        if number < start or size_limited or number >= start + limit:
            continue
        row = f"{number:6d}\t{_clean(line, whole)}"
        if rendered and used + len(row) > MAX_READ_CHARS:
            size_limited = True
            continue
        rendered.append(row)
        used += len(row) + 1
        end = number
    return _Page(start, end, total, rendered, size_limited)


def _clean(line: str, whole: bool) -> str:
    """Prepare one line for display: drop its CR, show NUL as U+2400, cut it when too long."""
    if line.endswith("\r"):
        line = line[:-1]
    if "\x00" in line:
        line = line.replace("\x00", "\u2400")
    if len(line) > MAX_LINE_CHARS or not whole:
        size = f"{len(line)} chars" if whole else f"more than {len(line)} chars"
        line = line[:MAX_LINE_CHARS] + f" [... line cut at {MAX_LINE_CHARS} of {size}]"
    return line


def _byte_lines(handle: BinaryIO, skip: int) -> Iterator[tuple[str, bool]]:
    """Yield ``(text, whole)`` per ``\\n``-separated line of a byte-oriented file.

    Reads in bounded pieces so one enormous line never sits in memory whole (``whole`` is false
    when only its first bytes were kept); each line is decoded alone (UTF-8, else cp1252, else
    latin-1) so a stray legacy line in a UTF-8 file still shows correctly.
    """
    handle.seek(skip)
    kept = bytearray()
    length = 0
    while True:
        piece = handle.readline(1 << 20)
        if not piece:
            break
        length += len(piece)
        if len(kept) < _LINE_KEEP_BYTES:
            kept += piece[: _LINE_KEEP_BYTES - len(kept)]
        if not piece.endswith(b"\n"):
            continue
        yield _finish_line(kept, length)
        kept = bytearray()
        length = 0
    if length:
        yield _finish_line(kept, length)


def _finish_line(kept: bytearray, length: int) -> tuple[str, bool]:
    if len(kept) == length:
        raw = bytes(kept[:-1] if kept.endswith(b"\n") else kept)
        return _decode_line(raw, None), True
    return codecs.getincrementaldecoder("utf-8")("replace").decode(bytes(kept), final=False), False


def _wide_lines(data: bytes, encoding: str, skip: int) -> Iterator[tuple[str, bool]]:
    text = data[skip:].decode(encoding, "replace")
    if text.endswith("\n"):
        text = text[:-1]
    if not text and not data[skip:]:
        return
    for line in text.split("\n"):
        yield line, True


def _check_readable(path: Path, given: str) -> None:
    """Raise ``ToolError`` unless ``path`` is an existing regular file."""
    if path.is_dir():
        raise ToolError(f"{given} is a directory; use glob(pattern='*', path={given!r}) to list it")
    if not path.exists():
        raise ToolError(f"file not found: {given}{similar_names_hint(path)}")
    if not path.is_file():
        raise ToolError(f"{given} is not a regular file (device, socket or pipe); read cannot open it")


def similar_names_hint(path: Path) -> str:
    """Return ". Similar names in the same folder: a, b" for a missing ``path``, or "" when none."""
    parent = path.parent
    try:
        names = [entry.name for entry in parent.iterdir()] if parent.is_dir() else []
    except OSError:
        return ""
    close = difflib.get_close_matches(path.name, names[:5000], n=3, cutoff=0.6)
    if not close:
        return ""
    return ". Similar names in the same folder: " + ", ".join(close)
