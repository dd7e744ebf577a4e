"""Pilot tests of the permission prompt in ``ask`` mode: allow once, deny with a reason."""

from __future__ import annotations

from textual.widgets import Input

from tui.screens.permission import PermissionScreen
from tui.widgets.tool_block import ToolBlock

WRITE_CALL = {"name": "write", "arguments": {"path": "notes.txt", "content": "hello [bold]world[/]\n"}}


async def _wait_modal(ui, pilot, app) -> PermissionScreen:
    await ui.wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), what="the permission prompt")
    await pilot.pause()
    return app.screen


class TestPermissionPrompt:
    async def test_allow_once_runs_the_tool(self, make_app, workspace, ui) -> None:
        app, provider = make_app([{"tool_calls": [WRITE_CALL]}, {"content": "Written."}], permission_mode="ask")
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "write notes")
            screen = await _wait_modal(ui, pilot, app)
            assert screen.tool_name == "write"
            await pilot.press("y")
            await ui.wait_turn(pilot, app)
            assert not isinstance(app.screen, PermissionScreen)
            tool = app.query_one(ToolBlock)
            assert tool.status == "ok", tool.output
        assert (workspace / "notes.txt").read_text() == "hello [bold]world[/]\n"
        assert len(provider.requests) == 2

    async def test_deny_with_reason_reaches_the_model(self, make_app, workspace, ui) -> None:
        app, provider = make_app([{"tool_calls": [WRITE_CALL]}, {"content": "Understood."}], permission_mode="ask")
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "write notes")
            screen = await _wait_modal(ui, pilot, app)
            reason = screen.query_one("#permission-reason", Input)
            reason.focus()
            reason.value = "use docs/notes.md instead"
            await pilot.press("enter")
            await ui.wait_turn(pilot, app)
            tool = app.query_one(ToolBlock)
            assert tool.status == "error"
        assert not (workspace / "notes.txt").exists()
        tool_messages = [m for m in provider.requests[-1].messages if m["role"] == "tool"]
        assert "use docs/notes.md instead" in tool_messages[-1]["content"]

    async def test_deny_key_without_reason(self, make_app, ui) -> None:
        app, provider = make_app([{"tool_calls": [WRITE_CALL]}, {"content": "ok"}], permission_mode="ask")
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "write notes")
            await _wait_modal(ui, pilot, app)
            await pilot.press("n")
            await ui.wait_turn(pilot, app)
        tool_messages = [m for m in provider.requests[-1].messages if m["role"] == "tool"]
        assert "did not allow" in tool_messages[-1]["content"]

    async def test_escape_in_the_app_while_asking_cancels_the_turn(self, make_app, ui) -> None:
        app, provider = make_app([{"tool_calls": [WRITE_CALL]}, {"content": "never"}], permission_mode="ask")
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "write notes")
            await _wait_modal(ui, pilot, app)
            await app.action_cancel_turn()
            await ui.wait_turn(pilot, app)
            assert not isinstance(app.screen, PermissionScreen)
            assert app.handler.turn_finished.stop_reason == "cancelled"
        assert len(provider.requests) == 1
