"""The kept tail of a compaction: where the view is split (sized in tokens, never inside a tool
pair) and the stubbing of large tool results in it (head + tail + a pointer to the saved output).
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from ...messages import AssistantMessage, Message, ToolResultMessage, UserMessage

#: A tool result is stubbed only when it holds more than this many tokens.
STUB_MIN_TOKENS = 400
#: Characters a stub keeps of the result's head and of its tail.
STUB_HEAD_CHARS = 600
STUB_TAIL_CHARS = 1200
#: A result the model has seen that holds more than this share of the window is stubbed in the
#: kept tail even when the tail fits.
LARGE_RESULT_FRACTION = 0.1
#: Marker that starts the pointer line of a stubbed tool result.
STUB_MARKER = "[... stubbed at compaction:"


def stub_tool_result(message: ToolResultMessage, saved_path: str | None) -> ToolResultMessage:
    """A copy of ``message`` (same id) whose text keeps its first ``STUB_HEAD_CHARS`` and last
    ``STUB_TAIL_CHARS`` characters, on whole lines, around a pointer to the full output at
    ``saved_path`` (absolute path, or ``None`` when it could not be saved: the journal has it)."""
    text = message.content
    head, tail = text[:STUB_HEAD_CHARS], text[len(text) - STUB_TAIL_CHARS:]
    if "\n" in head[1:]:
        head = head[:head.rfind("\n") + 1]
    if "\n" in tail[:-1]:
        tail = tail[tail.find("\n") + 1:]
    where = (f"the full output is saved at {saved_path} (read it with offset/limit if you need it)"
             if saved_path else "the full output is in the session journal")
    left = len(text) - len(head) - len(tail)
    marker = f"{STUB_MARKER} {left} characters of this tool result left out; {where} ...]"
    return message.model_copy(update={"content": f"{head.rstrip(chr(10))}\n{marker}\n{tail}"})


def split_point(body: Sequence[Message], keep_last: int) -> int:
    """Index where the verbatim part starts: about ``keep_last`` from the end, never inside a
    tool pair, and past user messages that would open the kept part (they are pinned instead)."""
    split = max(0, len(body) - max(0, keep_last))
    while split > 0 and isinstance(body[split] if split < len(body) else None, ToolResultMessage):
        split -= 1
    while split < len(body) and isinstance(body[split], UserMessage):
        split += 1
    return split


def split_by_tokens(body: Sequence[Message], budget: int, keep_last: int, count: Callable[[Message], int]) -> int:
    """Index where the kept tail starts: the longest suffix within ``budget`` tokens, at least
    ``keep_last`` messages and at least the last step; never inside a tool pair (a tail never
    starts with a tool result) and past user messages that would open it."""
    split = len(body)
    used = 0
    while split > 0:
        tokens = count(body[split - 1])
        if used + tokens > budget:
            break
        split -= 1
        used += tokens
    split = min(split, max(0, len(body) - max(0, keep_last)))
    while 0 < split < len(body) and isinstance(body[split], ToolResultMessage):
        split += 1  # the pair's assistant message is in the old part: its results go with it
    if split >= len(body) or not any(isinstance(m, AssistantMessage) for m in body[split:]):
        # keep the last step whole, whatever its size (it is stubbed to fit)
        last = max((i for i, m in enumerate(body) if isinstance(m, AssistantMessage)), default=len(body))
        split = min(split, last)
    while split < len(body) and isinstance(body[split], UserMessage):
        split += 1
    return split


def stub_to_fit(kept: list[Message], limit: int, count: Callable[[Message], int],
                save_full: Callable[[ToolResultMessage], str | None] | None,
                large: int | None = None) -> tuple[list[Message], list[str]]:
    """Stub tool results of ``kept`` until it holds at most ``limit`` tokens or nothing large is
    left: results the model has already seen (before the last assistant message) go first,
    largest first; the newest results, which the model has not read yet, only when that is not
    enough. A seen result over ``large`` tokens is stubbed even when the tail fits (a large
    result in the kept tail is not kept whole). Returns the new list and the stubbed ids."""
    out = list(kept)
    total = sum(count(m) for m in out)
    stubbed: list[str] = []
    last_call = max((i for i, m in enumerate(out) if isinstance(m, AssistantMessage)), default=-1)
    candidates = sorted((i for i, m in enumerate(out) if isinstance(m, ToolResultMessage)
                         and count(m) > STUB_MIN_TOKENS and STUB_MARKER not in m.content),
                        key=lambda i: (i > last_call, -count(out[i])))
    for i in candidates:
        seen = i < last_call
        if total <= limit and not (seen and large is not None and count(out[i]) > large):
            continue
        message = out[i]
        assert isinstance(message, ToolResultMessage)
        path = _saved_path_in(message.content)
        if path is None and save_full is not None:
            try:
                path = save_full(message)
            except Exception:  # saving is best effort; the journal keeps the original anyway
                path = None
        new = stub_tool_result(message, path)
        total += count(new) - count(message)
        out[i] = new
        stubbed.append(message.id)
    return out, stubbed


_SAVED_RE = re.compile(r"Full output(?: \([^)]*\))? saved to (?P<path>\S+?);")


def _saved_path_in(text: str) -> str | None:
    """The saved-output path named by a truncation marker in ``text`` (``truncation.truncate.marker_line``), or ``None``."""
    match = _SAVED_RE.search(text)
    return match.group("path") if match else None
