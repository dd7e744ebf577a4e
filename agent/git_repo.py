"""The git repository around a workspace, through gitpython: where it is, and which files changed.

``repository_dirs(path)`` finds the repository (its working tree, git dir and common git dir, for
worktrees and submodules too) by reading ``.git``, without starting a process.
``changed_files(workspace)`` lists what differs from ``HEAD`` (staged and unstaged changes of
tracked files, with added/removed line counts) plus the untracked files git does not ignore: what
the sidebar's changed-files list and the pinned "files changed" list need, whoever made the change
(a tool, a command run by bash, the user in an editor). Paths are relative to the repository root,
``/``-separated, non-UTF-8 bytes kept as surrogate escapes (``os.fsdecode``).

``import git`` runs ``git version`` with no time limit, so a stuck git would hang whoever imports
gitpython first; ``_gitpython()`` imports it only after the same command answered through the
bounded runner (once per process; a git that does not answer makes every call here give None).
gitpython then finds the repository and reads its layout without starting a process
(``Repo(search_parent_directories=True)``, ``working_tree_dir``, ``common_dir``, ``bare``). The
git commands run through the bounded runner of ``git_context`` instead of gitpython's ``execute``: its ``kill_after_timeout`` kills git but not a child holding the pipe, so a stuck
git with a 0.5 s limit held the call for 30 s; ours kills the process group at the deadline and
caps the output in bytes. Every call shares one deadline, so a stuck git costs at most
``timeout_s`` seconds and gives ``None``, never a hang.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

# A missing git binary must not make ``import git`` raise: every call then fails as "no git".
os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")
#: Time the first use waits for ``git version`` before importing gitpython (seconds).
GIT_PROBE_TIMEOUT_S = 2.0

#: git's empty tree: the base of a repository without commits.
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
#: Output of one git listing kept (bytes); a longer one counts as a failure, not a partial list.
MAX_OUTPUT_BYTES = 4 * 1024 * 1024
#: Untracked files whose lines are counted (the rest are listed without counts).
MAX_COUNTED_UNTRACKED = 200
#: Untracked files larger than this are listed without a line count (bytes).
MAX_COUNTED_BYTES = 1_000_000

ChangeStatus = Literal["modified", "added", "deleted", "untracked"]


@dataclass(frozen=True)
class ChangedFile:
    """One changed file: ``path`` (repository-relative), ``status``, and the lines ``added`` /
    ``removed`` against ``HEAD`` (None for a binary file or an uncounted untracked one)."""

    path: str
    status: ChangeStatus
    added: int | None = None
    removed: int | None = None


@dataclass(frozen=True)
class RepositoryDirs:
    """Where a repository lives: ``root`` (its working tree), ``git_dir`` (``.git``, or the folder
    a ``.git`` file points to in a linked worktree or submodule) and ``common_dir`` (shared by
    linked worktrees: ``info/exclude`` lives there). Absolute, resolved paths."""

    root: Path
    git_dir: Path
    common_dir: Path


def repository_dirs(path: Path | str) -> RepositoryDirs | None:
    """The repository containing ``path``, or None outside one, for a bare repository, a
    missing path, or a git that does not answer. Reads ``.git`` only (after gitpython's import,
    see ``_gitpython``): cannot hang."""
    try:
        git = _gitpython()
    except _GitFailed:
        return None
    try:
        repo = git.Repo(path, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, OSError, ValueError):
        return None
    try:
        if repo.bare or not repo.working_tree_dir:
            return None
        return RepositoryDirs(Path(repo.working_tree_dir).resolve(), Path(repo.git_dir).resolve(),
                              Path(repo.common_dir).resolve())
    except (git.GitError, OSError, ValueError):
        return None
    finally:
        repo.close()


def repository_root(path: Path | str) -> Path | None:
    """The working-tree root of the repository containing ``path`` (``repository_dirs``), or None."""
    dirs = repository_dirs(path)
    return dirs.root if dirs is not None else None


_probe_lock = threading.Lock()
_probed: bool | None = None  # None: not tried yet


def _gitpython() -> Any:
    """The ``git`` package (gitpython), imported once git answered ``git version`` within
    ``GIT_PROBE_TIMEOUT_S``; raises ``_GitFailed`` when it did not (stuck or broken git). A
    missing git binary still imports (``GIT_PYTHON_REFRESH=quiet``): its calls fail later."""
    global _probed
    with _probe_lock:
        if _probed is None:
            from .git_context import GitUnavailable, git_env, run_bounded

            try:
                result = run_bounded(["git", "version"], Path("/"),
                                     deadline=time.monotonic() + GIT_PROBE_TIMEOUT_S, max_bytes=4096,
                                     env=git_env())
                _probed = not result.timed_out
            except (GitUnavailable, OSError):
                _probed = True  # no git at all: gitpython imports quietly and every call fails
        if not _probed:
            raise _GitFailed("git did not answer `git version`")
    import git

    return git


def changed_files(workspace: Path | str, *, timeout_s: float = 2.0) -> list[ChangedFile] | None:
    """The files changed in the repository of ``workspace`` (see the module docstring), sorted
    by path; None outside a repository, without git, or when git fails or does not finish
    within ``timeout_s`` seconds (all calls together)."""
    deadline = time.monotonic() + timeout_s
    dirs = repository_dirs(workspace)
    if dirs is None:
        return None
    root = dirs.root
    try:
        base = "HEAD" if _has_commit(root, deadline) else EMPTY_TREE
        counts = _run(root, deadline, "diff", base, "--numstat", "-z", "--no-renames", "--no-ext-diff",
                      "--no-textconv")
        statuses = _run(root, deadline, "diff", base, "--name-status", "-z", "--no-renames", "--no-ext-diff",
                        "--no-textconv")
        untracked = _run(root, deadline, "ls-files", "--others", "--exclude-standard", "-z")
    except (_OutOfTime, _GitFailed):
        return None
    kinds = _statuses(statuses)
    files = [ChangedFile(path, kinds.get(path, "modified"), added, removed)
             for path, added, removed in _numstat(counts)]
    for index, path in enumerate(p for p in untracked.split("\0") if p):
        added = _count_lines(root / path) if index < MAX_COUNTED_UNTRACKED else None
        files.append(ChangedFile(path, "untracked", added, 0 if added is not None else None))
    return sorted(files, key=lambda f: f.path)


#: The most files ``workspace_files`` lists.
MAX_LISTED_FILES = 20_000
#: Folders a listing outside git skips.
_SKIPPED_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".pytest_cache",
                 ".tox", "dist", "build", ".opencli", "target"}


def workspace_files(workspace: Path | str, *, timeout_s: float = 2.0) -> list[str]:
    """The workspace's files, relative and ``/``-separated, sorted, at most ``MAX_LISTED_FILES``:
    in a repository the tracked and untracked files git does not ignore (``.gitignore``
    respected), else a walk that skips dependency and cache folders. For ``@path`` completion;
    never raises (``[]`` when nothing can be listed)."""
    root = Path(workspace)
    dirs = repository_dirs(root)
    if dirs is not None:
        try:
            text = _run(root, time.monotonic() + timeout_s, "ls-files", "--cached", "--others",
                        "--exclude-standard", "-z")
            return sorted({p for p in text.split("\0") if p})[:MAX_LISTED_FILES]
        except (_OutOfTime, _GitFailed):
            pass
    found: list[str] = []
    try:
        for folder, subdirs, files in os.walk(root):
            subdirs[:] = sorted(d for d in subdirs if d not in _SKIPPED_DIRS and not d.startswith("."))
            base = Path(folder).relative_to(root)
            found.extend((base / name).as_posix() for name in files)
            if len(found) >= MAX_LISTED_FILES:
                break
    except OSError:
        pass
    return sorted(found)[:MAX_LISTED_FILES]


def changed_paths(workspace: Path | str, *, timeout_s: float = 2.0) -> set[str] | None:
    """The paths of ``changed_files`` (repository-relative), or None as it documents."""
    files = changed_files(workspace, timeout_s=timeout_s)
    return None if files is None else {f.path for f in files}


class _OutOfTime(Exception):
    """The shared deadline passed, or a listing was cut at the byte cap."""


class _GitFailed(Exception):
    """git exited with an error, or could not be started."""


def _run(root: Path, deadline: float, command: str, *args: str) -> str:
    """Run ``git COMMAND ARGS`` in ``root``, killed at ``deadline`` (monotonic seconds), stdout
    capped at ``MAX_OUTPUT_BYTES`` and decoded with surrogate escapes. Raises ``_OutOfTime`` when
    the deadline passed or the output was cut, ``_GitFailed`` when git failed or cannot start."""
    from .git_context import GitUnavailable, git_env, run_bounded
    from .git_safety import safe_argv

    if deadline <= time.monotonic():
        raise _OutOfTime(command)
    try:
        argv = safe_argv(root, ["-c", "core.quotepath=off", command, *args], deadline=deadline)
        result = run_bounded(argv, root, deadline=deadline,
                             max_bytes=MAX_OUTPUT_BYTES, env=git_env())
    except GitUnavailable as exc:
        raise _GitFailed(str(exc)) from None
    if result.timed_out or result.cut:
        raise _OutOfTime(command)
    if result.returncode != 0:
        raise _GitFailed(f"git {command} exited with {result.returncode}")
    return os.fsdecode(bytes(result.stdout))


def _has_commit(root: Path, deadline: float) -> bool:
    """Whether HEAD names a commit (False in a repository without commits)."""
    try:
        _run(root, deadline, "rev-parse", "--verify", "--quiet", "HEAD")
    except _GitFailed:
        return False
    return True


def _numstat(text: str) -> list[tuple[str, int | None, int | None]]:
    """``ADDED\\tREMOVED\\tPATH\\0`` records; ``-`` counts (binary) become None."""
    out = []
    for record in text.split("\0"):
        parts = record.split("\t", 2)
        if len(parts) != 3:
            continue
        added, removed, path = parts
        out.append((path, int(added) if added.isdigit() else None, int(removed) if removed.isdigit() else None))
    return out


def _statuses(text: str) -> dict[str, ChangeStatus]:
    """``STATUS\\0PATH\\0`` pairs to a status per path (A added, D deleted, else modified)."""
    fields = text.split("\0")
    out: dict[str, ChangeStatus] = {}
    for status, path in zip(fields[0::2], fields[1::2]):
        out[path] = "added" if status.startswith("A") else "deleted" if status.startswith("D") else "modified"
    return out


def _count_lines(path: Path) -> int | None:
    """Lines of a small text file (a last line without a newline counts); None for a binary,
    large or unreadable one."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_COUNTED_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


__all__ = ["ChangedFile", "RepositoryDirs", "workspace_files", "changed_files", "changed_paths", "repository_dirs", "repository_root"]
