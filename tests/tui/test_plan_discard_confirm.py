"""Esc on the plan screen asks before it discards the plan; Esc in an inline step edit only drops
that edit; "n" (or Esc) goes back to the plan with every edit intact."""

from __future__ import annotations

from agent.plan.model import Plan
from tui.screens.confirm import ConfirmScreen
from tui.screens.plan_screen import PlanScreen

SUBMIT = {"tool_calls": [{"name": "submit_plan", "arguments": {
    "title": "Fix add",
    "steps": [
        {"description": "Read calc.add", "files": ["calc.py"], "rationale": "see the bug"},
        {"description": "Fix the sign in add", "files": ["calc.py"], "rationale": "add must add"},
        {"description": "Document add in the README", "files": ["README.md"], "rationale": "users"},
    ],
}}]}


async def open_plan_screen(pilot, app, ui) -> PlanScreen:
    """Plan a task with /plan and wait for the plan screen."""
    await ui.wait_prepared(pilot, app)
    await ui.submit(pilot, "/plan fix add in calc.py")
    await ui.wait_turn(pilot, app)
    await ui.wait_for(pilot, lambda: isinstance(app.screen, PlanScreen), what="the plan screen")
    await pilot.pause()
    return app.screen


def descriptions(screen: PlanScreen) -> list[str]:
    return [s.description for s in screen.plan.steps]


def question(app) -> str:
    return str(app.screen.query_one("#confirm-question").render())


async def test_esc_asks_and_n_or_esc_go_back(make_app, ui) -> None:
    app, provider = make_app([SUBMIT])
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_plan_screen(pilot, app, ui)
        for answer in ("n", "escape"):
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmScreen)
            assert "Discard this plan?" in question(app)
            await pilot.press(answer)
            await pilot.pause()
            assert app.screen is screen, f"{answer} goes back to the plan"
        assert app.session.plans.proposed is not None
        assert len(provider.requests) == 1


async def test_y_discards_the_plan(make_app, ui) -> None:
    app, provider = make_app([SUBMIT, {"content": "should not run"}])
    async with app.run_test(size=(120, 36)) as pilot:
        await open_plan_screen(pilot, app, ui)
        await pilot.press("escape", "y")
        await pilot.pause()
        assert not isinstance(app.screen, (PlanScreen, ConfirmScreen))
        assert app.session.plan is None and app.session.plans.proposed is None
        assert len(provider.requests) == 1


async def test_enter_discards_the_plan(make_app, ui) -> None:
    app, _ = make_app([SUBMIT])
    async with app.run_test(size=(120, 36)) as pilot:
        await open_plan_screen(pilot, app, ui)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, (PlanScreen, ConfirmScreen))
        assert app.session.plans.proposed is None


async def test_edits_survive_going_back_and_are_approved(make_app, ui) -> None:
    app, provider = make_app([SUBMIT, {"content": "Done."}])
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_plan_screen(pilot, app, ui)
        await pilot.press("down", "enter")  # edit step 2's text
        await pilot.pause()
        screen.query_one("#plan-edit").value = "Fix the sign of add (use +)"
        await pilot.press("enter")
        await pilot.press("down", "d")  # delete step 3
        await pilot.pause()
        edited = ["Read calc.add", "Fix the sign of add (use +)"]
        assert descriptions(screen) == edited and screen.edited

        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "your edits" in question(app)
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen and descriptions(screen) == edited
        assert len(screen.query(".plan-step")) == 2

        planning_requests = len(provider.requests)
        await pilot.press("A")  # the plan screen still works: approve runs the edited plan
        await ui.wait_turn(pilot, app)
        await pilot.pause()
        assert not isinstance(app.screen, PlanScreen)
        messages = provider.requests[planning_requests].messages
        user = [m for m in messages if m["role"] == "user"][-1]["content"]
        text = user if isinstance(user, str) else str(user)
        assert "Fix the sign of add (use +)" in text and "Document add in the README" not in text


async def test_esc_in_an_inline_edit_only_drops_that_edit(make_app, ui) -> None:
    app, _ = make_app([SUBMIT])
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_plan_screen(pilot, app, ui)
        await pilot.press("enter")
        await pilot.pause()
        box = screen.query_one("#plan-edit")
        box.value = ""
        await pilot.press(*"something else")
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and screen.editing is None
        assert descriptions(screen)[0] == "Read calc.add" and not screen.edited
        assert not screen.query("#plan-edit")
        # an added step still being typed goes with its edit, without a question
        await pilot.press("a", *"new step", "escape")
        await pilot.pause()
        assert app.screen is screen and len(screen.plan.steps) == 3
        # the next Esc is about the plan itself
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)


async def test_an_empty_unedited_plan_goes_without_a_question(make_app, ui) -> None:
    app, _ = make_app([])
    results: list[object] = []
    async with app.run_test(size=(120, 36)) as pilot:
        app.push_screen(PlanScreen(Plan(title="Nothing", steps=[])), results.append)
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, (PlanScreen, ConfirmScreen))
    assert results == [None]


async def test_cancel_button_discards_at_once(make_app, ui) -> None:
    app, _ = make_app([SUBMIT])
    async with app.run_test(size=(120, 36)) as pilot:
        await open_plan_screen(pilot, app, ui)
        await pilot.click("#plan-cancel")
        await pilot.pause()
        assert not isinstance(app.screen, (PlanScreen, ConfirmScreen))
        assert app.session.plans.proposed is None
