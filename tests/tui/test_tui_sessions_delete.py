"""``/sessions`` lists the project's sessions and deletes the chosen one after confirmation."""

from __future__ import annotations

import json

from agent.session.journal import sessions_dir
from tui.screens.confirm import ConfirmScreen
from tui.screens.sessions_screen import SessionsScreen


async def test_sessions_command_lists_and_deletes_after_confirmation(make_app, ui, workspace) -> None:
    app, _ = make_app([])
    other = sessions_dir(workspace) / "20261101-000000-eeeeee.jsonl"
    other.parent.mkdir(parents=True, exist_ok=True)
    other.write_text(json.dumps({"kind": "message", "message": {"role": "user", "content": "old task"}}) + "\n")
    async with app.run_test(size=(140, 36)) as pilot:
        await ui.submit(pilot, "/sessions")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        assert [row[0] for row in screen.rows] == ["20261101-000000-eeeeee"]
        await pilot.press("enter")  # choose the highlighted session
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # not deleted without a yes
        await pilot.pause()
        assert other.exists()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert not other.exists() and screen.deleted == ["20261101-000000-eeeeee"]
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, SessionsScreen)
