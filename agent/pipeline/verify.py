"""The ``verify`` post-run hook: run the project's tests after a round that changed files.

The command is ``verify.command`` or the detected one (``detect``). It runs through the bash tool
(its sandbox, time limit, output truncation and process-group kill) after the permission policy
(``VerifyPermission``): a mode or rule that allows it runs it; ``ask`` asks the user once per
command for the session (a headless ``--verify`` is that permission); a denial skips verify
with the reason. A failing run hands its output (truncated as tool output is) back as the
feedback of another round.
"""

from __future__ import annotations

import json
import threading
import time
import tomllib
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import TYPE_CHECKING

from ..config.files import PROJECT_FILE, read_toml
from ..context.test_runs import summary_counts
from ..events import Emit, PermissionRequest, ToolView
from ..messages import ToolCall, new_id
from ..permissions.policy import decide
from ..tools.base import Capability
from .detect import detect_test_command
from .hooks import HookOutcome, one_line

if TYPE_CHECKING:
    from ..config.settings import VerifySettings
    from ..loop.agent import Agent

#: Exit codes of a command the shell could not run: not executable, not found (bash's 126 / 127).
NOT_RUN_EXITS = {126: "not executable", 127: "command not found"}

#: The feedback a failing run hands to the next round (``{command}``, ``{output}``).
FEEDBACK = ("The tests fail after your changes (verify ran `{command}`, exit code {code}). Fix the cause "
            "and keep the change small; the failing output:\n\n{output}")


class VerifyPermission:
    """Whether verify may run a command, asked at most once per command in a session.

    ``granted_by_flag``: the user passed ``--verify`` (headless: that is the permission).
    ``check(agent, command, emit, cancel)`` returns ``""`` when it may run, else why not (one line).
    """

    def __init__(self, *, granted_by_flag: bool) -> None:
        self.granted_by_flag = granted_by_flag
        self._answers: dict[str, str] = {}  # command -> "" (allowed) or the refusal

    def check(self, agent: "Agent", command: str, emit: Emit, cancel: threading.Event) -> str:
        """See the class docstring. Waits for the user's answer in ``ask`` mode (interactive)."""
        config = agent.config
        arguments = {"command": command}
        verdict = decide("bash", Capability.EXEC, arguments, mode=config.permission_mode,
                         rules=config.permission_rules, workspace=agent.workspace, interactive=True)
        if verdict.access == "deny":
            return verdict.message or "the permission policy does not allow it"
        if verdict.access == "allow":
            return ""
        if command in self._answers:
            return self._answers[command]
        if not config.interactive:
            answer = "" if self.granted_by_flag else ("headless runs never prompt: pass --verify to allow "
                                                      f"`{command}`, or --permission-mode full-auto")
        else:
            answer = self._ask(command, emit, cancel)
            if answer is None:
                return "cancelled"
        self._answers[command] = answer
        return answer

    def _ask(self, command: str, emit: Emit, cancel: threading.Event) -> str | None:
        request = PermissionRequest(call_id=new_id("verify"), tool_name="bash", arguments={"command": command},
                                    capability=Capability.EXEC.value, preview=command,
                                    view=ToolView(title="verify", summary=command, command=command),
                                    note="verify runs the tests after the agent's changes")
        emit(request)
        while not cancel.is_set():
            try:
                decision = request.reply.result(timeout=0.1)
            except FutureTimeout:
                continue
            if decision is None or not decision.allow:
                reason = f": {decision.reason.strip()}" if decision is not None and decision.reason.strip() else ""
                return f"the user did not allow `{command}`{reason}"
            return ""
        request.reply.cancel()
        return None


