"""Prompt-cache breakpoints for Claude models (Anthropic, Bedrock, Vertex AI routes of litellm).

Anthropic caches a request prefix only up to a block marked ``cache_control: {"type":
"ephemeral"}`` (at most 4 marks per request; the cache holds for 5 minutes after its last use;
prefixes below the model's minimum, 1024-4096 tokens, are silently not cached). litellm passes a
mark written on an OpenAI-format content part (``{"type": "text", "text": ..., "cache_control":
{...}}``, its documented form), on a tool-call entry (onto the ``tool_use`` block) or on a tool
message (onto the ``tool_result`` block) through to the provider; for Bedrock it becomes a
``cachePoint`` block. Other providers cache without marks (OpenAI, DeepSeek) and get the
messages unchanged.

``with_cache_breakpoints`` marks three places of a request (tools are sent before the system
prompt, so the first mark covers them too):

1. the system message (the stable head: tools + system prompt);
2. the last message of the previous request: the message right before the last assistant reply
   (in an agent loop the request before this one ended there), so this request reads what the
   previous one wrote;
3. the last message, so the next request (which extends this one) can read it.

The marks are added to a copy at send time; the request the loop built (and ``--replay-log``
shows) is unchanged, so the recorded prefix comparison stays byte for byte.
"""

from __future__ import annotations

import copy
from typing import Any

#: The mark Anthropic accepts (5-minute cache).
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
#: Anthropic refuses a request with more than this many marks.
MAX_BREAKPOINTS = 4
#: litellm provider prefixes whose Claude models take ``cache_control`` marks.
_CLAUDE_ROUTES = ("anthropic/", "bedrock/", "vertex_ai/", "vertex_ai_beta/")


def takes_cache_control(model: str) -> bool:
    """True when ``model`` (a litellm name) is a Claude model on a route that takes explicit
    ``cache_control`` marks: ``anthropic/...``, a bare ``claude-...`` name (litellm routes it to
    Anthropic), and ``bedrock/...`` or ``vertex_ai/...`` names containing ``claude``."""
    name = model.strip().lower()
    if name.startswith("anthropic/") or name.startswith("claude"):
        return True
    return name.startswith(_CLAUDE_ROUTES) and "claude" in name


def breakpoint_indexes(messages: list[dict[str, Any]]) -> list[int]:
    """Return the indexes of ``messages`` (OpenAI format) to mark, in order, without duplicates
    and at most ``MAX_BREAKPOINTS``: the first system message, the message before the last
    assistant message (the end of the previous request), and the last message. ``[]`` for no
    messages."""
    if not messages:
        return []
    found: list[int] = []
    system = next((i for i, m in enumerate(messages) if m.get("role") == "system"), None)
    if system is not None:
        found.append(system)
    last_assistant = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "assistant"),
                          None)
    if last_assistant is not None and last_assistant > 0:
        found.append(last_assistant - 1)
    found.append(len(messages) - 1)
    return sorted(dict.fromkeys(found))[:MAX_BREAKPOINTS]


def with_cache_breakpoints(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return a copy of ``messages`` (OpenAI format) with ``cache_control`` marks at
    ``breakpoint_indexes``; ``messages`` itself is not changed. A tool message carries the mark
    itself (its content stays a string); a string ``content`` becomes one text part carrying the
    mark; a list ``content`` gets the mark on its last text part; an
    assistant message with tool calls gets it on its last tool call (the end of the message). A message with
    nothing to carry a mark (an empty text) is left unmarked. Raises nothing."""
    out = list(messages)
    for index in breakpoint_indexes(messages):
        marked = _marked(messages[index])
        if marked is not None:
            out[index] = marked
    return out


def _marked(message: dict[str, Any]) -> dict[str, Any] | None:
    """``message`` with one ``cache_control`` mark, or ``None`` when no block can carry it."""
    calls = message.get("tool_calls")
    if message.get("role") == "assistant" and isinstance(calls, list) and calls:
        marked_calls = copy.deepcopy(calls)  # the tool calls end the message: mark the last one
        marked_calls[-1]["cache_control"] = dict(EPHEMERAL)
        return {**message, "tool_calls": marked_calls}
    content = message.get("content")
    if message.get("role") == "tool":  # litellm puts a message-level mark on the tool_result block
        return {**message, "cache_control": dict(EPHEMERAL)}
    if isinstance(content, str) and content:
        return {**message, "content": [{"type": "text", "text": content, "cache_control": dict(EPHEMERAL)}]}
    if isinstance(content, list) and content:
        parts = copy.deepcopy(content)
        for part in reversed(parts):
            if isinstance(part, dict) and part.get("type") == "text" and part.get("text"):
                part["cache_control"] = dict(EPHEMERAL)
                return {**message, "content": parts}
    return None
