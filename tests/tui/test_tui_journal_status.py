"""A journal that stopped writing shows a persistent status-bar mark and a warning; the mark goes
when writes resume."""

from __future__ import annotations

from agent.events import JournalStatus
from tui.widgets.blocks import NoticeBlock
from tui.widgets.status_bar import StatusBar


async def test_journal_failure_marks_the_status_bar_until_writes_resume(make_app) -> None:
    app, _ = make_app([])
    async with app.run_test(size=(160, 30)) as pilot:
        await app.handler.handle(JournalStatus(state="retrying", message="session journal x could not be written"))
        await app.handler.handle(JournalStatus(state="failed", message="session journaling stopped: disk full"))
        await pilot.pause()
        bar = app.query_one(StatusBar)
        assert bar.journal_failed and "journal not saved" in bar.info_text().plain
        notices = [str(b.render()) for b in app.query(NoticeBlock)]
        assert any("session journaling stopped" in n for n in notices)
        await app.handler.handle(JournalStatus(state="ok", message="session journal writes resumed"))
        await pilot.pause()
        assert not bar.journal_failed
