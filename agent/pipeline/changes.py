"""What one round of the loop changed in the workspace (``RoundChanges``).

Two sources: the events of the round (a successful tool result carrying a diff: write, edit) and,
in a git repository, git's list of changed files with their sizes and modification times, taken
before and after the round (so a file a command changed counts too). ``diff_text`` is the
round's diff for the refine review: the tools' diffs, else ``git diff`` of the files git saw change.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..events import AgentEvent, ToolCallFinished
from ..git_safety import DIFF_FLAGS, safe_argv, safe_env

#: Characters of diff kept for a review request (head and tail).
MAX_DIFF_CHARS = 20_000


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

    def start(self) -> None:
        """Take the before-picture (runs git, bounded in time)."""
        self._before = _fingerprint(self.workspace)
        self._diffs = []

    def observe(self, event: AgentEvent) -> None:
        """Note a tool result that changed a file (it carries a diff)."""
        if isinstance(event, ToolCallFinished) and event.diff and not event.is_error:
            self._diffs.append(event.diff)

    def changed(self) -> bool:
        """True when the round changed a file: a tool's diff, or git's picture moved."""
        after = _fingerprint(self.workspace) if self._before is not None else None
        if after is not None and self._before is not None:
            self._git_paths = sorted(p for p in set(after) | set(self._before) if after.get(p) != self._before.get(p))
        return bool(self._diffs or self._git_paths)

    def diff_text(self) -> str:
        """The round's diff (see the module docstring), cut to ``MAX_DIFF_CHARS`` characters."""
        text = "\n".join(self._diffs)
        if not text and self._git_paths:
            text = self._git_diff()
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
