"""The ``bash`` tool and the process handling it needs (also used by ``grep`` for ripgrep).

A command runs as ``bash -c COMMAND`` in a new session (so in its own process group), with stdin
from ``/dev/null``, stdout and stderr merged into one pipe, and the workspace as working folder.
The pipe is read incrementally, straight into the reusable buffers of a ``BoundedOutput``
(``context.truncation.bounded``), so memory stays flat however much it prints, while a background
thread writes the full output to its file. On cancel (``ctx.cancel``) or timeout the whole process
group gets SIGTERM, then SIGKILL after 2 s: children and grandchildren die with it (DESIGN.md 6).

When bash itself has exited but something it started in the background still holds the output
pipe open, the group is given 2 s to finish and is then killed too, so a call never hangs on a
forgotten ``server &`` (a background job that redirects its output elsewhere is left running).
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

from pydantic import Field

from ..context.truncation.bounded import BoundedOutput
from .base import Capability, Tool, ToolArgs, ToolContext, ToolError, ToolOutput

#: Upper bound on a bash call's time limit (seconds); larger requests are capped to it.
MAX_TIMEOUT_S = 600.0
#: Time between SIGTERM and SIGKILL of a process group (seconds).
KILL_GRACE_S = 2.0
#: How long output may stay open after the command exited before its group is killed (seconds).
PIPE_GRACE_S = 2.0
#: How often cancel and the deadline are checked (seconds).
POLL_S = 0.05
_READ_BYTES = 1 << 20


@dataclass
class ProcessResult:
    """How a streamed process ended.

    ``returncode`` as ``Popen`` gives it (negative = killed by that signal; ``None`` if unknown);
    ``timed_out`` / ``cancelled``: we killed the group for that reason; ``orphans_killed``: the
    command exited but background processes kept its output open and were killed;
    ``duration_s``: wall time in seconds.
    """

    returncode: int | None
    timed_out: bool = False
    cancelled: bool = False
    orphans_killed: bool = False
    duration_s: float = 0.0


#: Commands started by ``run_streaming`` that have not been reaped yet (``kill_running_commands``).
_running: set[subprocess.Popen] = set()
_running_lock = threading.Lock()


def kill_running_commands(grace_s: float = 0.5) -> int:
    """Kill every command ``run_streaming`` started that still runs, with its whole process tree
    (``kill_process_group``; ``grace_s`` seconds between SIGTERM and SIGKILL). For the app's
    SIGTERM / SIGHUP handler: the commands run in sessions of their own, so a closed terminal
    or a ``kill`` of the app would otherwise leave them running. Returns how many were running.
    Never raises."""
    with _running_lock:
        procs = list(_running)
    for proc in procs:
        try:
            kill_process_group(proc, grace_s=grace_s)
        except Exception:  # noqa: BLE001 - best effort on the way out
            pass
    return len(procs)


def run_streaming(
    argv: Sequence[str],
    *,
    cwd: Path,
    sink: Callable[[bytes], None] | None = None,
    cancel: threading.Event,
    timeout_s: float | None,
    env: Mapping[str, str] | None = None,
    pipe_grace_s: float | None = None,
    reader: Callable[[int], int] | None = None,
) -> ProcessResult:
    """Run ``argv`` in its own session, feeding its merged stdout+stderr bytes to ``sink``.

    Instead of ``sink`` a ``reader`` may be given: called with the non-blocking output pipe's
    descriptor, it reads once and consumes the bytes itself, returning how many it read (0 at end
    of file) or raising ``BlockingIOError`` when nothing is ready (``BoundedOutput.read_from``
    does this without allocating per read). Exactly one of the two must be given.

    Returns when the output is closed and the process has exited, or after killing its process
    group on ``cancel``, on ``timeout_s`` (seconds; ``None`` = no limit) or when background
    children hold the output open ``pipe_grace_s`` seconds (default ``PIPE_GRACE_S``) after the
    process exited. Raises ``FileNotFoundError`` / ``PermissionError`` when the program cannot
    be started, ``ValueError`` unless exactly one of ``sink`` / ``reader`` is given.
    """
    if (sink is None) == (reader is None):
        raise ValueError("run_streaming needs exactly one of sink= or reader=")
    read_once = reader if reader is not None else _sink_reader(sink)  # type: ignore[arg-type]
    grace = PIPE_GRACE_S if pipe_grace_s is None else pipe_grace_s
    started = time.monotonic()
    deadline = started + timeout_s if timeout_s else None
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=dict(env) if env is not None else None,
    )
    with _running_lock:
        _running.add(proc)
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    _grow_pipe(fd)
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    result = ProcessResult(returncode=None)
    eof = False
    exited_at: float | None = None
    try:
        while True:
            if cancel.is_set():
                result.cancelled = True
                break
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                result.timed_out = True
                break
            if not eof:
                try:
                    size = read_once(fd)
                except BlockingIOError:
                    size = None
                if size:
                    continue  # keep reading while output flows
                if size == 0:
                    eof = True
            # Nothing to read right now: check on the process, then wait a little.
            if proc.poll() is not None:
                if eof:
                    break
                exited_at = exited_at or now
                if now - exited_at >= grace:
                    result.orphans_killed = True
                    break
            if eof:
                # Output closed, process not reaped yet (it usually exits within a millisecond):
                # wait for it directly rather than sleeping a whole poll interval.
                try:
                    proc.wait(timeout=min(POLL_S, deadline - now) if deadline is not None else POLL_S)
                except subprocess.TimeoutExpired:
                    pass
            else:
                selector.select(POLL_S)
        if result.cancelled or result.timed_out or result.orphans_killed:
            kill_process_group(proc)
            if not eof:
                _drain(fd, read_once)
        result.returncode = proc.wait()
    finally:
        selector.close()
        proc.stdout.close()
        if proc.poll() is None:  # an exception escaped (e.g. from sink): never leave it running
            kill_process_group(proc)
            proc.wait()
        with _running_lock:
            _running.discard(proc)
    result.duration_s = time.monotonic() - started
    return result


def kill_process_group(proc: subprocess.Popen, grace_s: float = KILL_GRACE_S) -> None:
    """Kill ``proc``, its process group and every descendant, even those that moved to a session
    or group of their own (``setsid``): SIGTERM first, then SIGKILL to what is left after
    ``grace_s`` seconds. ``proc`` must have been started with ``start_new_session=True`` (its pid
    is the group id). Descendants are found by walking parent pids in /proc, so a process that
    was already orphaned (re-parented to init) before the kill cannot be found. Never raises for
    processes that are already gone."""
    pgid = proc.pid
    tree = _descendants(pgid)
    _signal_all(pgid, tree, signal.SIGTERM)
    end = time.monotonic() + grace_s
    while time.monotonic() < end:
        proc.poll()
        tree |= _descendants(pgid)
        if not _group_alive(pgid) and not any(_alive(pid) for pid in tree):
            return
        time.sleep(POLL_S)
    tree |= _descendants(pgid)
    _signal_all(pgid, tree, signal.SIGKILL)


def _signal_all(pgid: int, pids: set[int], sig: int) -> None:
    """Send ``sig`` to process group ``pgid`` and to each pid in ``pids`` (errors ignored)."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _proc_table() -> dict[int, tuple[int, str, int]]:
    """Return ``{pid: (parent pid, state letter, process group)}`` for every process in /proc
    ({} elsewhere)."""
    table: dict[int, tuple[int, str, int]] = {}
    proc_root = Path("/proc")
    if not proc_root.is_dir():
        return table
    for entry in proc_root.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 2:
            table[int(entry.name)] = (int(fields[1]), fields[0], int(fields[2]))
    return table


