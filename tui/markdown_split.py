"""Where a streaming markdown reply continues in a new conversation block.

A streaming assistant block is rendered again on each redraw, so the cost of a redraw grows with
the block. A long reply is therefore drawn as a run of blocks of about ``limit`` characters,
each cut at a boundary where the markdown can be split without changing what it shows:

- a paragraph break (a blank line) outside a code fence, before a line that is not indented;
- between two lines of a code fence: the next block carries the fence's opening line, and the
  two parts are drawn as one code block (``in_code``: no padding at the seam);
- between two items of a list, two lines of a block quote, or two rows of a table (the next
  block carries the table's header rows);
- past ``hard_limit`` with none of those (one huge paragraph or line): at the first line break,
  else space, between the two limits, else at ``limit`` itself. The seam then shows as a line
  break. No part is longer than ``hard_limit``.

A cut is only placed before a line that is complete, so whether it opens a list item or closes a
fence is known. The scan is linear in the block's length (a few KB at most).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
# A list item that can follow another one: bullet or number, then a space and some text.
_ITEM = re.compile(r"^ {0,3}(?:[-*+]|(\d{1,9})[.)])[ \t]+\S")
_QUOTE = re.compile(r"^ {0,3}>")
_TABLE_DELIMITER = re.compile(r"^ {0,3}\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")


@dataclass(frozen=True)
class BlockCut:
    """Where to end the current block and what the next one starts with.

    ``index``: characters of the block's text that stay in it (the rest moves to the next block).
    ``carry``: markdown the next block is rendered with before its own text (a fence's opening
    line or a table's header rows, each with its newline), not part of the reply's text.
    ``in_code``: the cut falls inside a code fence (the two parts draw as one code block).
    ``paragraph_break``: the cut falls at a blank line (the next block keeps a blank line above).
    """

    index: int
    carry: str = ""
    in_code: bool = False
    paragraph_break: bool = False


def _closes(opener: tuple[str, int], line: str) -> bool:
    marker, length = opener
    stripped = line.strip()
    return len(stripped) >= length and stripped == marker * len(stripped)


def find_cut(text: str, limit: int, hard_limit: int) -> BlockCut | None:
    """Return where the block holding ``text`` (markdown, possibly mid-stream) should end, or
    None to keep it whole for now. Only cuts at or past ``limit`` characters are considered;
    ``hard_limit`` (characters, >= ``limit``) bounds a block that has no clean boundary."""
    if len(text) < limit:
        return None
    lines = text.split("\n")
    complete = len(lines) - 1  # the last element is the line still being written
    fence: tuple[str, int] | None = None
    fence_line = ""
    table_header = ""
    in_table = in_list = False
    previous = ""
    previous_blank = True
    start = 0
    fence_at: list[tuple[int, str | None]] = []  # (line start, open fence's line or None)
    for number, line in enumerate(lines[:complete]):
        fence_at.append((start, fence_line if fence is not None else None))
        if start > hard_limit:
            break  # no clean boundary early enough: a forced cut keeps the part short
        if number and start >= limit:
            cut = _cut_before(line, start, fence, fence_line, previous, previous_blank,
                              in_list, in_table, table_header)
            if cut is not None:
                return cut
        # Take the line into the state.
        blank = not line.strip()
        if fence is not None:
            if _closes(fence, line):
                fence = None
        elif (match := _FENCE.match(line)) and not (match.group(2)[0] == "`" and "`" in match.group(3)):
            fence = (match.group(2)[0], len(match.group(2)))
            fence_line = line
            in_list = in_table = False
        elif blank:
            in_table = False
        else:
            item = _ITEM.match(line)
            if item:
                number_text = item.group(1)
                # A bullet or "1." may interrupt a paragraph; other numbers start a list only
                # after a blank line.
                if not in_list:
                    in_list = previous_blank or number_text is None or int(number_text) == 1
            elif previous_blank and not line[0].isspace():
                in_list = False
            if _TABLE_DELIMITER.match(line) and "|" in line and "|" in previous and not in_table:
                in_table, table_header = True, f"{previous}\n{line}\n"
            elif in_table and "|" not in line:
                in_table = False
        previous, previous_blank = line, blank
        start += len(line) + 1
    if len(text) >= hard_limit:
        if start <= hard_limit:
            fence_at.append((start, fence_line if fence is not None else None))
        return _forced_cut(text, limit, hard_limit, fence_at)
    return None


def _cut_before(line: str, start: int, fence: tuple[str, int] | None, fence_line: str,
                previous: str, previous_blank: bool, in_list: bool, in_table: bool,
                table_header: str) -> BlockCut | None:
    """A cut at ``start`` (before ``line``) when the state after the lines before it allows one."""
    if fence is not None:
        if _closes(fence, line):
            return None
        return BlockCut(start, fence_line + "\n", in_code=True)
    if not line.strip():
        return None
    if previous_blank:
        # A paragraph break; an indented line would continue a list item (or become code).
        return None if line[0].isspace() else BlockCut(start, paragraph_break=True)
    if in_list and _ITEM.match(line) and not line[0].isspace():
        return BlockCut(start)
    if _QUOTE.match(line) and _QUOTE.match(previous):
        return BlockCut(start)
    if in_table and "|" in line and not _TABLE_DELIMITER.match(line):
        return BlockCut(start, table_header)
    return None


def _forced_cut(text: str, limit: int, hard_limit: int,
                fence_at: list[tuple[int, str | None]]) -> BlockCut:
    """No clean boundary and the block is too long: cut at the first line break or space
    between ``limit`` and ``hard_limit``, else at ``limit``. ``fence_at`` lists each line's
    start with the fence open there (its opening line); a cut inside a code fence carries it."""
    index = text.find("\n", limit, hard_limit)
    if index < 0:
        index = text.find(" ", limit, hard_limit)
    index = limit if index < 0 else index + 1
    open_fence = next((fence for start, fence in reversed(fence_at) if start <= index), None)
    if open_fence is not None:
        return BlockCut(index, open_fence + "\n", in_code=True)
    return BlockCut(index)
