"""The sandbox in the TUI: the permission prompt says whether the command runs sandboxed, the
status bar shows the mode (Act: workspace-write, Plan: read-only) or a mark that stays when no
sandbox works here, and a command the sandbox refused is offered to run again unsandboxed, which
happens only after approval."""

from __future__ import annotations

import pytest

from agent.events import ToolCallFinished
from agent.sandbox import SandboxSupport, probe
from agent.sandbox.rerun import DECLINED_TEXT, RERUN_HEADER
from tui.widgets.prompt_input import PromptInput
from tui.widgets.status_bar import StatusBar

needs_sandbox = pytest.mark.skipif(not probe().available, reason=f"no OS sandbox here: {probe().reason}")
SIZE = (120, 36)
WIDE = (170, 36)


def record_finished_calls(app, finished: list) -> None:
    """Wrap the session agent's ``run_turn`` so every ``ToolCallFinished`` lands in ``finished``."""
    original = app.session.agent.run_turn

    def run_turn(prompt, emit, cancel, **kwargs):
        return original(prompt, lambda e: (finished.append(e) if isinstance(e, ToolCallFinished) else None,
                                           emit(e)), cancel, **kwargs)

    app.session.agent.run_turn = run_turn


def bar_text(app) -> str:
    return str(app.query_one("#status-info").render())


@needs_sandbox
def test_permission_prompt_says_the_command_runs_sandboxed(make_app, ui, snap_compare, monkeypatch) -> None:
    from tui.screens.permission import PermissionScreen

    monkeypatch.setenv("OPENCLI_SANDBOX__MODE", "workspace-write")
    app, _ = make_app([{"tool_calls": [{"name": "bash", "arguments": {"command": "pytest -q"}}]}, {"content": "ok"}],
                      permission_mode="ask", context_window=200_000,
                      app_kwargs={"duration_format": ui.frozen_duration})

    async def run_before(pilot) -> None:
        app.query_one(PromptInput).cursor_blink = False
        await ui.wait_prepared(pilot, app)
        await ui.submit(pilot, "run the tests")
        await ui.wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), what="the prompt")
        app.screen.query_one("#permission-prefix").cursor_blink = False
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
    app.runner.cancel()


@needs_sandbox
def test_status_bar_shows_the_sandbox_mode(make_app, ui, snap_compare, monkeypatch) -> None:
    monkeypatch.setenv("OPENCLI_SANDBOX__MODE", "auto")
    app, _ = make_app([], context_window=200_000)

    async def run_before(pilot) -> None:
        app.query_one(PromptInput).cursor_blink = False
        await ui.wait_prepared(pilot, app)
        await pilot.pause()
        assert "· sandbox: workspace-write" in bar_text(app)

    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


@needs_sandbox
async def test_status_bar_follows_plan_mode_and_the_read_only_permission_mode(make_app, ui, monkeypatch) -> None:
    monkeypatch.setenv("OPENCLI_SANDBOX__MODE", "auto")
    app, _ = make_app([], context_window=200_000)
    async with app.run_test(size=WIDE) as pilot:
        await ui.wait_prepared(pilot, app)
        await pilot.pause()
        assert "sandbox: workspace-write" in bar_text(app)
        await pilot.press("shift+tab")
        await ui.wait_for(pilot, lambda: "sandbox: read-only" in bar_text(app), what="Plan mode's sandbox")
        await pilot.press("shift+tab")
        app.session.set_permission_mode("read-only")
        app.query_one(StatusBar).show_sandbox(app.session)
        await ui.wait_for(pilot, lambda: "sandbox: read-only" in bar_text(app), what="read-only's sandbox")
        assert app.session.agent.config.sandbox.mode.value == "read-only"


async def test_unavailable_sandbox_shows_a_mark_that_stays(make_app, ui, monkeypatch) -> None:
    monkeypatch.setenv("OPENCLI_SANDBOX__MODE", "auto")
    monkeypatch.setattr("agent.runtime.sandboxing.probe",
                        lambda: SandboxSupport(False, reason="the kernel (4.19) has no Landlock"))
    app, _ = make_app([], context_window=200_000)
    async with app.run_test(size=(80, 24)) as pilot:  # narrow: droppable parts go, the mark stays
        await ui.wait_prepared(pilot, app)
        await pilot.pause()
        assert "⚠ unsandboxed" in bar_text(app)
        assert app.session.agent.config.sandbox is None and app.session.agent.config.plan_sandbox is None
        assert any("Sandbox unavailable: the kernel (4.19) has no Landlock" in n for n in app.session.startup_notices())


