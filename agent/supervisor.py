"""A subreaper supervisor between the agent and each command it runs, so that nothing outlives
the agent, not even after ``kill -9``.

Why a subreaper and not the alternatives:

- ``PR_SET_PDEATHSIG`` on the command fires when the *thread* that forked it exits (tool calls
  run in worker threads) and covers only the direct child; commands run in a session of their
  own and their grandchildren may call ``setsid``, so they escape it.
- A cgroup would hold the whole tree, but creating one needs a writable cgroup v2 hierarchy
  (systemd delegation, root), which a terminal agent usually does not have.
- A process that calls ``prctl(PR_SET_CHILD_SUBREAPER)`` becomes the parent of every orphan in
  its subtree, whatever session or group it moved to, so it can always find and kill the tree.

How it works: ``agent.supervised`` starts this file as a script (stdlib only, few imports, so it
starts in a few tens of milliseconds: ``python -I -S``) in a
new session, with two descriptors: ``status`` (written here: ``S <pid>`` once the command runs,
``E <errno>`` when it could not start, ``X <returncode>`` when it exited, ``Popen``-style,
negative for a signal) and ``life``, the read end of a pipe whose only write end the agent holds
(not inherited by anything). The supervisor makes itself a subreaper, starts the command with its
own stdout/stderr (the agent's output pipe) and then drops them, so the output ends when the
command and its background jobs close it. It reaps every child it adopts; it exits once the
command and all adopted processes are gone. When the life pipe reaches end of file (the agent
died, however) or it receives SIGTERM / SIGHUP / SIGINT, it sends SIGTERM to every process of its
subtree, SIGKILL to what is left after ``GRACE_S``, reaps them and exits.

Sandbox: with ``--sandbox`` (and ``--write PATH`` per writable folder, ``--pin PATH`` /
``--readonly PATH`` per git path kept in place / read-only (``confine.protect``), ``--net``, ``--unix``) the
supervisor builds the Landlock ruleset before it forks and the child confines itself right before
``exec`` (``agent/sandbox/confine.py``, loaded by path); the supervisor itself stays unconfined so
it can still signal and reap the whole tree. A sandbox that cannot be applied reports ``B
<errno> <step>`` (the call that refused: ``seccomp``, ``landlock_restrict_self``...) and the
command does not run.

Linux only (``prctl``); elsewhere ``agent.process`` runs commands directly and relies on its
process-group kill (the agent's death then leaves commands running). Run as ``python supervisor.py
STATUS_FD LIFE_FD [--sandbox [--write PATH]... [--net] [--unix]] -- ARGV...``.
"""

from __future__ import annotations

import ctypes
import os
import select
import sys
import time

import _signal as signal  # the C module: ``signal`` would import enum (tens of ms per command)

PR_SET_CHILD_SUBREAPER = 36
#: Seconds between SIGTERM and SIGKILL of the subtree when the supervisor ends it.
GRACE_S = 0.5
#: How often children are reaped and the life pipe checked (seconds).
POLL_S = 0.05

_stop_requested = False


