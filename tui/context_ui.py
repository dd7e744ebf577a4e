"""Context management in the UI: the breakdown of the context, ``/compact``, the inspector.

The app, the context meter, the compaction mark and ``commands`` call these functions; they hold
the behaviour so the shared modules only need a line each:

- ``compute_breakdown(agent)``: token estimates per category of what the model sees next
  (system prompt, tool definitions, conversation, tool results, reasoning), from the agent's
  ``system_prompt``, ``registry.schemas()`` and ``context_view()`` with the budget's
  characters / 4 estimate. Pure and thread-safe (it copies the view); run in a worker.
- ``open_breakdown(app)``: pushes ``ContextBreakdownScreen`` (it computes in a thread worker).
- ``run_compact(app, focus)``: ``/compact [focus]``; runs ``agent.compact(focus, emit, cancel)``
  through ``AgentRunner.start_job`` (refused while a turn runs, or when compaction is off).
- ``open_inspector(app, tokens_before, tokens_after)``: pushes ``CompactionInspectorScreen`` on
  the session's journal, at the compaction with these token counts (the latest one by default).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agent.context.budget import MESSAGE_OVERHEAD_TOKENS, chars_to_tokens, message_tokens
from agent.context.compaction.summary import SUMMARY_HEADER
from agent.messages import AssistantMessage, ToolResultMessage, UserMessage

#: Category names of the breakdown, in display order.
CATEGORIES = ("system prompt", "tool definitions", "conversation", "compaction summary", "tool results",
              "reasoning")


@dataclass
class ContextBreakdown:
    """Token estimates (local, characters / 4, no margin) of the next request, per category.

    - ``rows``: ``(category, tokens, messages, note)`` in ``CATEGORIES`` order (``messages`` is
      the number of records counted, 0 for the fixed parts).
    - ``total``: the sum of the rows that are sent (reasoning counts only when it is sent back).
    - ``window``: the context window (tokens) or None; ``margin``: the budget's multiplier for
      this model's tokenizer (the meter's figure includes it); ``reported``: the prompt tokens the
      provider last reported, or None.
    """

    rows: list[tuple[str, int, int, str]] = field(default_factory=list)
    total: int = 0
    window: int | None = None
    margin: float = 1.0
    reported: int | None = None

    def tokens(self, category: str) -> int:
        """Tokens of one category (0 when absent)."""
        return next((row[1] for row in self.rows if row[0] == category), 0)


def compute_breakdown(agent: Any, window: int | None = None) -> ContextBreakdown:
    """The ``ContextBreakdown`` of ``agent``'s next request (see the module docstring).

    Assistant messages are split: their text counts as conversation, their tool calls (ids, names,
    arguments) as tool results, their ``reasoning_content`` as reasoning.
    """
    budget = getattr(agent, "budget", None)
    include_reasoning = bool(getattr(budget, "include_reasoning", False))
    system = chars_to_tokens(len(agent.system_prompt or "")) + MESSAGE_OVERHEAD_TOKENS
    schemas = agent.registry.schemas()
    tools = chars_to_tokens(len(json.dumps(schemas, separators=(",", ":"), ensure_ascii=False))) if schemas else 0
    sums = {name: [0, 0] for name in CATEGORIES}

    def add(name: str, tokens: int, count: int = 1) -> None:
        sums[name][0] += tokens
        sums[name][1] += count

    for message in list(agent.context_view()):
        if isinstance(message, AssistantMessage):
            text = chars_to_tokens(len(message.content or "")) + MESSAGE_OVERHEAD_TOKENS
            calls = sum(chars_to_tokens(len(c.id) + len(c.name) + len(c.arguments)) for c in message.tool_calls)
            add("conversation", text)
            if calls:
                add("tool results", calls, 0)
            if message.reasoning_content:
                add("reasoning", chars_to_tokens(len(message.reasoning_content)))
        elif isinstance(message, ToolResultMessage):
            add("tool results", message_tokens(message))
        elif isinstance(message, UserMessage) and message.content.startswith(SUMMARY_HEADER):
            add("compaction summary", message_tokens(message))
        else:
            add("conversation", message_tokens(message))
    notes = {
        "tool definitions": f"{len(schemas)} tools",
        "conversation": "user and assistant text",
        "tool results": "tool calls and their results",
        "reasoning": "sent back to the provider" if include_reasoning else "kept in history, not sent",
    }
    rows = [("system prompt", system, 0, ""), ("tool definitions", tools, 0, notes["tool definitions"])]
    for name in CATEGORIES[2:]:
        tokens, count = sums[name]
        if name == "compaction summary" and not count:
            continue
        rows.append((name, tokens, count, notes.get(name, "")))
    total = sum(r[1] for r in rows if r[0] != "reasoning" or include_reasoning)
    return ContextBreakdown(rows=rows, total=total, window=window,
                            margin=float(getattr(budget, "margin", 1.0) or 1.0),
                            reported=getattr(budget, "used_prompt_tokens", None))


def open_breakdown(app: Any) -> None:
    """Show the context breakdown screen (once: a second call while it is open does nothing)."""
    from .screens.context_breakdown import ContextBreakdownScreen

    if not isinstance(app.screen, ContextBreakdownScreen):
        app.push_screen(ContextBreakdownScreen(app.session))


def compaction_mode(session: Any) -> str:
    """The ``[compaction] mode`` of ``session`` (auto when unknown)."""
    settings = getattr(getattr(session, "settings", None), "compaction", None)
    return str(getattr(settings, "mode", "auto") or "auto")


async def run_compact(app: Any, focus: str) -> None:
    """``/compact [focus]``: compact the context now in a worker, or say why not.

    A failed or useless compaction (less than 5% saved) leaves the context unchanged; the core
    says so with a ``Notice`` shown in the conversation.
    """
    if compaction_mode(app.session) == "off":
        await app.show_notice("Compaction is off (--compaction off / [compaction] mode = \"off\").",
                              kind="warning")
        return
    if app.runner.running:
        await app.show_notice("A turn is running: /compact when it ends (or press Esc to stop it).",
                              kind="warning")
        return
    session = app.session

    def job(emit: Any, cancel: Any) -> None:
        agent = session.agent
        if agent is None:
            raise RuntimeError("the session is not ready")
        if not agent.history:
            from agent.events import Notice

            emit(Notice(message="Nothing to compact yet."))
            return
        agent.compact(focus or None, emit, cancel)

    if app.runner.start_job(job, name="compact"):
        from .widgets.status_bar import StatusBar

        app.main_screen.query_one(StatusBar).activity = "compacting..."
        what = f" (focus: {focus})" if focus else ""
        await app.show_notice(f"Compacting the context{what}...")


def open_inspector(app: Any, tokens_before: int | None = None, tokens_after: int | None = None) -> None:
    """Show the compaction inspector on the session's journal, at the compaction with these token
    counts (the latest one when None or not found)."""
    from .screens.compaction_inspector import CompactionInspectorScreen

    if isinstance(app.screen, CompactionInspectorScreen):
        return
    app.push_screen(CompactionInspectorScreen(app.session.journal_path, tokens_before=tokens_before,
                                              tokens_after=tokens_after))


__all__ = ["CATEGORIES", "ContextBreakdown", "compaction_mode", "compute_breakdown", "open_breakdown",
           "open_inspector", "run_compact"]
