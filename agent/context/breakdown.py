"""The context breakdown: tokens per category of what the model sees next.

``compute_breakdown(agent)`` counts the system prompt, tool definitions, conversation, compaction
summary, tool results and reasoning with ``agent.budget`` exactly as the request builder counts
(the rows add up to the request's local count). Pure and thread-safe (it copies the view), so the
UI runs it in a worker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent.messages import AssistantMessage, ToolResultMessage, UserMessage

#: Category names of the breakdown, in display order.
CATEGORIES = ("system prompt", "tool definitions", "conversation", "compaction summary", "tool results",
              "reasoning")


@dataclass
class ContextBreakdown:
    """Token counts of the next request, per category, as the request builder counts them.

    Every figure is in tokens, counted by the agent's ``ContextBudget`` (the model's tokenizer
    and margin, no reported usage), so the rows that are sent add up to
    ``agent.budget.request_tokens(system_prompt, context_view(), _offered_schemas())``, which is
    what ``agent.budget.estimate(...)`` gives before the provider reported any usage.

    - ``rows``: ``(category, tokens, messages, note)`` in ``CATEGORIES`` order (``messages`` is
      the number of records counted, 0 for the fixed parts).
    - ``total``: the sum of the rows that are sent (reasoning counts only when it is sent back).
    - ``window``: the context window (tokens) or None; ``margin``: the budget's multiplier for
      this model's tokenizer (already inside every row); ``tokenizer``: what counted
      (``cl100k_base``, ``o200k_base``, ``estimate`` or ``custom``); ``reported``: the prompt
      tokens the provider last reported, or None (after a report the loop counts that figure
      plus the local count of the messages appended since).
    """

    rows: list[tuple[str, int, int, str]] = field(default_factory=list)
    total: int = 0
    #: MCP tool definitions per server: ``(server, tokens, tools)``, by server name (inside the
    #: "tool definitions" row; its note names them too).
    tool_servers: list[tuple[str, int, int]] = field(default_factory=list)
    window: int | None = None
    margin: float = 1.0
    tokenizer: str = ""
    reported: int | None = None

    def tokens(self, category: str) -> int:
        """Tokens of one category (0 when absent)."""
        return next((row[1] for row in self.rows if row[0] == category), 0)


def compute_breakdown(agent: Any, window: int | None = None) -> ContextBreakdown:
    """The ``ContextBreakdown`` of ``agent``'s next request (see the class docstring).

    Input: an ``Agent`` (``system_prompt``, ``budget``, ``context_view()``, ``_offered_schemas()``)
    and the window in tokens. Each message counts ``agent.budget.message_tokens(message)``; the
    system prompt and the tools split ``agent.budget.fixed_tokens`` (the reply-priming tokens go
    with the system prompt). An assistant message is split without changing its total: its tool
    calls (ids, names, sendable arguments: ``budget.text_tokens``) count as tool results, its
    sent reasoning as reasoning, the rest (text and framing) as conversation. Reasoning that is
    not sent back is shown (``budget.text_tokens``) but not added to ``total``. A user message
    with ``origin == "summary"`` is the compaction summary. Thread-safe for a UI worker (the
    budget's ``message_tokens``/``text_tokens``/``fixed_tokens`` only fill caches; the view is
    copied).
    """
    budget = agent.budget
    include_reasoning = bool(budget.include_reasoning)
    schemas = agent._offered_schemas()
    messages = list(agent.context_view())
    system = budget.fixed_tokens(agent.system_prompt, None)
    tools = budget.fixed_tokens(agent.system_prompt, schemas) - system
    sums = {name: [0, 0] for name in CATEGORIES}

    def add(name: str, tokens: int, count: int = 1) -> None:
        sums[name][0] += tokens
        sums[name][1] += count

    for message in messages:
        tokens = budget.message_tokens(message)
        if isinstance(message, AssistantMessage):
            calls = sum(budget.text_tokens("\n".join((c.id, c.name, c.sendable_arguments())))
                        for c in message.tool_calls)
            reasoning = budget.text_tokens(message.reasoning_content) if message.reasoning_content else 0
            sent_reasoning = reasoning if include_reasoning else 0
            # parts counted separately round up a little: never let them exceed the message
            calls = min(calls, tokens)
            sent_reasoning = min(sent_reasoning, tokens - calls)
            add("conversation", tokens - calls - sent_reasoning)
            if calls:
                add("tool results", calls, 0)
            if reasoning:
                add("reasoning", sent_reasoning if include_reasoning else reasoning)
        elif isinstance(message, ToolResultMessage):
            add("tool results", tokens)
        elif isinstance(message, UserMessage) and message.origin == "summary":
            add("compaction summary", tokens)
        else:
            add("conversation", tokens)
    servers = _mcp_servers(budget, schemas)
    mcp_note = "; MCP " + ", ".join(f"{name} {tokens:,} tok ({count} tools)" for name, tokens, count in servers) \
        if servers else ""
    notes = {
        "system prompt": "with the reply priming",
        "tool definitions": f"{len(schemas)} tools{mcp_note}",
        "conversation": "user and assistant text",
        "tool results": "tool calls and their results",
        "reasoning": "sent back to the provider" if include_reasoning else "kept in history, not sent",
    }
    rows = [("system prompt", system, 0, notes["system prompt"]),
            ("tool definitions", tools, 0, notes["tool definitions"])]
    for name in CATEGORIES[2:]:
        tokens, count = sums[name]
        if name == "compaction summary" and not count:
            continue
        rows.append((name, tokens, count, notes.get(name, "")))
    total = sum(r[1] for r in rows if r[0] != "reasoning" or include_reasoning)
    return ContextBreakdown(rows=rows, total=total, window=window, margin=float(budget.margin),
                            tokenizer=budget.tokenizer, reported=budget.used_prompt_tokens, tool_servers=servers)


def _mcp_servers(budget: Any, schemas: list[dict]) -> list[tuple[str, int, int]]:
    """``(server, tokens, tools)`` of the MCP tools (``mcp__<server>__<tool>``) among ``schemas``,
    each definition counted as its JSON text (``budget.text_tokens``), by server name."""
    import json

    sums: dict[str, list[int]] = {}
    for schema in schemas:
        name = str(schema.get("function", {}).get("name", ""))
        server, sep, _ = name[len("mcp__"):].partition("__") if name.startswith("mcp__") else ("", "", "")
        if sep and server:
            entry = sums.setdefault(server, [0, 0])
            entry[0] += budget.text_tokens(json.dumps(schema, ensure_ascii=False))
            entry[1] += 1
    return [(server, tokens, count) for server, (tokens, count) in sorted(sums.items())]


__all__ = ["CATEGORIES", "ContextBreakdown", "compute_breakdown"]
