"""A tool block renders from the typed tool result: a live bash truncation shows the line and byte
counts the tool computed (no stat or recount of the saved file), and denied/cancelled come from the
result's outcome."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import tool_call_started
from agent.events import ToolCallFinished, ToolResult
from tui.widgets.tool_block import ToolBlock

SIZE = (120, 36)


async def test_the_badge_uses_the_counts_the_tool_computed(make_app, workspace: Path, ui) -> None:
    saved = workspace / "gone.txt"  # never written: the block must not read it
    app, _ = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_prepared(pilot, app)
        await app.handler.handle(tool_call_started("c1", "bash", {"command": "make"}))
        await app.handler.handle(ToolCallFinished(id="c1", name="bash", output="head\n[... cut ...]\ntail",
                                                  result=ToolResult(truncated=True, saved_path=str(saved),
                                                                    output_lines=48213, output_bytes=1_200_000)))
        block = app.query_one(ToolBlock)
        assert (block.saved_size, block.saved_lines, block.saved_error) == (1_200_000, 48213, None)
        assert "48" in block.badge_text() and "lines" in block.badge_text()
    app.session.close()


async def test_denied_and_cancelled_come_from_the_outcome(make_app, ui) -> None:
    app, _ = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_prepared(pilot, app)
        for call_id, outcome in (("d", "denied"), ("c", "cancelled"), ("e", "error")):
            await app.handler.handle(tool_call_started(call_id, "edit", {"path": "a.py"}))
            await app.handler.handle(ToolCallFinished(id=call_id, name="edit", output="some text",
                                                      result=ToolResult(outcome=outcome)))
        blocks = {b.call_id: b for b in app.query(ToolBlock)}
        assert blocks["d"].status == "error" and blocks["d"].denied and "denied" in str(blocks["d"]._meta())
        assert blocks["c"].status == "cancelled"
        assert blocks["e"].status == "error" and not blocks["e"].denied
    app.session.close()


async def test_a_focused_block_carries_a_mark(make_app, ui) -> None:
    """The block Enter and v act on is marked: a thick accent bar on its left, which an
    unfocused block (whatever its status) does not have."""
    from tui.widgets.tool_block import ToolBlock

    app, _ = make_app([{"tool_calls": [{"name": "bash", "arguments": {"command": "false"}},
                                       {"name": "bash", "arguments": {"command": "true"}}]},
                       {"content": "done"}])
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.submit(pilot, "run two commands")
        await ui.wait_turn(pilot, app)
        failed, passed = app.query(ToolBlock)
        failed.focus()
        await pilot.pause()
        assert failed.styles.border_left[0] == "thick" and failed.has_focus
        assert passed.styles.border_left[0] != "thick"
        passed.focus()
        await pilot.pause()
        assert passed.styles.border_left[0] == "thick" and failed.styles.border_left[0] != "thick"
