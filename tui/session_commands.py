"""Session-level UI actions: the permission-mode key and ``/undo``.

- ``cycle_permission_mode(app)``: ask → auto-edit → full-auto → read-only → ask; the session's
  settings and running loop change at once and the status bar shows it.
- ``undo(app)``: ``session.undo()`` between turns; shows the returned lines and drops the restored
  files from the sidebar's changed-files list (``forget_undone``, also used when a resumed
  conversation is redrawn).

Resuming a session lives in ``resume_view``, the file watcher's bridge in ``watching``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent.config.settings import PermissionMode

if TYPE_CHECKING:
    from .app import OpenCLIApp

#: The order the permission-mode key cycles through.
MODE_CYCLE = [PermissionMode.ASK, PermissionMode.AUTO_EDIT, PermissionMode.FULL_AUTO, PermissionMode.READ_ONLY]


# ------------------------------------------------------------------------------ permission mode
def next_mode(mode: Any) -> PermissionMode:
    """The mode after ``mode`` in ``MODE_CYCLE``."""
    try:
        current = PermissionMode(getattr(mode, "value", mode))
    except ValueError:
        current = PermissionMode.ASK
    return MODE_CYCLE[(MODE_CYCLE.index(current) + 1) % len(MODE_CYCLE)]


def cycle_permission_mode(app: "OpenCLIApp") -> PermissionMode:
    """Switch to the next permission mode now; show it in the status bar and a toast."""
    from .widgets.status_bar import StatusBar

    session = app.session
    mode = next_mode(session.settings.permission_mode)
    session.set_permission_mode(mode)
    app.main_screen.query_one(StatusBar).permission_mode = mode.value
    app.main_screen.query_one(StatusBar).show_sandbox(session)  # read-only mode: read-only sandbox
    app.notify(f"Permission mode: {mode.value}", timeout=3)
    return mode


# ------------------------------------------------------------------------------------------ undo
async def undo(app: "OpenCLIApp") -> None:
    """``/undo``: restore the files the last turn changed and say which."""
    from .widgets.sidebar import Sidebar

    if app.runner.running:
        await app.show_notice("A turn is running: press Esc to stop it, then /undo.", kind="warning")
        return
    try:
        lines = app.session.undo()
    except Exception as exc:  # noqa: BLE001 - shown, the app keeps running
        await app.show_notice(f"Undo failed: {type(exc).__name__}: {exc}", kind="warning")
        return
    await app.show_notice("Undo: " + "; ".join(lines))
    forget_undone(app.main_screen.query_one(Sidebar), lines)


def forget_undone(sidebar: Any, lines: list[str]) -> None:
    """Drop from the sidebar's changed files those an undo restored or deleted (``lines`` as
    returned by ``session.undo()`` and journaled in its ``undo`` event)."""
    for line in lines:
        if not isinstance(line, str):
            continue
        for lead in ("restored ", "deleted "):
            if line.startswith(lead):
                sidebar.forget_change(line[len(lead):].split(" (", 1)[0])
