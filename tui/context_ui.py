"""Context management in the UI: the breakdown of the context, ``/compact``, the inspector.

The app, the context meter, the compaction mark and ``commands`` call these functions; they hold
the behaviour so the shared modules only need a line each:

- ``open_breakdown(app)``: pushes ``ContextBreakdownScreen`` (it computes in a thread worker).
- ``run_compact(app, focus)``: ``/compact [focus]``; runs ``session.compact(focus, emit, cancel)``
  through ``AgentRunner.start_job`` (refused while a turn runs, or when compaction is off).
- ``open_inspector(app, tokens_before, tokens_after)``: pushes ``CompactionInspectorScreen`` on
  the session's journal, at the compaction with these token counts (the latest one by default).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent.context.breakdown import CATEGORIES, ContextBreakdown, compute_breakdown

if TYPE_CHECKING:
    from .session_api import UISession


def open_breakdown(app: Any) -> None:
    """Show the context breakdown screen (once: a second call while it is open does nothing)."""
    from .screens.context_breakdown import ContextBreakdownScreen

    if not isinstance(app.screen, ContextBreakdownScreen):
        app.push_screen(ContextBreakdownScreen(app.session))


def compaction_mode(session: "UISession | None") -> str:
    """The ``[compaction] mode`` of ``session`` (auto when unknown)."""
    if session is None:
        return "auto"
    return str(session.settings.compaction.mode or "auto")


async def run_compact(app: Any, focus: str) -> None:
    """``/compact [focus]``: compact the context now in a worker, or say why not.

    A failed or useless compaction (less than 5% saved) leaves the context unchanged; the core
    says so with a ``Notice`` shown in the conversation.
    """
    if compaction_mode(app.session) == "off":
        await app.show_notice("Compaction is off (--compaction off / [compaction] mode = \"off\").",
                              kind="warning")
        return
    if app.runner.running:
        await app.show_notice("A turn is running: /compact when it ends (or press Esc to stop it).",
                              kind="warning")
        return
    session = app.session

    def job(emit: Any, cancel: Any) -> None:
        session.compact(focus or None, emit, cancel)

    if app.runner.start_job(job, name="compact"):
        from .widgets.status_bar import StatusBar

        app.main_screen.query_one(StatusBar).activity = "compacting..."
        what = f" (focus: {focus})" if focus else ""
        await app.show_progress(f"Compacting the context{what}...")


def open_inspector(app: Any, tokens_before: int | None = None, tokens_after: int | None = None) -> None:
    """Show the compaction inspector on the session's journal, at the compaction with these token
    counts (the latest one when None or not found)."""
    from .screens.compaction_inspector import CompactionInspectorScreen

    if isinstance(app.screen, CompactionInspectorScreen):
        return
    app.push_screen(CompactionInspectorScreen(app.session.journal_path, tokens_before=tokens_before,
                                              tokens_after=tokens_after))


__all__ = ["CATEGORIES", "ContextBreakdown", "compaction_mode", "compute_breakdown", "open_breakdown",
           "open_inspector", "run_compact"]
