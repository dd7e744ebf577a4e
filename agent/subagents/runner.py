"""Running one sub-agent for a ``task`` call, from its start to the parent's tool result.

``SubagentRunner.run`` checks the tools asked for, builds the child (``child.build_child``),
links its journal from the parent's (``SubagentRecord`` ``started``, then ``finished``), and runs
its one turn under a watchdog that stops it when the parent's turn is cancelled (Esc) or its
wall-clock limit passes. The events it emits: ``SubagentStarted``, ``SubagentProgress`` at each
of the child's steps and tool calls, then ``SubagentCompleted`` or ``SubagentFailed``. The
child's ``model_call_finished`` events are passed on, so the session's figures count its calls.
It runs in a worker thread of the parent's step (``loop.parallel_tasks``), several at a time.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Sequence

from ..cancel import interrupt, was_interrupted
from ..config.settings import SubagentSettings
from ..context.truncation.bounded import truncate_and_save
from ..events import (
    Emit,
    StepStarted,
    SubagentCompleted,
    SubagentFailed,
    SubagentProgress,
    SubagentStarted,
    ToolCallStarted,
)
from ..messages import AssistantMessage, Usage
from ..session.records import SubagentRecord
from ..tools.base import ToolOutput
from ..tools.task import TaskArgs
from ..tools.view import one_line
from .child import build_child, subagent_tools
from .outcome import SubagentOutcome, outcome_of

#: How often the watchdog looks at the parent's cancel handle and the deadline (seconds).
WATCH_S = 0.05
#: Child events passed on to the parent's stream unchanged (by ``type``).
FORWARDED_TYPES = frozenset({"model_call_finished"})
#: Child hook events passed on unchanged (their ``agent`` names the sub-agent).
HOOK_TYPES = frozenset({"hook_started", "hook_finished"})


class SubagentRunner:
    """Runs sub-agents under ``settings`` (``[subagents]``: turn cap, wall-clock limit)."""

    def __init__(self, settings: SubagentSettings | None = None) -> None:
        self.settings = settings or SubagentSettings()

    def run(self, parent: Any, call_id: str, index: int, args: TaskArgs, emit: Emit,
            cancels: Sequence[threading.Event]) -> ToolOutput:
        """Run sub-agent ``index`` (1-based) for ``parent``'s ``task`` call ``call_id`` to its end;
        stop it when any of ``cancels`` is set (an interrupt of one is passed on as such).

        Returns the tool result: the sub-agent's final text, or an error result saying how it
        stopped (``outcome.outcome_of``); a ``tools`` list naming a tool a sub-agent may not have
        is refused before anything starts. Never raises."""
        description = one_line(args.description)
        allowed = subagent_tools(parent)
        if args.tools is not None:
            refused = [name for name in args.tools if name not in allowed]
            if refused:
                return ToolOutput(text=(f"Refused: a sub-agent cannot have {', '.join(refused)}: sub-agents are "
                                        f"read-only and may only have {', '.join(allowed)}. Nothing was started."),
                                  is_error=True)
            if not args.tools:
                return ToolOutput(text=(f"Refused: give a sub-agent at least one tool ({', '.join(allowed)}), or "
                                        "leave tools out for all of them. Nothing was started."), is_error=True)
        tools = [name for name in allowed if args.tools is None or name in args.tools]
        limit = self.settings.max_turns
        max_turns = min(args.max_turns or limit, limit)
        if any(cancel.is_set() for cancel in cancels):
            emit(SubagentFailed(task_id=call_id, index=index, duration_s=0.0, stop_reason="cancelled",
                                message=f"Sub-agent {index} ({description}) was cancelled before it started"))
            return ToolOutput(text=f"Sub-agent {index} ({description}) was cancelled before it started. Do not "
                                   "retry unless asked.", is_error=True, outcome="cancelled")
        return _Run(self.settings, parent, call_id, index, description, emit, cancels).go(args.prompt, tools, max_turns)


class _Run:
    """One sub-agent's run (``SubagentRunner.run`` after its checks)."""

    def __init__(self, settings: SubagentSettings, parent: Any, call_id: str, index: int, description: str,
                 emit: Emit, cancels: Sequence[threading.Event]) -> None:
        self.settings, self.parent, self.call_id, self.index = settings, parent, call_id, index
        self.description, self.emit, self.cancels = description, emit, cancels
        self.child_cancel = threading.Event()
        self.done = threading.Event()
        self.stopped_by = ""  # "cancelled" or "timeout" when the watchdog stopped the child
        self.step = 0
        self.last_tool = ""
        #: The child's tokens as its ``model_call_finished`` events count them (the provider's
        #: figures, else the local estimate), so a provider that reports no usage still shows some.
        self.usage = Usage()

    def go(self, prompt: str, tools: list[str], max_turns: int) -> ToolOutput:
        started = time.monotonic()
        child = build_child(self.parent, call_id=self.call_id, index=self.index, tools=tools, max_turns=max_turns)
        self.child = child
        journal_path = child.journal.path
        self._link("started", journal_path)
        self.emit(SubagentStarted(task_id=self.call_id, index=self.index, description=self.description,
                                  journal_path=str(journal_path)))
        watchdog = threading.Thread(target=self._watch, args=(started,), name=f"subagent-{self.index}-watch",
                                    daemon=True)
        watchdog.start()
        error, stop_reason, final_text = "", "error", ""
        try:
            finished = child.run_turn(prompt, self._child_event, self.child_cancel)
            stop_reason, final_text = finished.stop_reason, finished.final_text
            if stop_reason == "error":
                error = finished.final_text
        except Exception as exc:  # noqa: BLE001 - a bug in the child must not take the parent down
            error = f"{type(exc).__name__}: {exc}"
        finally:
            self.done.set()
            watchdog.join(1.0)
            child.journal.close()
        duration = round(time.monotonic() - started, 3)
        if self.stopped_by == "timeout" and stop_reason in ("cancelled", "interrupted", "done"):
            stop_reason = "timeout"
        elif self.stopped_by == "cancelled" and stop_reason == "done":  # stopped mid-reply: never a success
            stop_reason = "interrupted" if was_interrupted(self.child_cancel) else "cancelled"
        result = outcome_of(stop_reason, final_text, index=self.index, description=self.description,
                            max_turns=max_turns, time_limit_s=self.settings.time_limit_s,
                            notes=_last_text(child.history), error=error,
                            interrupted=was_interrupted(self.child_cancel), turn_cap=self.settings.max_turns)
        self._link("finished", journal_path, result.stop_reason, duration, self.usage,
                   result.text if result.ok else result.message)
        self._report(result, duration, self.usage)
        return self._output(result)

    # ------------------------------------------------------------------------------- helpers
    def _watch(self, started: float) -> None:
        deadline = started + self.settings.time_limit_s
        while not self.done.wait(WATCH_S):
            for cancel in self.cancels:
                if cancel.is_set():
                    self.stopped_by = "cancelled"
                    if was_interrupted(cancel):
                        interrupt(self.child_cancel)
                    else:
                        self.child_cancel.set()
                    return
            if time.monotonic() >= deadline:
                self.stopped_by = "timeout"
                self.child_cancel.set()
                return

    def _child_event(self, event: Any) -> None:
        if isinstance(event, StepStarted):
            self.step = event.step
        elif isinstance(event, ToolCallStarted):
            self.last_tool = event.name
        elif getattr(event, "type", "") in HOOK_TYPES:  # the user's tool hooks on its calls (``agent`` says whose)
            self.emit(event)
            return
        elif getattr(event, "type", "") in FORWARDED_TYPES:
            self.emit(event)
            self.usage = self.usage + Usage(prompt_tokens=event.prompt_tokens, completion_tokens=event.completion_tokens,
                                            cached_prompt_tokens=event.cached_prompt_tokens)
        else:
            return
        tokens = self.usage.prompt_tokens + self.usage.completion_tokens
        self.emit(SubagentProgress(task_id=self.call_id, index=self.index, step=self.step,
                                   tokens=tokens, last_tool=self.last_tool))

    def _link(self, event: str, journal_path: Any, stop_reason: str | None = None, duration: float | None = None,
              usage: Usage | None = None, summary: str | None = None) -> None:
        """Journal the link to the child's journal in the parent's (relative to its folder); at the
        end, with the card's ``summary``: the first line of ``summary`` (its result, or why it stopped)."""
        journal = self.parent.journal
        if journal is None:
            return
        try:
            relative = str(journal_path.relative_to(journal.path.parent))
        except ValueError:
            relative = str(journal_path)
        tokens = usage.prompt_tokens + usage.completion_tokens if usage is not None else None
        journal.append(SubagentRecord(event=event, task_id=self.call_id, index=self.index,
                                      description=self.description, journal=relative, stop_reason=stop_reason,
                                      duration_s=duration, tokens=tokens, summary=_first_line(summary),
                                      time=time.time()))

    def _report(self, result: SubagentOutcome, duration: float, usage: Usage) -> None:
        if result.ok:
            self.emit(SubagentCompleted(task_id=self.call_id, index=self.index, duration_s=duration, usage=usage,
                                        stop_reason="done", summary=result.text))
        else:
            self.emit(SubagentFailed(task_id=self.call_id, index=self.index, duration_s=duration, usage=usage,
                                     stop_reason=result.stop_reason, message=result.message))

    def _output(self, result: SubagentOutcome) -> ToolOutput:
        text = result.text
        ctx = self.parent.tool_context(self.call_id)
        if ctx.max_output_chars and len(text) > ctx.max_output_chars:
            cut = truncate_and_save(text, ctx)
            return ToolOutput(text=cut.text, is_error=not result.ok, outcome=None if result.ok else result.outcome,
                              truncated=cut.truncated, saved_path=cut.saved_path)
        return ToolOutput(text=text, is_error=not result.ok, outcome=None if result.ok else result.outcome)


def _first_line(text: str | None) -> str | None:
    """The first non-empty line of ``text``, cut to ``SubagentRecord.SUMMARY_CHARS``; None for none."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[0][:SubagentRecord.SUMMARY_CHARS] if lines else None


def _last_text(history: list) -> str:
    """The text of the last reply in ``history`` that has some (a stopped sub-agent's notes)."""
    for message in reversed(history):
        if isinstance(message, AssistantMessage) and message.content:
            return message.content
    return ""


__all__ = ["SubagentRunner"]
