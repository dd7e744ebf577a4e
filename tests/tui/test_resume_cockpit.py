"""A resumed session looks as it did: the screen built from the journal matches the live one.

A session goes through Plan mode (plan, approval, execution that checks steps off and edits a
file), a ``/compact`` and a cancelled command; the app quits; a new app starts on it like
``--continue``. The conversation blocks, the sidebar's plan checklist and changed files are
compared as text. What may differ, and is left out of the comparison: the welcome block's and
the "Resumed session" line (the resumed screen opens with them), and streamed text split into
blocks at other places (the text is compared joined).
"""

from __future__ import annotations

from pathlib import Path

from agent.config.settings import Settings
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session
from tui.screens.plan_screen import PlanScreen
from tui.widgets.blocks import NoticeBlock, ReminderMark, StopBlock, UserBlock, WelcomeBlock
from tui.widgets.compaction_mark import CompactionMark
from tui.widgets.conversation import Conversation
from tui.widgets.sidebar import Sidebar
from tui.widgets.think_block import ThinkBlock
from tui.widgets.tool_block import ToolBlock

SIZE = (120, 40)
STEPS = [
    {"description": "Read calc.add", "files": ["calc.py"], "rationale": "see the bug"},
    {"description": "Fix the sign in add", "files": ["calc.py"], "rationale": "add must add"},
    {"description": "Run the tests", "files": [], "rationale": "check"},
]
REPLIES = [
    {"tool_calls": [{"name": "submit_plan", "arguments": {"title": "Fix add", "steps": STEPS}}]},
    {"tool_calls": [{"name": "update_plan", "arguments": {"step": 1, "status": "done", "note": "read it"}},
                    {"name": "edit", "arguments": {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}}]},
    {"tool_calls": [{"name": "update_plan", "arguments": {"steps": [
        {"step": 2, "status": "done", "note": "fixed"}, {"step": 3, "status": "skipped", "note": "no tests"}]}}]},
    {"content": "Done: **add** adds now."},
    {"for": "summary", "content": "The user asked to fix add; the sign was fixed in calc.py."},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 30"}}]},
    {"content": "not reached"},
]


def describe(app) -> dict:
    """The screen as text: one line per conversation block, the plan checklist, changed files."""
    from tui.widgets.blocks import AssistantBlock, ReasoningBlock

    blocks: list[str] = []
    assistant: list[str] = []

    def flush() -> None:
        if assistant:
            blocks.append("assistant: " + "".join(assistant).strip())
            assistant.clear()

    for block in app.query_one(Conversation).query("*").results():
        if block.parent is not app.query_one(Conversation) and not isinstance(block, ReminderMark):
            continue
        if isinstance(block, AssistantBlock):
            assistant.append(block.text)
            continue
        flush()
        if isinstance(block, WelcomeBlock):
            continue
        if isinstance(block, NoticeBlock):
            if not block.message.startswith("Resumed session"):
                blocks.append(f"notice: {block.message}")
        elif isinstance(block, UserBlock):
            blocks.append(f"user: {block.text}")
        elif isinstance(block, ThinkBlock) or isinstance(block, ReasoningBlock):
            blocks.append(f"reasoning: {block.text}")
        elif isinstance(block, ToolBlock):
            blocks.append(f"tool: {block._title().plain} | {block._meta().plain}")
        elif isinstance(block, CompactionMark):
            blocks.append(f"compaction: {block.text}")
        elif isinstance(block, StopBlock):
            blocks.append(f"stop: {block.reason}")
        elif isinstance(block, ReminderMark):
            blocks.append(f"reminder: {block.text}")
    flush()
    sidebar = app.query_one(Sidebar)
    plan = sidebar.plan_event
    return {"blocks": blocks,
            "plan": [(s.text, s.status) for s in plan.steps] if plan is not None else None,
            "files": sidebar.changed_rows()}


async def test_a_resumed_session_shows_the_screen_it_left(make_app, workspace: Path, ui) -> None:
    from tui.app import OpenCLIApp

    # A small window and tail, so that /compact has something to summarise.
    app, _ = make_app(REPLIES, context_window=16000, compaction={"keep_tail_fraction": 0.02})
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_prepared(pilot, app)
        await pilot.press("shift+tab")  # Plan mode
        await ui.submit(pilot, "fix add in calc.py")
        await ui.wait_turn(pilot, app)
        await ui.wait_for(pilot, lambda: isinstance(app.screen, PlanScreen), what="the plan screen")
        await pilot.press("A")
        await ui.wait_for(pilot, lambda: not isinstance(app.screen, PlanScreen), what="the approval")
        await ui.wait_turn(pilot, app)
        await ui.submit(pilot, "/compact")
        await ui.wait_for(pilot, lambda: bool(app.query(CompactionMark)), what="the compaction mark")
        await ui.wait_turn(pilot, app)
        await ui.submit(pilot, "wait a long time")
        await ui.wait_for(pilot, lambda: any(b.status == "running" for b in app.query(ToolBlock)), what="bash")
        await pilot.pause(0.3)
        await pilot.press("escape")
        await ui.wait_turn(pilot, app)
        await pilot.pause()
        live = describe(app)
    app.session.close()

    session = build_session(workspace, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                            provider=ScriptedProvider([]), interactive=True, resume="latest")
    resumed = OpenCLIApp(session=session, watch_themes=False)
    resumed.animation_level = "none"
    async with resumed.run_test(size=SIZE) as pilot:
        await ui.wait_prepared(pilot, resumed)
        await pilot.pause()
        again = describe(resumed)
    session.close()

    assert any(line.startswith("compaction:") for line in live["blocks"])
    assert "stop: cancelled" in live["blocks"] and live["plan"][2] == ("Run the tests", "skipped")
    assert again["plan"] == live["plan"] and again["files"] == live["files"]
    import difflib
    assert again["blocks"] == live["blocks"], "\n".join(difflib.unified_diff(live["blocks"], again["blocks"], "live", "resumed", lineterm=""))