def make_subreaper() -> bool:
    """Make this process a child subreaper (Linux ``prctl``); returns False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def subtree(root: int) -> list[int]:
    """Pids of every living descendant of ``root`` (read from ``/proc``; empty elsewhere)."""
    parents: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and fields[0] != b"Z":
            parents.setdefault(int(fields[1]), []).append(int(name))
    found, todo = [], [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _reap() -> tuple[list[tuple[int, int]], bool]:
    """Reap every exited child: returns ``(pid, status)`` pairs and whether children remain."""
    reaped = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped, False
        if pid == 0:
            return reaped, True
        reaped.append((pid, status))


def end_subtree() -> list[tuple[int, int]]:
    """SIGTERM every descendant, SIGKILL what is left after ``GRACE_S`` seconds, reap them all;
    returns the ``(pid, status)`` pairs reaped."""
    me = os.getpid()
    reaped: list[tuple[int, int]] = []
    for sig, wait_s in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, 2.0)):
        for pid in subtree(me):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        end = time.monotonic() + wait_s
        while time.monotonic() < end:
            more, remaining = _reap()
            reaped += more
            if not remaining and not subtree(me):
                return reaped
            time.sleep(POLL_S / 2)
    return reaped


def _on_signal(signum, frame) -> None:  # noqa: ANN001 - signal handler
    global _stop_requested
    _stop_requested = True


def _returncode(status: int) -> int:
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


class SandboxError(OSError):
    """The sandbox could not be applied: the command was not started."""


def _sandbox(options: list[str]):  # noqa: ANN202 - (confine module, ruleset fd, seccomp program)
    """Build the sandbox ``options`` ask for before forking: returns ``(confine, ruleset_fd,
    program)``, or None without ``--sandbox``. Raises ``SandboxError``."""
    if "--sandbox" not in options:
        return None
    writable = [options[i + 1] for i, opt in enumerate(options[:-1]) if opt == "--write"]
    pinned = [options[i + 1] for i, opt in enumerate(options[:-1]) if opt == "--pin"]
    readonly = [options[i + 1] for i, opt in enumerate(options[:-1]) if opt == "--readonly"]
    network, unix = "--net" in options, "--unix" in options
    try:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "sandbox"))
        import confine  # stdlib only; the agent package is not importable under -I -S

        confine.drop_capabilities(confine.CAP_SETFCAP_MASK if pinned or readonly else 0)  # root: this supervisor and its command lose the privileged ones
        ruleset = confine.build_ruleset(writable, network)
        program = confine.seccomp_program(network, unix) if confine.seccomp_supported() else None
    except OSError as exc:
        raise SandboxError(exc.errno or 1, exc.strerror or str(exc)) from None
    return confine, ruleset, program, pinned, readonly


def _start(command: list[str], private: tuple[int, ...], sandbox=None) -> int:  # noqa: ANN001
    """Fork and exec ``command`` with default signal dispositions, without the descriptors in
    ``private``, confined by ``sandbox`` (from ``_sandbox``) when given; returns its pid. Raises
    ``OSError`` (the exec's errno) when it cannot start, ``SandboxError`` when the child could
    not confine itself."""
    for fd in private:
        os.set_inheritable(fd, False)
    err_r, err_w = os.pipe()  # close-on-exec: end of file without data means the exec worked
    pid = os.fork()
    if pid == 0:  # the child: only async-signal-safe work until exec
        try:
            os.close(err_r)
            for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGCHLD, signal.SIGPIPE,
                           signal.SIGXFSZ):
                signal.signal(signum, signal.SIG_DFL)
            if sandbox is not None:
                try:
                    confine, ruleset, program, pinned, readonly = sandbox
                    confine.protect(pinned, readonly)
                    confine.restrict(ruleset, program)
                    os.close(ruleset)
                except OSError as exc:  # "B<errno> <step>": which call refused (seccomp, landlock...)
                    step = (str(exc.strerror or exc).split(":")[0].split() or ["sandbox"])[0]
                    os.write(err_w, b"B" + str(exc.errno or 1).encode() + b" " + step.encode()[:40])
                    os._exit(127)
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(err_w, str(exc.errno or 0).encode())
        finally:
            os._exit(127)
    os.close(err_w)
    if sandbox is not None:
        os.close(sandbox[1])
    try:
        data = os.read(err_r, 64)
    finally:
        os.close(err_r)
    if data:
        os.waitpid(pid, 0)
        if data.startswith(b"B"):
            code, _, step = data[1:].partition(b" ")
            raise SandboxError(int(code or b"1"), step.decode(errors="replace") or "sandbox")
        errno = int(data or b"0")
        raise OSError(errno, os.strerror(errno))
    return pid


def main(argv: list[str]) -> int:
    """Supervise the command after ``STATUS_FD LIFE_FD [OPTIONS] --``; see the module docstring."""
    status_fd, life_fd = int(argv[0]), int(argv[1])
    split = argv.index("--", 2)
    options, command = argv[2:split], argv[split + 1:]
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, _on_signal)
    make_subreaper()
    # A child's exit wakes the loop at once (SIGCHLD writes a byte to the wakeup pipe).
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)

    def report(text: str) -> None:
        try:
            os.write(status_fd, text.encode() + b"\n")
        except OSError:
            pass

    try:
        child_pid = _start(command, (status_fd, life_fd), _sandbox(options))
    except SandboxError as exc:
        step = (str(exc.strerror or "").split(":")[0].split() or ["sandbox"])[0]
        report(f"B {exc.errno or 0} {step[:40]}")
        return 127
    except OSError as exc:
        report(f"E {exc.errno or 0}")
        return 127
    report(f"S {child_pid}")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # the output pipe must end when the command's side of it closes
    os.dup2(devnull, 2)
    exited = False
    poller = select.poll()
    poller.register(life_fd, select.POLLIN | select.POLLHUP)
    poller.register(wake_r, select.POLLIN)
    while True:
        reaped, remaining = _reap()
        if _stop_requested:
            reaped += end_subtree()
            remaining = False
        else:
            # Something was just reaped (the command, say): report it now, not after a poll
            # timeout (that put POLL_S on every command's exit).
            wait_ms = 0 if reaped else POLL_S * 1000
            ready = {fd for fd, _ in poller.poll(wait_ms)}
            if wake_r in ready:
                try:
                    os.read(wake_r, 512)
                except OSError:
                    pass
            if life_fd in ready:
                try:
                    data = os.read(life_fd, 64)
                except OSError:
                    data = b""
                if not data:  # the agent is gone
                    reaped += end_subtree()
                    remaining = False
        for pid, status in reaped:
            if pid == child_pid and not exited:
                exited = True
                report(f"X {_returncode(status)}")
        if not remaining and (exited or _stop_requested or not subtree(os.getpid())):
            return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
