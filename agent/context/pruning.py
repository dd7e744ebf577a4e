"""Reasoning pruning: drop old chain-of-thought from the context view (DESIGN.md 3 and 4).

``prune_reasoning`` removes ``<think>...</think>`` spans (also ``<thinking>``) from the text of
assistant messages older than the last N assistant steps (``keep_last_steps``; a long autonomous
task has one user turn and hundreds of steps) or, with the older setting, the last N user turns,
and their ``reasoning_content`` field. It runs only at a compaction boundary, so the prompt
prefix stays stable between boundaries. Anthropic's signed thinking blocks (``thinking_blocks``
of OpenAI-format dicts) of the current turn are never touched: the API rejects a tool-use turn
whose thinking was changed.

Rules for the text (``strip_think_tags``):

- only genuine tags count: a tag inside an inline code span (`` `<think>` ``) or a fenced code block
  is text and stays;
- a closed block is removed together with the whitespace right after it;
- an unclosed ``<think>`` loses only the tag: the text after it is kept as the answer
  (models such as Qwen open a tag and never close it, and the answer follows);
- a closing tag with no opening one at the start of the text (templates that put ``<think>`` in
  the prompt) removes the text before it, unless nothing would be left; elsewhere only the tag goes;
- the result is never empty: a message that held only reasoning becomes ``REASONING_PLACEHOLDER``
  (or ``None`` content when it carries tool calls), since some providers reject empty text.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from ..messages import AssistantMessage

#: Text left in an assistant message whose whole text was reasoning (never an empty message).
REASONING_PLACEHOLDER = "(earlier reasoning omitted)"

_OPEN_RE = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_CLOSE_RE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)
_FENCE_RE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})", re.MULTILINE)
_BACKTICKS_RE = re.compile(r"`+")


def code_spans(text: str) -> list[tuple[int, int]]:
    """Return the ``[start, end)`` character ranges of fenced code blocks and inline code spans.

    Fences: a line starting (after up to 3 spaces) with 3+ backticks or tildes, closed by a line
    with the same character repeated at least as often; an unclosed fence runs to the end.
    Inline code: a run of k backticks closed by the next run of exactly k backticks (a run with
    no partner is literal text), per CommonMark. Ranges are sorted and do not overlap.
    """
    spans: list[tuple[int, int]] = []
    pos = 0
    n = len(text)
    while pos < n:
        match = _FENCE_RE.search(text, pos)
        if match is None:
            spans += _inline_spans(text, pos, n)
            break
        spans += _inline_spans(text, pos, match.start())
        fence = match.group(1)
        line_end = text.find("\n", match.end())
        end = n
        if line_end != -1:
            closer = re.compile(r"^[ ]{0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$",
                                re.MULTILINE)
            close = closer.search(text, line_end + 1)
            if close is not None:
                end = close.end()
        spans.append((match.start(), end))
        pos = end
    return spans


def _inline_spans(text: str, start: int, stop: int) -> list[tuple[int, int]]:
    """Inline code spans of ``text[start:stop]`` as absolute ranges."""
    spans = []
    runs = list(_BACKTICKS_RE.finditer(text, start, stop))
    i = 0
    while i < len(runs):
        opener = runs[i]
        width = len(opener.group())
        j = next((k for k in range(i + 1, len(runs)) if len(runs[k].group()) == width), None)
        if j is None:
            i += 1
            continue
        spans.append((opener.start(), runs[j].end()))
        i = j + 1
    return spans


def _outside(spans: list[tuple[int, int]], pos: int) -> bool:
    return not any(a <= pos < b for a, b in spans)


def _next_tag(regex: re.Pattern[str], text: str, pos: int, spans: list[tuple[int, int]]) -> re.Match[str] | None:
    """The next match of ``regex`` at or after ``pos`` that is not inside code."""
    while True:
        match = regex.search(text, pos)
        if match is None or _outside(spans, match.start()):
            return match
        pos = match.end()


def strip_think_tags(text: str) -> str:
    """Return ``text`` without its genuine reasoning blocks (rules in the module docstring).

    Characters in, characters out; never raises. May return ``""`` when the text was only a
    closed reasoning block: callers decide what to put instead (``prune_reasoning`` does).
    """
    if "<" not in text:
        return text
    spans = code_spans(text)
    out: list[str] = []
    pos = 0
    while True:
        opening = _next_tag(_OPEN_RE, text, pos, spans)
        closing = _next_tag(_CLOSE_RE, text, pos, spans)
        if closing is not None and (opening is None or closing.start() < opening.start()):
            # A closing tag with no opening one: what precedes it (since pos) was reasoning.
            rest_start = _skip_space(text, closing.end())
            if pos == 0 and not out and text[rest_start:].strip():
                pos = rest_start
            else:  # mid-text, or nothing would remain: keep the text, drop only the tag
                out.append(text[pos:closing.start()])
                pos = closing.end()
            continue
        if opening is None:
            out.append(text[pos:])
            break
        out.append(text[pos:opening.start()])
        closing = _next_tag(_CLOSE_RE, text, opening.end(), spans)
        if closing is None:  # unclosed: the rest is the answer; drop only the tag
            pos = _skip_space(text, opening.end())
            continue
        pos = _skip_space(text, closing.end())
    return "".join(out)


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _user_turn_boundary(messages: Sequence[Any], keep_last_turns: int) -> int:
    """Index of the first message of the ``keep_last_turns``-th last user turn (0 = none older)."""
    seen = 0
    for index in range(len(messages) - 1, -1, -1):
        if _role(messages[index]) == "user":
            seen += 1
            if seen == keep_last_turns:
                return index
    return 0


def _role(message: Any) -> str | None:
    return message.get("role") if isinstance(message, dict) else getattr(message, "role", None)


def _step_boundary(messages: Sequence[Any], keep_last_steps: int) -> int:
    """Index of the ``keep_last_steps``-th last assistant message (0 = none older)."""
    seen = 0
    for index in range(len(messages) - 1, -1, -1):
        if _role(messages[index]) == "assistant":
            seen += 1
            if seen == keep_last_steps:
                return index
    return 0


def prune_reasoning(messages: Sequence[Any], keep_last_turns: int = 3, *,
                    provider_requires_reasoning: bool = False,
                    keep_last_steps: int | None = None) -> tuple[list[Any], list[str]]:
    """Strip reasoning from assistant messages older than the last ``keep_last_steps`` assistant
    steps (when given) or else the last ``keep_last_turns`` user turns.

    ``messages``: records (``agent.messages``) or OpenAI dicts, system messages allowed. Counting
    goes backwards from the end, so the latest steps are never touched; a count ``<= 0`` (the
    settings' "off") or ``provider_requires_reasoning`` (DeepSeek thinking with tool calls needs
    it sent back) returns the input unchanged. Dicts of the current turn (after the last user
    message) that carry ``thinking_blocks`` are left whole (Anthropic signed thinking).

    Returns ``(new_messages, pruned_ids)``: a new list where changed messages are copies (records
    keep their ``id``) and unchanged ones are the same objects; ``pruned_ids`` lists the ids of
    the changed messages (for dicts: their ``id`` key, else ``"#<index>"``). Never raises.
    """
    out = list(messages)
    count = keep_last_steps if keep_last_steps is not None else keep_last_turns
    if count <= 0 or provider_requires_reasoning:
        return out, []
    if keep_last_steps is not None:
        boundary = _step_boundary(messages, keep_last_steps)
    else:
        boundary = _user_turn_boundary(messages, keep_last_turns)
    last_user = max((i for i, m in enumerate(messages) if _role(m) == "user"), default=-1)
    pruned: list[str] = []
    for index in range(boundary):
        m = messages[index]
        if _role(m) != "assistant":
            continue
        if isinstance(m, dict):
            if index > last_user and m.get("thinking_blocks"):
                continue
            new = _prune_dict(m)
            if new is not None:
                out[index] = new
                pruned.append(str(m.get("id") or f"#{index}"))
        elif isinstance(m, AssistantMessage):
            new_record = _prune_record(m)
            if new_record is not None:
                out[index] = new_record
                pruned.append(m.id)
    return out, pruned


def _pruned_text(content: str | None, has_calls: bool) -> str | None:
    """The pruned content, or the original when nothing changed."""
    if not content:
        return content
    stripped = strip_think_tags(content)
    if stripped == content:
        return content
    if not stripped.strip():
        return None if has_calls else REASONING_PLACEHOLDER
    return stripped


def _prune_record(m: AssistantMessage) -> AssistantMessage | None:
    content = _pruned_text(m.content, bool(m.tool_calls))
    if content == m.content and not m.reasoning_content:
        return None
    return m.model_copy(update={"content": content, "reasoning_content": None})


def _prune_dict(m: dict[str, Any]) -> dict[str, Any] | None:
    content = m.get("content")
    new_content = _pruned_text(content, bool(m.get("tool_calls"))) if isinstance(content, str) else content
    has_reasoning = bool(m.get("reasoning_content")) or bool(m.get("thinking_blocks"))
    if new_content == content and not has_reasoning:
        return None
    new = {k: v for k, v in m.items() if k not in ("reasoning_content", "thinking_blocks")}
    new["content"] = new_content
    return new


__all__ = ["REASONING_PLACEHOLDER", "code_spans", "prune_reasoning", "strip_think_tags"]
