"""LLM-summarised compaction: a new, smaller context view (DESIGN.md 3 and 4, issue 5).

``compact`` takes the current view (records or OpenAI dicts; system messages stay in front) and:

1. repairs it (``repair_history``), prunes old reasoning (``pruning``) and collapses long
   edit/exec runs (``aggregation``): the lossy rewrites all happen here, in one pass;
2. splits it: the last ``keep_last`` messages stay verbatim, the split moved earlier so no tool
   pair is split (a kept part never starts with a tool result) and past a user message that would
   open the kept part (that message is pinned instead, so no two user messages are adjacent);
3. asks ``summarize`` for a summary of the older part with the sections Task / Progress /
   Decisions / Errors / Files / State (``SUMMARY_INSTRUCTIONS``);
4. builds one user message that holds, **by code**: the original task (first user message) and
   every later user message of the older part verbatim, the approved plan verbatim, the error
   outputs that no later successful test run resolved (verbatim, each capped), the outcome lines
   of collapsed loops and the last test run; then the model's summary. A summariser that forgets
   the goal (case C16) cannot lose it.

The view is ``[system...] + [summary message] + kept``: it never starts with an assistant or
tool message, passes ``pairing_ok`` and ends like the input (a tool result mid-turn, so the loop
resumes with a model call). A failed summary (exception or empty) or one that saves less than
``min_saving`` of the tokens leaves the view unchanged: ``ok=False`` with a ``notice``.

Token counts are local estimates (``budget.message_tokens``: characters / 4 + overhead per
message, no margin). Recompaction: a previous summary message in the older part has its pinned
user messages carried over (not nested) and its model summary given to the summariser.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Sequence

from ..messages import AssistantMessage, Message, SystemMessage, ToolResultMessage, UserMessage
from .aggregation import (
    DEFAULT_DEVELOPER_CAPABILITIES, NOTICE_PREFIX, _TEST_RE, _args, _outcome_line, aggregate_developer_loops,
    default_capability_of, looks_failed,
)
from .budget import message_tokens
from .pruning import prune_reasoning
from .records import is_dict_list, to_dicts, to_records
from .repair import repair_history

SUMMARY_HEADER = "[Context summary: the earlier part of this conversation was compacted; the originals are in the session journal.]"
USER_BLOCK_END = "[end of user messages]"
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

#: Characters of one message shown to the summariser (head and tail kept).
TRANSCRIPT_MESSAGE_CAP = 2000
#: Most error outputs pinned verbatim in the summary message.
MAX_PINNED_ERRORS = 3
#: Characters of one later user message pinned verbatim (the original task is never cut).
USER_MESSAGE_CAP = 8000


@dataclass
class CompactionResult:
    """What ``compact`` produced.

    - ``view``: the new view (same kind as the input: records or dicts), or the input unchanged
      when ``ok`` is false.
    - ``summary``: the model's summary text (``""`` on failure); ``summary_message``: the record
      that replaced the older part (``None`` on failure).
    - ``tokens_before`` / ``tokens_after``: local estimates of the views (tokens).
    - ``summarized_ids``: ids of the messages replaced by the summary; ``pruned_ids``: kept
      messages whose reasoning was removed; ``aggregated_ids``: messages elided by loop
      aggregation (anywhere). Ids of dict input are ``d<index>`` unless the dict had an ``id``.
    - ``ok``: the view was rewritten; ``notice``: one line for the user (why not, or what).
    """

    view: list[Any]
    summary: str = ""
    summary_message: UserMessage | None = None
    tokens_before: int = 0
    tokens_after: int = 0
    summarized_ids: list[str] = field(default_factory=list)
    pruned_ids: list[str] = field(default_factory=list)
    aggregated_ids: list[str] = field(default_factory=list)
    ok: bool = False
    notice: str = ""


def view_tokens(messages: Sequence[Message]) -> int:
    """Local token estimate of records (system messages included), unmargined."""
    return sum(message_tokens(m) for m in messages)


def cap_middle(text: str, cap: int) -> str:
    """``text`` cut to about ``cap`` characters: 30% head, 70% tail, on whole lines when possible,
    with a marker naming how many characters were left out. ``cap <= 0`` means no cap."""
    if cap <= 0 or len(text) <= cap:
        return text
    head_n, tail_n = int(cap * 0.3), cap - int(cap * 0.3)
    head, tail = text[:head_n], text[len(text) - tail_n:]
    if "\n" in head[1:]:
        head = head[:head.rfind("\n") + 1]
    if "\n" in tail[:-1]:
        tail = tail[tail.find("\n") + 1:]
    return f"{head}[... {len(text) - len(head) - len(tail)} characters left out ...]\n{tail}"


def compact(messages: Sequence[Any], *, summarize: Callable[[list[dict[str, Any]]], str], keep_last: int = 10,
            plan_markdown: str | None = None, focus: str | None = None, strip_reasoning_after_turns: int = 3,
            provider_requires_reasoning: bool = False, aggregate_loops: bool = True, min_loop_steps: int = 5,
            developer_capabilities: Collection[str] = DEFAULT_DEVELOPER_CAPABILITIES,
            capability_of: Callable[[str], str | None] = default_capability_of,
            error_output_cap_chars: int = 2000, min_saving: float = 0.05) -> CompactionResult:
    """Compact ``messages`` into a smaller view (module docstring).

    ``summarize(request_messages) -> str`` gets OpenAI dicts (a system message with
    ``SUMMARY_INSTRUCTIONS`` and a user message holding the transcript) and returns the summary;
    it may raise (any exception is caught and reported). ``keep_last``: messages kept verbatim
    (about; moved to whole tool pairs). ``plan_markdown``: the approved plan, pinned verbatim.
    ``focus``: what the user wants the summary to keep (``/compact focus``).
    ``strip_reasoning_after_turns`` (0 = off), ``provider_requires_reasoning``,
    ``aggregate_loops``, ``min_loop_steps``, ``developer_capabilities``, ``capability_of``:
    the pruning and aggregation passes. ``error_output_cap_chars``: characters per pinned error
    output. ``min_saving``: the fraction of tokens that must be saved. Never raises.
    """
    as_dicts = is_dict_list(messages)
    records = to_records(messages) if as_dicts else list(messages)
    systems = [m for m in records if isinstance(m, SystemMessage)]
    body = repair_history([m for m in records if not isinstance(m, SystemMessage)])
    tokens_before = view_tokens(records)
    unchanged = CompactionResult(view=list(messages), tokens_before=tokens_before, tokens_after=tokens_before)

    body, pruned = prune_reasoning(body, strip_reasoning_after_turns,
                                   provider_requires_reasoning=provider_requires_reasoning)
    aggregated: list[str] = []
    if aggregate_loops:
        body, aggregated = aggregate_developer_loops(body, min_steps=min_loop_steps,
                                                     developer_capabilities=developer_capabilities,
                                                     capability_of=capability_of)
    split = _split_point(body, keep_last)
    old, kept = body[:split], body[split:]
    if not any(not isinstance(m, UserMessage) for m in old):
        unchanged.notice = "Nothing to compact yet: the conversation is shorter than the part kept verbatim."
        return unchanged

    try:
        summary = (summarize(summary_request(old, focus)) or "").strip()
    except Exception as exc:  # any summariser failure leaves the context as it was
        unchanged.notice = f"Compaction failed: the summary call failed ({type(exc).__name__}: {exc}); context unchanged."
        return unchanged
    if not summary:
        unchanged.notice = "Compaction failed: the model returned an empty summary; context unchanged."
        return unchanged

    summary_message = UserMessage(content=build_summary_text(old, summary, plan_markdown, error_output_cap_chars))
    new_records: list[Message] = [*systems, summary_message, *kept]
    tokens_after = view_tokens(new_records)
    saved = (tokens_before - tokens_after) / tokens_before if tokens_before else 0.0
    if saved < min_saving:
        unchanged.notice = (f"Compaction skipped: it would save only {max(saved, 0.0):.0%} of the context "
                            f"({tokens_before} -> {tokens_after} tokens); context unchanged.")
        return unchanged

    kept_ids = {m.id for m in kept}
    if as_dicts:
        origin = {id(r): d for r, d in zip(records, messages)}
        view: list[Any] = [origin[id(m)] if id(m) in origin else to_dicts([m])[0] for m in new_records]
    else:
        view = new_records
    return CompactionResult(
        view=view, summary=summary, summary_message=summary_message, tokens_before=tokens_before,
        tokens_after=tokens_after, summarized_ids=[m.id for m in old],
        pruned_ids=[i for i in pruned if i in kept_ids], aggregated_ids=aggregated, ok=True,
        notice=f"Compacted the context: {tokens_before} -> {tokens_after} tokens ({saved:.0%} saved).")


def _split_point(body: Sequence[Message], keep_last: int) -> int:
    """Index where the verbatim part starts: about ``keep_last`` from the end, never inside a
    tool pair, and past user messages that would open the kept part (they are pinned instead)."""
    split = max(0, len(body) - max(0, keep_last))
    while split > 0 and isinstance(body[split] if split < len(body) else None, ToolResultMessage):
        split -= 1
    while split < len(body) and isinstance(body[split], UserMessage):
        split += 1
    return split


# ------------------------------------------------------------------------------ summariser input
def render_transcript(messages: Sequence[Message]) -> str:
    """The older part as plain text for the summariser: one labelled block per message, tool
    calls with their arguments, each block capped at ``TRANSCRIPT_MESSAGE_CAP`` characters."""
    blocks = []
    for m in messages:
        if isinstance(m, UserMessage):
            blocks.append("USER:\n" + cap_middle(m.content, TRANSCRIPT_MESSAGE_CAP * 2))
        elif isinstance(m, AssistantMessage):
            lines = [cap_middle(m.content, TRANSCRIPT_MESSAGE_CAP)] if m.content else []
            lines += [f"-> {tc.name}({cap_middle(tc.arguments, 500)})" for tc in m.tool_calls]
            blocks.append("ASSISTANT:\n" + "\n".join(lines))
        elif isinstance(m, ToolResultMessage):
            flag = " [error]" if m.is_error else ""
            blocks.append(f"RESULT of {m.name or m.tool_call_id}{flag}:\n" + cap_middle(m.content, TRANSCRIPT_MESSAGE_CAP))
    return "\n\n".join(blocks)


def summary_request(old: Sequence[Message], focus: str | None = None) -> list[dict[str, Any]]:
    """The messages of the summarisation call (OpenAI dicts): instructions, then the transcript."""
    system = SUMMARY_INSTRUCTIONS
    if focus and focus.strip():
        system += f"\nThe user asked the summary to focus on: {focus.strip()}"
    return [{"role": "system", "content": system},
            {"role": "user", "content": "Transcript to summarise:\n\n" + render_transcript(old)}]


# ------------------------------------------------------------------------------ summary message
def _previous_pinned(message: Message) -> str | None:
    """The pinned user-message block of an earlier summary message, or ``None``."""
    if not isinstance(message, UserMessage) or not message.content.startswith(SUMMARY_HEADER):
        return None
    text = message.content[len(SUMMARY_HEADER):]
    end = text.find(USER_BLOCK_END)
    return text[:end].strip("\n") if end != -1 else None


def build_summary_text(old: Sequence[Message], summary: str, plan_markdown: str | None,
                       error_cap_chars: int) -> str:
    """The text of the summary message: the pinned parts (by code), then the model's summary."""
    user_blocks: list[str] = []
    first_task = True
    for m in old:
        if not isinstance(m, UserMessage):
            continue
        previous = _previous_pinned(m)
        if previous is not None:
            user_blocks.append(previous)
            first_task = False
        elif first_task:
            user_blocks.append("## Original task (verbatim)\n" + m.content)
            first_task = False
        else:
            user_blocks.append("--- later user message (verbatim) ---\n" + cap_middle(m.content, USER_MESSAGE_CAP))
    parts = [SUMMARY_HEADER, "\n\n".join(user_blocks), USER_BLOCK_END]
    if plan_markdown and plan_markdown.strip():
        parts.append("## Approved plan (verbatim; follow it)\n" + plan_markdown.strip())
    errors, outcomes = _errors_and_outcomes(old, error_cap_chars)
    if errors:
        parts.append("## Unresolved error outputs (verbatim, capped)\n" + "\n\n".join(errors))
    if outcomes:
        parts.append("## Latest outcomes (computed from the tool results; these win over the summary)\n"
                     + "\n".join(outcomes))
    parts.append(MODEL_SUMMARY_HEADING + "\n" + summary)
    parts.append("Continue the task from here. Do not redo finished steps; check the files if unsure.")
    return "\n\n".join(parts)


