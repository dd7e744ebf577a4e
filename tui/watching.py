"""The file watcher's bridge to the TUI: start and stop the session's watcher, and show what it saw.

``start_watching(app)`` / ``stop_watching(app)``: ``session.start_watching`` with callbacks that
post ``WatchEvent`` to the app from the watcher thread (a new git snapshot and git's changed files
for the sidebar, and the external-change paths). The runtime calls back only with files that
really changed outside the agent (its own writes are filtered by the file stamps), so each path is
shown as is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from .app import OpenCLIApp


class WatchEvent(Message):
    """Posted from the watcher thread: ``paths`` changed on disk (files the agent read) and/or a
    fresh ``git`` snapshot and ``changes`` (``WorkspaceChanges``) for the sidebar (None when not
    taken)."""

    def __init__(self, paths: list[str] | None = None, git: Any = None, changes: Any = None) -> None:
        super().__init__()
        self.paths = list(paths or [])
        self.git = git
        self.changes = changes


def start_watching(app: "OpenCLIApp") -> None:
    """Start the session's file/git watcher (after ``prepare``; idempotent). Its callbacks run on
    the watcher thread and only post ``WatchEvent`` messages to the app."""
    session = app.session
    if not session.is_prepared:
        return
    workspace = session.workspace

    def snapshot() -> Any:
        try:
            from agent.git_context import git_snapshot

            return git_snapshot(workspace)
        except Exception:  # noqa: BLE001 - the sidebar keeps the old state
            return None

    def files_changed(paths: list[str]) -> None:
        # Only files that really changed outside the agent (the runtime filters its own writes).
        app.post_message(WatchEvent(paths=list(dict.fromkeys(paths)), git=snapshot(), changes=session.changed_files()))

    def git_changed() -> None:
        app.post_message(WatchEvent(git=snapshot(), changes=session.changed_files()))

    try:
        session.start_watching(on_files_changed=files_changed, on_git_changed=git_changed)
    except Exception as exc:  # noqa: BLE001 - watching is a nicety
        app.notify(f"Not watching files: {exc}", severity="warning", timeout=5)


def stop_watching(app: "OpenCLIApp") -> None:
    """Stop the session's watcher, if any."""
    if app.session is not None:  # None: the app closes before a session was open
        app.session.stop_watching()


def on_watch_event(app: "OpenCLIApp", event: WatchEvent) -> None:
    """Refresh the sidebar's git section and say which read files changed on disk."""
    from pathlib import Path

    from .widgets.sidebar import Sidebar

    sidebar = app.main_screen.query_one(Sidebar)
    if event.git is not None:
        sidebar.set_git(event.git, live=True)
    if event.changes is not None:
        sidebar.set_git_changes(event.changes)
    if event.paths:
        root = Path(app.session.workspace)
        names = []
        for path in event.paths:
            try:
                names.append(str(Path(path).relative_to(root)))
            except ValueError:
                names.append(str(path))
        app.notify("Changed on disk: " + ", ".join(names[:5]) + (" …" if len(names) > 5 else "")
                   + " (the agent will be reminded at its next tool result)", timeout=5)
    sidebar.refresh(layout=True)
