"""Bounded subprocesses in a process group of their own, and killing a process tree.

One primitive for every program the agent runs: the bash tool and ripgrep stream their output
(``run_streaming``), the session-start git snapshot reads a capped amount of both pipes against a
deadline (``run_bounded``). Each process starts in a new session (``start_new_session=True``, so
its pid is its group id); on cancel, timeout or an output cap, ``kill_process_tree`` signals the
group and every descendant found through psutil, including those that moved to a session or
group of their own (``setsid``).

On Linux ``run_streaming`` starts each command under a subreaper supervisor (``agent.supervisor``,
whose docstring says why that and not a cgroup or ``PR_SET_PDEATHSIG``): it adopts every orphan of
the command's tree and kills the whole tree when the agent dies, even by SIGKILL, because the
only write end of its "life" pipe closes with the agent. ``Supervised`` gives it the part of the
``Popen`` interface used here (``agent.supervised``); where the supervisor cannot run, commands
start directly, except sandboxed ones (``sandbox=``, ``agent.sandbox``): the supervisor confines
those in the child before ``exec``, and without it they do not start.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

import psutil

from .supervised import Supervised, spawn

#: Time between SIGTERM and SIGKILL of a process group (seconds).
KILL_GRACE_S = 2.0
#: How long output may stay open after the command exited before its group is killed (seconds).
PIPE_GRACE_S = 2.0
#: How often cancel and the deadline are checked (seconds).
POLL_S = 0.05
_READ_BYTES = 1 << 20
#: Bytes of stderr kept by ``run_bounded`` (for error messages).
STDERR_CAP = 2000


# --------------------------------------------------------------------------- killing a tree


def kill_process_tree(proc: subprocess.Popen, grace_s: float = KILL_GRACE_S) -> None:
    """Kill ``proc``, its process group and every descendant: SIGTERM first, then SIGKILL to what
    is left after ``grace_s`` seconds (``grace_s <= 0``: SIGKILL at once). ``proc`` must have
    been started with ``start_new_session=True`` (its pid is the group id). A process orphaned
    (re-parented to init) before the kill, outside the group, cannot be found. Never raises for
    processes that are already gone."""
    pgid = proc.pid
    tree = _descendants(pgid)
    if grace_s > 0:
        _signal_all(pgid, tree, signal.SIGTERM)
        end = time.monotonic() + grace_s
        while time.monotonic() < end:
            proc.poll()
            tree |= _descendants(pgid)
            if not _group_alive(pgid) and not any(_alive(p) for p in tree):
                return
            time.sleep(POLL_S)
        tree |= _descendants(pgid)
    _signal_all(pgid, tree, signal.SIGKILL)


def _signal_all(pgid: int, tree: set[psutil.Process], sig: int) -> None:
    """Send ``sig`` to process group ``pgid`` and to each process of ``tree`` (errors ignored)."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
    for process in tree:
        try:
            process.send_signal(sig)  # psutil checks the pid was not reused
        except (psutil.Error, OSError):
            pass


def _descendants(root: int) -> set[psutil.Process]:
    """Every living descendant of ``root`` (not ``root`` itself; empty when it is gone)."""
    try:
        children = psutil.Process(root).children(recursive=True)
    except psutil.Error:
        return set()
    return {child for child in children if _alive(child)}


def _alive(process: psutil.Process) -> bool:
    """Whether ``process`` still runs and is not a zombie."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _group_alive(pgid: int) -> bool:
    """Whether any non-zombie process is in group ``pgid``."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    for process in psutil.process_iter(["status"]):
        try:
            if process.info["status"] != psutil.STATUS_ZOMBIE and os.getpgid(process.pid) == pgid:
                return True
        except (ProcessLookupError, PermissionError, psutil.Error):
            continue
    return False


# --------------------------------------------------------------------------- streaming


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
_running: set["subprocess.Popen | Supervised"] = set()
_running_lock = threading.Lock()


