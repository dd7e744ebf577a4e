"""Snapshot tests of Plan mode: the plan screen over the main screen, and the sidebar checklist
in the middle of carrying out a plan (one step done with a note, one in progress, one file edited
outside the plan). Same rules as test_tui_snapshots.py: 120x36, frozen durations, no blinking."""

from __future__ import annotations

import pytest

from tui.screens.plan_screen import PlanScreen
from tui.widgets.prompt_input import PromptInput

# The demo project at one fixed path: the folder's length is in the system prompt, so in the
# token figure the footer shows.
from .test_tui_snapshots import workspace  # noqa: F401  (a fixture)

SIZE = (120, 36)

SUBMIT = {"tool_calls": [{"name": "submit_plan", "arguments": {
    "title": "Fix add and cover it with a test",
    "steps": [
        {"description": "Read calc.add and find why it subtracts", "files": ["calc.py"],
         "rationale": "confirm the bug before changing anything"},
        {"description": "Change the operator in add from - to +", "files": ["calc.py"],
         "rationale": "add must return the sum"},
        {"description": "Add a test for add with positive and negative numbers", "files": ["tests/test_calc.py"],
         "rationale": "keep the bug from coming back"},
        {"description": "Mention the fix in the README", "files": ["README.md"], "rationale": "users read it"},
    ],
    "risks": ["callers may rely on add subtracting"],
    "assumptions": ["the project has no other add function"],
}}]}


def update(step: int, status: str, note: str | None = None) -> dict:
    args = {"step": step, "status": status}
    if note:
        args["note"] = note
    return {"tool_calls": [{"name": "update_plan", "arguments": args}]}


@pytest.fixture
def plan_app(make_app, ui):
    """``plan_app(replies) -> app`` with a 200k window and frozen durations."""

    def factory(replies):
        app, _ = make_app(replies, context_window=200_000, app_kwargs={"duration_format": ui.frozen_duration})
        return app

    return factory


async def _open_plan(pilot, app, ui) -> None:
    app.query_one(PromptInput).cursor_blink = False
    await ui.wait_prepared(pilot, app)
    await pilot.pause()
    await ui.submit(pilot, "/plan fix add in calc.py and add a test")
    await ui.wait_turn(pilot, app)
    await ui.wait_for(pilot, lambda: isinstance(app.screen, PlanScreen), what="the plan screen")
    await pilot.pause()


class TestPlanMode:
    def test_plan_screen(self, plan_app, ui, snap_compare) -> None:
        app = plan_app([SUBMIT])

        async def run_before(pilot) -> None:
            await _open_plan(pilot, app, ui)
            await pilot.press("down", "down", "down", "s", "up")  # step 4 skipped, step 3 selected
            await pilot.pause()

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)

    def test_sidebar_mid_execution(self, plan_app, ui, snap_compare) -> None:
        replies = [
            SUBMIT,
            update(1, "in_progress"),
            {"tool_calls": [{"name": "read", "arguments": {"path": "calc.py"}}]},
            update(1, "done", "add subtracts: a - b"),
            {"tool_calls": [{"name": "edit", "arguments": {"path": "calc.py", "old_string": "a - b",
                                                             "new_string": "a + b"}}]},
            {"tool_calls": [{"name": "write", "arguments": {"path": "notes.txt", "content": "add fixed\n"}}]},
            update(2, "done", "now returns a + b"),
            update(3, "in_progress"),
            {"content": "Writing the test next."},
        ]
        app = plan_app(replies)

        async def run_before(pilot) -> None:
            await _open_plan(pilot, app, ui)
            await pilot.press("A")
            await ui.wait_turn(pilot, app)
            await pilot.pause()
            await pilot.pause()

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
