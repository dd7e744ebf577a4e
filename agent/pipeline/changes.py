"""What one round of the loop changed in the workspace (``RoundChanges``).

Two sources: the events of the round (a successful tool result carrying a diff: write, edit) and
a picture of the workspace taken before and after the round, so a file a command (bash) changed
counts too. In a git repository the picture is git's list of changed files with their sizes and
modification times; outside one it is a stat snapshot of the workspace (``stat_snapshot``: size and
mtime of at most ``MAX_SNAPSHOT_FILES`` files, skipping ``SKIPPED_DIRS`` and virtualenvs).
``diff_text`` is the round's diff for the refine review: the tools' diffs, else ``git diff`` of
the files git saw change, else the list of the files the snapshot saw change.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..events import AgentEvent, ToolCallFinished
from ..git_safety import DIFF_FLAGS, safe_argv, safe_env

#: Characters of diff kept for a review request (head and tail).
MAX_DIFF_CHARS = 20_000
#: Files a stat snapshot looks at, at most (the walk stops there, in a fixed order).
MAX_SNAPSHOT_FILES = 20_000
#: Folders a stat snapshot never enters: version control, dependencies, virtualenvs and caches.
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
                          ".pytest_cache", ".ruff_cache", ".tox", ".nox", ".cache", ".gradle", ".opencli",
                          ".direnv", ".eggs", ".idea", ".vscode"})


def stat_snapshot(workspace: Path, max_files: int = MAX_SNAPSHOT_FILES) -> dict[str, tuple[int, int]]:
    """``{relative path: (size in bytes, mtime_ns)}`` of the regular files under ``workspace``,
    walked in sorted order, without following symlinks, skipping ``SKIPPED_DIRS`` and any folder
    holding a ``pyvenv.cfg`` (a virtualenv); at most ``max_files`` files. Unreadable folders are
    skipped. Never raises."""
    found: dict[str, tuple[int, int]] = {}
    stack = [Path(workspace)]
    while stack and len(found) < max_files:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        if folder != Path(workspace) and any(e.name == "pyvenv.cfg" for e in entries):
            continue
        subfolders = []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIPPED_DIRS:
                        subfolders.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    found[os.path.relpath(entry.path, workspace)] = (st.st_size, st.st_mtime_ns)
                    if len(found) >= max_files:
                        break
            except OSError:
                continue
        stack.extend(reversed(subfolders))
    return found


def _fingerprint(workspace: Path) -> dict[str, tuple[int, int]] | None:
    """``{path: (size, mtime_ns)}`` of the files git lists as changed, or None outside git."""
    from ..git_repo import changed_paths, repository_root

    paths = changed_paths(workspace)
    root = repository_root(workspace)
    if paths is None or root is None:
        return None
    found: dict[str, tuple[int, int]] = {}
    for path in paths:
        try:
            st = os.stat(root / path)
            found[path] = (st.st_size, st.st_mtime_ns)
        except OSError:
            found[path] = (-1, 0)  # deleted
    return found


class RoundChanges:
    """Watches one round: ``start()`` before it, ``observe(event)`` for each of its events,
    ``changed()`` after it (True when it changed a file), ``diff_text()`` for its diff."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = Path(workspace)
        self._before: dict[str, tuple[int, int]] | None = None
        self._diffs: list[str] = []
        self._git_paths: list[str] = []
        self._stat_before: dict[str, tuple[int, int]] | None = None
        self._stat_paths: list[str] = []

    def start(self) -> None:
        """Take the before-picture: git's (bounded in time), else a stat snapshot of the workspace."""
        self._before = _fingerprint(self.workspace)
        self._stat_before = stat_snapshot(self.workspace) if self._before is None else None
        self._diffs = []

    def observe(self, event: AgentEvent) -> None:
        """Note a tool result that changed a file (it carries a diff)."""
        if isinstance(event, ToolCallFinished) and event.diff and not event.is_error:
            self._diffs.append(event.diff)

    def changed(self) -> bool:
        """True when the round changed a file: a tool's diff, or the workspace's picture moved
        (git's, else the stat snapshot's: a file added, removed, resized or touched)."""
        after = _fingerprint(self.workspace) if self._before is not None else None
        if after is not None and self._before is not None:
            self._git_paths = sorted(p for p in set(after) | set(self._before) if after.get(p) != self._before.get(p))
        if self._stat_before is not None:
            now = stat_snapshot(self.workspace)
            self._stat_paths = sorted(p for p in set(now) | set(self._stat_before)
                                      if now.get(p) != self._stat_before.get(p))
        return bool(self._diffs or self._git_paths or self._stat_paths)

    def diff_text(self) -> str:
        """The round's diff (see the module docstring), cut to ``MAX_DIFF_CHARS`` characters."""
        text = "\n".join(self._diffs)
        if not text and self._git_paths:
            text = self._git_diff()
        if not text and self._stat_paths:
            text = "\n".join(f"changed: {p}" for p in self._stat_paths)
        if len(text) > MAX_DIFF_CHARS:
            head = MAX_DIFF_CHARS * 3 // 10
            cut = len(text) - MAX_DIFF_CHARS
            text = text[:head] + f"\n[... {cut} chars of diff cut ...]\n" + text[-(MAX_DIFF_CHARS - head):]
        return text

    def _git_diff(self) -> str:
        try:
            argv = safe_argv(self.workspace, ["diff", *DIFF_FLAGS, "--", *self._git_paths])
            done = subprocess.run(argv, cwd=self.workspace, capture_output=True, text=True, errors="replace",
                                  timeout=5, stdin=subprocess.DEVNULL, env=safe_env())
        except (OSError, subprocess.SubprocessError):
            return ""
        listed = "\n".join(f"changed: {p}" for p in self._git_paths)
        return (done.stdout or "").strip() or listed
