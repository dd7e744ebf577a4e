"""Pilot tests: edit blocks redrawn from the journal of a resumed session show the same diff as
the live ones did, both at start-up (``--continue`` / ``--resume ID``) and after ``/resume``; a
journal written before the diff was journaled still shows the block, without a diff."""

from __future__ import annotations

import json
from pathlib import Path

from agent.config.settings import Settings
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session
from agent.session.journal import sessions_dir
from tui.resume_view import resume_session
from tui.widgets.diff_view import DiffView
from tui.widgets.sidebar import Sidebar
from tui.widgets.tool_block import ToolBlock

EDIT = {"name": "edit", "arguments": {"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}}
SIZE = (120, 36)


async def live_edit_turn(make_app, ui, *, undo: bool = False) -> tuple[str, str]:
    """Run the scripted edit turn in a live app, close it; return (session id, the live diff)."""
    app, _ = make_app([{"content": "Fixing.", "tool_calls": [EDIT]}, {"content": "Fixed."}])
    async with app.run_test(size=SIZE) as pilot:
        await ui.submit(pilot, "fix add")
        await ui.wait_turn(pilot, app)
        [block] = [b for b in app.query(ToolBlock) if b.tool_name == "edit"]
        assert block.status == "ok" and block.diff
        live_diff = block.diff
        if undo:
            app.session.undo()
    app.session.close()  # quit: the journal's lock is released
    return app.session.session_id, live_diff


def edit_block(app) -> ToolBlock:
    [block] = [b for b in app.query(ToolBlock) if b.tool_name == "edit"]
    return block


async def expand(pilot, block: ToolBlock) -> None:
    """Open the block from the keyboard, as a user would (closing it first if it is open)."""
    block.focus()
    await pilot.pause()
    if block.expanded:
        await pilot.press("enter")
        await pilot.pause()
        assert not block.expanded
    await pilot.press("enter")
    await pilot.pause()
    assert block.expanded


def diff_lines(block: ToolBlock) -> list[str]:
    [view] = list(block.query(DiffView))
    return view.render().plain.splitlines()


class TestResumedEditBlocksShowTheirDiff:
    async def test_at_start_like_continue(self, make_app, workspace: Path, ui) -> None:
        from tui.app import OpenCLIApp

        session_id, live_diff = await live_edit_turn(make_app, ui)
        session = build_session(workspace, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                                provider=ScriptedProvider([]), interactive=True, resume="latest")
        assert session.session_id == session_id
        app = OpenCLIApp(session=session, watch_themes=False)  # like `opencli-tui --continue`
        app.animation_level = "none"
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            block = edit_block(app)
            assert block.status == "ok" and block.diff == live_diff
            await expand(pilot, block)
            lines = diff_lines(block)
            assert "-    return a - b" in lines and "+    return a + b" in lines
            assert "+1 -1" in str(block.query_one(".tool-meta").render())
            assert app.query_one(Sidebar).changes == {"calc.py": (1, 1)}
        session.close()

    async def test_after_resume_command(self, make_app, workspace: Path, ui) -> None:
        session_id, live_diff = await live_edit_turn(make_app, ui)
        app, _ = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            assert await resume_session(app, session_id)
            await ui.wait_prepared(pilot, app)
            block = edit_block(app)
            assert block.diff == live_diff
            await expand(pilot, block)
            lines = diff_lines(block)
            assert "-    return a - b" in lines and "+    return a + b" in lines
        app.session.close()

    async def test_an_undone_edit_is_not_listed_as_changed(self, make_app, workspace: Path, ui) -> None:
        session_id, _ = await live_edit_turn(make_app, ui, undo=True)
        app, _ = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            assert await resume_session(app, session_id)
            await ui.wait_prepared(pilot, app)
            assert edit_block(app).diff  # the block still shows what the agent did
            assert "calc.py" not in app.query_one(Sidebar).changes
        app.session.close()

    async def test_old_journal_without_details_shows_the_block_without_a_diff(self, make_app, workspace: Path,
                                                                            ui) -> None:
        session_id, _ = await live_edit_turn(make_app, ui)
        journal = sessions_dir(workspace) / f"{session_id}.jsonl"
        lines = journal.read_text(encoding="utf-8").splitlines()
        kept = [line for line in lines if json.loads(line).get("kind") != "tool_details"]
        assert len(kept) == len(lines) - 1
        journal.write_text("\n".join(kept) + "\n", encoding="utf-8")
        app, _ = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            assert await resume_session(app, session_id)
            await ui.wait_prepared(pilot, app)
            block = edit_block(app)
            assert block.status == "ok" and block.diff is None and block.output
            await expand(pilot, block)
            assert list(block.query(DiffView)) == []
        app.session.close()
