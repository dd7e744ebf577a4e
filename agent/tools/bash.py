"""The ``bash`` tool (its process handling is ``agent.process``).

A command runs as ``bash -c COMMAND`` in a new session (so in its own process group), with stdin
from ``/dev/null``, stdout and stderr merged into one pipe, and the workspace as working folder.
The pipe is read incrementally, straight into the reusable buffers of a ``BoundedOutput``
(``context.truncation.bounded``), so memory stays flat however much it prints, while a background
thread writes the full output to its file. On cancel (``ctx.cancel``) or timeout the whole process
group and its descendants get SIGTERM, then SIGKILL after 2 s: children and grandchildren die with it (DESIGN.md 6).

When bash itself has exited but something it started in the background still holds the output
pipe open, the group is given 2 s to finish and is then killed too, so a call never hangs on a
forgotten ``server &`` (a background job that redirects its output elsewhere is left running).

Under a sandbox (``ctx.sandbox``, an ``agent.sandbox.SandboxPolicy``) the supervisor confines the
command before it execs (``agent.sandbox``); ``TMPDIR`` points to the policy's private temp
folder, and a failed command whose output shows a refused write gets a line saying so. A
sandbox that cannot be applied is an error: the command never runs unconfined instead.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

from pydantic import Field

from ..context.truncation.bounded import BoundedOutput
from ..process import kill_running_commands, run_streaming
from ..sandbox.refusal import looks_refused, refusal_note
from ..secrets.env import command_environment
from ..supervised import SandboxFailed
from .base import Capability, Tool, ToolArgs, ToolContext, ToolError, ToolOutput
from .view import ToolView, one_line

__all__ = ["BashArgs", "BashTool", "command_env", "kill_running_commands", "run_streaming"]

#: Upper bound on a bash call's time limit (seconds); larger requests are capped to it.
MAX_TIMEOUT_S = 600.0
#: How long output may stay open after the command exited before its group is killed (seconds).
PIPE_GRACE_S = 2.0


def command_env(allow: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment of tool commands: ours without secrets (``agent.secrets.env``: provider
    keys, ``*KEY*``, ``*SECRET*``, ``*TOKEN*``, ``*PASSWORD*``, except the names in ``allow``),
    plus pagers disabled and git never prompting (a prompt would wait on the missing stdin)."""
    env = command_environment(os.environ, allow)
    env.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    return env


class BashArgs(ToolArgs):
    """Arguments of ``bash``."""

    command: str = Field(min_length=1, description="The shell command line, run with `bash -c` in the workspace root.")
    timeout: float | None = Field(
        default=None,
        gt=0,
        description=f"Time limit in seconds (default from settings, at most {int(MAX_TIMEOUT_S)}).",
    )


