"""Choosing the sandbox of a session's commands from the settings (``choose_policy``)."""

from __future__ import annotations

import os
from pathlib import Path

from .policy import SandboxMode, SandboxPolicy
from .probe import SandboxSupport


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def git_folders(workspace: Path) -> list[Path]:
    """The git folders a commit in ``workspace`` writes that may lie outside it: the ``.git``
    folder of an enclosing repository (the workspace is a subfolder), or, for a worktree or a
    submodule (``.git`` is a file naming its git dir), that git dir and its common dir. Empty
    outside a repository; never raises."""
    for folder in (workspace, *workspace.parents):
        dot_git = folder / ".git"
        try:
            if dot_git.is_dir():
                return [] if folder == workspace else [dot_git]
            if not dot_git.is_file():
                continue
            text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return []
        if not text.startswith("gitdir:"):
            return []
        git_dir = (folder / text.removeprefix("gitdir:").strip()).resolve()
        found = [git_dir]
        try:
            common = (git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()).resolve()
            found.append(common)
        except OSError:
            pass
        return found
    return []


def choose_policy(mode: SandboxMode, *, workspace: Path, tmp_dir: Path, writable: list[str],
                  network: bool | None, unix_sockets: bool, protected: list[Path],
                  support: SandboxSupport, can_ask: bool = False) -> tuple[SandboxPolicy | None, list[str]]:
    """The policy of ``mode`` (None for ``OFF``) and notices about it.

    ``workspace``: writable in workspace-write mode, with its git folders outside it (``git_folders``:
    a worktree's, an enclosing repository's) and ``writable`` (``~`` expanded, relative ones
    against the workspace); ``network``: None = the mode's default (denied read-only,
    allowed workspace-write); ``protected``: folders no command may write (the journal and saved
    outputs): a writable folder that holds one is dropped, with a notice. ``support``: what
    ``probe`` found (an unavailable sandbox gives a policy with ``available=False``)."""
    if mode is SandboxMode.OFF:
        return None, []
    notices: list[str] = []
    roots: list[str] = []
    if mode is SandboxMode.WORKSPACE_WRITE:
        for raw in [str(workspace), *map(str, git_folders(workspace)), *writable]:
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
