"""Snapshot of the pipeline's hook blocks in the conversation: a verify round that failed (its
test output expanded), the verify that passed in round 2, a refine review still running, and the
turn's effort hint in the status bar. Same rules as test_tui_snapshots.py: 120x36, frozen
durations, no blinking; the blocks are drawn from events fed to the handler."""

from __future__ import annotations

from agent.events import HookFinished, HookStarted, StepStarted, TextDelta, TurnStarted
from tui.widgets.blocks import UserBlock
from tui.widgets.conversation import Conversation
from tui.widgets.hook_block import HookBlock
from tui.widgets.status_bar import StatusBar

from .test_tui_snapshots import SIZE, settle, snapshot_app, workspace  # noqa: F401  (fixtures)

FAILED_OUTPUT = ("F                                                                        [100%]\n"
                 "____________________________________ test_add ____________________________________\n"
                 "    def test_add():\n>       assert add(2, 3) == 5\nE       assert -1 == 5\n"
                 "FAILED tests/test_calc.py::test_add - assert -1 == 5\n1 failed in 0.02s")


async def feed_hook_turn(app, pilot) -> None:
    handler = app.handler
    await app.query_one(Conversation).add(UserBlock("fix add in calc.py"))
    await handler.handle(TurnStarted(session_id="s", model="openai/o3-mini", prompt="", reasoning_effort="medium"))
    await handler.handle(StepStarted(step=1))
    await handler.handle(TextDelta(text="I changed `add` to return the sum."))
    await handler.handle(HookStarted(hook="verify", event="after_run", round=1))
    await handler.handle(HookFinished(hook="verify", event="after_run", round=1, verdict="retry", duration_s=2.1,
                                      message="1 failed · round 1 of 2", detail=FAILED_OUTPUT))
    await handler.handle(StepStarted(step=2))
    await handler.handle(TextDelta(text="The test imports the old name; fixed it."))
    await handler.handle(HookStarted(hook="verify", event="after_run", round=2))
    await handler.handle(HookFinished(hook="verify", event="after_run", round=2, verdict="accept", duration_s=2.1,
                                      message="pytest · 1 passed"))
    await handler.handle(HookStarted(hook="refine", event="after_run", round=2))
    await pilot.pause()


def test_hook_blocks(snapshot_app, settle, snap_compare) -> None:  # noqa: F811
    app = snapshot_app([])

    async def run_before(pilot) -> None:
        await settle(pilot)
        await feed_hook_turn(app, pilot)
        blocks = list(app.query(HookBlock))
        assert [b.header().plain for b in blocks] == [
            "✗ verify · 1 failed · round 1 of 2 · 1.2s ▸", "✓ verify · pytest · 1 passed · 1.2s", "⋯ refine · running"]
        blocks[0].action_toggle()
        await pilot.pause()
        await pilot.pause()
        assert "effort medium" in app.query_one(StatusBar).info_text().plain

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_hook_block_of_the_last_failing_round(snapshot_app, settle, snap_compare) -> None:  # noqa: F811
    """The last verify round still failing shows ``fail`` (no rounds left), not ``retry``; a
    verify command that could not run shows a warning."""
    app = snapshot_app([])

    async def run_before(pilot) -> None:
        await settle(pilot)
        handler = app.handler
        await app.query_one(Conversation).add(UserBlock("fix add in calc.py"))
        await handler.handle(TurnStarted(session_id="s", model="openai/o3-mini", prompt="", reasoning_effort="medium"))
        await handler.handle(HookStarted(hook="verify", event="after_run", round=2))
        await handler.handle(HookFinished(hook="verify", event="after_run", round=2, verdict="fail", duration_s=2.1,
                                          message="1 failed · round 2 of 2 · no rounds left", detail=FAILED_OUTPUT))
        await handler.handle(HookStarted(hook="verify", event="after_run", round=1))
        await handler.handle(HookFinished(hook="verify", event="after_run", round=1, verdict="error", duration_s=0.1,
                                          message="`tox` could not run (exit 127: command not found); set "
                                                  "verify.command; no further round"))
        await pilot.pause()
        blocks = list(app.query(HookBlock))
        assert [b.header().plain for b in blocks] == [
            "✗ verify · failed: 1 failed · round 2 of 2 · no rounds left · 1.2s ▸",
            "⚠ verify · error: `tox` could not run (exit 127: command not found); set verify.command; no further "
            "round · 1.2s"]
        assert blocks[0].has_class("-failed") and blocks[1].has_class("-warning")

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