@needs_sandbox
@pytest.mark.parametrize("answer", ["y", "n"])
async def test_refused_command_is_offered_unsandboxed_and_runs_only_after_approval(
        make_app, ui, monkeypatch, tmp_path, answer) -> None:
    from tui.screens.permission import PermissionScreen

    target = tmp_path / "outside" / "made.txt"
    target.parent.mkdir()
    monkeypatch.setenv("OPENCLI_SANDBOX__MODE", "workspace-write")
    app, _ = make_app([{"tool_calls": [{"name": "bash", "arguments": {"command": f"echo made > {target}"}}]},
                       {"content": "ok"}], permission_mode="ask", context_window=200_000)
    finished: list[ToolCallFinished] = []
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_prepared(pilot, app)
        record_finished_calls(app, finished)
        await ui.submit(pilot, "make it")
        await ui.wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), what="the first prompt")
        assert app.screen.sandbox == "runs sandboxed (workspace-write)"
        await pilot.press("y")
        await ui.wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.note,
                          what="the offer to run it unsandboxed")
        assert "sandbox refused something this command tried" in app.screen.note
        assert app.screen.sandbox == "runs unsandboxed"
        assert not target.exists()  # nothing ran unsandboxed before the answer
        await pilot.press(*(["y"] if answer == "y" else ["n", "enter"]))  # n: type a reason, Enter denies
        await ui.wait_turn(pilot, app)
    (result,) = finished
    if answer == "y":
        assert target.read_text() == "made\n"
        assert result.output.startswith(RERUN_HEADER)
    else:
        assert not target.exists()
        assert DECLINED_TEXT in result.output and "[sandbox: the workspace-write sandbox refused" in result.output


@needs_sandbox
async def test_every_unsandboxed_rerun_asks_a_session_answer_counts_as_once(make_app, ui, monkeypatch,
                                                                            tmp_path) -> None:
    """``t`` on the offer to run a refused command unsandboxed counts as once: the next command
    the sandbox refuses is offered again (no line analysis can tell what a refused command would
    do unsandboxed), and the prompt says so."""
    from tui.screens.permission import PermissionScreen

    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.setenv("OPENCLI_SANDBOX__MODE", "workspace-write")
    app, _ = make_app([{"tool_calls": [{"name": "bash", "arguments": {"command": f"echo one > {outside}/1.txt"}}]},
                       {"tool_calls": [{"name": "bash", "arguments": {"command": f"touch {outside}/2.txt"}}]},
                       {"content": "ok"}], permission_mode="ask", context_window=200_000)
    finished: list[ToolCallFinished] = []
    offers: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_prepared(pilot, app)
        record_finished_calls(app, finished)
        await ui.submit(pilot, "make them")
        for expected in ("first", "offer", "second", "second offer"):
            await ui.wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), what=f"the {expected} prompt")
            note = app.screen.note
            offers.append(note)
            await pilot.press("t" if "sandbox refused" in note else "y")
            await pilot.pause()
        await ui.wait_turn(pilot, app)
        assert not isinstance(app.screen, PermissionScreen)
    assert ["sandbox refused" in n for n in offers] == [False, True, False, True], offers
    assert "t and p count as once here" in offers[1]
    assert (outside / "1.txt").read_text() == "one\n" and (outside / "2.txt").exists()
    first, second = finished
    assert first.output.startswith(RERUN_HEADER) and second.output.startswith(RERUN_HEADER)


@needs_sandbox
@pytest.mark.parametrize("width", [100, 80, 60])
async def test_an_active_sandbox_stays_in_a_narrow_status_bar(make_app, ui, monkeypatch, width) -> None:
    """The sandbox mode is what protects the user: at 100, 80 and 60 columns the bar still says
    ``sandbox: workspace-write`` (Plan: ``read-only``); the key hints, the meter and the model
    name give way first."""
    monkeypatch.setenv("OPENCLI_SANDBOX__MODE", "workspace-write")
    app, _ = make_app([], permission_mode="ask", context_window=200_000)
    async with app.run_test(size=(width, 30)) as pilot:
        await ui.wait_prepared(pilot, app)
        await pilot.pause()
        text = bar_text(app)
        assert "sandbox: workspace-write" in text and "ask" in text, text
        await pilot.press("shift+tab")
        await ui.wait_for(pilot, lambda: "sandbox: read-only" in bar_text(app), what="Plan mode's sandbox")
