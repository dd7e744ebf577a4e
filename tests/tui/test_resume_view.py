"""The resumed conversation looks like the live one: an approved plan shows the live "Plan
approved" line (not the instruction sent to the model), the "Resumed session" line appears once,
reminder marks come back under their tool block, tool blocks keep their outcome, duration and exit
code, and the picker leaves empty sessions out."""

from __future__ import annotations

import threading
from pathlib import Path

from textual.widgets import OptionList

from agent.config.settings import Settings
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session
from agent.session.journal import sessions_dir
from tui.screens.plan_screen import PlanScreen
from tui.screens.session_picker import SessionPickerScreen
from tui.resume_view import resume_session
from tui.widgets.blocks import NoticeBlock, ReminderMark, UserBlock
from tui.widgets.conversation import Conversation
from tui.widgets.tool_block import ToolBlock

SIZE = (120, 36)
EDIT = {"name": "edit", "arguments": {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}}
SUBMIT = {"tool_calls": [{"name": "submit_plan", "arguments": {
    "title": "Fix add",
    "steps": [
        {"description": "Read calc.add", "files": ["calc.py"], "rationale": "see the bug"},
        {"description": "Fix the sign in add", "files": ["calc.py"], "rationale": "add must add"},
        {"description": "Run the tests", "files": [], "rationale": "check"},
    ],
    "risks": [], "assumptions": [],
}}]}


def notices(app) -> list[str]:
    return [block.message for block in app.query(NoticeBlock)]


def recorded_session(workspace: Path, prompt: str):
    """A closed session whose one turn was ``prompt`` answered "hi"."""
    session = build_session(workspace, Settings(model="openai/gpt-4.1"),
                            provider=ScriptedProvider([{"content": "hi"}]), interactive=False)
    session.run_turn(prompt, lambda event: None, threading.Event())
    session.close()
    return session


def started_on(workspace: Path, ref: str):
    """An app started on a resumed session, like ``opencli-tui --continue`` / ``--resume ID``."""
    from tui.app import OpenCLIApp

    session = build_session(workspace, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                            provider=ScriptedProvider([]), interactive=True, resume=ref)
    app = OpenCLIApp(session=session, watch_themes=False)
    app.animation_level = "none"
    return app


class TestApprovedPlan:
    async def test_resumed_view_shows_the_live_approval_line(self, make_app, workspace: Path, ui) -> None:
        app, _ = make_app([SUBMIT, {"content": "Done: add adds."}])
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            await pilot.press("shift+tab")  # Plan mode
            await ui.submit(pilot, "fix add in calc.py")
            await ui.wait_turn(pilot, app)
            await ui.wait_for(pilot, lambda: isinstance(app.screen, PlanScreen), what="the plan screen")
            await pilot.press("A")  # approve
            await ui.wait_for(pilot, lambda: not isinstance(app.screen, PlanScreen), what="the approval")
            await ui.wait_turn(pilot, app)
            live = [n for n in notices(app) if n.startswith("Plan approved")]
            live_prompts = [b.text for b in app.query(UserBlock)]
        app.session.close()
        assert live == ["Plan approved: Fix add (3 steps). Carrying it out; the sidebar shows progress."]

        resumed = started_on(workspace, "latest")
        async with resumed.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, resumed)
            prompts = [b.text for b in resumed.query(UserBlock)]
            assert prompts == live_prompts == ["fix add in calc.py"]
            assert not any("Carry it out now" in text for text in prompts)
            assert [n for n in notices(resumed) if n.startswith("Plan approved")] == live
            children = list(resumed.query_one(Conversation).children)
            line = next(b for b in resumed.query(NoticeBlock) if b.message.startswith("Plan approved"))
            user = resumed.query(UserBlock).first()
            assert children.index(user) < children.index(line), "in the conversation's order"
        resumed.session.close()


