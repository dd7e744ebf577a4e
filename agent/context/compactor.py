"""The agent's context view and its compaction boundaries (DESIGN.md 3).

``Compactor`` belongs to one ``Agent``. The agent's ``history`` stays the full record of the
conversation (the journal view); the compactor holds what the model sees:

- before any compaction, the history itself;
- after one, ``compacted`` (the view ``compaction.compact`` produced: summary message + kept
  messages, pruned and aggregated) followed by every history record appended since. Between
  boundaries the view only grows, so requests share their prefix (prompt caching works).

``maybe_compact`` is called by the loop at a safe point (before a model call: every tool call has
its result) and compacts when ``[compaction] mode`` is ``auto`` and the estimated request passes
``threshold`` x the context window. ``compact`` (also ``/compact [focus]``) runs the
summarisation call through the agent's provider (``ModelRequest(purpose="summary")``), journals a
``{"kind": "compaction"}`` record (summary, ids, tokens, the rewritten records; the originals
stay in the journal), resets the budget and emits ``CompactionDone``, or a ``Notice`` when the
compaction failed or would save too little (the view is then unchanged).
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Callable

from ..events import CompactionDone, ContextUsage, Emit, Notice
from ..messages import Message
from ..providers.base import ModelRequest, ProviderError
from ..reply import ReplyAssembler
from ..retry import call_with_retries
from .aggregation import default_capability_of
from .compaction import compact
from .pruning import strip_think_tags

if TYPE_CHECKING:
    from ..loop import Agent

#: After a failed or useless auto-compaction, retry only once the request grew by this fraction
#: of the window (each attempt costs a model call).
RETRY_GROWTH = 0.05


class Compactor:
    """Context view and compaction for ``agent`` (module docstring).

    Attributes: ``compacted`` (the view at the last boundary, or ``None``), ``mark`` (length of
    ``agent.history`` at that boundary), ``plan_source`` (returns the approved plan's markdown or
    ``None``; the runtime sets it), ``last`` (the last ``CompactionResult``).
    """

    def __init__(self, agent: "Agent") -> None:
        self.agent = agent
        self.compacted: list[Message] | None = None
        self.mark = 0
        self.plan_source: Callable[[], str | None] = lambda: None
        self.last = None
        self._failed_at: int | None = None  # estimated tokens when auto-compaction last failed

    def restore(self, record: dict[str, Any]) -> bool:
        """Rebuild the compacted view from a journal ``{"kind": "compaction"}`` record (resume).

        Each id of ``view_ids`` is taken from the record's ``rewritten`` records, else from
        ``agent.history`` (which must already hold the resumed messages). Returns False, leaving
        the full history as the view, when the record does not fit the history.
        """
        from ..messages import message_from_dict

        try:
            rewritten = {r["id"]: message_from_dict(r) for r in record.get("rewritten", [])}
            originals = {m.id: m for m in self.agent.history}
            view = [rewritten.get(i) or originals[i] for i in record["view_ids"]]
            mark = int(record["history_length"])
        except (KeyError, TypeError, ValueError):
            return False
        if mark > len(self.agent.history):
            return False
        self.compacted, self.mark = view, mark
        self.agent.budget.reset()
        return True

    # ---------------------------------------------------------------------------------- view
    def view(self) -> list[Message]:
        """The records the model sees next (without the system prompt; not yet repaired)."""
        history = self.agent.history
        if self.compacted is None:
            return history
        if len(history) < self.mark:  # the history was replaced (e.g. /clear): start over
            self.compacted, self.mark = None, 0
            return history
        return self.compacted + history[self.mark:]

    # ------------------------------------------------------------------------------- trigger
    def maybe_compact(self, emit: Emit, cancel: threading.Event) -> CompactionDone | None:
        """Compact when the mode is ``auto`` and the estimate passes the threshold (see module)."""
        agent = self.agent
        settings = agent.config.compaction
        window = agent.context_window()
        if settings.mode != "auto" or not window or cancel.is_set():
            return None
        tokens = agent.budget.estimate(agent.system_prompt, self.view(), agent._offered_schemas()).tokens
        if tokens < settings.threshold * window:
            return None
        if self._failed_at is not None and tokens < self._failed_at + RETRY_GROWTH * window:
            return None
        done = self.compact(None, emit, cancel)
        self._failed_at = None if done is not None else tokens
        return done

    # ------------------------------------------------------------------------------- compact
    def compact(self, focus: str | None, emit: Emit, cancel: threading.Event | None = None) -> CompactionDone | None:
        """Compact the view now; returns the emitted ``CompactionDone``, or ``None`` after a notice.

        ``focus``: what the summary should keep (``/compact focus``). Never raises for model errors.
        """
        agent = self.agent
        cancel = cancel or threading.Event()
        settings = agent.config.compaction
        tools = agent._offered_schemas()
        view = self.view()
        tokens_before = agent.budget.estimate(agent.system_prompt, view, tools).tokens
        result = compact(
            view, summarize=lambda request: self._summarize(request, emit, cancel),
            keep_last=settings.keep_last_messages, plan_markdown=self.plan_source(), focus=focus,
            strip_reasoning_after_turns=settings.strip_reasoning_after_turns,
            provider_requires_reasoning=agent.config.send_reasoning_back,
            aggregate_loops=settings.aggregate_developer_loops,
            min_loop_steps=settings.max_loop_steps_before_aggregate,
            developer_capabilities=frozenset(settings.developer_capabilities),
            capability_of=self._capability_of, error_output_cap_chars=settings.error_output_cap_chars)
        self.last = result
        if not result.ok:
            emit(Notice(message=result.notice))
            return None
        originals = {id(m) for m in view}
        self.compacted, self.mark = list(result.view), len(agent.history)
        agent.budget.reset()
        tokens_after = agent.budget.estimate(agent.system_prompt, self.compacted, tools).tokens
        if agent.journal is not None:
            agent.journal.append(_journal_record(result, focus, tokens_before, tokens_after, self.mark,
                                                 [m for m in result.view if id(m) not in originals]))
        event = CompactionDone(tokens_before=tokens_before, tokens_after=tokens_after,
                               summarized=len(result.summarized_ids), pruned=len(result.pruned_ids),
                               aggregated=len(result.aggregated_ids))
        emit(event)
        window = agent.context_window()
        if window:
            emit(ContextUsage(used_tokens=tokens_after, window_tokens=window, approximate=True))
        return event

    def _capability_of(self, name: str) -> str | None:
        tool = self.agent.registry.get(name)
        return tool.capability.value if tool is not None else default_capability_of(name)

    def _summarize(self, messages: list[dict[str, Any]], emit: Emit, cancel: threading.Event) -> str:
        """One summarisation call through the agent's provider (retried like main calls)."""
        agent = self.agent
        request = ModelRequest(model=agent.model, messages=messages, purpose="summary",
                               api_base=agent.config.api_base, temperature=agent.config.temperature)

        def attempt() -> str:
            assembler = ReplyAssembler()
            for delta in agent.provider.stream(request, cancel):
                assembler.add(delta)
                if cancel.is_set():
                    raise ProviderError("unknown", "cancelled")
            return strip_think_tags(assembler.build(agent.model, keep_tool_calls=False).content or "")

        return call_with_retries(attempt, agent.config.retry, emit=emit, cancel=cancel,
                                 instant=getattr(agent.provider, "instant_retries", False))


def _journal_record(result, focus: str | None, tokens_before: int, tokens_after: int, mark: int,
                    rewritten: list[Message]) -> dict[str, Any]:
    """The ``{"kind": "compaction"}`` journal record: enough to rebuild the view on resume and to
    show the inspector what replaced what (``rewritten``: the summary and the changed records)."""
    return {
        "kind": "compaction", "time": time.time(), "focus": focus,
        "tokens_before": tokens_before, "tokens_after": tokens_after,
        "summary": result.summary, "history_length": mark,
        "view_ids": [m.id for m in result.view],
        "summarized_ids": result.summarized_ids, "pruned_ids": result.pruned_ids,
        "aggregated_ids": result.aggregated_ids,
        "rewritten": [m.model_dump(mode="json") for m in rewritten],
    }


__all__ = ["Compactor", "RETRY_GROWTH"]
