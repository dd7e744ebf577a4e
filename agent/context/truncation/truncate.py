"""Middle truncation of text (the pure ``str`` form; ``bounded.BoundedOutput`` streams bytes).

Over the budget (``max_chars`` characters; 0 = no truncation) the middle is cut: the head keeps
30% of the budget, the tail 70% (as OpenCLI and Claude Code do). Each cut snaps to a line boundary
when one lies within 10% of that part's budget. Cuts work on ``str`` after normalisation, so they
never split a UTF-8 sequence, an escape sequence or a CRLF pair. A marker line between head and
tail states how many characters were cut, the line range, and the absolute path of the saved full
output (or why it could not be saved); ``MARKER_RE`` finds it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .normalise import normalize_output

#: Default cap on model-facing tool output (characters), as ``OPENCLI_MAX_TOOL_OUTPUT``.
DEFAULT_MAX_CHARS = 20000
#: Share of the budget kept from the start of the output; the rest is kept from the end.
HEAD_FRACTION = 0.3
#: A cut moves to a line boundary when one lies within this share of the part's budget.
LINE_SNAP_FRACTION = 0.1

#: Finds the marker line (with the newline on each side) inside a truncated text.
MARKER_RE = re.compile(r"\n\[\.\.\. (?:about )?(?P<chars>\d+) chars truncated, from line (?P<line>\d+)[^\n]*\.\.\.\]\n")


@dataclass(frozen=True)
class TruncationResult:
    """The model-facing form of one tool output.

    - ``text``: what the model sees (normalised; ``head + "\\n" + marker + "\\n" + tail`` when
      truncated, a one-line note when binary).
    - ``truncated``: the middle was cut. ``saved_path``: absolute path of the raw full output, or
      ``None`` (not truncated, or the save failed: then ``save_error`` says why).
    - ``head`` / ``tail``: the kept parts (``head`` is the whole text when not truncated).
    - ``omitted_chars``: characters cut (``approximate`` when the output was too large to count
      exactly after normalisation). ``first_line`` / ``last_line``: 1-based lines of the cut.
    - ``total_bytes``: raw size (bytes) when known; ``total_lines``: lines in the output.
    - ``binary``: the output was binary and replaced by a note.
    """

    text: str
    truncated: bool = False
    saved_path: str | None = None
    head: str = ""
    tail: str = ""
    omitted_chars: int = 0
    approximate: bool = False
    first_line: int = 0
    last_line: int = 0
    total_bytes: int | None = None
    total_lines: int = 0
    binary: bool = False
    save_error: str | None = None
    #: For the UI: the same text with ANSI SGR colour codes kept, when the output had any and was
    #: not truncated (``None`` otherwise: show ``text``).
    display: str | None = None


def truncate_text(
    text: str,
    max_chars: int = DEFAULT_MAX_CHARS,
    *,
    saved_path: str | None = None,
    save_error: str | None = None,
) -> TruncationResult:
    """Normalise ``text`` and middle-truncate it to ``max_chars`` characters (0 = no cap).

    Pure: nothing is written. ``saved_path`` (where the caller saved the full output) or
    ``save_error`` only change the marker wording. The kept head and tail together hold at most
    ``max_chars`` characters; the marker line comes on top (about 200-300 characters).
    Raises ``ValueError`` when ``max_chars`` is negative.
    """
    if max_chars < 0:
        raise ValueError(f"max_chars must be >= 0, got {max_chars}")
    total_bytes = len(text.encode("utf-8", "surrogatepass")) if saved_path else None
    return truncate_normalized(normalize_output(text), max_chars, saved_path, save_error, total_bytes)


def truncate_normalized(
    norm: str, max_chars: int, saved_path: str | None, save_error: str | None, total_bytes: int | None
) -> TruncationResult:
    """``truncate_text`` on already normalised text; ``total_bytes`` is the raw size for the marker."""
    total_lines = _line_count(norm)
    if max_chars == 0 or len(norm) <= max_chars:
        return TruncationResult(text=norm, head=norm, total_lines=total_lines, total_bytes=total_bytes)
    head, tail, _ = cut_middle(norm, max_chars)
    tail_start = len(norm) - len(tail)
    first_line = head.count("\n") + 1
    last_line = norm.count("\n", 0, tail_start - 1) + 1
    omitted = len(norm) - len(head) - len(tail)
    marker = marker_line(omitted, False, first_line, last_line, saved_path, save_error, total_bytes)
    return TruncationResult(
        text=f"{head}\n{marker}\n{tail}",
        truncated=True,
        saved_path=saved_path,
        head=head,
        tail=tail,
        omitted_chars=omitted,
        first_line=first_line,
        last_line=last_line,
        total_bytes=total_bytes,
        total_lines=total_lines,
        save_error=save_error,
    )


def split_truncated(text: str) -> tuple[str, str] | None:
    """Return ``(head, tail)`` around the truncation marker in ``text``, or ``None`` if absent."""
    match = MARKER_RE.search(text)
    if match is None:
        return None
    return text[: match.start()], text[match.end() :]


def safe_start(text: str) -> int:
    """Index where a text that begins at an arbitrary byte can safely start."""
    newline = text.find("\n")
    if newline >= 0:
        return newline + 1
    for ch in ("\r", "\x1b"):
        index = text.find(ch)
        if index >= 0:
            return index
    return 0


def _line_count(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def cut_middle(text: str, max_chars: int) -> tuple[str, str, bool]:
    """Split ``text`` (longer than ``max_chars``) into the kept head and tail (30% / 70% of the
    budget, snapped to line boundaries; see the module docstring) and whether the tail starts a
    line. The one middle cut: tool outputs here, compaction transcripts in ``cap_middle``."""
    head_budget = int(max_chars * HEAD_FRACTION)
    head = head_part(text, head_budget)
    tail, at_line_start = tail_part(text, max_chars - head_budget)
    return head, tail, at_line_start


def head_part(text: str, budget: int) -> str:
    if budget <= 0:
        return ""
    if len(text) <= budget:
        return text
    window = max(1, int(budget * LINE_SNAP_FRACTION))
    newline = text.rfind("\n", max(0, budget - window), budget)
    return text[: newline + 1] if newline >= 0 else text[:budget]


def tail_part(text: str, budget: int) -> tuple[str, bool]:
    """Return the kept tail and whether it starts at the beginning of a line."""
    if budget <= 0:
        return "", True
    if len(text) <= budget:
        return text, True
    start = len(text) - budget
    window = max(1, int(budget * LINE_SNAP_FRACTION))
    newline = text.find("\n", start - 1, start - 1 + window)
    if newline >= 0:
        return text[newline + 1 :], True
    return text[start:], False


def marker_line(
    omitted: int,
    approximate: bool,
    first_line: int,
    last_line: int,
    saved_path: str | None,
    save_error: str | None,
    total_bytes: int | None,
) -> str:
    amount = f"{'about ' if approximate else ''}{omitted} chars truncated"
    lines = f"from line {first_line}" + (f" to line {last_line}" if last_line > first_line else "")
    if saved_path:
        size = f" ({_human_size(total_bytes)})" if total_bytes is not None else ""
        where = (
            f"Full output{size} saved to {saved_path}; "
            f"page through it with read(path, offset={first_line}, limit=...)"
        )
    elif save_error:
        where = f"Full output could not be saved ({save_error})"
    else:
        where = "Full output not saved"
    return f"[... {amount}, {lines}. {where} ...]"


def _human_size(size: int | None) -> str:
    if size is None:
        return "?"
    if size < 1024:
        return f"{size} bytes"
    for unit in ("KB", "MB", "GB"):
        size /= 1024
        if size < 1024 or unit == "GB":
            return f"{size:.1f} {unit}"
    return f"{size} bytes"  # pragma: no cover


def cap_middle(text: str, cap: int) -> str:
    """``text`` cut to about ``cap`` characters by ``cut_middle``, with a marker of
    the characters left out (no saved file, so not the tool-output marker). ``cap <= 0``: no cap."""
    if cap <= 0 or len(text) <= cap:
        return text
    head, tail, _ = cut_middle(text, cap)
    omitted = len(text) - len(head) - len(tail)
    if head and not head.endswith("\n"):
        head += "\n"
    return f"{head}[... {omitted} characters left out ...]\n{tail}"
