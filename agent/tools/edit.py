"""The ``edit`` tool: exact string replacement in one file.

Semantics follow Claude Code's Edit: ``old_string`` must occur exactly once unless
``replace_all`` is set; zero or several matches is an error the model can act on (ours says which
lines and why). The file keeps its encoding, BOM and line endings: in a CRLF file an
``old_string`` written with LF still matches and the replacement is written with CRLF. Bytes
outside the replaced span are written back unchanged. The write is atomic (see ``write.py``).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from .base import Capability, Tool, ToolArgs, ToolContext, ToolError, ToolOutput
from .diffs import diff_counts, unified_diff
from .paths import resolve_in_workspace, shown_path
from .read import BINARY_CHECK_BYTES, decode_bytes, encode_text, is_binary_sample, similar_names_hint
from .view import ToolView, one_line
from .write import atomic_write, count_lines, uses_crlf

#: Line numbers listed in a "several matches" error.
_MAX_LISTED = 20
#: Lines shown around a single replacement in the result.
_SNIPPET_CONTEXT = 2
_SNIPPET_MAX_LINES = 30
#: Lines scanned for hints when nothing matched.
_HINT_SCAN_LINES = 200_000
_LINE_PREFIX_RE = re.compile(r"^ *\d+\t", re.M)
_SPACES_RE = re.compile(r"\s+")


class EditArgs(ToolArgs):
    """Arguments of ``edit``."""

    path: str = Field(min_length=1, description="Path of the file to change, relative to the workspace root.")
    old_string: str = Field(
        description=(
            "The exact text to replace, copied from the file without read's line-number prefixes, "
            "with enough surrounding lines to occur only once. Empty only to create a new file."
        )
    )
    new_string: str = Field(description="The text that replaces old_string.")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence instead of requiring exactly one."
    )


class EditTool(Tool):
    """Replace an exact, unique string in a file; returns a diff."""

    name = "edit"
    description = (
        "Replace exact text in a file. `old_string` must match the file exactly (whitespace included) "
        "and occur once, unless `replace_all` is true. Read the file first. An empty `old_string` on a "
        "missing file creates it with `new_string`."
    )
    Args = EditArgs
    capability = Capability.MUTATING

    def preview(self, args: EditArgs, ctx: ToolContext) -> str:
        """Return ``edit PATH: -N +M lines``."""
        removed = args.old_string.count("\n") + 1 if args.old_string else 0
        added = args.new_string.count("\n") + 1 if args.new_string else 0
        every = " (all occurrences)" if args.replace_all else ""
        return f"edit {args.path}: -{removed} +{added} lines{every}"

    def describe(self, args: EditArgs) -> ToolView:
        """The path, the diff body."""
        every = "  (all occurrences)" if args.replace_all else ""
        return ToolView(title=self.name, summary=one_line(args.path) + every, body="diff", path=args.path)

    def proposed_diff(self, args: EditArgs, ctx: ToolContext) -> str | None:
        """The diff the edit would make to the file on disk; when it cannot apply (text not
        found, binary file...), the bare replacement ``old_string`` → ``new_string``."""
        try:
            change = self._change(args, ctx)
        except ToolError:
            shown = args.path
            return unified_diff(args.old_string, args.new_string, shown, context=0) or None
        return unified_diff(change.old_text, change.new_text, change.shown, created=change.created)

    def run(self, args: EditArgs, ctx: ToolContext) -> ToolOutput:
        """Apply the replacement and return a summary with the changed lines; ``diff`` set.

        Raises ``ToolError`` when the path is outside the workspace, the file is missing (unless
        creating), binary or a directory, ``old_string`` is not found (with a hint) or is found
        several times without ``replace_all`` (with the line numbers), or the new text cannot be
        encoded in the file's encoding.
        """
        change = self._change(args, ctx)
        try:
            if change.created:
                change.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(change.path, change.new_data)
        except OSError as exc:
            verb = "create" if change.created else "write"
            raise ToolError(f"cannot {verb} {args.path}: {exc.strerror or exc}") from None
        shown = change.shown
        diff = unified_diff(change.old_text, change.new_text, shown, created=change.created)
        added, removed = diff_counts(diff)
        metadata = {"path": shown, "created": change.created, "added": added, "removed": removed}
        if change.created:
            return ToolOutput(text=f"Created {shown} ({count_lines(change.new_text)} lines)", diff=diff,
                              metadata=metadata)
        replaced_at = change.replaced_at
        count = len(replaced_at)
        where = ", ".join(map(str, replaced_at[:_MAX_LISTED])) + (", ..." if count > _MAX_LISTED else "")
        summary = f"Edited {shown}: replaced {count} occurrence{'s' if count != 1 else ''} (line {where})."
        if count == 1:
            summary += "\n" + _snippet(change.new_text, replaced_at[0], change.replacement)
        return ToolOutput(text=summary, diff=diff, metadata=metadata)

    def _change(self, args: EditArgs, ctx: ToolContext) -> "_Change":
        """Work out the edit without writing; raises ``ToolError`` as ``run`` documents."""
        path = resolve_in_workspace(args.path, ctx)
        shown = shown_path(path, ctx)
        if path.is_dir():
            raise ToolError(f"{args.path} is a directory; give a file path")
        if not path.exists():
            return self._create(args, path, shown)
        if not path.is_file():
            raise ToolError(f"{args.path} is not a regular file")
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ToolError(f"cannot read {args.path}: {exc.strerror or exc}") from None
        if is_binary_sample(data[:BINARY_CHECK_BYTES]):
            raise ToolError(f"{args.path} is a binary file; edit changes text files only")
        decoded = decode_bytes(data)
        text = decoded.text
        replaced_at: list[int] = []
        if args.old_string == "":
            if text.strip():
                raise ToolError(
                    f"old_string is empty but {args.path} is not empty; give the exact text to replace "
                    "(or use write to replace the whole file)"
                )
            new_text, new = args.new_string, args.new_string
            replaced_at = [1]
        else:
            if args.old_string == args.new_string:
                raise ToolError("old_string and new_string are identical; there is nothing to change")
            old, new = _match_variant(text, args.old_string, args.new_string)
            positions = _find_all(text, old)
            if not positions:
                raise ToolError(f"old_string was not found in {args.path}. {_not_found_hint(text, args.old_string)}")
            if len(positions) > 1 and not args.replace_all:
                lines = _line_numbers(text, positions)
                listed = ", ".join(map(str, lines[:_MAX_LISTED])) + (", ..." if len(lines) > _MAX_LISTED else "")
                raise ToolError(
                    f"old_string occurs {len(positions)} times in {args.path} (at lines {listed}); "
                    "include more surrounding lines to make it unique, or set replace_all=true to "
                    "replace every occurrence"
                )
            if not args.replace_all:
                positions = positions[:1]
            new_text = text.replace(old, new) if args.replace_all else text.replace(old, new, 1)
            replaced_at = _new_line_numbers(text, positions, old, new)
        try:
            new_data = encode_text(new_text, decoded)
        except UnicodeEncodeError as exc:
            bad = exc.object[exc.start : exc.end]
            raise ToolError(
                f"new_string contains {bad!r}, which the file's {decoded.encoding} encoding cannot "
                "represent; use characters the file's encoding supports"
            ) from None
        return _Change(path, shown, text, new_text, new_data, False, replaced_at, new)

    def _create(self, args: EditArgs, path: Path, shown: str) -> "_Change":
        if args.old_string != "":
            raise ToolError(
                f"file not found: {args.path}{similar_names_hint(path)}. To create a file, use write "
                "(or edit with an empty old_string)"
            )
        try:
            data = args.new_string.encode("utf-8")
        except UnicodeEncodeError:
            raise ToolError("new_string contains an invalid character (a lone surrogate)") from None
        return _Change(path, shown, "", args.new_string, data, True, [1], args.new_string)


@dataclass(frozen=True)
class _Change:
    """An edit worked out but not written: the file, its text before and after (str), the bytes to
    write, whether it creates the file, the 1-based lines where replacements start, and the
    replacement text as matched to the file's line endings."""

    path: Path
    shown: str
    old_text: str
    new_text: str
    new_data: bytes
    created: bool
    replaced_at: list[int]
    replacement: str


