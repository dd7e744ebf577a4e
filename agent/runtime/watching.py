"""Undo and file watching for a session: per-turn file checkpoints (``undo``) and the watcher of the
files the agent read and of the git index/HEAD.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..session.records import EventRecord

if TYPE_CHECKING:  # the loop, tools and git code load in prepare(), after the TUI's first paint
    from ..session.checkpoints import Checkpoints


class SessionWatching:
    """The checkpoints and file-watching part of ``AgentSession``."""

    @property
    def checkpoints(self) -> "Checkpoints":
        """Per-turn file checkpoints of this session (``session.checkpoints``)."""
        if self._checkpoints is None:
            from ..session.checkpoints import Checkpoints
            from ..session.journal import sessions_dir

            # Beside the journals (user data), never in the workspace: a sandboxed command may
            # write the workspace, and undo writes what its manifest names, unsandboxed.
            root = sessions_dir(self.workspace) / "checkpoints" / self.session_id
            self._checkpoints = Checkpoints(self.workspace, self.session_id, root=root)
        return self._checkpoints

    def undo(self) -> list[str]:
        """Restore the files changed by the last turn that changed any (``Checkpoints.undo_last_turn``)
        and return one line per file (plus a note when bash ran). Journaled as an ``undo`` event.
        Call between turns, not while one runs. The conversation is kept; the model learns of the
        restored files through the external-change reminder."""
        lines = self.checkpoints.undo_last_turn()
        self.journal.append(EventRecord.undo(lines, time.time()))
        return lines

    def start_watching(self, on_files_changed: "Callable[[list[str]], None] | None" = None,
                       on_git_changed: "Callable[[], None] | None" = None) -> None:
        """Watch the files the agent has read and the git index/HEAD in a daemon thread
        (``session.file_watch``). A change of a read file queues an external-change reminder for the
        next tool result, then ``on_files_changed(paths)`` is called with those files only
        (watcher thread; paths as the agent read them); a git index/HEAD change calls ``on_git_changed()``. Idempotent; prepares first."""
        from ..session.file_watch import FileWatcher, find_git_dir, stamped_paths

        self.prepare()
        if self._watcher is not None:
            return

        def files_changed(paths: list[str]) -> None:
            agent = self.agent
            # Only files whose content really changed outside the agent (its own writes are not
            # reported: the file stamps filter them) reach the caller.
            changed = agent.on_file_changed() if agent is not None else []
            if changed and on_files_changed is not None:
                on_files_changed(changed)

        def watched() -> list[Path]:  # called from the watcher thread
            agent = self.agent
            if agent is None:
                return []
            with agent.stamps_lock:
                return stamped_paths(agent.file_stamps, self.workspace)

        self._watcher = FileWatcher(watched, on_files_changed=files_changed, on_git_changed=on_git_changed,
                                    git_dir=find_git_dir(self.workspace))
        self._watcher.start()

    def stop_watching(self) -> None:
        """Stop the file watcher (if any) and wait briefly for its thread."""
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
