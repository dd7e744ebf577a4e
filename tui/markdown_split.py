"""Where a streaming markdown reply continues in a new conversation block.

A streaming assistant block is rendered again on each redraw, so the cost of a redraw grows with
the block. A long reply is therefore drawn as a run of blocks of about ``limit`` characters,
each cut at a boundary where the markdown can be split without changing what it shows:

- a paragraph break (a blank line) outside a code fence, before a line that is not indented;
- between two lines of a top-level code fence (after its first code line, not before its
  closing line): the next block carries the fence's opening line, and the two parts are drawn
  as one code block (``in_code``: no padding at the seam);
- between two items of a top-level list;
- between two rows of a top-level table: the next block carries the header rows, so the table
  continues under a repeated header (its columns are sized per part).

Nothing is cut inside a block quote, an indented (list item) fence or table, or an HTML block,
where a cut would change the text. Past ``hard_limit`` with no clean boundary (one huge
paragraph, quote or line), the cut falls at the first line break, else space, between the two
limits, else at ``limit`` itself; the seam then shows as a line break. No part is longer than
``hard_limit``.

A cut is only placed before a line that is complete, so whether it opens a list item or closes a
fence is known. The scan is linear in the block's length (a few KB at most).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
# A list item that can follow another one: bullet or number, then a space and some text.
_ITEM = re.compile(r"^( {0,3}(?:[-*+]|(\d{1,9})[.)])[ \t]+)\S")
# Raw HTML blocks that may hold blank lines (CommonMark types 1-2), by what ends them.
_HTML_ENDS = {"<pre": "</pre>", "<script": "</script>", "<style": "</style>", "<textarea": "</textarea>",
              "<!--": "-->"}
_HTML_RAW = re.compile(r"^ {0,3}(<pre|<script|<style|<textarea|<!--)", re.IGNORECASE)
_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")  # a thematic break (rule)
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


def _marker(item: re.Match[str]) -> str:
    """A list item's kind: its bullet character, or its number's delimiter ("." or ")")."""
    marker = item.group(1).strip()
    return marker[-1] if item.group(2) is not None else marker[0]


def _closes(opener: tuple[str, int], line: str) -> bool:
    """True when ``line`` closes a fence opened with ``opener`` (marker character, length): the
    same character at least as many times, indented by at most 3 spaces (CommonMark)."""
    marker, length = opener
    if len(line) - len(line.lstrip(" ")) > 3:
        return False
    stripped = line.strip()
    return len(stripped) >= length and stripped == marker * len(stripped)


@dataclass
class _Scan:
    """What the lines read so far leave open (see ``find_cut``)."""

    fence: tuple[str, int] | None = None  # an open fence: marker character and length
    fence_line: str = ""  # its opening line
    fence_top_level: bool = False  # the opening line is not indented (not in a list item)
    code_lines: int = 0  # lines inside the open fence so far
    html_end: str = ""  # inside a raw HTML block until a line holds this
    table_header: str = ""  # the open table's header and delimiter rows, with newlines
    in_table: bool = False
    in_list: bool = False
    list_marker: str = ""  # the open top-level list's bullet, or its numbers' delimiter
    next_number: int = 0  # the number the open ordered list gives its next item
    item_indent: int = 0  # columns a line needs to continue the last list item after a blank
    previous: str = ""
    previous_blank: bool = True

    def cut_before(self, line: str, start: int) -> BlockCut | None:
        """A cut at ``start`` (before ``line``), if the lines before it allow one there."""
        if self.fence is not None:
            if not self.fence_top_level or self.code_lines == 0 or _closes(self.fence, line):
                return None
            return BlockCut(start, self.fence_line + "\n", in_code=True)
        if self.html_end or not line.strip():
            return None
        if self.previous_blank:
            # A paragraph break; an indented line would continue a list item (or become code).
            if line[0].isspace():
                return None
            # The next item of a loose list: drawn without a blank line between items.
            return BlockCut(start, paragraph_break=not self._next_item(line))
        if self._next_item(line):
            return BlockCut(start)
        if self.in_table and "|" in line and not _TABLE_DELIMITER.match(line):
            return BlockCut(start, self.table_header)
        return None

    def _next_item(self, line: str) -> bool:
        """True when ``line`` is the next top-level item of the open list (same marker)."""
        item = _ITEM.match(line)
        if not (item and self.in_list and not line[0].isspace() and _marker(item) == self.list_marker):
            return False
        # An ordered list numbers its items from its first one ("1." on every line reads 1, 2,
        # 3): a part may start at an item only if that item's own number is the one it shows.
        return item.group(2) is None or int(item.group(2)) == self.next_number

    def take(self, line: str) -> None:
        """Read ``line`` (a complete line) into the state."""
        blank = not line.strip()
        if self.fence is not None:
            if _closes(self.fence, line):
                self.fence = None
            else:
                self.code_lines += 1
        elif self.html_end:
            if self.html_end in line.lower():
                self.html_end = ""
        elif (match := _FENCE.match(line)) and not (match.group(2)[0] == "`" and "`" in match.group(3)):
            self.fence = (match.group(2)[0], len(match.group(2)))
            self.fence_line, self.fence_top_level, self.code_lines = line, not match.group(1), 0
            self.in_list = self.in_table = False
        elif (html := _HTML_RAW.match(line)) and _HTML_ENDS[html.group(1).lower()] not in line.lower()[html.end():]:
            self.html_end = _HTML_ENDS[html.group(1).lower()]
        elif blank:
            self.in_table = False
        else:
            item = _ITEM.match(line)
            indent = len(line) - len(line.lstrip(" "))
            if item and indent == 0:
                if not (self.in_list and _marker(item) == self.list_marker):
                    # A new list. A bullet or "1." may interrupt a paragraph; other numbers
                    # start a list only after a blank line.
                    self.in_list = self.previous_blank or item.group(2) is None or int(item.group(2)) == 1
                    self.list_marker = _marker(item)
                    self.next_number = int(item.group(2) or 0)
                self.next_number += 1
                self.item_indent = len(item.group(1))
            elif item:
                pass  # a nested item
            elif self.previous_blank and indent < self.item_indent:
                self.in_list = False  # after a blank line, too little indentation ends the list
            elif indent == 0 and (line.startswith(("#", ">", "|")) or _BREAK.match(line)):
                self.in_list = False  # a heading, quote, table or rule ends the list
            if (not self.in_table and "|" in line and "|" in self.previous and _TABLE_DELIMITER.match(line)
                    and not self.previous[0].isspace()):
                self.in_table, self.table_header = True, f"{self.previous}\n{line}\n"
            elif self.in_table and "|" not in line:
                self.in_table = False
        self.previous, self.previous_blank = line, blank


def find_cut(text: str, limit: int, hard_limit: int) -> BlockCut | None:
    """Return where the block holding ``text`` (markdown, possibly mid-stream) should end, or
    None to keep it whole for now. Only cuts at or past ``limit`` characters are considered;
    ``hard_limit`` (characters, >= ``limit``) bounds a block that has no clean boundary."""
    if len(text) < limit:
        return None
    lines = text.split("\n")
    scan = _Scan()
    start = 0
    fence_at: list[tuple[int, str | None]] = []  # (line start, open fence's line or None)
    for number, line in enumerate(lines[:-1]):  # the last element is the line being written
        fence_at.append((start, scan.fence_line if scan.fence is not None else None))
        if start > hard_limit:
            break  # no clean boundary early enough: a forced cut keeps the part short
        if number and start >= limit and (cut := scan.cut_before(line, start)) is not None:
            return cut
        scan.take(line)
        start += len(line) + 1
    if len(text) >= hard_limit:
        if start <= hard_limit:
            fence_at.append((start, scan.fence_line if scan.fence is not None else None))
        return _forced_cut(text, limit, hard_limit, fence_at)
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