def _to_crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def _match_variant(text: str, old: str, new: str) -> tuple[str, str]:
    """Return the (old, new) pair to use in ``text``, adapted to its line endings."""
    if uses_crlf(text):
        old_crlf, new_crlf = _to_crlf(old), _to_crlf(new)
        if old_crlf in text:
            return old_crlf, new_crlf
        return old, new
    if old in text:
        return old, new
    if "\r\n" in old:
        old_lf, new_lf = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
        if old_lf in text:
            return old_lf, new_lf
    return old, new


def _find_all(text: str, needle: str) -> list[int]:
    """Start indexes of the non-overlapping occurrences of ``needle`` (as ``str.replace`` sees them)."""
    positions: list[int] = []
    start = text.find(needle)
    while start >= 0:
        positions.append(start)
        start = text.find(needle, start + len(needle))
    return positions


def _line_numbers(text: str, positions: list[int]) -> list[int]:
    numbers: list[int] = []
    line, last = 1, 0
    for pos in positions:
        line += text.count("\n", last, pos)
        last = pos
        numbers.append(line)
    return numbers


def _new_line_numbers(text: str, positions: list[int], old: str, new: str) -> list[int]:
    """1-based line numbers, in the new text, where each replacement starts."""
    shift = new.count("\n") - old.count("\n")
    return [line + i * shift for i, line in enumerate(_line_numbers(text, positions))]


