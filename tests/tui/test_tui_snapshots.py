"""Snapshot tests (pytest-textual-snapshot): the main screen idle, mid-turn, after a turn that
changed a file, and the permission prompt.

Pictures must not depend on time: spinners stand still (``animation_level = "none"``), tool
durations use a frozen formatter, the cursor does not blink, and the workspace folder has a fixed
name. Create or refresh the pictures with ``--snapshot-update`` and look at them before
committing (``snapshot_report.html`` shows differences when a test fails).
"""

from __future__ import annotations

import pytest

from agent.events import StepStarted, TextDelta, ToolCallFinished, ToolCallStarted, TurnStarted
from tui.screens.permission import PermissionScreen
from tui.widgets.blocks import UserBlock
from tui.widgets.conversation import Conversation
from tui.widgets.prompt_input import PromptInput

SIZE = (120, 36)


@pytest.fixture
def snapshot_app(make_app, ui):
    """``snapshot_app(replies, **settings) -> app`` with a 200k window and frozen durations."""

    def factory(replies, **settings):
        app, _ = make_app(replies, context_window=200_000, app_kwargs={"duration_format": ui.frozen_duration},
                          **settings)
        return app

    return factory


@pytest.fixture
def settle(ui):
    """A ``run_before`` step: stop the cursor blinking and wait for ``prepare()``."""

    async def _settle(pilot) -> None:
        app = pilot.app
        app.query_one(PromptInput).cursor_blink = False
        await ui.wait_prepared(pilot, app)
        await pilot.pause()

    return _settle


class TestMainScreen:
    def test_idle(self, snapshot_app, settle, snap_compare) -> None:
        app = snapshot_app([])
        assert snap_compare(app, terminal_size=SIZE, run_before=settle)

    def test_mid_turn(self, snapshot_app, settle, snap_compare) -> None:
        app = snapshot_app([])

        async def run_before(pilot) -> None:
            await settle(pilot)
            handler = app.handler
            # The turn is drawn from events fed to the handler, so the picture is exact.
            await app.query_one(Conversation).add(UserBlock("Why does test_add fail?"))
            await handler.handle(TurnStarted(session_id="s", model="openai/gpt-4.1", prompt=""))
            await handler.handle(StepStarted(step=1))
            for piece in ("I'll look at `calc.py` ", "and run the tests.\n\n", "- read the code\n",
                          "- run **pytest**\n"):
                await handler.handle(TextDelta(text=piece))
            await handler.handle(ToolCallStarted(id="c1", name="read", arguments={"path": "calc.py"}))
            await handler.handle(ToolCallFinished(id="c1", name="read", output="1\tdef add(a, b):\n2\t    return a - b\n",
                                                  duration_s=0.01))
            await handler.handle(ToolCallStarted(id="c2", name="bash", arguments={"command": "pytest -q tests/test_calc.py"}))
            await pilot.pause()
            await pilot.pause()

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)

    def test_after_an_edit(self, snapshot_app, settle, snap_compare, ui) -> None:
        replies = [
            {"content": "The bug is in `add`: it subtracts.",
             "tool_calls": [{"name": "edit", "arguments": {"path": "calc.py", "old_string": "a - b",
                                                           "new_string": "a + b"}}]},
            {"tool_calls": [{"name": "bash", "arguments": {"command": "printf '[bold]1 passed[/]\\n'"}}]},
            {"content": "Fixed: `add` now returns **a + b**, and the check passes."},
        ]
        app = snapshot_app(replies)

        async def run_before(pilot) -> None:
            await settle(pilot)
            await ui.submit(pilot, "fix add in calc.py")
            await ui.wait_turn(pilot, app)
            await pilot.pause()

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)

    def test_permission_prompt(self, snapshot_app, settle, snap_compare, ui) -> None:
        edit = {"path": "calc.py", "old_string": "    return a - b", "new_string": "    return a + b  # [fixed]"}
        replies = [{"tool_calls": [{"name": "edit", "arguments": edit}]}, {"content": "ok"}]
        app = snapshot_app(replies, permission_mode="ask")

        async def run_before(pilot) -> None:
            await settle(pilot)
            await ui.submit(pilot, "rebuild")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), what="the prompt")
            await pilot.pause()

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
        app.runner.cancel()


class TestLightTheme:
    def test_idle_light(self, snapshot_app, settle, snap_compare) -> None:
        app = snapshot_app([], theme="opencli-light")
        assert snap_compare(app, terminal_size=SIZE, run_before=settle)