def _errors_and_outcomes(old: Sequence[Message], cap: int) -> tuple[list[str], list[str]]:
    """Error outputs after the last passing test run (most recent ``MAX_PINNED_ERRORS``), and
    outcome lines: aggregation notices' final outcomes and the last test command's result."""
    calls: dict[str, Any] = {}
    errors: list[tuple[int, str]] = []
    outcomes: list[str] = []
    last_pass = -1
    last_test: str | None = None
    for index, m in enumerate(old):
        if isinstance(m, AssistantMessage):
            calls = {tc.id: tc for tc in m.tool_calls}
            continue
        if not isinstance(m, ToolResultMessage):
            continue
        if NOTICE_PREFIX in m.content:
            notice = m.content[m.content.index(NOTICE_PREFIX):]
            final = notice.find("Final outcome")
            outcomes.append("- collapsed loop: " + (notice[final:].rstrip("]") if final != -1 else notice))
            continue
        call = calls.get(m.tool_call_id)
        command = _args(call).get("command") if call is not None else None
        failed = looks_failed(m.content, m.is_error)
        if isinstance(command, str) and _TEST_RE.search(command):
            last_test = f"- last test run: `{' '.join(command.split())[:200]}` -> {_outcome_line(m.content)}"
            if not failed:
                last_pass = index
        if failed:
            errors.append((index, f"--- {m.name or 'tool'} result ---\n" + cap_middle(m.content, cap)))
    if last_test:
        outcomes.append(last_test)
    unresolved = [text for index, text in errors if index > last_pass][-MAX_PINNED_ERRORS:]
    return unresolved, outcomes


__all__ = [
    "CompactionResult", "MODEL_SUMMARY_HEADING", "SUMMARY_HEADER", "SUMMARY_INSTRUCTIONS", "build_summary_text",
    "cap_middle", "compact", "render_transcript", "summary_request", "view_tokens",
]
