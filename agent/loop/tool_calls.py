"""Answering the tool calls of one step, for ``Agent`` (a mixin: the methods use the agent's
registry, config, guard, reminders, journal and checkpoints).

Each call in order: the loop guard (a repeat is answered with a warning, a further one stops the
turn), the turn's capability restriction, the permission policy (``permissions.policy.decide``;
"ask" asks the user through a ``PermissionRequest`` whose reply handle the UI answers), then the
tool through the registry, with checkpoints around mutating calls (undo). Reminders go on the
last result of the step; every result is journaled with what the UI shows besides the text.

``task`` calls (tools with ``runs_in_loop``) are the exception: they pass the same checks first,
before any call of the step is answered, and their sub-agents start in parallel
(``parallel_tasks.TaskBatch``, at most ``[subagents] max_parallel`` at a time); each is then
answered in its place in the order by waiting for its result, so results keep the calls' order.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from functools import partial

from ..events import (
    Emit,
    Notice,
    PermissionDecision,
    PermissionRequest,
    ReminderInjected,
    ToolCallFinished,
    ToolCallStarted,
)
from ..context.truncation.saved_file import safe_call_id
from ..messages import AssistantMessage, ToolCall, ToolResultMessage, json_loads
from ..permissions.policy import decide, denial_message, touches_protected_path
from ..sandbox.rerun import offer_unsandboxed, should_offer
from ..sandbox.policy import prompt_text
from ..sandbox.refusal import git_file_refusal
from ..tools.base import ToolContext, ToolError, ToolOutput
from .config import INTERRUPTED_TEXT
from .guards import STOPPED_RESULT_TEXT, GuardVerdict
from .parallel_tasks import TaskBatch, serialized


class ToolCallsMixin:
    """The tool-call half of ``Agent`` (see the module docstring)."""

    # ------------------------------------------------------------------------------------- tools
    def _run_tool_calls(self, reply: AssistantMessage, emit: Emit, cancel: threading.Event) -> GuardVerdict | None:
        """Answer every call of ``reply`` in order. Returns the guard's stop verdict, if any (the
        remaining calls are then answered as not run)."""
        stop: GuardVerdict | None = None
        reminder_texts: list[str] = []
        calls = reply.tool_calls
        batch, emit, tasks = self._start_tasks(reply, emit, cancel)
        for position, call in enumerate(calls):
            if batch is None:  # with task calls, _start_tasks announced every call of the step
                self._announce(call, emit)
            started = time.monotonic()
            self._approval_wait_s = 0.0
            task = tasks.get(position)
            run_s: float | None = None
            if isinstance(task, Future):  # a sub-agent started before the step's calls were answered
                if stop is not None:
                    batch.stop.set()
                output = batch.wait(task, cancel)
                run_s = batch.duration_s(task)
                if stop is not None:
                    output = ToolOutput(text=STOPPED_RESULT_TEXT, is_error=True)
                elif not cancel.is_set():
                    self.guard.record(call.name, call.arguments, output.text, output.is_error)
                    reminder_texts += self._reminders_for(call, output)
            elif stop is not None:
                output = ToolOutput(text=STOPPED_RESULT_TEXT, is_error=True)
            elif cancel.is_set():
                output = ToolOutput(text=INTERRUPTED_TEXT, is_error=True, outcome="cancelled")
            elif isinstance(task, GuardVerdict):
                stop = task
                output = ToolOutput(text=STOPPED_RESULT_TEXT, is_error=True)
            elif isinstance(task, ToolOutput):  # refused or warned before it could start
                output = task
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
            if run_s is not None:  # a sub-agent ran since the step began, not since its turn came
                duration = run_s
            typed = output.to_result(duration_s=round(duration, 3), reminders=injected, cancelled=cancel.is_set())
            message = ToolResultMessage(tool_call_id=call.id, name=call.name, content=text, is_error=output.is_error)
            self._append(message, emit)
            if self.journal is not None:  # what the UI shows besides the text (a diff...), for a resumed TUI
                self.journal.append_tool_result(message, typed)
            emit(ToolCallFinished(id=call.id, name=call.name, output=text, result=typed))
        return stop

    # ------------------------------------------------------------------------------ sub-agents
    def _start_tasks(self, reply: AssistantMessage, emit: Emit, cancel: threading.Event
                     ) -> tuple[TaskBatch | None, Emit, dict[int, Future | ToolOutput | GuardVerdict]]:
        """Start the step's ``task`` calls (tools with ``runs_in_loop``) before any call is
        answered, at most ``max_parallel`` at a time, in call order. Each passes the loop guard,
        the capability restriction and the permission gate here, in order, before anything of
        the step runs (so the guard sees the calls of earlier steps, not the step's own).

        Every call of such a step is announced (``ToolCallStarted``, in call order) first, so each
        call's start comes before its sub-agent's events. Returns the batch (None when the step
        has no task call), the ``emit`` to use for the
        rest of the step (serialized: sub-agents emit from their threads), and per call position
        the started job's ``Future``, the result of a call refused or warned before it started,
        or the guard's stop verdict (no later task is started)."""
        calls = reply.tool_calls
        positions = [i for i, call in enumerate(calls)
                     if getattr(self.registry.get(call.name), "runs_in_loop", False)]
        if not positions or cancel.is_set():
            return None, emit, {}
        tool = self.registry.get(calls[positions[0]].name)
        batch = TaskBatch(getattr(getattr(tool, "settings", None), "max_parallel", 4))
        emit = serialized(emit)
        for call in calls:  # in call order, each before anything of its own (a sub-agent's start)
            self._announce(call, emit)
        jobs: dict[int, Future | ToolOutput | GuardVerdict] = {}
        index = self._task_calls_before(reply)
        for position in positions:
            call = calls[position]
            index += 1  # every task call the parent made counts, refused ones too: the order is the script's
            verdict = self.guard.check(call.name, call.arguments)
            if verdict.action == "stop":
                jobs[position] = verdict
                break
            if verdict.action == "warn":
                emit(Notice(message=f"Loop guard ({verdict.guard}): {verdict.message}"))
                jobs[position] = ToolOutput(text=verdict.message, is_error=True)
                continue
            tool = self.registry.get(call.name)
            refused = self._gate(call, tool, self.tool_context(call.id, cancel), emit, cancel)
            gate = self.tool_gate  # a user before_tool hook may block a sub-agent too
            if refused is None and gate is not None:
                refused = gate.before(call, emit, cancel, self)
            if refused is None:
                try:
                    args = self.registry.parse_arguments(call)
                except ToolError as exc:
                    refused = ToolOutput(text=str(exc), is_error=True)
            if refused is not None:
                jobs[position] = refused
                continue
            jobs[position] = batch.submit(partial(tool.start, self, call.id, index, args, emit, (cancel, batch.stop)))
        return batch, emit, jobs

    def hook_context(self) -> dict[str, str]:
        """Who makes this agent's tool calls, for the user hooks (``pipeline.user_hooks``):
        ``{"agent": "main" or the sub-agent's id, "mode": "plan" (a planning pass, or a sub-agent
        started in one) or "act"}``."""
        mode = getattr(self, "hook_mode", None)
        if mode is None:
            mode = "plan" if self._turn_options.restricted_mode_name == "Plan mode" else "act"
        return {"agent": getattr(self, "hook_agent", "main"), "mode": mode}

    def _announce(self, call: ToolCall, emit: Emit) -> None:
        """Emit the ``ToolCallStarted`` of ``call`` (with its decoded arguments and view)."""
        arguments = call.parsed_arguments()
        emit(ToolCallStarted(id=call.id, name=call.name, arguments=arguments,
                             view=self.registry.view(call.name, arguments)))

    def _task_calls_before(self, reply: AssistantMessage) -> int:
        """How many calls of loop-run tools (``task``) the history holds before ``reply``."""
        count = 0
        for message in self.history:
            if message is reply:
                break
            if isinstance(message, AssistantMessage):
                count += sum(1 for call in message.tool_calls
                             if getattr(self.registry.get(call.name), "runs_in_loop", False))
        return count

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

    def tool_context(self, call_id: str, cancel: threading.Event | None = None) -> ToolContext:
        """The ``ToolContext`` a call with id ``call_id`` runs in: this agent's workspace, saved
        output folder and limits; ``cancel`` (default: a new event, never set) stops it."""
        config = self.config
        return ToolContext(workspace=self.workspace, output_dir=self.output_dir, cancel=cancel or threading.Event(),
                           max_output_chars=config.max_output_chars, bash_timeout_s=config.bash_timeout_s,
                           call_id=safe_call_id(call_id), env_allow=config.bash_env_allow,
                           tool_time_limits=config.tool_time_limits,
                           default_time_limit_s=config.tool_time_limits.get("default", 60.0),
                           sandbox=self._turn_options.sandbox or config.sandbox)

    def _execute(self, call: ToolCall, reply: AssistantMessage, emit: Emit,
                 cancel: threading.Event) -> ToolOutput:
        ctx = self.tool_context(call.id, cancel)
        tool = self.registry.get(call.name)
        refused = self._gate(call, tool, ctx, emit, cancel)
        if refused is not None:
            return refused
        if reply.finish_reason == "length" and not _is_json(call.arguments):
            return ToolOutput(text=(f"Error: the arguments of this {call.name} call were cut off (the reply hit the "
                                    "output token limit). Send a shorter call, e.g. split a large write into "
                                    "several edits."), is_error=True)
        gate = self.tool_gate  # before/after_tool hooks (pipeline.user_hooks.UserToolGate)
        if gate is not None and (blocked := gate.before(call, emit, cancel, self)) is not None:
            return blocked
        if self.checkpoints is not None and tool is not None:  # save files before a change (undo)
            warning = self.checkpoints.before_tool(tool.capability, call.parsed_arguments())
            if warning:
                emit(Notice(message=warning))
        output = self.registry.execute(call, ctx)
        if should_offer(output, ctx, self.config.permission_mode):  # the sandbox refused: ask to run unsandboxed
            output = offer_unsandboxed(output, ctx, lambda c, note: self._ask(call, tool, c, emit, cancel, note=note),
                                       lambda c: self.registry.execute(call, c))
        if gate is not None:
            gate.after(call, output, emit, cancel, self)
        if self.checkpoints is not None and tool is not None:  # remember what the agent left (undo)
            self.checkpoints.after_tool(tool.capability, call.parsed_arguments())
        return output

    def _gate(self, call: ToolCall, tool, ctx: ToolContext, emit: Emit,
              cancel: threading.Event) -> ToolOutput | None:
        """The capability restriction and the permission policy for ``call`` (asking the user
        when the policy says so): the error result of a refusal, or None when the call may run."""
        refusal = self._capability_refusal(call.name, tool)
        if tool is not None and not refusal and getattr(self.config.permission_mode, "value", "") == "full-auto":
            # The other modes ask for a .git/ change already (permissions.policy); while the sandbox
            # keeps .git/ read-only for commands, full-auto's file tools ask too (headless: refused).
            git_refusal = git_file_refusal(ctx.sandbox, call.name, touches_protected_path(
                tool.capability, call.parsed_arguments(), self.workspace))
            if git_refusal and not self.config.interactive:
                refusal = git_refusal
            elif git_refusal:
                decision = self._ask(call, tool, ctx, emit, cancel, note=(
                    "it changes a file under .git/ (git config and hooks can run programs), which the sandbox "
                    "keeps read-only for commands"))
                if decision is None:
                    return ToolOutput(text=INTERRUPTED_TEXT, is_error=True, outcome="cancelled")
                if not decision.allow:
                    return ToolOutput(text=git_refusal, is_error=True, outcome="denied")
        if refusal:
            return ToolOutput(text=refusal, is_error=True)
        if tool is not None:
            verdict = decide(call.name, tool.capability, call.parsed_arguments(), mode=self.config.permission_mode,
                             rules=self.config.permission_rules, workspace=self.workspace,
                             interactive=self.config.interactive)
            if verdict.access == "deny":
                return ToolOutput(text=verdict.message, is_error=True, outcome="denied")
            if verdict.access == "ask":
                decision = self._ask(call, tool, ctx, emit, cancel, note=verdict.note)
                if decision is None:
                    return ToolOutput(text=INTERRUPTED_TEXT, is_error=True, outcome="cancelled")
                if decision.allow and decision.scope != "once" and self.config.permission_rules is not None:
                    if decision.scope == "session_prefix" and decision.prefix:
                        self.config.permission_rules.allow_prefix(decision.prefix)
                    elif decision.scope == "session_tool":
                        self.config.permission_rules.allow_tool(call.name)
                if not decision.allow:
                    text = denial_message(call.name, tool.capability, self.config.permission_mode, headless=False)
                    if decision.reason.strip():
                        text += f" The user said: {decision.reason.strip()}"
                    return ToolOutput(text=text, is_error=True, outcome="denied")
        return None

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

    def _capability_refusal(self, name: str, tool) -> str:
        """The error text for a call the turn's capability restriction forbids, else ``""``."""
        options = self._turn_options
        allowed = options.allowed_capabilities
        mode_name = options.restricted_mode_name or self.config.restricted_mode_name
        if allowed is None:
            allowed = self.config.allowed_capabilities
        if allowed is None or (tool is not None and tool.capability in allowed):
            return ""
        if tool is not None and getattr(tool, "sandboxed", False) and options.sandbox is not None:
            return ""  # runs confined by the turn's (read-only) sandbox
        usable = ", ".join(t.name for t in self.registry.tools() if t.capability in allowed)
        kinds = "/".join(sorted(c.value for c in allowed))
        what = f"{name} ({tool.capability.value})" if tool is not None else repr(name)
        return (f"Refused: {what} is not available in {mode_name}: only {kinds} tools run "
                f"and nothing in the workspace may change. You may use: {usable}.")

    def _ask(self, call: ToolCall, tool, ctx: ToolContext, emit: Emit,
             cancel: threading.Event, note: str = "") -> PermissionDecision | None:
        preview, diff = "", None
        try:
            args = self.registry.parse_arguments(call)
            preview = tool.preview(args, ctx)
        except Exception:  # invalid arguments: the registry reports them after approval
            preview = call.arguments
        else:
            try:
                diff = tool.proposed_diff(args, ctx)
            except Exception:  # noqa: BLE001 - a prompt without a diff still asks
                diff = None
        arguments = call.parsed_arguments()
        request = PermissionRequest(call_id=call.id, tool_name=call.name, arguments=arguments,
                                    capability=tool.capability.value, preview=preview,
                                    view=self.registry.view(call.name, arguments), diff=diff, note=note,
                                    sandbox=prompt_text(ctx.sandbox) if getattr(tool, "sandboxed", False) else "")
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
        json_loads(text)
        return True
    except (json.JSONDecodeError, ValueError):
        return False