def _descendants(root: int) -> set[int]:
    """Return the pids of every living descendant of ``root`` (not ``root`` itself)."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, state, _group) in _proc_table().items():
        if state != "Z":
            children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def _alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:].split()[:1] != ["Z"]


def _group_alive(pgid: int) -> bool:
    """Whether any non-zombie process is in group ``pgid`` (reads /proc on Linux)."""
    if not Path("/proc").is_dir():
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    return any(group == pgid and state != "Z" for _ppid, state, group in _proc_table().values())


def _grow_pipe(fd: int) -> None:
    """Ask Linux for a 1 MiB pipe buffer (fewer, larger reads); ignored where unsupported."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass


def _sink_reader(sink: Callable[[bytes], None]) -> Callable[[int], int]:
    """Adapt a ``sink`` to the ``reader`` form: one ``os.read`` of up to 1 MiB, passed on."""

    def read_once(fd: int) -> int:
        chunk = os.read(fd, _READ_BYTES)
        if chunk:
            sink(chunk)
        return len(chunk)

    return read_once


def _drain(fd: int, read_once: Callable[[int], int], budget_s: float = 0.5) -> None:
    """Read what is left in the pipe after a kill, for at most ``budget_s`` seconds."""
    end = time.monotonic() + budget_s
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while time.monotonic() < end:
            if not selector.select(POLL_S):
                continue
            try:
                size = read_once(fd)
            except BlockingIOError:
                continue
            except OSError:
                return
            if not size:
                return


def command_env() -> dict[str, str]:
    """The environment of tool commands: ours, plus pagers disabled and git never prompting
    (a prompt would wait on the missing stdin until the time limit)."""
    env = dict(os.environ)
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

    def preview(self, args: BashArgs, ctx: ToolContext) -> str:
        """Return the command line."""
        return args.command

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
        output = BoundedOutput.for_context(ctx)
        try:
            proc = run_streaming(
                [bash, "-c", args.command],
                cwd=Path(ctx.workspace),
                reader=output.read_from,
                cancel=ctx.cancel,
                timeout_s=timeout,
                env=command_env(),
            )
        except BaseException as exc:
            output.finish()  # wait for pending writes and close the saved file
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
            metadata={"duration_s": round(proc.duration_s, 3), "binary": result.binary},
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
