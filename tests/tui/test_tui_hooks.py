"""The pipeline in the TUI: a refine round shows as hook blocks in the conversation (a failed
review, then the accepted one), expandable to the review's points; the turn's effort hint is in
the status bar; verify asks once in ask mode through the permission screen."""

from __future__ import annotations

import asyncio

from tui.screens.permission import PermissionScreen
from tui.widgets.hook_block import HookBlock
from tui.widgets.status_bar import StatusBar


def write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write", "arguments": {"path": path, "content": content}}]}


def test_refine_round_shows_hook_blocks_and_the_effort(make_app, ui):
    replies = [write("greet.py", "def hello(): ...\n"), {"content": "Added."},
               {"content": "1. Name it greet()."},
               write("greet.py", "def greet(): ...\n"), {"content": "Renamed."}, {"content": "ACCEPT"}]
    app, provider = make_app(replies, model="openai/o3-mini", pipeline={"refine": True})

    async def run() -> None:
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "add greet() in greet.py")
            await ui.wait_turn(pilot, app)
            blocks = list(app.query(HookBlock))
            assert [(b.hook, b.verdict, b.round) for b in blocks] == [("refine", "retry", 1), ("refine", "accept", 2)]
            assert blocks[0].header().plain.startswith("✗ refine · 1. Name it greet().")
            blocks[0].focus()
            await pilot.press("enter")
            await pilot.pause()
            assert blocks[0].expanded and "Name it greet()" in str(blocks[0]._body.render())
            assert app.query_one(StatusBar).effort == "medium"
            assert "effort medium" in app.query_one(StatusBar).info_text().plain

    asyncio.run(run())
    assert [r.purpose for r in provider.requests].count("refine") == 2


def test_verify_asks_through_the_permission_screen_in_ask_mode(make_app, ui, workspace):
    (workspace / "Makefile").write_text("test:\n\t@echo all good\n")
    replies = [{"tool_calls": [{"name": "edit", "arguments": {"path": "calc.py", "old_string": "a - b",
                                                              "new_string": "a + b"}}]}, {"content": "Fixed."}]
    app, _ = make_app(replies, permission_mode="auto-edit", verify={"enabled": True})

    async def run() -> None:
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "fix add")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), what="the verify prompt")
            await pilot.press("y")
            await ui.wait_turn(pilot, app)
            blocks = list(app.query(HookBlock))
            assert [(b.hook, b.verdict) for b in blocks] == [("verify", "accept")]
            assert blocks[0].message == "make test"

    asyncio.run(run())


def test_verify_failed_turn_ends_with_a_stop_line(make_app, ui, workspace):
    (workspace / "Makefile").write_text("test:\n\t@echo 1 failed; exit 1\n")
    edit = {"tool_calls": [{"name": "edit", "arguments": {"path": "calc.py", "old_string": "a - b",
                                                          "new_string": "a + b"}}]}
    again = {"tool_calls": [{"name": "edit", "arguments": {"path": "calc.py", "old_string": "a + b",
                                                           "new_string": "b + a"}}]}
    app, _ = make_app([edit, {"content": "Fixed."}, again, {"content": "Fixed again."}], verify={"enabled": True})

    async def run() -> None:
        from tui.widgets.blocks import StopBlock

        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "fix add")
            await ui.wait_turn(pilot, app)
            assert [(b.verdict, b.message) for b in app.query(HookBlock)] == [
                ("retry", "1 failed · round 1 of 2"), ("fail", "1 failed · round 2 of 2 · no rounds left")]
            stops = list(app.query(StopBlock))
            assert [s.reason for s in stops] == ["verify_failed"]
            assert "the tests still fail" in str(stops[0].render())

    asyncio.run(run())
