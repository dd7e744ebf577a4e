"""Choosing the sandbox of a session's commands from the settings (``choose_policy``)."""

from __future__ import annotations

import os
from pathlib import Path

from .policy import SandboxMode, SandboxPolicy
from .probe import SandboxSupport


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def choose_policy(mode: SandboxMode, *, workspace: Path, tmp_dir: Path, writable: list[str],
                  network: bool | None, unix_sockets: bool, protected: list[Path],
                  support: SandboxSupport, can_ask: bool = False) -> tuple[SandboxPolicy | None, list[str]]:
    """The policy of ``mode`` (None for ``OFF``) and notices about it.

    ``workspace``: writable in workspace-write mode, with ``writable`` (``~`` expanded, relative
    ones against the workspace); ``network``: None = the mode's default (denied read-only,
    allowed workspace-write); ``protected``: folders no command may write (the journal and saved
    outputs): a writable folder that holds one is dropped, with a notice. ``support``: what
    ``probe`` found (an unavailable sandbox gives a policy with ``available=False``)."""
    if mode is SandboxMode.OFF:
        return None, []
    notices: list[str] = []
    roots: list[str] = []
    if mode is SandboxMode.WORKSPACE_WRITE:
        for raw in [str(workspace), *writable]:
            path = Path(os.path.expanduser(raw))
            path = (workspace / path if not path.is_absolute() else path).resolve()
            held = [p for p in protected if _inside(p.resolve(), path)]
            if held:
                notices.append(f"Sandbox: {path} stays read-only: it holds {held[0]} (the session record).")
            elif str(path) not in roots:
                roots.append(str(path))
    allowed = network if network is not None else mode is SandboxMode.WORKSPACE_WRITE
    policy = SandboxPolicy(mode=mode, tmp_dir=str(tmp_dir), writable=tuple(roots), network=allowed,
                           unix_sockets=unix_sockets, available=support.available, reason=support.reason,
                           can_ask=can_ask)
    return policy, notices
