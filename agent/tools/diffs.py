"""Unified diffs of file changes, for ``ToolOutput.diff`` (shown in the UI's write/edit blocks)."""

from __future__ import annotations

import difflib
import re

#: Diffs longer than this (characters) are cut with a note; the file itself is complete.
MAX_DIFF_CHARS = 200_000

_LINE_RE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def _lines(text: str) -> list[str]:
    """Split on ``\\n`` only (not ``str.splitlines``, which also splits on FF, VT, U+2028 ...),
    CRLF shown as LF, each line ending in ``\\n``; a last line without one gets the marker git
    prints (``\\ No newline at end of file``)."""
    text = text.replace("\r\n", "\n")
    lines = _LINE_RE.findall(text)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def unified_diff(old: str, new: str, path: str, *, created: bool = False, context: int = 3) -> str:
    """Return a unified diff (git style headers ``a/PATH`` / ``b/PATH``; ``/dev/null`` for a new
    file) from text ``old`` to text ``new``; ``""`` when they are equal. Cut to
    ``MAX_DIFF_CHARS`` characters with a note when longer."""
    if old == new:
        return ""
    diff = "".join(
        difflib.unified_diff(
            _lines(old),
            _lines(new),
            fromfile="/dev/null" if created else f"a/{path}",
            tofile=f"b/{path}",
            n=context,
        )
    )
    if len(diff) > MAX_DIFF_CHARS:
        cut = diff.rfind("\n", 0, MAX_DIFF_CHARS) + 1 or MAX_DIFF_CHARS
        diff = diff[:cut] + f"[... diff cut: {len(diff) - cut} more characters]\n"
    return diff


def diff_counts(diff: str) -> tuple[int, int]:
    """Return ``(added, removed)`` line counts of a unified diff (headers not counted)."""
    added = removed = 0
    in_hunk = False
    for line in diff.splitlines():
        if line.startswith("@@"):
            in_hunk = True
        elif not in_hunk:
            continue
        elif line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
    return added, removed
