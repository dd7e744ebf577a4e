"""The agent's context view and its compaction boundaries (DESIGN.md 3).

``Compactor`` belongs to one ``Agent``. The agent's ``history`` stays the full record of the
conversation (the journal view); the compactor holds what the model sees:

- before any compaction, the history itself;
- after one, ``compacted`` (the view ``compaction.compact`` produced: summary message + kept
  messages, pruned, aggregated and stubbed) followed by every history record appended since.
  Between boundaries the view only grows, so requests share their prefix (prompt caching works).

Triggers, at every safe point (before a model call: every tool call has its result), in the
middle of one long turn as between turns:

- ``maybe_compact``: ``[compaction] mode = "auto"`` and the request passes ``threshold`` x the
  window (or the hard limit, if lower). Not again within ``min_steps_between`` model calls of
  the previous compaction unless the request is over the hard limit (that is counted as thrash).
- ``make_room``: the request about to be sent is over the hard limit (window minus the reserved
  output): compact whatever the mode, then stub the largest tool results of the whole view; the
  loop sends only a request that fits.
- ``compact``: ``/compact [focus]`` and the two above.

A compaction pins by code what must survive (``pins``: task, later instructions, current plan,
unresolved test failures per target, test state, changed files, computed from the whole history)
and sizes its kept tail in tokens so the request afterwards is at most ``target_fraction`` of
the window. It journals a ``CompactionRecord`` (summary, ids, tokens, the rewritten
records; the originals stay in the journal), resets the budget and emits ``CompactionDone``, or
a ``Notice`` when it failed or would save too little (the view is then unchanged).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..events import CompactionDone, ContextUsage, Emit, Notice
from ..messages import Message, ToolResultMessage
from ..providers.base import ModelRequest, ProviderError
from ..session.records import CompactionRecord
from .side_call import side_call
from ..context.aggregation import default_capability_of
from ..context.budget import max_prompt_tokens
from ..context.compaction.rewrite import CompactionResult, compact
from ..context.pins import collect_pins
from ..context.truncation.saved_file import safe_call_id

if TYPE_CHECKING:
    from .agent import Agent

#: After a failed or useless auto-compaction, retry only once the request grew by this fraction
#: of the window (each attempt costs a model call).
RETRY_GROWTH = 0.05
class Compactor:
    """Context view and compaction for ``agent`` (module docstring).

    Attributes: ``compacted`` (the view at the last boundary, or ``None``), ``mark`` (length of
    ``agent.history`` at that boundary), ``plan_source`` (returns the current plan's markdown or
    ``None``; the runtime sets it), ``changed_files_source`` (files changed outside the tools'
    reports, e.g. by bash, from git; the runtime sets it), ``last`` (the last
    ``CompactionResult``), ``count`` (compactions done), ``thrash`` (compactions forced within
    ``min_steps_between`` model calls of the previous one), ``requests_since`` (model calls since
    the last compaction).
    """

    def __init__(self, agent: "Agent") -> None:
        self.agent = agent
        self.compacted: list[Message] | None = None
        self.mark = 0
        self.plan_source: Callable[[], str | None] = lambda: None
        self.changed_files_source: Callable[[], Iterable[str]] = lambda: ()
        self.last: CompactionResult | None = None
        self.count = 0
        self.thrash = 0
        self.requests_since: int | None = None  # None: no compaction yet in this process
        self._failed_at: int | None = None  # estimated tokens when auto-compaction last failed
        self._summary_failed_here = False  # a summary call failed since the last model call

    def restore(self, record: CompactionRecord) -> bool:
        """Rebuild the compacted view from a journal ``CompactionRecord`` (resume).

        Each id of ``view_ids`` is taken from the record's ``rewritten`` records, else from
        ``agent.history`` (which must already hold the resumed messages). Returns False, leaving
        the full history as the view, when the record does not fit the history.
        """
        from ..messages import message_from_dict

        try:
            rewritten = {r["id"]: message_from_dict(r) for r in record.rewritten}
            originals = {m.id: m for m in self.agent.history}
            view = [rewritten.get(i) or originals[i] for i in record.view_ids]
            mark = int(record.history_length)
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

    # ---------------------------------------------------------------------------------- sizes
    def request_tokens(self) -> int:
        """Tokens of the next request (system prompt, view, tools) as the budget counts them."""
        agent = self.agent
        return agent.budget.estimate(agent.system_prompt, self.view(), agent._offered_schemas()).tokens

    def request_limit(self) -> int | None:
        """The largest request that may be sent (tokens): the window minus the reserved output;
        ``None`` when the window is unknown."""
        window = self.agent.context_window()
        if not window:
            return None
        return max_prompt_tokens(window, max_tokens=self.agent.config.max_tokens,
                                 reserved_output_tokens=self.agent.config.compaction.reserved_output_tokens)

    def note_request(self) -> None:
        """Count one model call (the thrash guard measures steps between compactions)."""
        self._summary_failed_here = False
        if self.requests_since is not None:
            self.requests_since += 1

    # ------------------------------------------------------------------------------- trigger
    def maybe_compact(self, emit: Emit, cancel: threading.Event) -> CompactionDone | None:
        """Compact when the mode is ``auto`` and the request passes the threshold (module docstring)."""
        agent = self.agent
        settings = agent.config.compaction
        window = agent.context_window()
        if settings.mode != "auto" or not window or cancel.is_set():
            return None
        tokens = self.request_tokens()
        limit = self.request_limit() or window
        if tokens < min(settings.threshold * window, limit):
            return None
        over_limit = tokens > limit
        recent = self._recent()
        if recent and not over_limit:
            return None
        if not over_limit and self._failed_at is not None and tokens < self._failed_at + RETRY_GROWTH * window:
            return None
        done = self.compact(None, emit, cancel, thrash=recent, quiet_when_nothing=True)
        self._failed_at = None if done is not None else tokens
        return done

    def _recent(self) -> bool:
        """Whether the last compaction was fewer than ``min_steps_between`` model calls ago."""
        return self.requests_since is not None and self.requests_since < self.agent.config.compaction.min_steps_between

    def make_room(self, emit: Emit, cancel: threading.Event) -> bool:
        """Bring the next request under ``request_limit()`` (the loop calls it in ``auto`` mode):
        compact, with the digest if the summary call fails, then rewrite the view without a
        summary, stubbing the largest tool results. Returns whether it fits."""
        limit = self.request_limit()
        if limit is None or self.request_tokens() <= limit:
            return True
        if cancel.is_set():
            return False
        recent = self._recent()
        # a summary call that failed at this safe point is not tried again: the digest stands in
        self.compact(None, emit, cancel, thrash=recent, min_saving=0.0, keep_last=2, fallback_digest=True,
                     digest_only=self._summary_failed_here)
        if self.request_tokens() <= limit:
            return True
        self.compact(None, emit, cancel, summarize=False, min_saving=0.0, target_tokens=int(limit * 0.9), keep_last=2)
        return self.request_tokens() <= limit

    # ------------------------------------------------------------------------------- compact
    def compact(self, focus: str | None, emit: Emit, cancel: threading.Event | None = None, *,
                thrash: bool = False, min_saving: float = 0.05, summarize: bool = True,
                target_tokens: int | None = None, keep_last: int | None = None,
                fallback_digest: bool = False, digest_only: bool = False,
                quiet_when_nothing: bool = False) -> CompactionDone | None:
        """Compact the view now; returns the emitted ``CompactionDone``, or ``None`` after a notice.

        ``focus``: what the summary should keep (``/compact focus``). ``thrash``: this
        compaction comes within ``min_steps_between`` model calls of the previous one (counted).
        ``summarize=False``: no summary call, only the rewrites of the view (``make_room``).
        ``target_tokens``: the size to fit (default ``target_fraction`` of the window).
        ``keep_last``: the least messages kept verbatim (default ``keep_last_messages``; the hard
        limit passes 2). ``fallback_digest``: a failed summary call is replaced by a list of the
        older steps built by code (``compaction.digest_summary``) instead of leaving the view
        unchanged. ``digest_only``: make no summary call, use the digest. ``quiet_when_nothing``:
        no notice when there is nothing to compact (an automatic compaction nobody asked for).
        Never raises for model errors.
        """
        agent = self.agent
        cancel = cancel or threading.Event()
        settings = agent.config.compaction
        tools = agent._offered_schemas()
        view = self.view()
        budget = agent.budget
        tokens_before = budget.estimate(agent.system_prompt, view, tools).tokens
        window = agent.context_window()
        target_fraction = settings.target_fraction
        if target_tokens is not None and window:
            target_fraction = min(target_fraction, target_tokens / window)
        limit = self.request_limit()
        pins = collect_pins(agent.history, plan_markdown=self.plan_source(), is_mutating=self._is_mutating,
                            is_exec=lambda name: self._capability_of(name) == "exec",
                            extra_changed_files=self._changed_files())
        steps = settings.reasoning_steps_kept()
        result = compact(
            view, summarize=(lambda request: self._summarize(request, emit, cancel, digest_only)) if summarize else None,
            keep_last=settings.keep_last_messages if keep_last is None else keep_last, focus=focus,
            strip_reasoning_after_turns=settings.strip_reasoning_after_turns, strip_reasoning_after_steps=steps,
            provider_requires_reasoning=agent.config.send_reasoning_back,
            aggregate_loops=settings.aggregate_developer_loops,
            min_loop_steps=settings.max_loop_steps_before_aggregate,
            developer_capabilities=frozenset(settings.developer_capabilities),
            capability_of=self._capability_of, error_output_cap_chars=settings.error_output_cap_chars,
            min_saving=min_saving, count=budget.message_tokens,
            fixed_tokens=budget.fixed_tokens(agent.system_prompt, tools),
            window_tokens=window, tail_fraction=settings.keep_tail_fraction,
            target_fraction=target_fraction, pins=pins, save_full=self._save_full, summary_budget_tokens=limit,
            count_text=budget.text_tokens, fallback_digest=fallback_digest)
        self.last = result
        if not result.ok:
            if not (quiet_when_nothing and not result.summarized_ids and result.notice.startswith("Nothing to compact")):
                emit(Notice(message=result.notice))
            return None
        originals = {id(m) for m in view}
        self.compacted, self.mark = list(result.view), len(agent.history)
        budget.reset()
        tokens_after = budget.estimate(agent.system_prompt, self.compacted, tools).tokens
        self.count += 1
        self.thrash += int(thrash)
        self.requests_since = 0
        if agent.journal is not None:
            agent.journal.append(_journal_record(result, focus, tokens_before, tokens_after, self.mark,
                                                 [m for m in result.view if id(m) not in originals], thrash))
        event = CompactionDone(tokens_before=tokens_before, tokens_after=tokens_after,
                               summarized=len(result.summarized_ids), pruned=len(result.pruned_ids),
                               aggregated=len(result.aggregated_ids), stubbed=len(result.stubbed_ids),
                               thrash=thrash, pinned=list(result.pinned))
        emit(event)
        if window:
            emit(ContextUsage(used_tokens=tokens_after, window_tokens=window, approximate=True))
        return event

    def _capability_of(self, name: str) -> str | None:
        tool = self.agent.registry.get(name)
        return tool.capability.value if tool is not None else default_capability_of(name)

    def _is_mutating(self, name: str) -> bool:
        return self._capability_of(name) == "mutating"

    def _changed_files(self) -> list[str]:
        try:
            return list(self.changed_files_source())
        except Exception:  # a git problem must not stop a compaction
            return []

    def _save_full(self, message: ToolResultMessage) -> str | None:
        """Save a tool result's full text before it is stubbed; returns the absolute path."""
        folder = Path(self.agent.output_dir)
        path = folder / f"tool-output-{safe_call_id(message.tool_call_id)}-context.txt"
        if not path.exists():
            from ..secrets.private_files import open_private
            from ..secrets.redact import redact_text

            fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as handle:
                handle.write(redact_text(message.content))
        return str(path.resolve())

    def _summarize(self, messages: list[dict[str, Any]], emit: Emit, cancel: threading.Event,
                   digest_only: bool = False) -> str:
        """One summarisation call through the agent's provider (retried like main calls); a
        failure is remembered until the next model call. ``digest_only``: no call, raises."""
        if digest_only:
            raise ProviderError("unknown", "the summary call failed a moment ago; not tried again")
        try:
            return self._summary_call(messages, emit, cancel)
        except Exception:
            self._summary_failed_here = True
            raise

    def _summary_call(self, messages: list[dict[str, Any]], emit: Emit, cancel: threading.Event) -> str:
        agent = self.agent
        request = ModelRequest(model=agent.model, messages=messages, purpose="summary",
                               api_base=agent.config.api_base, temperature=agent.config.temperature)

        return side_call(agent, request, emit, cancel).content or ""


def _journal_record(result: CompactionResult, focus: str | None, tokens_before: int, tokens_after: int, mark: int,
                    rewritten: list[Message], thrash: bool = False) -> CompactionRecord:
    """The journal's ``CompactionRecord``: enough to rebuild the view on resume and to show the
    inspector what replaced what (``rewritten``: the summary and the changed records)."""
    return CompactionRecord(
        time=time.time(), focus=focus, tokens_before=tokens_before, tokens_after=tokens_after,
        summary=result.summary, history_length=mark, view_ids=[m.id for m in result.view],
        summarized_ids=result.summarized_ids, pruned_ids=result.pruned_ids,
        aggregated_ids=result.aggregated_ids, stubbed_ids=result.stubbed_ids,
        pinned=result.pinned, thrash=thrash, rewritten=[m.model_dump(mode="json") for m in rewritten])


__all__ = ["Compactor", "RETRY_GROWTH"]
