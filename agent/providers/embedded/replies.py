"""Reading the embedded model's replies back: a tool call's arguments, a streamed answer
(``AnswerStream``), and the checks on the conversation so far (repeated calls, tool rounds).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Sequence, Union

from ...context.records import content_text
from .prompt import call_labels, cap_text

# --------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class ToolReply:
    """The model asked for tool ``name`` with ``arguments`` (a dict)."""

    name: str
    arguments: dict[str, Any]

    def arguments_json(self) -> str:
        """Return the arguments as JSON text (what goes into ``function.arguments``)."""
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True)
class AnswerReply:
    """The model answered the user with ``text``."""

    text: str


Reply = Union[ToolReply, AnswerReply]


def parse_arguments(text: str) -> dict[str, Any] | None:
    """Parse ``key=value, key=value)`` (what follows ``NAME(``) into a dict.

    Values are JSON literals; control characters inside strings are tolerated. Returns None when
    the text does not have that shape (e.g. it was cut by ``max_tokens``).
    """
    decoder = json.JSONDecoder(strict=False)
    out: dict[str, Any] = {}
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " ,\n\t":
            i += 1
        if i < n and text[i] == ")":
            return out
        match = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*=\s*").match(text, i)
        if not match:
            return None
        try:
            value, end = decoder.raw_decode(text, match.end())
        except ValueError:
            return None
        out[match.group(1)] = value
        i = end
    return None


def _canonical(arguments: Any) -> str:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return arguments
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False)


def previous_calls(messages: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """Return ``(name, canonical arguments JSON)`` of the tool calls since the last user message."""
    calls: list[tuple[str, str]] = []
    for msg in messages:
        if msg.get("role") == "user":
            calls = []
        elif msg.get("role") == "assistant":
            for call in msg.get("tool_calls") or []:
                fn = call.get("function") or {}
                calls.append((fn.get("name", ""), _canonical(fn.get("arguments") or "{}")))
    return calls


def is_repeat(reply: Reply, messages: Sequence[dict[str, Any]]) -> bool:
    """True when ``reply`` is a tool call identical (name and arguments) to one already made
    since the last user message: running it again would only loop."""
    if not isinstance(reply, ToolReply):
        return False
    return (reply.name, _canonical(reply.arguments)) in previous_calls(messages)


def tool_rounds(messages: Sequence[dict[str, Any]]) -> int:
    """Count assistant messages with tool calls since the last user message."""
    rounds = 0
    for msg in messages:
        if msg.get("role") == "user":
            rounds = 0
        elif msg.get("role") == "assistant" and msg.get("tool_calls"):
            rounds += 1
    return rounds


def last_result_summary(messages: Sequence[dict[str, Any]], limit: int = 1500) -> str:
    """Return a plain answer quoting the latest tool result (used when the model loops)."""
    labels = call_labels(messages)
    for msg in reversed(messages):
        if msg.get("role") == "tool":
            label = labels.get(str(msg.get("tool_call_id")), "the last tool")
            body = content_text(msg.get("content")).strip() or "(no output)"
            return f"Result of {label}:\n\n{cap_text(body, limit)}"
        if msg.get("role") == "user":
            break
    return "I could not work out an answer; please rephrase the request."


class AnswerStream:
    """Incrementally decode the JSON string that follows ``answer(``.

    ``feed(generated_so_far)`` returns the characters decoded since the previous call; ``text``
    holds all of them; ``closed`` turns true once the closing quote has arrived.
    """

    def __init__(self) -> None:
        self.text = ""
        self.closed = False

    def feed(self, raw: str) -> str:
        """Consume the whole generated text so far; return the newly decoded characters."""
        stripped = raw.lstrip()
        if not stripped.startswith('"'):
            return ""
        body = stripped[1:]
        end = self._safe_end(body)
        try:
            decoded = json.loads('"' + body[:end] + '"', strict=False)
        except ValueError:
            return ""
        new = decoded[len(self.text):] if decoded.startswith(self.text) else ""
        self.text = decoded
        return new

    def _safe_end(self, body: str) -> int:
        """Length of the longest prefix of ``body`` that is complete string content."""
        i, n, safe = 0, len(body), 0
        while i < n:
            ch = body[i]
            if ch == '"':
                self.closed = True
                return i
            if ch == "\\":
                if i + 1 >= n:
                    break
                if body[i + 1] == "u":
                    hexa = body[i + 2:i + 6]
                    if len(hexa) < 4:
                        break
                    code = int(hexa, 16) if re.fullmatch(r"[0-9a-fA-F]{4}", hexa) else 0
                    if 0xD800 <= code < 0xDC00:  # a high surrogate needs its low half
                        if i + 12 > n:
                            break
                        i += 12
                    else:
                        i += 6
                else:
                    i += 2
            else:
                i += 1
            safe = i
        return safe