class BashTool(Tool):
    """Run a shell command; output (stdout+stderr) is middle-truncated, the exit code reported."""

    name = "bash"
    description = (
        "Run a shell command with `bash -c` in the workspace root. stdout and stderr are merged; there "
        "is no stdin, so never run interactive programs. The last line of the result gives the exit "
        "code. Long output is cut in the middle and saved to a file you can page with read. Use "
        "read/grep/glob instead of cat/grep/find."
    )
    Args = BashArgs
    capability = Capability.EXEC
    truncates_output = True
    #: Runs its commands under ``ctx.sandbox``: Plan mode may offer it under a read-only sandbox.
    sandboxed = True

    def preview(self, args: BashArgs, ctx: ToolContext) -> str:
        """Return the command line."""
        return args.command


    def describe(self, args: BashArgs) -> ToolView:
        """The command line, shown as ``$ command`` in the body."""
        return ToolView(title=self.name, summary=one_line(args.command), command=args.command)

    def time_limit_s(self, args: BashArgs, ctx: ToolContext) -> float | None:
        """The command's own ``timeout`` (or the default) plus the kill and pipe graces and a
        margin (seconds): the command's timeout always fires first and reports its output."""
        return min(args.timeout or ctx.bash_timeout_s or MAX_TIMEOUT_S, MAX_TIMEOUT_S) + PIPE_GRACE_S + 10.0

    def run(self, args: BashArgs, ctx: ToolContext) -> ToolOutput:
        """Run the command and return its (truncated) output with a status line.

        ``exit_code`` is the command's exit status (128 + N when killed by signal N). The result is
        an error when the command timed out or was cancelled (not for a non-zero exit). Raises
        ``ToolError`` when bash is not installed or cannot be started.
        """
        timeout = min(args.timeout or ctx.bash_timeout_s or MAX_TIMEOUT_S, MAX_TIMEOUT_S)
        if ctx.cancel.is_set():
            return ToolOutput(text="[cancelled by user before the command started]", is_error=True)
        bash = shutil.which("bash")
        if bash is None:
            raise ToolError("bash is not installed (no `bash` on PATH); the bash tool cannot run commands")
        policy = ctx.sandbox
        env = command_env(ctx.env_allow)
        if policy is not None:
            if not policy.available:
                raise ToolError(f"the {policy.mode.value} sandbox is unavailable ({policy.reason}); the command "
                                "was not run. `--sandbox off` runs commands unsandboxed.")
            os.makedirs(policy.tmp_dir, mode=0o700, exist_ok=True)
            env.update({"TMPDIR": policy.tmp_dir, "TMP": policy.tmp_dir, "TEMP": policy.tmp_dir})
        output = BoundedOutput.for_context(ctx)
        try:
            proc = run_streaming(
                [bash, "-c", args.command],
                cwd=Path(ctx.workspace),
                reader=output.read_from,
                cancel=ctx.cancel,
                timeout_s=timeout,
                env=env,
                pipe_grace_s=PIPE_GRACE_S,
                sandbox=policy.supervisor_args() if policy is not None else (),
            )
        except BaseException as exc:
            output.finish()  # wait for pending writes and close the saved file
            if isinstance(exc, SandboxFailed):
                raise ToolError(f"{exc.strerror or exc}; the command was not run. `--sandbox off` runs "
                                "commands unsandboxed.") from None
            if isinstance(exc, OSError):
                raise ToolError(f"cannot start bash: {exc.strerror or exc}") from None
            raise
        result = output.finish()
        exit_code = _exit_code(proc.returncode)
        if proc.cancelled:
            status = "[cancelled by user; process group killed]"
        elif proc.timed_out:
            status = f"[timed out after {timeout:g} s; process group killed]"
        else:
            status = f"[exit code: {exit_code}]" if exit_code is not None else "[exit code: unknown]"
            if proc.returncode is not None and proc.returncode < 0:
                status = f"[exit code: {exit_code} (killed by {_signal_name(-proc.returncode)})]"
            if proc.orphans_killed:
                status += (
                    "\n[background processes kept the output open after the command ended and were "
                    "killed; redirect a background job's output (cmd > file 2>&1 &) to keep it running]"
                )
        body = result.text.rstrip("\n")
        metadata = {"duration_s": round(proc.duration_s, 3), "binary": result.binary, "timed_out": proc.timed_out,
                    "sandbox": policy.mode.value if policy is not None else "off"}
        if policy is not None and not proc.cancelled and looks_refused(result.text, exit_code):
            status += "\n" + refusal_note(policy, interactive=policy.can_ask)
            metadata["sandbox_refused"] = True
        text = f"{body}\n{status}" if body else f"(no output)\n{status}"
        display = f"{result.display.rstrip(chr(10))}\n{status}" if result.display else None
        return ToolOutput(
            text=text,
            display=display,
            is_error=proc.cancelled or proc.timed_out,
            exit_code=exit_code,
            truncated=result.truncated,
            saved_path=result.saved_path,
            output_lines=result.total_lines,
            output_bytes=result.total_bytes,
            metadata=metadata,
        )


def _exit_code(returncode: int | None) -> int | None:
    if returncode is None:
        return None
    return 128 - returncode if returncode < 0 else returncode


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
