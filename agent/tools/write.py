"""The ``write`` tool (create or overwrite a whole file) and the atomic file write it shares with
``edit``.

Atomic means: the new bytes go to a temporary file in the same folder, are flushed to disk, and
replace the target with ``os.replace`` (one rename), so a crash or a full disk leaves either the old
file or the new one, never half of each. The file's permission bits are kept.
"""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path

from pydantic import Field

from .base import Capability, Tool, ToolArgs, ToolContext, ToolError, ToolOutput
from .diffs import diff_counts, unified_diff
from .paths import resolve_in_workspace, shown_path
from .read import BINARY_CHECK_BYTES, DecodedText, decode_bytes, encode_text, is_binary_sample
from .view import ToolView, one_line


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` (bytes) to ``path`` atomically, keeping an existing file's permission bits;
    a new file gets 0666 minus the umask. Raises ``OSError`` on failure (the target unchanged)."""
    try:
        old_mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        old_mode = None
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if old_mode is not None:
            os.chmod(tmp, old_mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def count_lines(text: str) -> int:
    """Number of lines in ``text`` (a last line without a newline counts; ``""`` has 0)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def uses_crlf(text: str) -> bool:
    """Whether most line ends in ``text`` are CRLF."""
    crlf = text.count("\r\n")
    return crlf > 0 and crlf * 2 >= text.count("\n")


class WriteArgs(ToolArgs):
    """Arguments of ``write``."""

    path: str = Field(min_length=1, description="Path of the file to create or overwrite, relative to the workspace root.")
    content: str = Field(description="The complete new content of the file.")


class WriteTool(Tool):
    """Create or overwrite a whole file (parent folders created), atomically, returning a diff."""

    name = "write"
    description = (
        "Create a file, or replace a file's whole content. Parent folders are created. Prefer `edit` "
        "for changing part of an existing file. An existing file keeps its encoding and CRLF line "
        "endings. The result says whether the file was created or overwritten."
    )
    Args = WriteArgs
    capability = Capability.MUTATING

    def preview(self, args: WriteArgs, ctx: ToolContext) -> str:
        """Return ``write PATH (N lines)``."""
        return f"write {args.path} ({count_lines(args.content)} lines)"

    def describe(self, args: WriteArgs) -> ToolView:
        """The path and the line count, the diff body."""
        lines = count_lines(args.content)
        return ToolView(title=self.name, summary=f"{one_line(args.path)} ({lines} line{'s' if lines != 1 else ''})",
                        body="diff", path=args.path)

    def proposed_diff(self, args: WriteArgs, ctx: ToolContext) -> str | None:
        """The diff the write would make to the file on disk (None for a binary file, or when the
        write would fail)."""
        try:
            _path, shown, old_bytes, old, content, _data, _notes = self._change(args, ctx)
        except ToolError:
            return None
        if old_bytes is None:
            return unified_diff("", content, shown, created=True)
        if old is None:
            return None
        return unified_diff(old.text, content, shown) or f"(no change to {shown})"

    def run(self, args: WriteArgs, ctx: ToolContext) -> ToolOutput:
        """Write ``args.content`` to the file; ``ToolOutput.diff`` holds the change.

        New files are UTF-8. Overwriting keeps the old file's encoding/BOM when the content can be
        encoded in it (else UTF-8) and converts LF to CRLF when the old file used CRLF. Raises
        ``ToolError`` for a path outside the workspace, a directory, a device, socket or pipe,
        or an I/O error.
        """
        path, shown, old_bytes, old, content, data, notes = self._change(args, ctx)
        if old_bytes == data:
            return ToolOutput(text=f"{shown} unchanged: the content is identical", metadata={"path": shown})
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, data)
        except OSError as exc:
            raise ToolError(f"cannot write {args.path}: {exc.strerror or exc}") from None
        lines = count_lines(content)
        if old_bytes is None:
            summary = f"Created {shown} ({lines} lines)"
            diff = unified_diff("", content, shown, created=True)
        elif old is None:
            summary = f"Overwrote binary file {shown} with text ({lines} lines)"
            diff = None
        else:
            summary = f"Overwrote {shown} ({lines} lines, was {count_lines(old.text)})"
            diff = unified_diff(old.text, content, shown)
        if notes:
            summary += "; " + "; ".join(notes)
        added, removed = diff_counts(diff or "")
        return ToolOutput(
            text=summary,
            diff=diff,
            metadata={"path": shown, "created": old_bytes is None, "added": added, "removed": removed},
        )

    def _change(self, args: WriteArgs, ctx: ToolContext
                ) -> tuple[Path, str, bytes | None, DecodedText | None, str, bytes, list[str]]:
        """Work out the write without writing: the path, its shown name, the old bytes (None: a
        new file) and decoded text (None: binary), the content as it will be written (line ends
        kept), its bytes, and notes for the result. Raises ``ToolError`` as ``run`` documents."""
        path = resolve_in_workspace(args.path, ctx)
        shown = shown_path(path, ctx)
        if path.is_dir():
            raise ToolError(f"{args.path} is a directory; give a file path")
        old_bytes: bytes | None = None
        if path.exists() and not path.is_file():  # opening a FIFO would block; a device could be anything
            raise ToolError(f"{args.path} is not a regular file (device, socket or pipe); write replaces "
                            "regular files only")
        if path.exists():
            try:
                old_bytes = path.read_bytes()
            except OSError as exc:
                raise ToolError(f"cannot read the existing {args.path}: {exc.strerror or exc}") from None
        content = args.content
        old: DecodedText | None = None
        notes: list[str] = []
        if old_bytes is not None and not is_binary_sample(old_bytes[:BINARY_CHECK_BYTES]):
            old = decode_bytes(old_bytes)
            if uses_crlf(old.text) and "\r\n" not in content and "\n" in content:
                content = content.replace("\n", "\r\n")
                notes.append("kept CRLF line endings")
        data = _encode(content, old, args.path, notes)
        return path, shown, old_bytes, old, content, data, notes


def _encode(content: str, old: DecodedText | None, given: str, notes: list[str]) -> bytes:
    if old is not None and (old.encoding != "utf-8" or old.bom):
        try:
            return encode_text(content, old)
        except UnicodeEncodeError:
            notes.append(f"written as UTF-8: the content does not fit the file's {old.encoding} encoding")
    try:
        return content.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError(f"content for {given} contains an invalid character (a lone surrogate)") from None
