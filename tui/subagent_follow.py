"""Following a sub-agent's journal while it runs, for its read-only screen
(``screens.subagent_view.SubagentViewScreen``).

``follow_journal(app, screen, path, running)`` draws the journal's records as ``resume_view``
redraws a resumed session (the same ``_Replay`` and ``EventHandler``), then, while ``running()``
is true and the screen is open, reads the records written since every ``POLL_S`` seconds and
draws those too: the screen updates as the sub-agent's messages and tool results arrive. A tool
call whose result is not written yet stays running; only once the sub-agent has ended are the
blocks still open closed (a journal that stops there: the call was cancelled).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .app import OpenCLIApp

#: How often a running sub-agent's journal is read again (seconds).
POLL_S = 0.25


async def follow_journal(app: "OpenCLIApp", screen: object, path: str, running: Callable[[], bool]) -> None:
    """Fill ``screen`` from the journal at ``path`` and keep it up to date while ``running()``
    (module docstring). An empty ``path`` (a sub-agent that never started) or an unreadable
    file becomes a notice. Journal warnings (a torn last line) are shown once, from the last read."""
    from agent.session.resume import load_session

    from .event_handler import EventHandler
    from .resume_view import MAX_REBUILT_MESSAGES, _Replay
    from .widgets.blocks import NoticeBlock

    conversation = screen.conversation
    if not path:
        await conversation.add(NoticeBlock("This sub-agent never started: it was cancelled while it waited."))
        return
    handler = EventHandler(app, conversation, screen.status, app.runner, app.duration_format)
    replay: _Replay | None = None
    done = 0
    while True:
        live = running()  # read before the journal: a last read after the end sees all of it
        try:
            loaded = load_session(Path(path))
        except OSError as exc:
            if replay is None:
                await conversation.add(NoticeBlock(f"Cannot read {path}: {exc.strerror or exc}", kind="warning"))
                return
            loaded = None
        if loaded is not None:
            if replay is None:
                replay = _Replay(app.session, loaded, handler, max(0, len(loaded.messages) - MAX_REBUILT_MESSAGES))
            replay.resumed = loaded  # the typed tool results written since
            records = loaded.records
            if not live:
                for warning in loaded.warnings:
                    await conversation.add(NoticeBlock(warning, kind="warning"))
            for record in records[done:]:
                await replay.record(record)
            done = max(done, len(records))
            conversation.scroll_end(animate=False)
        if not live or not screen.is_attached:
            break
        await asyncio.sleep(POLL_S)
    await handler.close_open_blocks()
    conversation.scroll_end(animate=False)
