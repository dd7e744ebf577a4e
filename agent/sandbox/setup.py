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


#: Paths of a git dir / common dir that hold or select programs git runs: kept read-only.
_GIT_DIR_FILES = ("config", "config.worktree", "commondir", "gitdir")
_COMMON_DIR_FILES = ("config", "config.worktree", "hooks", "info")


def git_protected(workspace: Path) -> tuple[list[str], list[str]]:
    """``(pinned, readonly)`` for the repository of ``workspace`` (empty outside one): its git
    dir and common dir pinned (cannot be renamed away and replaced), and read-only: the common
    dir's ``config``, ``config.worktree``, ``hooks/`` and ``info/`` (attributes), the git dir's
    ``config.worktree``, ``commondir`` and ``gitdir``, and a ``.git`` file (a linked worktree's
    pointer). Only existing paths; never raises."""
    for folder in (workspace, *workspace.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            git_dir = common = dot_git.resolve()
            pointer = None
            break
        if dot_git.is_file():
            found = git_folders(folder) if folder != workspace else git_folders(workspace)
            if not found:
                return [], []
            git_dir, common = found[0], found[-1]
            pointer = dot_git
            break
    else:
        return [], []
    pinned = [str(p) for p in dict.fromkeys((git_dir, common))]
    readonly = [str(common / name) for name in _COMMON_DIR_FILES]
    readonly += [str(git_dir / name) for name in _GIT_DIR_FILES if git_dir != common or name != "config"]
    if pointer is not None:
        readonly.append(str(pointer))
    return pinned, [p for p in dict.fromkeys(readonly) if os.path.lexists(p)]


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
    pinned: list[str] = []
    readonly: list[str] = []
    if mode is SandboxMode.WORKSPACE_WRITE:
        pinned, readonly = git_protected(workspace)
        if (pinned or readonly) and not getattr(support, "namespaces", True):
            notices.append("Sandbox: the repository's .git/config and hooks stay writable to commands "
                           "(no unprivileged user namespaces here).")
            pinned, readonly = [], []
    allowed = network if network is not None else mode is SandboxMode.WORKSPACE_WRITE
    policy = SandboxPolicy(mode=mode, tmp_dir=str(tmp_dir), writable=tuple(roots), network=allowed,
                           unix_sockets=unix_sockets, available=support.available, reason=support.reason,
                           can_ask=can_ask, pinned=tuple(pinned), readonly=tuple(readonly))
    return policy, notices
