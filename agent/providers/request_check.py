"""Checks of a request's messages that every provider call must pass; the scripted provider runs
them on every request it receives, so each test checks the core's requests.

``request_problems(messages)`` returns one short text per problem (empty when the request is fine):

- pairing: an assistant message's tool calls are answered by the tool results right after it,
  one per call, in the order of the calls (matched by position, so reused ids still pair); a tool
  result anywhere else is an orphan;
- no empty message: every message has text, or (an assistant message) tool calls;
- the conversation starts with a user message: after the system messages, never an assistant or
  a tool message.
"""

from __future__ import annotations

import threading
from typing import Any

#: Every problem ``check_request`` raised, in this process: the test suite fails a test that leaves
#: one, even when the core caught the error (a compaction that fails keeps the context unchanged).
VIOLATIONS: list[str] = []
_lock = threading.Lock()


class InvalidRequest(AssertionError):
    """A request the core should never send (a core bug, or a test that builds a bad history)."""


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") if isinstance(p, dict) else str(p) for p in content)
    return ""


def request_problems(messages: list[dict[str, Any]]) -> list[str]:
    """The problems of one request's ``messages`` (OpenAI format), empty when there are none."""
    problems: list[str] = []
    first = next((i for i, m in enumerate(messages) if m.get("role") != "system"), None)
    if first is not None and messages[first].get("role") in ("assistant", "tool"):
        problems.append(f"the conversation starts with a {messages[first].get('role')} message (message {first})")
    for i, m in enumerate(messages):
        content = m.get("content")
        if content.__class__ is str:  # the common case, without copying the text: isspace, not strip
            if content and not content.isspace():
                continue
        elif _text(m).strip():
            continue
        if not (m.get("role") == "assistant" and m.get("tool_calls")):
            problems.append(f"message {i} ({m.get('role')}) is empty")
    i = 0
    while i < len(messages):
        m = messages[i]
        i += 1
        role = m.get("role")
        if role == "tool":
            problems.append(f"orphan tool result at message {i - 1} (id {m.get('tool_call_id')!r})")
            continue
        if role != "assistant":
            continue
        calls = m.get("tool_calls") or []
        start = i
        for k, call in enumerate(calls):
            if i >= len(messages) or messages[i].get("role") != "tool":
                problems.append(f"assistant message {start - 1}: call {k} (id {call.get('id')!r}) has no result")
                break
            if messages[i].get("tool_call_id") != call.get("id"):
                problems.append(f"assistant message {start - 1}: call {k} (id {call.get('id')!r}) answered by "
                                f"the result for {messages[i].get('tool_call_id')!r} (message {i})")
            i += 1
    return problems


def check_request(messages: list[dict[str, Any]], purpose: str = "main") -> None:
    """Raise ``InvalidRequest`` naming every problem of ``messages`` (see ``request_problems``)."""
    problems = request_problems(messages)
    if problems:
        message = f"invalid {purpose} request ({len(messages)} messages): " + "; ".join(problems)
        with _lock:
            VIOLATIONS.append(message)
        raise InvalidRequest(message)


__all__ = ["VIOLATIONS", "InvalidRequest", "check_request", "request_problems"]