def _snippet(text: str, start_line: int, new: str) -> str:
    """Numbered lines around the replacement (like read's output) so the model sees the result."""
    lines = text.split("\n")
    first = max(1, start_line - _SNIPPET_CONTEXT)
    last = min(len(lines), start_line + new.count("\n") + _SNIPPET_CONTEXT)
    last = min(last, first + _SNIPPET_MAX_LINES - 1)
    rows = [f"{n:6d}\t{lines[n - 1].rstrip(chr(13))[:500]}" for n in range(first, last + 1)]
    return "\n".join(rows)


def _norm(line: str) -> str:
    return _SPACES_RE.sub(" ", line).strip()


def _not_found_hint(text: str, old: str) -> str:
    """Explain the likeliest reason ``old`` did not match ``text``."""
    if _LINE_PREFIX_RE.search(old):
        stripped = _LINE_PREFIX_RE.sub("", old)
        if stripped and stripped.replace("\r\n", "\n") in text.replace("\r\n", "\n"):
            return (
                "old_string contains read's line-number prefixes (spaces, a number and a tab); they are "
                "not part of the file: remove them"
            )
    file_lines = text.replace("\r\n", "\n").split("\n")[:_HINT_SCAN_LINES]
    old_lines = old.replace("\r\n", "\n").strip("\n").split("\n")
    wanted = [_norm(line) for line in old_lines]
    normed = [_norm(line) for line in file_lines]
    if any(wanted):
        for index in range(len(normed) - len(wanted) + 1):
            if normed[index : index + len(wanted)] == wanted:
                for offset, (have, want) in enumerate(zip(file_lines[index:], old_lines)):
                    if have != want:
                        return (
                            f"It matches line {index + 1} onwards if whitespace is ignored: line "
                            f"{index + offset + 1} of the file is {have[:200]!r} but old_string has "
                            f"{want[:200]!r} (check tabs vs spaces, indentation, trailing spaces). "
                            "Copy the text exactly as read shows it."
                        )
                break
    first = next((w for w in wanted if w), "")
    if first:
        close = difflib.get_close_matches(first, normed[:20000], n=1, cutoff=0.6)
        if close:
            number = normed.index(close[0]) + 1
            return (
                f"The closest line is {number}: {file_lines[number - 1].strip()[:200]!r}. The file may have "
                "changed since you read it: read it again and copy the text exactly."
            )
    return "No similar line was found: read the file again to see its current content."
