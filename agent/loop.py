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

Plan mode hooks (``agent.planner``): ``LoopConfig.allowed_capabilities`` refuses every call of
another capability before the permission gate, while every registered tool stays offered (the
tool list never changes between modes, so the provider's prompt cache holds; DESIGN.md 4); the
turn's ``ModeMessage`` states the mode in its user message; a successful tool result with
``metadata["end_turn"]`` (``submit_plan``) ends the turn once its step's calls are answered.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .config import CompactionSettings, PermissionMode
from .context.budget import ContextBudget
from .context.compactor import Compactor
from .context.repair import repair_history
from .guards import STOPPED_RESULT_TEXT, LoopGuard, Verdict
from .events import (
    CompactionDone, ContextUsage, Emit, ErrorEvent, GuardTriggered, Notice, PermissionDecision, PermissionRequest,
    ReasoningDelta, ReminderInjected, StepStarted, TextDelta, ToolCallFinished, ToolCallStarted, TurnFinished,
    TurnStarted,
)
from .messages import (
    AssistantMessage, Message, ModeMessage, SystemMessage, ToolCall, ToolResultMessage, Usage, UserMessage,
    UserOrigin,
)
from .permissions import denial_message, gate, touches_protected_path
from .reminders import ReadFileStamps, ReminderEngine
from .providers.base import ModelRequest, Provider, ProviderError
from .reply import ReplyAssembler
from .retry import RetryPolicy, call_with_retries
from .session import SessionJournal
from .tools.base import Capability, ToolContext, ToolOutput
from .tools.registry import ToolRegistry

INTERRUPTED_TEXT = "Interrupted by user: this tool call was not run (or was stopped). Do not retry unless asked."
MAX_TURNS_TEXT = ("Stopped after {n} steps with tool calls (max_turns = {n}). Send a message to continue, "
                  "or split the task into smaller ones; --max-turns raises the limit.")


class RequestTooLarge(ProviderError):
    """The next request is over the hard limit (the window minus the reserved output) and could
    not be reduced: it was never sent. ``kind`` is ``context_window``; ``message`` says why."""

    def __init__(self, message: str) -> None:
        super().__init__("context_window", message)


@dataclass
class LoopConfig:
    """Per-agent loop settings: ``max_turns`` (steps with tool calls), ``permission_mode``,
    ``interactive`` (may ask the user), tool limits (characters, seconds), sampling."""

    max_turns: int = 50
    permission_mode: PermissionMode = PermissionMode.ASK
    interactive: bool = False
    max_output_chars: int = 20000
    bash_timeout_s: float = 120.0
    api_base: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    send_reasoning_back: bool = False
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    #: Plan mode (agent/planner.py): when set, only tools with these capabilities run; any other
    #: call (a registered tool of another capability, or an unknown name) gets an error result
    #: listing what may be used. Every tool is still offered (one tool list for the session).
    #: ``restricted_mode_name`` names the mode in that message.
    allowed_capabilities: frozenset[Capability] | None = None
    restricted_mode_name: str = "this mode"
    #: The ``[compaction]`` settings (agent/context/compactor.py): mode, threshold, keep_last...
    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    #: Allow/deny rules and "allow for this session" answers (agent/permission_rules.py); None = none.
    permission_rules: Any = None


class Agent:
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
        self._journal_error_reported = False
        self._end_turn = False  # set when a tool result asks to end the turn (metadata "end_turn")
        self._approval_wait_s = 0.0
        self.budget = ContextBudget(model, include_reasoning=config.send_reasoning_back)  # counted as sent
        self._sent_count = 0
        # --- context compaction: the view the model sees (agent/context/compactor.py) ---
        self.compactor = Compactor(self)
        self._sent_view: list[Message] = []

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

    # ----------------------------------------------------------------------------------- records
    def _append(self, message: Message, emit: Emit) -> None:
        self.history.append(message)
        if self.journal is not None:
            self.journal.append_message(message)
            if self.journal.error and not self._journal_error_reported:
                self._journal_error_reported = True
                emit(Notice(message=self.journal.error))

    def build_request(self) -> ModelRequest:
        """Return the next main-loop request: system prompt + repaired history + tool schemas."""
        view = repair_history(self.context_view())
        messages = [SystemMessage(content=self.system_prompt).to_openai()]
        for m in view:
            if isinstance(m, AssistantMessage):
                messages.append(m.to_openai(include_reasoning=self.config.send_reasoning_back))
            else:
                messages.append(m.to_openai())
        return ModelRequest(model=self.model, messages=messages, tools=self._offered_schemas(),
                            api_base=self.config.api_base, temperature=self.config.temperature,
                            max_tokens=self.config.max_tokens)

    # -------------------------------------------------------------------------------------- turn
    def run_turn(self, prompt: str, emit: Emit, cancel: threading.Event, *,
                 message_id: str | None = None, mode: ModeMessage | None = None,
                 origin: UserOrigin = "user") -> TurnFinished:
        """Run one user turn to its end and return the ``TurnFinished`` event (also emitted).

        ``message_id`` (optional) is the id of the turn's user message, so a record journaled
        before the turn can name it (the planner's ``approved`` record); a new id otherwise.
        ``mode`` (optional) is the mode message sent at the start of that user message (Plan/Act,
        agent/planner.py). ``origin``: who wrote the prompt (``plan_execution`` for the planner's
        instruction to carry out a plan: compaction pins the plan, not that message). Never raises
        for model or tool failures: they become events and a stop reason.
        """
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

        def finish(reason: str, text: str = "") -> TurnFinished:
            event = TurnFinished(stop_reason=reason, final_text=text, usage=usage, session_id=self.session_id)
            if self.journal is not None:
                self.journal.append({"kind": "event", "event": "turn_finished", "stop_reason": reason,
                                     "time": time.time()})
            emit(event)
            return event

        while True:
            if cancel.is_set():
                return finish("cancelled", final_text)
            if steps_with_tools >= self.config.max_turns:
                message = MAX_TURNS_TEXT.format(n=self.config.max_turns)
                emit(GuardTriggered(guard="max_turns", message=message))
                return finish("max_turns", message)
            self.compactor.maybe_compact(emit, cancel)  # safe point: every tool call has its result
            step += 1
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
        limit = self.compactor.request_limit()
        if limit is not None and self.compactor.request_tokens() > limit:
            mode = self.config.compaction.mode
            if mode != "auto" or not self.compactor.make_room(emit, cancel):
                tokens = self.compactor.request_tokens()
                what = (f"compaction is {mode}: /compact makes room, or --compaction auto" if mode != "auto"
                        else "even after compaction; start a new session (/clear) or use a model with a larger window")
                raise RequestTooLarge(
                    f"the request holds {tokens} tokens, over the limit of {limit} (the context window minus the "
                    f"tokens reserved for the reply); it was not sent: {what}")
        request = self.build_request()
        self._sent_view = self.context_view()
        self._sent_count = len(self._sent_view)
        self.compactor.note_request()
        window = self.context_window()
        estimate = self.budget.estimate(self.system_prompt, self._sent_view, request.tools)
        if window:
            emit(ContextUsage(used_tokens=estimate.tokens, window_tokens=window, approximate=estimate.approximate))

        def attempt() -> AssistantMessage:
            assembler = ReplyAssembler()
            for delta in self.provider.stream(request, cancel):
                assembler.add(delta)
                if delta.kind == "text" and delta.text:
                    emit(TextDelta(text=delta.text))
                elif delta.kind == "reasoning" and delta.text:
                    emit(ReasoningDelta(text=delta.text))
                if cancel.is_set():
                    break
            if cancel.is_set():
                return assembler.build(self.model, keep_tool_calls=False)
            if assembler.is_empty:
                raise ProviderError("empty", "the model returned an empty reply")
            return assembler.build(self.model)

        return call_with_retries(attempt, self.config.retry, emit=emit, cancel=cancel,
                                 instant=getattr(self.provider, "instant_retries", False))

    # ------------------------------------------------------------------------------------- tools
    def _run_tool_calls(self, reply: AssistantMessage, emit: Emit, cancel: threading.Event) -> Verdict | None:
        """Answer every call of ``reply`` in order. Returns the guard's stop verdict, if any (the
        remaining calls are then answered as not run)."""
        stop: Verdict | None = None
        reminder_texts: list[str] = []
        calls = reply.tool_calls
        for position, call in enumerate(calls):
            emit(ToolCallStarted(id=call.id, name=call.name, arguments=call.parsed_arguments()))
            started = time.monotonic()
            self._approval_wait_s = 0.0
            if stop is not None:
                output = ToolOutput(text=STOPPED_RESULT_TEXT, is_error=True)
            elif cancel.is_set():
                output = ToolOutput(text=INTERRUPTED_TEXT, is_error=True)
            else:
                verdict = self.guard.check(call.name, call.arguments)
                if verdict.action == "stop":
                    stop = verdict
                    output = ToolOutput(text=STOPPED_RESULT_TEXT, is_error=True)
                elif verdict.action == "warn":
                    emit(Notice(message=f"Loop guard ({verdict.guard}): {verdict.message}"))
                    output = ToolOutput(text=verdict.message, is_error=True)
                else:
                    with self._tool_window():
                        output = self._execute(call, reply, emit, cancel)
                        self._end_turn |= bool(output.metadata.get("end_turn")) and not output.is_error
                        self.guard.record(call.name, call.arguments, output.text, output.is_error)
                        reminder_texts += self._reminders_for(call, output)
            text = output.text
            injected: list[str] = []
            if position == len(calls) - 1 and reminder_texts:
                text += self.reminders.format(reminder_texts)
                injected = list(dict.fromkeys(reminder_texts))
                for reminder in injected:
                    emit(ReminderInjected(text=reminder))
            duration = time.monotonic() - started - self._approval_wait_s  # run time, not time waiting for the user
            result = ToolResultMessage(tool_call_id=call.id, name=call.name, content=text, is_error=output.is_error)
            self._append(result, emit)
            if self.journal is not None:  # what the UI shows besides the text (a diff...), for a resumed TUI
                self.journal.append_tool_details(result, diff=output.diff, display=output.display,
                                                 exit_code=output.exit_code, truncated=output.truncated,
                                                 saved_path=output.saved_path, reminders=injected)
            emit(ToolCallFinished(id=call.id, name=call.name, output=text, is_error=output.is_error,
                                  truncated=output.truncated, saved_path=output.saved_path,
                                  duration_s=round(duration, 3), exit_code=output.exit_code,
                                  diff=output.diff, display=output.display))
        return stop

    def _reminders_for(self, call: ToolCall, output: ToolOutput) -> list[str]:
        """Note files the agent read or wrote, queue external changes, return reminder texts."""
        tool = self.registry.get(call.name)
        args = call.parsed_arguments()
        if not output.is_error and call.name in ("read", "write", "edit") and isinstance(args, dict):
            path = args.get("path")
            if isinstance(path, str):
                self.file_stamps.note(path)
        for changed in self.file_stamps.changed():
            self.reminders.on_external_change(changed)
        return self.reminders.on_tool_result(call.name, tool.capability.value if tool else None, args,
                                             output.is_error)

    def _execute(self, call: ToolCall, reply: AssistantMessage, emit: Emit,
                 cancel: threading.Event) -> ToolOutput:
        ctx = ToolContext(workspace=self.workspace, output_dir=self.output_dir, cancel=cancel,
                          max_output_chars=self.config.max_output_chars,
                          bash_timeout_s=self.config.bash_timeout_s, call_id=_safe_id(call.id))
        tool = self.registry.get(call.name)
        refusal = self._capability_refusal(call.name, tool)
        if refusal:
            return ToolOutput(text=refusal, is_error=True)
        if tool is not None:
            verdict = gate(tool.capability, self.config.permission_mode)
            rules = self.config.permission_rules
            if rules is not None:
                ruling = rules.check(call.name, call.parsed_arguments())
                if ruling.verdict == "deny":  # deny rules beat everything, the mode included
                    return ToolOutput(text=ruling.message, is_error=True)
                if ruling.verdict == "allow" and verdict == "ask":  # allow rules answer instead of the user
                    verdict = "allow"
            if verdict == "allow" and self.config.permission_mode != PermissionMode.FULL_AUTO \
                    and touches_protected_path(tool.capability, call.parsed_arguments(), self.workspace):
                verdict = "ask"  # .git/ holds hooks and config that run commands: an edit there is exec
            if verdict == "deny" or (verdict == "ask" and not self.config.interactive):
                return ToolOutput(text=denial_message(call.name, tool.capability, self.config.permission_mode,
                                                      headless=not self.config.interactive), is_error=True)
            if verdict == "ask":
                decision = self._ask(call, tool, ctx, emit, cancel)
                if decision is None:
                    return ToolOutput(text=INTERRUPTED_TEXT, is_error=True)
                if decision.allow and decision.scope != "once" and self.config.permission_rules is not None:
                    if decision.scope == "session_prefix" and decision.prefix:
                        self.config.permission_rules.allow_prefix(decision.prefix)
                    elif decision.scope == "session_tool":
                        self.config.permission_rules.allow_tool(call.name)
                if not decision.allow:
                    text = denial_message(call.name, tool.capability, self.config.permission_mode, headless=False)
                    if decision.reason.strip():
                        text += f" The user said: {decision.reason.strip()}"
                    return ToolOutput(text=text, is_error=True)
        if reply.finish_reason == "length" and not _is_json(call.arguments):
            return ToolOutput(text=(f"Error: the arguments of this {call.name} call were cut off (the reply hit the "
                                    "output token limit). Send a shorter call, e.g. split a large write into "
                                    "several edits."), is_error=True)
        if self.checkpoints is not None and tool is not None:  # save files before a change (undo)
            warning = self.checkpoints.before_tool(tool.capability, call.parsed_arguments())
            if warning:
                emit(Notice(message=warning))
        output = self.registry.execute(call, ctx)
        if self.checkpoints is not None and tool is not None:  # remember what the agent left (undo)
            self.checkpoints.after_tool(tool.capability, call.parsed_arguments())
        return output

    # ------------------------------------------------------------------------ external changes
    def on_file_changed(self) -> list[str]:
        """File-watcher callback (any thread): queue an external-change reminder for each file the
        agent read whose on-disk state changed, and return those paths. Uses ``file_stamps``, so a
        change is reported once, here or at the next tool result; does nothing while a tool runs
        (the check after it covers that window, and the agent's own writes are not external)."""
        with self.stamps_lock:
            if self._in_tool:
                return []
            changed = self.file_stamps.changed()
            for path in changed:
                self.reminders.on_external_change(path)
            return changed

    @contextmanager
    def _tool_window(self) -> Iterator[None]:
        """Mark a tool call and its stamp check as running (``on_file_changed`` waits it out)."""
        with self.stamps_lock:
            self._in_tool = True
        try:
            yield
        finally:
            with self.stamps_lock:
                self._in_tool = False

    # ------------------------------------------------------------------ capability restriction
    def _offered_schemas(self) -> list[dict]:
        """Schemas of the tools offered: every registered tool, in every mode (one list per
        registry, built once). A capability restriction (``config.allowed_capabilities``, Plan
        mode) refuses calls in ``_capability_refusal`` instead of hiding tools, so the tool list,
        the first part of every request, never changes with the mode (DESIGN.md 4)."""
        return self.registry.schemas()

    def _capability_refusal(self, name: str, tool) -> str:
        """The error text for a call the turn's capability restriction forbids, else ``""``."""
        allowed = self.config.allowed_capabilities
        if allowed is None or (tool is not None and tool.capability in allowed):
            return ""
        usable = ", ".join(t.name for t in self.registry.tools() if t.capability in allowed)
        kinds = "/".join(sorted(c.value for c in allowed))
        what = f"{name} ({tool.capability.value})" if tool is not None else repr(name)
        return (f"Refused: {what} is not available in {self.config.restricted_mode_name}: only {kinds} tools run "
                f"and nothing in the workspace may change. You may use: {usable}.")

    def _ask(self, call: ToolCall, tool, ctx: ToolContext, emit: Emit,
             cancel: threading.Event) -> PermissionDecision | None:
        preview = ""
        try:
            args = self.registry.parse_arguments(call)
            preview = tool.preview(args, ctx)
        except Exception:  # invalid arguments: the registry reports them after approval
            preview = call.arguments
        request = PermissionRequest(call_id=call.id, tool_name=call.name, arguments=call.parsed_arguments(),
                                    capability=tool.capability.value, preview=preview)
        emit(request)
        waited_from = time.monotonic()
        try:
            while not cancel.is_set():
                try:
                    return request.reply.result(timeout=0.1)
                except FutureTimeout:
                    continue
            request.reply.cancel()
            return None
        finally:
            self._approval_wait_s += time.monotonic() - waited_from


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
        return True
    except (json.JSONDecodeError, ValueError):
        return False


def _safe_id(call_id: str) -> str:
    """Return ``call_id`` reduced to characters safe in a file name."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in call_id)[:64] or "call"
