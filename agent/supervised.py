"""Starting a command under the subreaper supervisor (``agent.supervisor``) and watching it.

``spawn`` starts a command with its merged output on a pipe, in a session of its own: on Linux
under the supervisor (``Supervised``), elsewhere directly (``subprocess.Popen``). Every supervisor
of this process reads the same "life" pipe, whose only write end this process holds, so they all
see end of file, and kill their trees, when it dies.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Mapping, Sequence

_SUPERVISOR = str(Path(__file__).with_name("supervisor.py"))
_life_lock = threading.Lock()
_life: tuple[int, int] | None = None  # (read end passed to supervisors, write end kept here)


def supervision_available() -> bool:
    """Whether commands can run under the subreaper supervisor (Linux with ``/proc``)."""
    return sys.platform.startswith("linux") and os.path.isdir("/proc") and bool(sys.executable)


def _life_pipe() -> int:
    """The read end of this process's life pipe (created once). Its write end is never
    inherited, so the read end reaches end of file exactly when this process is gone. A forked
    child (``os.fork``) gets a new pipe of its own."""
    with _life_lock:
        if _life is None or _life_owner != os.getpid():
            _set_life(os.pipe())
        return _life[0]  # type: ignore[index]


_life_owner = 0


def _set_life(pair: tuple[int, int]) -> None:
    global _life, _life_owner
    _life, _life_owner = pair, os.getpid()


class SupervisorFailed(OSError):
    """The supervisor itself could not run (no start report): the command was not started."""


class SandboxFailed(OSError):
    """The sandbox asked for could not be applied (or no supervisor could apply it): the command
    was not started."""


class Supervised:
    """A command running under ``agent.supervisor``: ``pid`` is the supervisor's (the group id of
    the command's session), ``stdout`` the output pipe, and ``poll`` / ``wait`` report the
    *command's* return code (``Popen``-style) as soon as it exited, even while the supervisor
    still looks after background jobs the command left (they die with the agent)."""

    def __init__(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None,
                 options: Sequence[str] = ()) -> None:
        life = _life_pipe()
        status_r, status_w = os.pipe()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", _SUPERVISOR, str(status_w), str(life), *options, "--", *argv],
                cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                start_new_session=True, env=dict(env) if env is not None else None, pass_fds=(status_w, life))
        finally:
            os.close(status_w)
        self.pid = self._proc.pid
        self.stdout = self._proc.stdout
        self.returncode: int | None = None
        self._status = os.fdopen(status_r, "rb", buffering=0)
        line = self._status.readline().split()  # "S pid" or "E errno": blocks until it started
        if not line or line[0] != b"S":
            self._proc.wait()
            self._status.close()
            if self.stdout is not None:
                self.stdout.close()
            code = int(line[1]) if len(line) > 1 else 0
            if line and line[0] == b"B":
                step = line[2].decode(errors="replace") if len(line) > 2 else "sandbox"
                raise SandboxFailed(code, f"the sandbox could not be applied ({step} refused: "
                                          f"{os.strerror(code) if code else '?'})")
            if not line or line[0] != b"E":
                raise SupervisorFailed("the supervisor did not start")
            raise OSError(code, f"{os.strerror(code) if code else 'cannot start'}: {argv[0]!r}")
        self.command_pid = int(line[1])
        os.set_blocking(status_r, False)

    def poll(self) -> int | None:
        """The command's return code once it exited, else None (the supervisor is reaped when it
        exits; a supervisor killed before reporting gives its own return code)."""
        if self.returncode is not None:
            return self.returncode
        try:
            data = self._status.read() or b""
        except (BlockingIOError, ValueError):
            data = b""
        for line in data.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == b"X":
                self.returncode = int(parts[1])
        supervisor = self._proc.poll()
        if self.returncode is None and supervisor is not None:
            self.returncode = supervisor
        if self.returncode is not None:
            _babysitting.add(self)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the command's return code (``timeout`` seconds; raises
        ``subprocess.TimeoutExpired`` past it)."""
        end = time.monotonic() + timeout if timeout is not None else None
        while self.poll() is None:
            now = time.monotonic()
            if end is not None and now >= end:
                raise subprocess.TimeoutExpired(_SUPERVISOR, timeout or 0)
            step = 0.01 if end is None else min(0.01, end - now)
            # Woken by the "X" report itself (the exit is usually reported within a millisecond).
            try:
                ready = select.select([self._status], [], [], step)[0]
            except (ValueError, OSError):  # the status pipe is closed: plain polling
                ready = []
                time.sleep(step)
            if ready and self.poll() is None:
                time.sleep(0.001)  # end of file without a report: the supervisor is exiting
        return self.returncode  # type: ignore[return-value]

    def supervisor_done(self) -> bool:
        """Whether the supervisor itself has exited (and been reaped)."""
        if self._proc.poll() is None:
            return False
        try:
            self._status.close()
        except OSError:
            pass
        return True


#: Supervisors whose command exited but which still look after background jobs.
_babysitting: set[Supervised] = set()


def spawn(argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None,
          sandbox: Sequence[str] = ()) -> "subprocess.Popen | Supervised":
    """Start ``argv`` with merged output on a pipe, in a session of its own, supervised where
    possible (directly when the supervisor is unavailable or fails to start). ``sandbox``: the
    supervisor's sandbox options (``SandboxPolicy.supervisor_args``); a sandboxed command never
    starts unconfined. Raises ``OSError`` when the command cannot start, ``SandboxFailed`` when
    its sandbox cannot be applied."""
    for done in [s for s in _babysitting if s.supervisor_done()]:
        _babysitting.discard(done)
    if supervision_available():
        try:
            return Supervised(argv, cwd=cwd, env=env, options=sandbox)
        except SupervisorFailed:
            if sandbox:
                raise SandboxFailed(1, "the sandbox could not be applied: the supervisor did not start") from None
            # e.g. no usable interpreter: run it directly, killable through its group
    elif sandbox:
        raise SandboxFailed(1, "the sandbox needs the supervisor (Linux with /proc)")
    return subprocess.Popen(list(argv), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            env=dict(env) if env is not None else None)
