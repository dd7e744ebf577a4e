"""Whether this machine can sandbox commands (``probe``), and why not when it cannot."""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class SandboxSupport:
    """What ``probe`` found: ``available`` (Landlock works here), ``abi`` (its ABI version, 0 when
    unusable), ``network_rules`` (ABI >= 4: TCP bind/connect can be denied), ``scopes`` (ABI >= 6:
    signals and abstract Unix sockets stay inside), ``seccomp`` (the socket filter is built for
    this architecture), ``reason`` (why not available, in one sentence)."""

    available: bool
    abi: int = 0
    network_rules: bool = False
    scopes: bool = False
    seccomp: bool = False
    reason: str = ""
    #: Unprivileged user + mount namespaces work: the git config can be kept read-only.
    namespaces: bool = False


@functools.lru_cache(maxsize=1)
def probe() -> SandboxSupport:
    """Check once per process whether commands can be sandboxed (Linux with Landlock, a
    supervisor to apply it, seccomp filters allowed). Never raises."""
    if not sys.platform.startswith("linux"):
        return SandboxSupport(False, reason=f"the OS sandbox needs Linux with Landlock (this is {sys.platform})")
    from ..supervised import supervision_available

    if not supervision_available():
        return SandboxSupport(False, reason="commands cannot run under the supervisor here (no /proc)")
    try:
        from . import confine
    except OSError as exc:  # no libc to load
        return SandboxSupport(False, reason=f"cannot load libc: {exc}")
    abi, reason = confine.landlock_status()
    if abi < 1:
        return SandboxSupport(False, reason=reason)
    seccomp = confine.seccomp_supported() and _seccomp_allowed()
    return SandboxSupport(True, abi=abi, network_rules=abi >= 4, scopes=abi >= 6, seccomp=seccomp,
                          reason="" if seccomp else "seccomp filters are refused or not built for this machine",
                          namespaces=_namespaces_work())


def _namespaces_work() -> bool:
    """Whether a forked child can enter a user + mount namespace and bind-mount read-only
    (``confine.protect`` on a temporary file). Never raises."""
    import tempfile

    from . import confine

    try:
        with tempfile.NamedTemporaryFile() as handle:
            pid = os.fork()
            if pid == 0:
                try:
                    confine.protect([], [handle.name])
                    code = 0
                except BaseException:
                    code = 1
                os._exit(code)
            _, status = os.waitpid(pid, 0)
            return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    except OSError:
        return False


def _seccomp_allowed() -> bool:
    """Whether this process may install seccomp filters (``/proc/self/status`` lists Seccomp)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as handle:
            return any(line.startswith("Seccomp:") for line in handle)
    except OSError:
        return False


def unavailable_notice(support: SandboxSupport) -> str:
    """The start-up notice when the sandbox is unavailable (empty when it is available)."""
    if support.available:
        return ""
    return (f"Sandbox unavailable: {support.reason}. Commands run unsandboxed; Plan mode has no bash. "
            f"(kernel {os.uname().release})")