class VerifyHook:
    """Runs the test command for ``workspace`` per ``settings`` (``VerifySettings``)."""

    def __init__(self, settings: "VerifySettings", workspace: Path, permission: VerifyPermission) -> None:
        self.settings = settings
        self.workspace = Path(workspace)
        self.permission = permission
        self._detected: str | None = None
        self._project_noticed = False

    def configured(self) -> bool:
        """True when ``verify.command`` is set (from any config source or the environment)."""
        return bool(self.settings.command and self.settings.command.strip())

    def project_notice(self) -> str | None:
        """Once per session: a notice naming the command when it comes from the project's
        ``.opencli.toml`` (the repository chose what runs), else None. An unreadable file: None
        (loading the settings reported it)."""
        if self._project_noticed or not self.configured():
            return None
        self._project_noticed = True
        try:
            project = read_toml(self.workspace / PROJECT_FILE)
        except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
            return None
        section = project.get("verify")
        wanted = section.get("command") if isinstance(section, dict) else None
        command = self.command()
        if not isinstance(wanted, str) or wanted.strip() != command:
            return None
        return f"verify runs `{command}`: its command comes from the project's {PROJECT_FILE} (verify.command)."

    def command(self) -> str | None:
        """The configured command, else the detected one (detected once), else None."""
        if self.settings.command and self.settings.command.strip():
            return self.settings.command.strip()
        if self._detected is None:
            self._detected = detect_test_command(self.workspace) or ""
        return self._detected or None

    def run(self, agent: "Agent", command: str, stop: threading.Event) -> HookOutcome:
        """Run ``command`` through ``agent``'s bash tool (``stop`` kills it): ``accept`` on exit 0;
        ``timeout`` when it ran past ``verify.timeout_s`` seconds, ``error`` when it could not run
        (exit 126 / 127, or bash did not start): no verdict on the code, so no further round, the
        message names the command and the reason; else ``retry`` with the failing output as the
        feedback and a count summary as detail."""
        if "bash" not in agent.registry:
            return HookOutcome("skipped", "no bash tool in this session")
        call = ToolCall(id=new_id("verify"), name="bash",
                        arguments=json.dumps({"command": command, "timeout": self.settings.timeout_s}))
        started = time.monotonic()
        output = agent.registry.execute(call, agent.tool_context(call.id, stop))
        took = time.monotonic() - started
        name = command.split()[0] if command.split() else command
        if output.outcome == "cancelled" or stop.is_set():
            return HookOutcome("skipped", "cancelled")
        if output.metadata.get("timed_out"):
            return HookOutcome("timeout", f"`{command}` did not finish within {self.settings.timeout_s:g} s and was "
                               "stopped (verify.timeout_s); no further round", detail=output.text)
        if output.exit_code in NOT_RUN_EXITS or (output.is_error and output.exit_code is None):
            why = NOT_RUN_EXITS.get(output.exit_code, one_line(output.text, 200))
            code = f"exit {output.exit_code}: " if output.exit_code in NOT_RUN_EXITS else ""
            fix = "check verify.command" if self.configured() else "set verify.command"
            return HookOutcome("error", f"`{command}` could not run ({code}{why}); {fix}; no further round",
                               detail=output.text)
        if not output.is_error and output.exit_code in (0, None):
            counts = summary_counts(output.text)
            return HookOutcome("accept", f"{_label(command)}" + (f" · {counts}" if counts else ""),
                               detail=output.text[-2000:], value={"seconds": took, "runner": name})
        counts = summary_counts(output.text)
        code = output.exit_code if output.exit_code is not None else "?"
        feedback = FEEDBACK.format(command=command, code=code, output=output.text)
        failed = _failed_count(counts) or f"exit {code}"
        return HookOutcome("retry", one_line(failed), detail=output.text, value={"feedback": feedback})


def _label(command: str) -> str:
    """A short name for the command: ``pytest``, ``npm test``... (its first words)."""
    words = command.split()
    if len(words) >= 3 and words[1] == "-m":
        return words[2]
    return " ".join(words[:2]) if words[:1] in (["npm"], ["cargo"], ["go"], ["make"]) else (words[0] if words else command)


def _failed_count(counts: str) -> str:
    """``"3 failed"`` out of a count summary (``"3 failed, 9 passed"``), else the summary."""
    for part in counts.split(", "):
        if "failed" in part or "error" in part:
            return part
    return counts