class TestResumedNotices:
    async def test_resumed_session_line_is_shown_once(self, make_app, workspace: Path, ui) -> None:
        first = recorded_session(workspace, "hello")
        with first.journal_path.open("ab") as fh:  # a torn last line: one warning
            fh.write(b'{"kind": "message", "message": {"ro')
        app = started_on(workspace, first.session_id)
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            lines = notices(app)
            assert len([n for n in lines if n.startswith(f"Resumed session {first.session_id}")]) == 1
            assert len([n for n in lines if "torn or not JSON" in n]) == 1
            assert [b.text for b in app.query(UserBlock)] == ["hello"]
        app.session.close()


class TestReminderMarks:
    async def live_turn(self, make_app, ui) -> tuple[str, list[str]]:
        app, _ = make_app([{"tool_calls": [EDIT]}, {"content": "Fixed."}])
        async with app.run_test(size=SIZE) as pilot:
            await ui.submit(pilot, "fix add")
            await ui.wait_turn(pilot, app)
            marks = [m.text for m in app.query(ReminderMark)]
        app.session.close()
        assert marks, "the edit got a reminder live"
        return app.session.session_id, marks

    @staticmethod
    def marks_under_edit(app) -> list[str]:
        children = list(app.query_one(Conversation).children)
        [edit] = [b for b in app.query(ToolBlock) if b.tool_name == "edit"]
        after = children[children.index(edit) + 1:]
        marks = []
        for widget in after:
            if not isinstance(widget, ReminderMark):
                break
            marks.append(widget.text)
        return marks

    async def test_marks_come_back_at_start(self, make_app, workspace: Path, ui) -> None:
        session_id, live = await self.live_turn(make_app, ui)
        app = started_on(workspace, session_id)
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            assert self.marks_under_edit(app) == live
        app.session.close()

    async def test_marks_come_back_after_resume_command(self, make_app, workspace: Path, ui) -> None:
        session_id, live = await self.live_turn(make_app, ui)
        app, _ = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            assert await resume_session(app, session_id)
            await ui.wait_prepared(pilot, app)
            assert self.marks_under_edit(app) == live
        app.session.close()


class TestToolOutcomes:
    CALLS = {"tool_calls": [EDIT, {"name": "bash", "arguments": {"command": "echo hi; exit 3"}},
                            {"name": "read", "arguments": {"path": "missing.py"}}]}

    @staticmethod
    def blocks(app) -> list[tuple]:
        return [(b.tool_name, b.status, b.denied, b.exit_code, b.duration_s, str(b._meta()))
                for b in app.query(ToolBlock)]

    async def test_resumed_blocks_show_the_live_outcomes_durations_and_exit_codes(self, make_app, workspace: Path,
                                                                                  ui) -> None:
        app, _ = make_app([self.CALLS, {"content": "Done."}])
        async with app.run_test(size=SIZE) as pilot:
            await ui.submit(pilot, "fix add")
            await ui.wait_turn(pilot, app)
            live = self.blocks(app)
        app.session.close()
        assert [(name, status, code) for name, status, _, code, *_ in live] == [
            ("edit", "ok", None), ("bash", "ok", 3), ("read", "error", None)]  # a non-zero exit is not a failed call
        assert all(duration is not None for *_, duration, _ in live)
        resumed_app = started_on(workspace, app.session.session_id)
        async with resumed_app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, resumed_app)
            assert self.blocks(resumed_app) == live
        resumed_app.session.close()


class TestPicker:
    async def test_picker_leaves_empty_sessions_out(self, make_app, workspace: Path, ui) -> None:
        kept = recorded_session(workspace, "fix add")
        empty = build_session(workspace, Settings(model="openai/gpt-4.1"), provider=ScriptedProvider([]),
                              interactive=False)
        empty.prepare()  # launched, nothing typed: journaled but empty
        empty.close()
        assert len([p for p in sessions_dir(workspace).iterdir() if not p.name.endswith(".log.jsonl")]) == 2
        app, _ = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "/resume")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, SessionPickerScreen), what="the picker")
            options = app.screen.query_one(OptionList)
            assert [options.get_option_at_index(i).id for i in range(options.option_count)] == [kept.session_id]
            assert "no task yet" not in options.get_option_at_index(0).prompt.plain
        app.session.close()
