"""User hooks (``[hooks]`` in the user config only): a shell command per event, the event as JSON on
stdin, each within its ``timeout_s`` and isolated like every hook (``hooks.HookRunner``).

- ``before_tool``: ``{"event": "before_tool", "tool": NAME, "arguments": ..., "call_id": ID,
  "agent": "main" or the sub-agent's id (its ``task`` call id), "mode": "plan" or "act"}``; a
  non-zero exit blocks the call, its stderr (else stdout) is the error result the model sees. It
  fails closed: a hook that times out or cannot run blocks the call too, with the reason, every
  time (it is never switched off: after 3 failures one notice says it keeps blocking calls); a cancel
  (Esc) while it runs kills it and the call is not run (its result says it was cancelled).
- ``after_tool``: the same plus ``"output"``, ``"is_error"``, ``"exit_code"``; its verdict is shown only.
- ``after_run``: ``{"event": "after_run", "task", "final_text", "stop_reason", "round"}``; exit 2
  asks for another round with its stderr (else stdout) as the feedback; another non-zero exit is a
  hook failure.

``UserToolGate`` is the loop's ``tool_gate``, shared by every tool call path (the main loop, the
Plan pass, sub-agents and parallel ``task`` calls): ``before(call, emit, cancel, source)`` returns
the blocking ``ToolOutput`` or None, ``after(call, output, emit, cancel, source)`` runs the
``after_tool`` hooks (they fail open: a failure is a notice). ``source`` is the calling agent.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..events import Emit
from ..loop.config import INTERRUPTED_TEXT
from ..tools.base import ToolOutput
from .hooks import HookOutcome, HookRunner, one_line
from .shell import run_hook_command

if TYPE_CHECKING:
    from ..config.settings import HookSettings, UserHook
    from ..messages import ToolCall

#: ``after_run`` exit code that asks for another round.
RETRY_EXIT = 2


def hook_name(event: str) -> str:
    """The name a user hook is shown under: ``user:<event>``."""
    return f"user:{event}"


def hook_key(event: str, hook: "UserHook") -> str:
    """What a user hook's failures are counted under: its event and command."""
    return f"user:{event}#{hook.command}"


def caller_of(source: Any) -> dict[str, str]:
    """``{"agent": ..., "mode": ...}`` of the agent making a tool call (``source``: an ``Agent``,
    or None for the main agent in Act mode): ``agent`` is "main" or the sub-agent's id, ``mode``
    "plan" during a planning pass (and in its sub-agents), else "act"."""
    context = getattr(source, "hook_context", None)
    return context() if callable(context) else {"agent": "main", "mode": "act"}


def run_user_hook(hook: "UserHook", payload: dict[str, Any], workspace: Path, *, block_on_failure: bool,
                  stop: threading.Event) -> HookOutcome:
    """Run one hook command with ``payload`` as JSON on stdin. Exit 0: ``accept``. A non-zero exit:
    ``block`` (``block_on_failure``: a before_tool hook), ``retry`` for exit 2 of an after_run
    hook, else ``error``; the message is its stderr (else stdout), cut to one line."""
    result = run_hook_command(hook.command, json.dumps(payload, ensure_ascii=False, default=str),
                              cwd=workspace, timeout_s=hook.timeout_s, cancel=stop)
    said = (result.stderr.strip() or result.stdout.strip())
    if result.cancelled:
        return HookOutcome("skipped", "cancelled")
    if result.timed_out:
        return HookOutcome("timeout", f"`{hook.command}` did not finish within {hook.timeout_s:g} s and was stopped")
    if result.returncode == 0:
        return HookOutcome("accept", one_line(said or "ok"), detail=said)
    reason = said or f"`{hook.command}` exited with {result.returncode}"
    if block_on_failure:
        return HookOutcome("block", one_line(reason), detail=said, value=reason)
    if payload.get("event") == "after_run" and result.returncode == RETRY_EXIT:
        return HookOutcome("retry", one_line(reason), detail=said, value={"feedback": reason})
    return HookOutcome("error", f"exit {result.returncode}: {one_line(reason)}", detail=said)


class UserToolGate:
    """The ``before_tool`` / ``after_tool`` hooks at the loop's tool gate (module docstring).

    ``round_ref`` returns the pipeline's current round.
    """

    def __init__(self, settings: "HookSettings", workspace: Path, runner: HookRunner,
                 round_ref: Callable[[], int]) -> None:
        self.settings = settings
        self.workspace = Path(workspace)
        self.runner = runner
        self.round_ref = round_ref

    def before(self, call: "ToolCall", emit: Emit, cancel: threading.Event,
               source: Any = None) -> ToolOutput | None:
        """Run the ``before_tool`` hooks for ``call`` made by ``source`` (see ``caller_of``); the
        first that blocks, times out or fails ends the check with an error result giving the
        reason (fail closed); a cancel meanwhile gives the cancelled result. None: the call may run."""
        who = caller_of(source)
        payload = {"event": "before_tool", "tool": call.name, "arguments": call.parsed_arguments(), "call_id": call.id,
                   **who}
        for hook in self.settings.before_tool:
            if cancel.is_set():
                return ToolOutput(text=INTERRUPTED_TEXT, is_error=True, outcome="cancelled")
            outcome = self._run("before_tool", hook, payload, emit, cancel, block=True, agent=who["agent"])
            if cancel.is_set() or (outcome.verdict == "skipped" and outcome.message == "cancelled"):
                return ToolOutput(text=INTERRUPTED_TEXT, is_error=True, outcome="cancelled")
            if outcome.verdict == "block":
                return ToolOutput(text=f"Blocked by the user's before_tool hook: {outcome.value}", is_error=True,
                                  outcome="denied")
            if outcome.verdict != "accept":  # error, timeout or anything else: fail closed, every time
                return ToolOutput(text=(f"Blocked: the user's before_tool hook `{hook.command}` failed "
                                        f"({outcome.message}), so the call was not run. Do not retry it unless "
                                        "the user asks."), is_error=True, outcome="denied")
        return None

    def after(self, call: "ToolCall", output: ToolOutput, emit: Emit, cancel: threading.Event,
              source: Any = None) -> None:
        """Run the ``after_tool`` hooks for ``call`` (made by ``source``) and its ``output``;
        verdicts are shown only (a failure is a notice: fail open)."""
        who = caller_of(source)
        payload = {"event": "after_tool", "tool": call.name, "arguments": call.parsed_arguments(), "call_id": call.id,
                   "output": output.text, "is_error": output.is_error, "exit_code": output.exit_code, **who}
        for hook in self.settings.after_tool:
            if cancel.is_set():
                return
            self._run("after_tool", hook, payload, emit, cancel, block=False, agent=who["agent"])

    def _run(self, event: str, hook: "UserHook", payload: dict[str, Any],
             emit: Emit, cancel: threading.Event, *, block: bool, agent: str = "main") -> HookOutcome:
        return self.runner.run(hook_name(event), event, self.round_ref(),
                               lambda stop: run_user_hook(hook, payload, self.workspace, block_on_failure=block,
                                                          stop=stop),
                               emit=emit, cancel=cancel, timeout_s=hook.timeout_s + 5.0, key=hook_key(event, hook),
                               agent=agent, fail_closed=block)