def kill_running_commands(grace_s: float = 0.5) -> int:
    """Kill every command ``run_streaming`` started that still runs, with its whole process tree
    (``grace_s`` seconds between SIGTERM and SIGKILL). For the app's SIGTERM / SIGHUP handler:
    the commands run in sessions of their own, so a closed terminal or a ``kill`` of the app
    would otherwise leave them running. Returns how many were running. Never raises."""
    with _running_lock:
        procs = list(_running)
    for proc in procs:
        try:
            kill_process_tree(proc, grace_s=grace_s)
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
    sandbox: Sequence[str] = (),
) -> ProcessResult:
    """Run ``argv`` in its own session, feeding its merged stdout+stderr bytes to ``sink``.

    Instead of ``sink`` a ``reader`` may be given: called with the non-blocking output pipe's
    descriptor, it reads once and consumes the bytes itself, returning how many it read (0 at end
    of file) or raising ``BlockingIOError`` when nothing is ready (``BoundedOutput.read_from``
    does this without allocating per read). Exactly one of the two must be given.

    Returns when the output is closed and the process has exited, or after killing its process
    tree on ``cancel``, on ``timeout_s`` (seconds; ``None`` = no limit) or when background
    children hold the output open ``pipe_grace_s`` seconds (default ``PIPE_GRACE_S``) after the
    process exited. ``sandbox``: the supervisor's sandbox options
    (``SandboxPolicy.supervisor_args``; empty = unconfined). Raises ``FileNotFoundError`` /
    ``PermissionError`` when the program cannot be started, ``supervised.SandboxFailed`` when its
    sandbox cannot be applied, ``ValueError`` unless exactly one of ``sink`` / ``reader`` is given.
    """
    if (sink is None) == (reader is None):
        raise ValueError("run_streaming needs exactly one of sink= or reader=")
    read_once = reader if reader is not None else _sink_reader(sink)  # type: ignore[arg-type]
    grace = PIPE_GRACE_S if pipe_grace_s is None else pipe_grace_s
    started = time.monotonic()
    deadline = started + timeout_s if timeout_s else None
    proc = spawn(argv, cwd, env, sandbox)
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
            kill_process_tree(proc)
            if not eof:
                _drain(fd, read_once)
        result.returncode = proc.wait()
    finally:
        selector.close()
        proc.stdout.close()
        if proc.poll() is None:  # an exception escaped (e.g. from sink): never leave it running
            kill_process_tree(proc)
            proc.wait()
        with _running_lock:
            _running.discard(proc)
    result.duration_s = time.monotonic() - started
    return result


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


# --------------------------------------------------------------------------- bounded capture


@dataclass
class BoundedResult:
    """One finished (or stopped) process: exit code, captured bytes and how it ended."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    cut: bool = False
    timed_out: bool = False


def run_bounded(argv: list[str], cwd: Path, *, deadline: float, max_bytes: int,
                env: dict[str, str] | None = None) -> BoundedResult:
    """Run ``argv`` in ``cwd`` until it exits, ``max_bytes`` of stdout have been read, or the
    monotonic ``deadline`` (``time.monotonic()`` clock) passes; in the last two cases its process
    tree is killed at once (``cut`` / ``timed_out`` set) and what was read is returned.

    At most ``max_bytes`` of stdout and ``STDERR_CAP`` bytes of stderr are kept. Raises
    ``OSError`` (``FileNotFoundError`` for a missing program or folder) when it cannot start.
    """
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)
    out, err = bytearray(), bytearray()
    cut = timed_out = False
    sel = selectors.DefaultSelector()
    try:
        sel.register(proc.stdout, selectors.EVENT_READ, out)
        sel.register(proc.stderr, selectors.EVENT_READ, err)
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            for key, _ in sel.select(timeout=min(remaining, 0.25)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                buf = key.data
                room = (max_bytes if buf is out else STDERR_CAP) - len(buf)
                buf += chunk[:max(room, 0)]
                if buf is out and len(chunk) > room:
                    cut = True
            if cut:
                break
        if cut or timed_out:
            kill_process_tree(proc, grace_s=0)
        try:
            returncode = proc.wait(timeout=max(deadline - time.monotonic(), 0.05))
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_process_tree(proc, grace_s=0)
            returncode = proc.wait()
    finally:
        sel.close()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        if proc.poll() is None:  # an unexpected exception above: never leave it running
            kill_process_tree(proc, grace_s=0)
            proc.wait()
    return BoundedResult(returncode, bytes(out), bytes(err), cut=cut, timed_out=timed_out)
