"""The ``read`` tool: a text file with line numbers, paged by ``offset`` / ``limit``.

Output follows ``cat -n`` (a right-aligned line number, a tab, the line), as Claude Code's Read
does, so the model can quote exact text back to ``edit``. Defaults follow Claude Code too: 2000
lines per call, lines over 2000 characters cut with a note. ``read`` is never middle-truncated
(DESIGN.md 4): it pages instead, so exact line spans survive. A long line pages too: ``column``
(1-based character) starts line ``offset`` there, and the note on a cut line gives the exact call
that shows its next 2000 characters (line splitting: ``read_lines``).

Also here: the text-file decoding helpers shared with ``edit`` and ``write`` (encoding and BOM
detection, binary-file check).
"""

from __future__ import annotations

import codecs
import difflib
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from pydantic import Field, ValidationInfo, field_validator

from .base import Capability, Tool, ToolArgs, ToolContext, ToolError, ToolOutput
from .names import show_name
from .paths import resolve_in_workspace, shown_path
from .read_lines import MAX_LINE_CHARS, Line, byte_lines, count_lines, skip_lines, wide_lines
from .view import ToolView, one_line

#: Bytes at the start of a file inspected for NUL bytes (git's binary heuristic uses 8000).
BINARY_CHECK_BYTES = 8192
#: Lines returned when ``limit`` is not given.
DEFAULT_LIMIT = 2000
#: Soft cap on one read's output (characters): whole lines stop being added past it.
MAX_READ_CHARS = 250_000
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


