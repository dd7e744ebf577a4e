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

import operator
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


def request_problems(messages: list[dict[str, Any]], start: int = 0) -> list[str]:
    """The problems of one request's ``messages`` (OpenAI format), empty when there are none.

    ``start``: the messages before it are known to pass (they were a whole request that passed,
    and message ``start`` is not a tool result), so only the first message and those from
    ``start`` on are checked; problems still name messages by their index in ``messages``.
    """
    problems: list[str] = []
    if start <= 0:
        start = 0
        first = next((i for i, m in enumerate(messages) if m.get("role") != "system"), None)
        if first is not None and messages[first].get("role") in ("assistant", "tool"):
            problems.append(f"the conversation starts with a {messages[first].get('role')} message (message {first})")
    checked = enumerate(messages) if start == 0 else [(0, messages[0]), *zip(range(start, len(messages)), messages[start:])]
    for i, m in checked:
        content = m.get("content")
        if content.__class__ is str:  # the common case, without copying the text: isspace, not strip
            if content and not content.isspace():
                continue
        elif _text(m).strip():
            continue
        if not (m.get("role") == "assistant" and m.get("tool_calls")):
            problems.append(f"message {i} ({m.get('role')}) is empty")
    i = start
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


def check_request(messages: list[dict[str, Any]], purpose: str = "main", start: int = 0) -> None:
    """Raise ``InvalidRequest`` naming every problem of ``messages`` (see ``request_problems``;
    ``start`` as there)."""
    problems = request_problems(messages, start)
    if problems:
        message = f"invalid {purpose} request ({len(messages)} messages): " + "; ".join(problems)
        with _lock:
            VIOLATIONS.append(message)
        raise InvalidRequest(message)


class RequestChecker:
    """``check_request`` for the successive requests of a conversation, in time that does not grow
    with it: a request whose messages repeat those of the last request that passed for the same
    ``key`` (the same dict objects, which ``loop.wire`` gives every request, after the first: the
    system message is built per request) and go on after them with anything but a tool result is
    checked only from there. Not thread-safe: the caller holds a lock."""

    def __init__(self) -> None:
        self._passed: dict[Any, list[dict[str, Any]]] = {}

    def check(self, messages: list[dict[str, Any]], purpose: str = "main", key: Any = None) -> int:
        """Raise ``InvalidRequest`` as ``check_request`` does; returns the index checking started
        from (0: the whole request was checked)."""
        key = (purpose, key)
        last = self._passed.get(key)
        start = 0
        if last and len(last) > 1 and len(messages) >= len(last) and all(map(operator.is_, last[1:], messages[1:len(last)])):
            if len(messages) == len(last) or messages[len(last)].get("role") != "tool":
                start = len(last)
        check_request(messages, purpose, start)
        self._passed[key] = list(messages)
        return start


__all__ = ["VIOLATIONS", "InvalidRequest", "RequestChecker", "check_request", "request_problems"]
