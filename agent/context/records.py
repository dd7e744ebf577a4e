"""A thin adapter between OpenAI-format message dicts and our conversation records.

The context passes (pruning, aggregation, compaction) work on ``agent.messages`` records; the
handed cases and some callers hold plain OpenAI dicts. ``to_records`` converts dicts to records
(ids ``d<index>`` unless the dict has an ``id``), ``to_dicts`` converts back with
``to_openai()``. Records pass through unchanged.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from ..messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolResultMessage, UserMessage


def is_dict_list(messages: Sequence[Any]) -> bool:
    """True when ``messages`` holds OpenAI dicts (judged by its first item; empty -> False)."""
    return bool(messages) and isinstance(messages[0], dict)


def content_text(content: Any) -> str:
    """Content as text: strings as is, OpenAI content-part lists joined, anything else as JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return json.dumps(content, ensure_ascii=False)


def to_records(messages: Sequence[Any]) -> list[Message]:
    """Return ``messages`` as records. Dicts are converted (``role`` decides the type; a tool
    result without ``name`` takes the name of the call it answers); records are reused.

    Raises ``ValueError`` for a dict whose role is not system/user/assistant/tool.
    """
    out: list[Message] = []
    names: dict[str, str] = {}
    for index, m in enumerate(messages):
        if not isinstance(m, dict):
            out.append(m)
            if isinstance(m, AssistantMessage):
                names.update({tc.id: tc.name for tc in m.tool_calls})
            continue
        mid = str(m.get("id") or f"d{index}")
        role = m.get("role")
        if role == "system":
            out.append(SystemMessage(id=mid, content=content_text(m.get("content"))))
        elif role == "user":
            out.append(UserMessage(id=mid, content=content_text(m.get("content"))))
        elif role == "assistant":
            calls = []
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function") or {}
                args = fn.get("arguments", "")
                calls.append(ToolCall(id=str(tc.get("id", "")), name=str(fn.get("name", "")),
                                      arguments=args if isinstance(args, str) else json.dumps(args)))
                names[calls[-1].id] = calls[-1].name
            content = m.get("content")
            out.append(AssistantMessage(id=mid, content=None if content is None else content_text(content),
                                        reasoning_content=m.get("reasoning_content"), tool_calls=calls))
        elif role == "tool":
            call_id = str(m.get("tool_call_id", ""))
            out.append(ToolResultMessage(id=mid, tool_call_id=call_id, name=str(m.get("name") or names.get(call_id, "")),
                                         content=content_text(m.get("content"))))
        else:
            raise ValueError(f"message {index} has an unknown role {role!r}")
    return out


def to_dicts(messages: Sequence[Message], *, include_reasoning: bool = True) -> list[dict[str, Any]]:
    """Return records as OpenAI dicts (``to_openai()``); assistant ``reasoning_content`` is kept
    when ``include_reasoning`` (so a pass that did not prune it shows it unchanged)."""
    out = []
    for m in messages:
        if isinstance(m, AssistantMessage):
            d = m.to_openai(include_reasoning=include_reasoning)
            if m.content is None and not m.tool_calls:
                d["content"] = None
            out.append(d)
        else:
            out.append(m.to_openai())
    return out