class ReadArgs(ToolArgs):
    """Arguments of ``read``."""

    path: str = Field(min_length=1, description="Path of the file, relative to the workspace root.")
    offset: int = Field(default=1, ge=1, description="1-based line number to start at (default 1).")
    limit: int = Field(
        default=DEFAULT_LIMIT, ge=1, description=f"Maximum number of lines to return (default {DEFAULT_LIMIT})."
    )
    column: int = Field(
        default=1, ge=1,
        description=(f"1-based character of line `offset` to start at (default 1), for reading along a line "
                     f"longer than {MAX_LINE_CHARS} characters; the note on a cut line gives the value."),
    )

    @field_validator("offset", "limit", "column", mode="before")
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
        f"says how many lines the file has and how to read more. A line over {MAX_LINE_CHARS} characters "
        "is cut with a note giving the call (with `column`) that shows the rest. Also reads saved full outputs of "
        "truncated tool results. Use glob to list files and grep to search them."
    )
    Args = ReadArgs
    capability = Capability.READ
    truncates_output = False

    def preview(self, args: ReadArgs, ctx: ToolContext) -> str:
        """Return ``read PATH`` with the line range when given."""
        span = f" from line {args.offset}" if args.offset > 1 else ""
        if args.column > 1:
            span += f" from line {args.offset}" if not span else ""
            span += f", character {args.column}"
        return f"read {args.path}{span}"


    def describe(self, args: ReadArgs) -> ToolView:
        """The path, with the line range when one was asked for: ``a.py [10:+5]``."""
        span = f" [{args.offset}:+{args.limit}]" if args.offset > 1 or args.limit != DEFAULT_LIMIT else ""
        return ToolView(title=self.name, summary=one_line(args.path) + span)

    def run(self, args: ReadArgs, ctx: ToolContext) -> ToolOutput:
        """Return numbered lines ``offset .. offset+limit-1`` of the file and a footer line.

        With ``column`` > 1, line ``offset`` is shown from that character (at most
        ``MAX_LINE_CHARS`` characters of it). Raises ``ToolError`` for a path outside the
        workspace, a missing file (with close names from the same folder), a directory or special
        file, a file that cannot be opened (permissions), a binary file, an offset past the end,
        a column past the end of its line.
        """
        path = resolve_in_workspace(args.path, ctx, reading=True)
        shown = shown_path(path, ctx)
        _check_readable(path, args.path)
        try:
            return self._read(path, shown, args)
        except OSError as exc:
            raise ToolError(f"cannot read {args.path}: {exc.strerror or exc}") from None

    def _read(self, path: Path, shown: str, args: ReadArgs) -> ToolOutput:
        start_at = (args.offset, args.column - 1) if args.column > 1 else None
        size = path.stat().st_size
        with open(path, "rb") as handle:
            sample = handle.read(BINARY_CHECK_BYTES)
            if is_binary_sample(sample):
                raise ToolError(
                    f"{args.path} is a binary file ({size} bytes; NUL bytes near its start); "
                    "read shows text files only"
                )
            found = detect_bom(sample)
            handle.seek(len(found[1]) if found else 0)
            if found is not None and found[0] != "utf-8":
                if size > _MAX_WIDE_FILE_BYTES:
                    raise ToolError(f"{args.path} is a {found[0]} file over 64 MB; read cannot page it")
                lines: Iterator[Line] = wide_lines(handle.read(), found[0], 0, start_at)
                before = sum(1 for _ in itertools.islice(lines, args.offset - 1))
            else:
                # Lines before and after the page are only counted (C speed), never decoded.
                before = skip_lines(handle, args.offset - 1)
                lines = byte_lines(handle, args.offset, start_at)
            if before < args.offset - 1:
                page = _Page(args.offset, args.offset - 1, before, [], False)
            else:
                page = _collect(lines, args.offset, args.limit, args.path)
                page.total += sum(1 for _ in lines) if found and found[0] != "utf-8" else count_lines(handle)
        if page.total == 0:
            return ToolOutput(text=f"(empty file: {shown} has 0 lines)", metadata={"path": shown, "total_lines": 0})
        if page.start > page.total:
            raise ToolError(
                f"offset {page.start} is past the end of {args.path}, which has {page.total} lines"
            )
        if args.column > max(page.first_length, 1):
            raise ToolError(
                f"column {args.column} is past the end of line {page.start} of {args.path}, "
                f"which has {page.first_length} characters"
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
    #: Length in characters of line ``start`` (for checking ``column``).
    first_length: int = 0


def _collect(lines: Iterator[Line], start: int, limit: int, path: str) -> _Page:
    """Render up to ``limit`` lines from ``lines``, the first being line ``start``; stops at the
    limit or when the output would pass ``MAX_READ_CHARS``. ``total`` counts the lines consumed."""
    rendered: list[str] = []
    used = 0
    end = start - 1
    size_limited = False
    first_length = 0
    consumed = 0
    for number, line in enumerate(lines, start=start):
        consumed += 1
        if number == start:
            first_length = line.length
        row = f"{number:6d}\t{_render(line, number, path)}"
        if rendered and used + len(row) > MAX_READ_CHARS:
            size_limited = True
            break
        rendered.append(row)
        used += len(row) + 1
        end = number
        if consumed >= limit:
            break
    return _Page(start, end, start - 1 + consumed, rendered, size_limited, first_length)


def _render(line: Line, number: int, path: str) -> str:
    """One line for display: NUL shown as U+2400; a note when only part of the line is shown,
    naming the call that shows the next part."""
    text = line.text.replace("\x00", "\u2400") if "\x00" in line.text else line.text
    last = line.first + len(line.text)
    if line.rest:
        where = (f"line cut at {last} of {line.length} chars" if line.first == 0
                 else f"characters {line.first + 1}-{last} of {line.length} shown")
        return (f"{text} [... {where}; the next {min(line.rest, MAX_LINE_CHARS)} of the "
                f"{line.rest} remaining: read(path={path!r}, offset={number}, limit=1, column={last + 1})]")
    if line.first:
        return f"{text} [characters {line.first + 1}-{last} of {line.length}: end of line {number}]"
    return text


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
    return ". Similar names in the same folder: " + ", ".join(show_name(name) for name in close)
