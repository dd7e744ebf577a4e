"""What the summariser gets and what the summary says: the summary request (instructions and the
transcript of the older part, cut to the call's own budget), the digest built by code when no
summary can be had, and the text of the summary message (pins first, then the model's summary).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ...messages import AssistantMessage, Message, ToolResultMessage, UserMessage
from ..budget import count_text_tokens
from ..truncation.truncate import cap_middle

SUMMARY_HEADER = "[Context summary: the earlier part of this conversation was compacted; the originals are in the session journal.]"
MODEL_SUMMARY_HEADING = "## Summary of the earlier work"

SUMMARY_INSTRUCTIONS = """You compact the conversation of a coding agent so it can continue the same work with a smaller context.
Summarise the transcript the user sends, as markdown, with exactly these sections:
## Task - what the user asked for, with every constraint they added.
## Progress - what has been done, in order; what remains.
## Decisions - choices made and why.
## Errors - errors met and whether each one is resolved.
## Files - files read, created or changed, one line each on what matters in them.
## State - the CURRENT state: the latest result of each test or command wins; an earlier failure that a later run fixed is resolved, never current.
Keep exact paths, names, commands and error messages. Do not invent anything. Do not address the user."""

#: The last line of a summary message.
CONTINUE_LINE = "Continue the task from here. Do not redo finished steps; check the files if unsure."
#: Characters of one message shown to the summariser (head and tail kept).
TRANSCRIPT_MESSAGE_CAP = 2000
#: Characters of one later user message pinned verbatim (the original task is never cut).
USER_MESSAGE_CAP = 8000
#: Tokens set aside for the model's summary when sizing the kept tail.
SUMMARY_RESERVE_TOKENS = 1500
#: The most tokens the model's summary may keep in the summary message.
SUMMARY_CAP_TOKENS = 4000


# ------------------------------------------------------------------------------ summariser input
def render_transcript(messages: Sequence[Message], message_cap: int = TRANSCRIPT_MESSAGE_CAP) -> str:
    """The older part as plain text for the summariser: one labelled block per message, tool
    calls with their arguments, each block capped at ``message_cap`` characters."""
    blocks = []
    for m in messages:
        if isinstance(m, UserMessage):
            blocks.append("USER:\n" + cap_middle(m.content, message_cap * 2))
        elif isinstance(m, AssistantMessage):
            lines = [cap_middle(m.content, message_cap)] if m.content else []
            lines += [f"-> {tc.name}({cap_middle(tc.arguments, min(500, message_cap))})" for tc in m.tool_calls]
            blocks.append("ASSISTANT:\n" + "\n".join(lines))
        elif isinstance(m, ToolResultMessage):
            flag = " [error]" if m.is_error else ""
            blocks.append(f"RESULT of {m.name or m.tool_call_id}{flag}:\n" + cap_middle(m.content, message_cap))
    return "\n\n".join(blocks)


def summary_request(old: Sequence[Message], focus: str | None = None, *, budget_tokens: int | None = None,
                    count_text: Callable[[str], int] | None = None) -> list[dict[str, Any]]:
    """The messages of the summarisation call (OpenAI dicts): instructions, then the transcript.

    ``budget_tokens``: the most tokens the request may hold, counted with ``count_text`` (the
    agent's budget; default ``budget.count_text_tokens``): the per-message cap shrinks, then the whole
    transcript is middle-cut, until it fits (a reserve is kept for the reply)."""
    count_text = count_text or count_text_tokens
    system = SUMMARY_INSTRUCTIONS
    if focus and focus.strip():
        system += f"\nThe user asked the summary to focus on: {focus.strip()}"
    transcript = render_transcript(old)
    if budget_tokens:
        room = max(500, budget_tokens - count_text(system) - 600)
        cap = TRANSCRIPT_MESSAGE_CAP
        tokens = count_text(transcript)
        while tokens > room and cap > 200:
            cap //= 2
            transcript = render_transcript(old, cap)
            tokens = count_text(transcript)
        while tokens > room:  # cut by the measured density until the count fits
            transcript = cap_middle(transcript, max(1000, int(len(transcript) * room / tokens * 0.95)))
            new_tokens = count_text(transcript)
            if new_tokens >= tokens:
                break
            tokens = new_tokens
    return [{"role": "system", "content": system},
            {"role": "user", "content": "Transcript to summarise:\n\n" + transcript}]


def digest_summary(old: Sequence[Message], line_cap: int = 160) -> str:
    """A summary of ``old`` built by code, for when the summary call fails: one line per tool
    call (name, arguments and the first line of its result or error), oldest first, each line
    at most ``line_cap`` characters; the whole is capped by the caller."""
    results = {m.tool_call_id: m for m in old if isinstance(m, ToolResultMessage)}
    lines = ["(The summary call failed: this list of the earlier steps was built by code.)"]
    for m in old:
        if not isinstance(m, AssistantMessage):
            continue
        for call in m.tool_calls:
            result = results.get(call.id)
            if result is None:
                outcome = "no result"
            else:
                text = next((line.strip() for line in result.content.splitlines() if line.strip()), "(no output)")
                outcome = ("ERROR " if result.is_error else "") + text
            line = f"- {call.name}({' '.join(call.arguments.split())[:80]}) -> {outcome}"
            lines.append(line if len(line) <= line_cap else line[:line_cap - 1] + "…")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ summary message
def build_summary_text(pinned: str, summary: str) -> str:
    """The text of the summary message: the header, the ``pinned`` sections (by code), then the
    model's ``summary`` under ``MODEL_SUMMARY_HEADING``, then how to go on."""
    parts = [SUMMARY_HEADER]
    if pinned.strip():
        parts.append(pinned.strip())
    parts.append(MODEL_SUMMARY_HEADING + "\n" + summary)
    parts.append(CONTINUE_LINE)
    return "\n\n".join(parts)
