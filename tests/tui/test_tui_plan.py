"""Plan mode in the TUI: the Plan/Act toggle, the planning pass opening the plan screen, editing
the plan (text, add, delete, reorder, skip), approval running the edited plan with the sidebar
checking steps off, cancel, the editor seam, and the large-request hint heuristic."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.events import PlanStepState, PlanUpdated
from tui.plan_mode import PlanHint, editor_command, large_request_reason, named_files
from tui.screens.plan_screen import PlanScreen, StepRow
from tui.widgets.plan_checklist import plan_checklist_text, plan_section_title
from tui.widgets.sidebar import SidebarSection
from tui.widgets.status_bar import StatusBar

SUBMIT = {"tool_calls": [{"name": "submit_plan", "arguments": {
    "title": "Fix add",
    "steps": [
        {"description": "Read calc.add", "files": ["calc.py"], "rationale": "see the bug"},
        {"description": "Fix the sign in add", "files": ["calc.py"], "rationale": "add must add"},
        {"description": "Document add in the README", "files": ["README.md"], "rationale": "users"},
    ],
    "risks": ["callers may rely on the bug"],
    "assumptions": ["nobody subtracts with add"],
}}]}


def update(step: int, status: str, note: str | None = None) -> dict:
    args = {"step": step, "status": status}
    if note:
        args["note"] = note
    return {"tool_calls": [{"name": "update_plan", "arguments": args}]}


async def open_plan_screen(pilot, app, ui, task: str = "fix add in calc.py") -> PlanScreen:
    """Switch to Plan mode, submit ``task`` and wait for the plan screen."""
    await ui.wait_prepared(pilot, app)
    await pilot.press("shift+tab")
    assert app.plan_mode.active
    await ui.submit(pilot, task)
    await ui.wait_turn(pilot, app)
    await ui.wait_for(pilot, lambda: isinstance(app.screen, PlanScreen), what="the plan screen")
    await pilot.pause()
    return app.screen


def descriptions(screen: PlanScreen) -> list[str]:
    return [s.description for s in screen.plan.steps]


# -- pure helpers -------------------------------------------------------------------------------
class TestLargeRequestHeuristic:
    @pytest.mark.parametrize("text", [
        "Refactor the parser into smaller modules",
        "please migrate the settings to pydantic v2",
        "Redesign the sidebar",
        "replace all print calls with logging",
        "Replace ALL uses of os.path",
    ])
    def test_large_words(self, text: str) -> None:
        assert large_request_reason(text) is not None

    def test_long_request(self) -> None:
        assert "words long" in large_request_reason("word " * 120)
        assert large_request_reason("word " * 60) is None

    def test_several_files(self) -> None:
        assert large_request_reason("fix a.py, tui/b.py and docs/c.md") == "names 3 files"
        assert large_request_reason("fix the bug in calc.py and README.md") is None

    def test_small_requests(self) -> None:
        for text in ("fix the typo in README.md", "what does calc.add do?", "add a test for add",
                     "see https://example.com/a.py https://example.com/b.py https://example.com/c.py"):
            assert large_request_reason(text) is None, text

    def test_words_match_whole_words(self) -> None:
        assert large_request_reason("the refactored code is fine, explain it") is None

    def test_named_files(self) -> None:
        assert named_files("edit src/app.py and README.md, then app.py again; v1.2 is out") == [
            "src/app.py", "README.md", "app.py"]


def test_editor_command_order() -> None:
    assert editor_command({"VISUAL": "code -w", "EDITOR": "nano"}) == ["code", "-w"]
    assert editor_command({"VISUAL": " ", "EDITOR": "nano -R"}) == ["nano", "-R"]
    assert editor_command({}) == ["vi"]
    assert editor_command({"EDITOR": "'/opt/my editor/bin/ed' --wait"}) == ["/opt/my editor/bin/ed", "--wait"]


def test_checklist_text() -> None:
    event = PlanUpdated(title="Fix add", steps=[
        PlanStepState(id="1", text="Read", status="done", note="looked at add"),
        PlanStepState(id="2", text="Fix", status="in_progress"),
        PlanStepState(id="3", text="Docs", status="skipped"),
        PlanStepState(id="4", text="Tests"),
    ], undeclared_files=["setup.cfg"])
    plain = plan_checklist_text(event, 30).plain
    assert "✓ 1 Read" in plain and "looked at add" in plain
    assert "◐ 2 Fix" in plain and "– 3 Docs" in plain and "○ 4 Tests" in plain
    assert "⚠ edited outside the plan:\n  setup.cfg" in plain
    assert "⚠ edited outside the plan: setup.cfg" in plan_checklist_text(event, 60).plain
    assert plan_section_title(event) == "Plan · 1/4 done, 1 skipped"
    spans = plan_checklist_text(event, 30).spans
    assert any("bold" in str(s.style) for s in spans)  # the step in progress stands out


# -- the app --------------------------------------------------------------------------------------
async def test_shift_tab_toggles_modes(make_app, ui) -> None:
    app, _ = make_app([])
    async with app.run_test() as pilot:
        status = app.query_one(StatusBar)
        assert status.mode == "Act"
        await pilot.press("shift+tab")
        assert app.plan_mode.active and status.mode == "Plan"
        assert " Plan " in status.info_text().plain
        await pilot.press("shift+tab")
        assert not app.plan_mode.active and status.mode == "Act"


async def test_start_in_plan_mode(make_app) -> None:
    app, _ = make_app([], app_kwargs={"start_in_plan_mode": True})
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.query_one(StatusBar).mode == "Plan"


async def test_plan_prompt_opens_the_plan_screen(make_app, ui, workspace: Path) -> None:
    app, provider = make_app([SUBMIT])
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_plan_screen(pilot, app, ui)
        assert descriptions(screen) == ["Read calc.add", "Fix the sign in add", "Document add in the README"]
        assert len(list(screen.query(StepRow))) == 3
        names = {t["function"]["name"] for t in provider.requests[0].tools}
        assert {"submit_plan", "update_plan", "write", "edit"} <= names  # one tool list in both modes
        assert provider.requests[0].messages[-1]["content"].startswith("<mode>\n# Plan mode\n")
        assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
        # A proposed plan is not a conversation block nor a sidebar checklist.
        assert not app.main_screen.query_one("#sidebar-plan", SidebarSection).display


async def test_plan_command_from_act_mode(make_app, ui) -> None:
    app, _ = make_app([SUBMIT])
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_prepared(pilot, app)
        await ui.submit(pilot, "/plan fix add")
        await ui.wait_turn(pilot, app)
        await ui.wait_for(pilot, lambda: isinstance(app.screen, PlanScreen), what="the plan screen")
        assert not app.plan_mode.active


async def test_no_plan_shows_why(make_app, ui) -> None:
    app, _ = make_app([{"content": "I need more details before planning."}])
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_prepared(pilot, app)
        await ui.submit(pilot, "/plan do it")
        await ui.wait_turn(pilot, app)
        await pilot.pause()
        assert not isinstance(app.screen, PlanScreen)
        notices = " ".join(str(w.render()) for w in app.query("NoticeBlock"))
        assert "No plan: I need more details" in notices


async def test_edit_add_delete_reorder_skip(make_app, ui) -> None:
    app, _ = make_app([SUBMIT])
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_plan_screen(pilot, app, ui)
        # edit step 2's text
        await pilot.press("down", "enter")
        await pilot.pause()
        box = screen.query_one("#plan-edit")
        box.value = ""
        await pilot.press(*"Fix the sign of add", "enter")
        await pilot.pause()
        assert descriptions(screen)[1] == "Fix the sign of add"
        # add a step after it
        await pilot.press("a")
        await pilot.pause()
        await pilot.press(*"Add a test", "enter")
        await pilot.pause()
        assert descriptions(screen) == ["Read calc.add", "Fix the sign of add", "Add a test",
                                        "Document add in the README"]
        # an added step left empty is dropped; Esc drops an edit
        await pilot.press("a", "escape")
        await pilot.pause()
        assert len(screen.plan.steps) == 4 and isinstance(app.screen, PlanScreen)
        # reorder: the new step up, then down again with J, then up with alt+up
        assert screen.selected == 2
        await pilot.press("K")
        await pilot.pause()
        assert descriptions(screen)[1] == "Add a test" and screen.selected == 1
        await pilot.press("J")
        await pilot.pause()
        assert descriptions(screen)[2] == "Add a test"
        await pilot.press("alt+up")
        await pilot.pause()
        assert descriptions(screen)[1] == "Add a test"
        # delete the first step
        await pilot.press("up", "d")
        await pilot.pause()
        assert descriptions(screen) == ["Add a test", "Fix the sign of add", "Document add in the README"]
        # mark the last one skipped (and back)
        await pilot.press("down", "down", "s")
        await pilot.pause()
        assert screen.plan.steps[2].status == "skipped"
        await pilot.press("s")
        await pilot.pause()
        assert screen.plan.steps[2].status == "pending"
        await pilot.press("s")
        assert len(list(screen.query(StepRow))) == 3


async def test_move_buttons(make_app, ui) -> None:
    app, _ = make_app([SUBMIT])
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_plan_screen(pilot, app, ui)
        await pilot.click("#plan-down-0")
        await pilot.pause()
        assert descriptions(screen)[:2] == ["Fix the sign in add", "Read calc.add"]
        await pilot.click("#plan-up-2")
        await pilot.pause()
        assert descriptions(screen)[1:] == ["Document add in the README", "Read calc.add"]


async def test_approve_runs_the_edited_plan_and_the_sidebar_checks_steps_off(make_app, ui, workspace: Path) -> None:
    replies = [
        SUBMIT,
        update(1, "in_progress"),
        {"tool_calls": [{"name": "read", "arguments": {"path": "calc.py"}}]},
        update(1, "done", "read it"),
        {"tool_calls": [{"name": "edit", "arguments": {"path": "calc.py", "old_string": "a - b",
                                                         "new_string": "a + b"}}]},
        update(2, "done", "sign fixed"),
        {"content": "Done: add adds."},
    ]
    app, provider = make_app(replies)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_plan_screen(pilot, app, ui)
        await pilot.press("down", "down", "s")  # skip the README step
        await pilot.press("up", "e")
        await pilot.pause()
        screen.query_one("#plan-edit").value = "Fix the sign in add (use +)"
        await pilot.press("enter")
        await pilot.pause()
        planning_requests = len(provider.requests)
        await pilot.press("A")
        await ui.wait_turn(pilot, app)
        await pilot.pause()
        assert not isinstance(app.screen, PlanScreen)
        first = provider.requests[planning_requests]
        user = [m for m in first.messages if m["role"] == "user"][-1]["content"]
        content = user if isinstance(user, str) else str(user)
        assert "Fix the sign in add (use +)" in content and "(they edited it)" in content
        assert "3. [-] Document add in the README" in content
        assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
        section = app.main_screen.query_one("#sidebar-plan", SidebarSection)
        assert section.display
        body = section.body_text().plain
        assert "✓ 1 Read calc.add" in body and "✓ 2 Fix the sign in add" in body
        assert "sign fixed" in body and "– 3 Document" in body
        assert section.title == "Plan · 2/3 done, 1 skipped"
        assert app.session.plan is not None and app.session.plan.steps[1].status == "done"
        assert not app.plan_mode.active  # back to Act after approval


async def test_sidebar_updates_during_the_run(make_app, ui) -> None:
    replies = [SUBMIT, update(1, "in_progress"), update(1, "done"), update(2, "in_progress"),
               {"content": "stopping here"}]
    app, _ = make_app(replies)
    seen: list[str] = []
    async with app.run_test(size=(120, 36)) as pilot:
        await open_plan_screen(pilot, app, ui)
        sidebar = app.main_screen.query_one("#sidebar")
        original = sidebar.set_plan

        def spy(event):
            original(event)
            if event is not None:
                seen.append(" ".join(s.status for s in event.steps))

        sidebar.set_plan = spy
        await pilot.press("A")
        await ui.wait_turn(pilot, app)
        await pilot.pause()
    assert seen[0] == "pending pending pending"
    assert "in_progress pending pending" in seen and "done pending pending" in seen
    assert seen[-1] == "done in_progress pending"


async def test_cancel_changes_nothing(make_app, ui, workspace: Path) -> None:
    app, provider = make_app([SUBMIT, {"content": "should not run"}])
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_plan_screen(pilot, app, ui)
        await pilot.press("d")  # edits are dropped with the plan
        await pilot.press("escape", "y")  # Esc asks before discarding the plan
        await pilot.pause()
        assert not isinstance(app.screen, PlanScreen)
        assert app.session.plan is None and app.session.plans.proposed is None
        assert len(provider.requests) == 1
        assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
        assert sorted(p.name for p in workspace.iterdir() if not p.name.startswith(".")) == ["README.md", "calc.py"]
        assert not app.main_screen.query_one("#sidebar-plan", SidebarSection).display
        assert screen.plan is not None


async def test_cancel_button(make_app, ui) -> None:
    app, _ = make_app([SUBMIT])
    async with app.run_test(size=(120, 36)) as pilot:
        await open_plan_screen(pilot, app, ui)
        await pilot.click("#plan-cancel")
        await pilot.pause()
        assert not isinstance(app.screen, PlanScreen) and app.session.plans.proposed is None


async def test_editor_seam_rewrites_the_plan(make_app, ui) -> None:
    app, _ = make_app([SUBMIT])
    seen: list[str] = []

    def fake_editor(path: Path) -> None:
        text = path.read_text(encoding="utf-8")
        seen.append(text)
        text = text.replace("Read calc.add", "Read calc.add and its callers")
        text = text.replace("\n## Risks", "4. [ ] Run the tests\n   Files: `tests/`\n\n## Risks")
        path.write_text(text, encoding="utf-8")

    async with app.run_test(size=(120, 36)) as pilot:
        app.plan_mode.editor_runner = fake_editor
        screen = await open_plan_screen(pilot, app, ui)
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert seen and seen[0].startswith("# Fix add") and "1. [ ] Read calc.add" in seen[0]
        assert descriptions(screen) == ["Read calc.add and its callers", "Fix the sign in add",
                                        "Document add in the README", "Run the tests"]
        assert screen.plan.steps[3].files == ["tests/"] and screen.plan.risks == ["callers may rely on the bug"]
        assert len(list(screen.query(StepRow))) == 4


async def test_empty_editor_file_cancels(make_app, ui) -> None:
    app, _ = make_app([SUBMIT])
    async with app.run_test(size=(120, 36)) as pilot:
        app.plan_mode.editor_runner = lambda path: path.write_text("  \n", encoding="utf-8")
        await open_plan_screen(pilot, app, ui)
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert not isinstance(app.screen, PlanScreen)
        assert app.session.plans.proposed is None


async def test_large_request_hint(make_app, ui) -> None:
    app, _ = make_app([{"content": "ok"}, {"content": "ok"}])
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_prepared(pilot, app)
        await ui.submit(pilot, "refactor the calc module")
        await ui.wait_turn(pilot, app)
        hint = app.plan_mode.hint()
        assert isinstance(hint, PlanHint) and "refactor" in hint.reason
        assert not app.plan_mode.active  # never automatic
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert app.plan_mode.hint() is None
        await ui.submit(pilot, "refactor it again")
        await ui.wait_turn(pilot, app)
        assert app.plan_mode.hint() is not None
        await pilot.press("shift+tab")  # switching to Plan mode hides it
        await pilot.pause()
        assert app.plan_mode.active and app.plan_mode.hint() is None
