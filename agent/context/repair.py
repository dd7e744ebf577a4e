"""History repair: enforce the tool-call pairing invariants before every provider call.

Invariants (DESIGN.md 3): every assistant tool call is followed, right after its assistant message
and before anything else, by exactly one result for it; results are matched to calls by position
within their assistant message (some providers reuse ids across steps, so ids alone are not
enough); a missing result gets a synthetic error result that tells the model not to retry;
orphan or duplicate results are dropped; the view never starts with an assistant or tool message.
"""

from __future__ import annotations

from typing import Sequence

from ..messages import AssistantMessage, Message, ToolResultMessage, UserMessage

MISSING_RESULT_TEXT = (
    "Error: this tool call has no result (it was interrupted or never executed). "
    "Do not retry it blindly; check the current state first if you still need it."
)


def repair_history(messages: Sequence[Message], *, continues: bool = False) -> list[Message]:
    """Return a copy of ``messages`` (no system message) that satisfies the pairing invariants.

    Input and output are lists of conversation records (user, assistant, tool). Records are
    reused, not copied, when they need no change. ``continues``: the records follow a repaired
    view that is not empty, so a leading assistant message is kept (``loop.wire`` repairs only
    what was appended since the last request; the result is then the same as repairing the whole
    view, as long as the appended records do not start with a tool result). Never raises.
    """
    out: list[Message] = []
    i = 0
    n = len(messages)
    while i < n:
        msg = messages[i]
        if isinstance(msg, ToolResultMessage):
            i += 1  # orphan result: not directly after its assistant message
            continue
        if not out and not continues and isinstance(msg, AssistantMessage):
            i += 1  # the view never starts with an assistant message
            continue
        out.append(msg)
        i += 1
        if isinstance(msg, AssistantMessage) and msg.tool_calls:
            results: list[ToolResultMessage] = []
            while i < n and isinstance(messages[i], ToolResultMessage):
                results.append(messages[i])  # type: ignore[arg-type]
                i += 1
            out.extend(_pair_results(msg, results))
    return out


def _pair_results(call_msg: AssistantMessage, results: list[ToolResultMessage]) -> list[ToolResultMessage]:
    """Match ``results`` to the calls of ``call_msg`` by position, falling back to id order."""
    unused = list(results)
    paired: list[ToolResultMessage] = []
    for position, call in enumerate(call_msg.tool_calls):
        match = None
        # Prefer the result at the same position when its id agrees, else the first with the id.
        if position < len(results) and results[position] in unused and results[position].tool_call_id == call.id:
            match = results[position]
        else:
            match = next((r for r in unused if r.tool_call_id == call.id), None)
        if match is None:
            match = ToolResultMessage(tool_call_id=call.id, name=call.name,
                                      content=MISSING_RESULT_TEXT, is_error=True)
        else:
            unused.remove(match)
        paired.append(match)
    return paired


def pairing_ok(messages: Sequence[dict]) -> bool:
    """Check the pairing invariant on OpenAI-format dicts (system messages are skipped).

    This is the checker from ``shared/cases/README.md``, used by tests on every request.
    """
    pending: set[str] = set()
    for m in messages:
        role = m.get("role")
        if role == "system":
            continue
        if role == "tool":
            if m.get("tool_call_id") not in pending:
                return False
            pending.discard(m["tool_call_id"])
            continue
        if pending:
            return False
        if role == "assistant":
            pending = {tc["id"] for tc in (m.get("tool_calls") or [])}
    return not pending


def first_is_user(messages: Sequence[Message]) -> bool:
    """True when the first non-system message is a user message (or there is none)."""
    for m in messages:
        return isinstance(m, UserMessage)
    return True
