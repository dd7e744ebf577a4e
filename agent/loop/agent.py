"""The ReAct loop: one user turn in, events out.

``Agent.run_turn`` sends the system prompt + repaired history + tool schemas, streams the reply
(emitting deltas), executes the requested tool calls in order through the permission gate, appends
their results, and repeats until the model answers without tool calls. Guards: a step limit
(``max_turns`` counts steps that asked for tools, OpenCLI's definition; the loop stops *before*
calling the model again), stuck-loop detection (``guards.LoopGuard``: a repeat is answered with a
warning instead of being run, and a further repeat stops the turn as ``stuck``), cancellation
(every tool call in history still gets a result), and malformed model output (bad JSON, unknown
tools, wrong types all become error results). Event-driven reminders (``reminders``) are appended
to the last tool result of a step.

Plan mode hooks (``agent.plan``): ``TurnOptions.allowed_capabilities`` (or ``LoopConfig``'s) refuses every call of
another capability before the permission gate, while every registered tool stays offered (the
tool list never changes between modes, so the provider's prompt cache holds; DESIGN.md 4); the
turn's ``ModeMessage`` states the mode in its user message; a successful tool result with
``metadata["end_turn"]`` (``submit_plan``) ends the turn once its step's calls are answered.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Callable

from ..context.context_budget import ContextBudget
from ..cancel import was_interrupted
from ..events import (
    CompactionDone,
    ContextUsage,
    Emit,
    ErrorEvent,
    GuardTriggered,
    JournalStatus,
    Notice,
    StepStarted,
    TurnFinished,
    TurnStarted,
    UserMessageAdded,
)
from ..messages import AssistantMessage, Message, ModeMessage, SystemMessage, Usage, UserMessage, UserOrigin
from ..observability.model_calls import CallMeter
from ..observability.spending import Spending
from ..providers.base import ModelRequest, Provider, ProviderError
from ..session.journal import SessionJournal
from ..session.records import EventRecord
from ..tools.registry import ToolRegistry
from .compactor import Compactor
from .config import MAX_TURNS_TEXT, LoopConfig, TurnOptions
from .guards import LoopGuard
from .reminders import ReadFileStamps, ReminderEngine
from .reply import StreamedAttempt
from .retry import call_with_retries
from .tool_calls import ToolCallsMixin
from .tool_source import sync_tool_source
from .wire import RequestHistory


class RequestTooLarge(ProviderError):
    """The next request is over the hard limit (the window minus the reserved output) and could
    not be reduced: it was never sent. ``kind`` is ``context_window``; ``message`` says why."""

    def __init__(self, message: str) -> None:
        super().__init__("context_window", message)


class Agent(ToolCallsMixin):
    """Runs turns against one conversation history.

    Inputs: a ``Provider``, a ``ToolRegistry``, the system prompt text, the model name, the
    workspace root and the folder for saved tool outputs, an optional ``SessionJournal``.
    ``history`` holds every record after the system prompt, in order.
    """

    def __init__(self, *, provider: Provider, registry: ToolRegistry, system_prompt: str, model: str,
                 workspace: Path, output_dir: Path, session_id: str, config: LoopConfig,
                 journal: SessionJournal | None = None,
                 context_window: Callable[[], int | None] = lambda: None,
                 reminders: ReminderEngine | None = None) -> None:
        self.provider = provider
        self.registry = registry
        self.system_prompt = system_prompt
        self.model = model
        self.workspace = Path(workspace)
        self.output_dir = Path(output_dir)
        self.session_id = session_id
        self.config = config
        self.journal = journal
        self.context_window = context_window
        self.history: list[Message] = []
        self.guard = LoopGuard()
        self.reminders = reminders if reminders is not None else ReminderEngine()
        self.file_stamps = ReadFileStamps(self.workspace)
        #: Undo checkpoints (agent/checkpoints.Checkpoints), set by the runtime; None = none taken.
        self.checkpoints = None
        self.stamps_lock = threading.Lock()  # file_stamps/reminders vs the file watcher's thread
        self._in_tool = False
        self._end_turn = False  # set when a tool result asks to end the turn (metadata "end_turn")
        self._approval_wait_s = 0.0
        self._turn_options = TurnOptions()
        #: Messages the user sent into the running turn (``steer``), added at the next boundary.
        self._steering: list[str] = []
        self._steering_lock = threading.Lock()
        self._turn_running = False
        self.budget = ContextBudget(model, include_reasoning=config.send_reasoning_back)  # counted as sent
        self._sent_count = 0
        # --- context compaction: the view the model sees (``loop.compactor``) ---
        self.compactor = Compactor(self)
        self._sent_view: list[Message] = []
        self._request_history = RequestHistory()  # the view repaired and converted incrementally (``loop.wire``)
        self.spending = Spending()  # the session's total and budget, shared with sub-agents
        self.turn_number = self.step_number = 0  # of ``ModelCallFinished``; set on resume
        self.call_purpose = "main"
        #: User hooks around each tool call (``pipeline.user_hooks.UserToolGate``), or None.
        self.tool_gate = None
        #: Requests whose tool list differed from the previous request's (``tool_source``).
        self.prefix_changes = 0

    def adopt_conversation(self, previous: "Agent") -> None:
        """Continue ``previous``'s conversation (a model switch: the runtime builds a new agent
        for the new model). Takes over the history, the compacted view with its boundary, the
        files read (so edits need no re-read) and the reminder state; the token figures restart,
        because they were counted for the other model. Raises nothing."""
        self.history = previous.history
        self.compactor.compacted = previous.compactor.compacted
        self.compactor.mark = previous.compactor.mark
        self.compactor.last = previous.compactor.last
        with previous.stamps_lock:
            self.file_stamps = previous.file_stamps
            self.reminders = previous.reminders
        self.budget.reset()
        self.spending, self.turn_number = previous.spending, previous.turn_number

    # ----------------------------------------------------------------------------------- records
    def _append(self, message: Message, emit: Emit) -> None:
        self.history.append(message)
        if self.journal is not None:
            self.journal.append_message(message)
            self.report_journal(emit)

    def report_journal(self, emit: Emit) -> None:
        """Emit a ``JournalStatus`` for each change of the journal's state since the last call."""
        if self.journal is not None:
            for report in self.journal.take_reports():
                emit(JournalStatus(state=report.state, message=report.message))

    def build_request(self) -> ModelRequest:
        """Return the next main-loop request: system prompt + repaired history + tool schemas."""
        messages = [SystemMessage(content=self.system_prompt).to_openai()]
        messages += self._request_history.messages(self.context_view(), bool(self.config.send_reasoning_back))
        return ModelRequest(model=self.model, messages=messages, tools=self._offered_schemas(),
                            api_base=self.config.api_base, temperature=self.config.temperature,
                            max_tokens=self.config.max_tokens,
                            reasoning_effort=self._turn_options.reasoning_effort)

    # -------------------------------------------------------------------------------------- turn
    def steer(self, text: str) -> bool:
        """Send ``text`` into the running turn (thread-safe): it becomes a user message at the
        next step boundary, where every tool call has its result (Claude Code's behaviour), and a
        turn about to end goes on to answer it. Returns False when no turn runs (send it as a
        turn of its own); a turn that stops first (cancelled, an error, a limit) drops it, and
        ``UserMessageAdded`` never comes for it."""
        with self._steering_lock:
            if not self._turn_running:
                return False
            self._steering.append(text)
            return True

    def _add_steering(self, emit: Emit) -> bool:
        """Add the messages sent into the turn since the last boundary; True when there were any."""
        with self._steering_lock:
            texts, self._steering = self._steering, []
        for text in texts:
            self._append(UserMessage(content=text), emit)
            emit(UserMessageAdded(text=text))
        return bool(texts)

    def run_turn(self, prompt: str, emit: Emit, cancel: threading.Event, *,
                 message_id: str | None = None, mode: ModeMessage | None = None,
                 origin: UserOrigin = "user", options: TurnOptions | None = None) -> TurnFinished:
        """Run one user turn; ``options`` hold settings for this turn only (see ``TurnOptions``).
        The other arguments are those of ``_run_turn``."""
        self._turn_options = options or TurnOptions()
        try:
            return self._run_turn(prompt, emit, cancel, message_id=message_id, mode=mode, origin=origin)
        finally:
            self._turn_options = TurnOptions()

    def _run_turn(self, prompt: str, emit: Emit, cancel: threading.Event, *,
                  message_id: str | None = None, mode: ModeMessage | None = None,
                  origin: UserOrigin = "user") -> TurnFinished:
        """Run one user turn to its end and return the ``TurnFinished`` event (also emitted).

        ``message_id`` (optional) is the id of the turn's user message, so a record journaled
        before the turn can name it (the planner's ``approved`` record); a new id otherwise.
        ``mode`` (optional) is the mode message sent at the start of that user message (Plan/Act,
        ``agent.plan``). ``origin``: who wrote the prompt (``plan_execution`` for the planner's
        instruction to carry out a plan: compaction pins the plan, not that message). Never raises
        for model or tool failures: they become events and a stop reason.
        """
        self.turn_number += 1
        self.step_number = 0
        emit(TurnStarted(session_id=self.session_id, model=self.model, prompt=prompt))
        self._append(UserMessage(content=prompt, mode=mode, origin=origin,
                                 **({"id": message_id} if message_id else {})), emit)
        self.guard.reset()
        self.reminders.start_turn()
        if self.checkpoints is not None:
            self.checkpoints.start_turn()
        self._end_turn = False
        usage = Usage()
        steps_with_tools = 0
        step = 0
        final_text = ""

        with self._steering_lock:
            self._turn_running, self._steering = True, []

        def finish(reason: str, text: str = "") -> TurnFinished:
            with self._steering_lock:
                self._turn_running, self._steering = False, []
            if reason == "cancelled" and was_interrupted(cancel):
                reason = "interrupted"
            event = TurnFinished(stop_reason=reason, final_text=text, usage=usage, session_id=self.session_id)
            if self.journal is not None:
                self.journal.append(EventRecord.turn_finished(reason, time.time()))
                self.report_journal(emit)
            emit(event)
            return event

        while True:
            if cancel.is_set():
                return finish("cancelled", final_text)
            if steps_with_tools >= self.config.max_turns:
                message = MAX_TURNS_TEXT.format(n=self.config.max_turns)
                emit(GuardTriggered(guard="max_turns", message=message))
                return finish("max_turns", message)
            over_budget = self.spending.exceeded()
            if over_budget is not None:
                emit(GuardTriggered(guard="budget", message=over_budget))
                return finish("budget", over_budget)
            self.compactor.maybe_compact(emit, cancel)  # safe point: every tool call has its result
            step += 1
            self.step_number = step
            emit(StepStarted(step=step))
            try:
                reply = self._call_model_compacting_once(emit, cancel)
            except ProviderError as exc:
                if cancel.is_set():
                    return finish("cancelled", final_text)
                emit(ErrorEvent(message=exc.message))
                return finish("error", exc.message)
            if reply.usage:
                usage = usage + reply.usage
                self.budget.reconcile(reply.usage.prompt_tokens, self._sent_count, self._sent_view)
                window = self.context_window()
                if window:
                    emit(ContextUsage(used_tokens=reply.usage.prompt_tokens + reply.usage.completion_tokens,
                                      window_tokens=window, approximate=False, **reply.usage.cache_figures()))
            if cancel.is_set():
                # Unfinished tool calls are dropped so nothing is left without a result.
                partial = reply.model_copy(update={"tool_calls": []})
                if partial.content:
                    self._append(partial, emit)
                return finish("cancelled", partial.content or "")
            self._append(reply, emit)
            if reply.content:
                final_text = reply.content
            if not reply.tool_calls:
                if self._add_steering(emit):  # the user said more while the model answered
                    continue
                return finish("done", reply.content or "")
            steps_with_tools += 1
            stop = self._run_tool_calls(reply, emit, cancel)
            if stop is not None:
                emit(GuardTriggered(guard=stop.guard or "stuck", message=stop.message))
                return finish("stuck", stop.message)
            if cancel.is_set():
                return finish("cancelled", final_text)
            if self._end_turn:  # e.g. submit_plan: the planning pass is over
                return finish("done", final_text)
            self._add_steering(emit)

    # ------------------------------------------------------------------------ context compaction
    def context_view(self) -> list[Message]:
        """The records the model sees next: ``history``, or after a compaction the compacted view
        plus every record appended since (``Compactor.view``)."""
        return self.compactor.view()

    def compact(self, focus: str | None = None, emit: Emit = lambda event: None,
                cancel: threading.Event | None = None) -> CompactionDone | None:
        """Compact the context now (``/compact [focus]``): returns the emitted ``CompactionDone``,
        or ``None`` after a ``Notice`` (failed, useless or nothing to compact; view unchanged)."""
        return self.compactor.compact(focus, emit, cancel)

    # ------------------------------------------------------------------------------------- model
    def _call_model_compacting_once(self, emit: Emit, cancel: threading.Event) -> AssistantMessage:
        """``_call_model``; when the provider says the request exceeds the context window,
        compact the context and retry once (raises the ``ProviderError`` when that fails)."""
        try:
            return self._call_model(emit, cancel)
        except ProviderError as exc:
            if (exc.kind != "context_window" or cancel.is_set() or isinstance(exc, RequestTooLarge)
                    or self.config.compaction.mode != "auto"):
                raise
            emit(Notice(message="The request exceeded the model's context window: compacting and retrying once."))
            if self.compactor.compact(None, emit, cancel, min_saving=0.0) is None:
                raise ProviderError("context_window", f"{exc.message}; compaction could not make room") from exc
            return self._call_model(emit, cancel)

    def _call_model(self, emit: Emit, cancel: threading.Event) -> AssistantMessage:
        """Send the next request and assemble the reply. A request over the hard limit (window
        minus reserved output, as the budget counts) is never sent: the compactor makes room
        first, and when it cannot, a ``context_window`` ``ProviderError`` is raised instead."""
        sync_tool_source(self, emit)  # MCP servers: wait for those starting, drop the failed (a notice)
        limit = self.compactor.request_limit()
        window = self.context_window()
        estimate = self.budget.estimate(self.system_prompt, self.context_view(), self._offered_schemas())
        if limit is not None and estimate.tokens > limit:
            mode = self.config.compaction.mode
            made_room = mode == "auto" and self.compactor.make_room(emit, cancel)
            estimate = self.budget.estimate(self.system_prompt, self.context_view(), self._offered_schemas())
            if not made_room:
                if window:  # the meter shows the size that was refused, not the last one sent
                    emit(ContextUsage(used_tokens=estimate.tokens, window_tokens=window, approximate=True))
                what = (f"compaction is {mode}: /compact makes room, or --compaction auto" if mode != "auto"
                        else "even after compaction; start a new session (/clear) or use a model with a larger window")
                raise RequestTooLarge(
                    f"the request holds {estimate.tokens} tokens, over the limit of {limit} (the context window minus "
                    f"the tokens reserved for the reply); it was not sent: {what}")
        request = self.build_request()
        self._sent_view = self.context_view()
        self._sent_count = len(self._sent_view)
        self.compactor.note_request()
        if window:
            emit(ContextUsage(used_tokens=estimate.tokens, window_tokens=window, approximate=estimate.approximate))

        meter = CallMeter(self.model, self.turn_number, self.step_number, self.call_purpose, self.spending,
                          estimate.tokens, self.budget.text_tokens)
        attempt = StreamedAttempt(self.provider, request, self.model, emit, cancel, meter)
        reply = call_with_retries(attempt, self.config.retry, emit=emit, cancel=cancel,
                                  instant=getattr(self.provider, "instant_retries", False),
                                  emitted_partial=lambda: attempt.emitted_partial)
        self._learn_reasoning(reply)
        return reply

    def _learn_reasoning(self, reply: AssistantMessage) -> None:
        """With ``config.learn_reasoning_back``, a reply that carries reasoning content shows the
        provider streams reasoning (DeepSeek-style, also behind an OpenAI-compatible server):
        from then on reasoning is sent back and counted as sent."""
        if reply.reasoning_content and self.config.learn_reasoning_back and not self.config.send_reasoning_back:
            self.config.send_reasoning_back = True
            self.budget.include_reasoning = True

    # ------------------------------------------------------------------ capability restriction
    def _offered_schemas(self) -> list[dict]:
        """Schemas of the tools offered: every registered tool, in every mode (one list per
        registry, built once). A capability restriction (``config.allowed_capabilities``, Plan
        mode) refuses calls in ``_capability_refusal`` instead of hiding tools, so the tool list,
        the first part of every request, never changes with the mode (DESIGN.md 4)."""
        return self.registry.schemas()


