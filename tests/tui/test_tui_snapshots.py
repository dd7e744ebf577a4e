"""Snapshot tests (pytest-textual-snapshot): the main screen idle, mid-turn, after a turn that
changed a file, and the permission prompt; a truncated bash block with its badge, the output
viewer, think blocks collapsed and expanded, the step-limit stop, and the sidebar.

Pictures must not depend on time: spinners stand still (``animation_level = "none"``), tool
durations use a frozen formatter, the cursor does not blink, and the workspace folder has a fixed
path (it is in the system prompt, so its length moves the token count in the status bar). Create or refresh the pictures with ``--snapshot-update`` and look at them before
committing (``snapshot_report.html`` shows differences when a test fails).
"""

from __future__ import annotations

import fcntl
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.helpers import tool_call_started
from agent.events import StepStarted, TextDelta, ToolCallFinished, TurnStarted
from agent.git_context import GitCommit, GitSnapshot
from tui.screens.output_viewer import OutputViewerScreen
from tui.screens.permission import PermissionScreen
from tui.widgets.think_block import ThinkBlock
from tui.widgets.tool_block import ToolBlock
from tui.widgets.blocks import UserBlock
from tui.widgets.conversation import Conversation
from tui.widgets.prompt_input import PromptInput

SIZE = (120, 36)


@pytest.fixture
def workspace(monkeypatch):
    """The demo project at one fixed path, ``<temp>/opencli-tui-snapshots/demo-repo``, not under
    pytest's temp folder (its length depends on the user, the run number and the xdist worker),
    and the data folder (journals, saved outputs, whose paths the model sees) beside it. A file
    lock gives the folders to one test at a time, across workers and concurrent runs."""
    from .conftest import fill_demo_repo

    root = Path(tempfile.gettempdir()) / "opencli-tui-snapshots"
    root.mkdir(exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        folder, data = root / "demo-repo", root / "data"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(data, ignore_errors=True)
        monkeypatch.setenv("OPENCLI_DATA_DIR", str(data))
        try:
            yield fill_demo_repo(folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
            shutil.rmtree(data, ignore_errors=True)
            fcntl.flock(lock, fcntl.LOCK_UN)


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
            await handler.handle(tool_call_started("c1", "read", {"path": "calc.py"}))
            await handler.handle(ToolCallFinished(id="c1", name="read", output="1\tdef add(a, b):\n2\t    return a - b\n",
                                                  duration_s=0.01))
            await handler.handle(tool_call_started("c2", "bash", {"command": "pytest -q tests/test_calc.py"}))
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


BIG_LINES = 48213


@pytest.fixture
def big_bash_app(snapshot_app, workspace):
    """An app whose scripted model runs the real ``cat big.txt`` on a 48 213-line file."""
    text = "\n".join(f"line {i:07d} " + "x" * 60 for i in range(BIG_LINES)) + "\n"
    (workspace / "big.txt").write_text(text, encoding="utf-8")
    replies = [{"content": "Let me look at the file.",
                "tool_calls": [{"name": "bash", "arguments": {"command": "cat big.txt"}}]},
               {"content": "The file has **48 213** numbered lines."}]
    return snapshot_app(replies)


@pytest.fixture
def run_big_bash(settle, ui):
    """A ``run_before`` step: run the turn and wait for the badge's line count."""

    async def _run(pilot) -> None:
        app = pilot.app
        await settle(pilot)
        await ui.submit(pilot, "what is in big.txt?")
        await ui.wait_turn(pilot, app, timeout=30)
        block = app.query_one(ToolBlock)
        await ui.wait_for(pilot, lambda: block.saved_lines is not None, what="the line count")
        await pilot.pause()

    return _run


class TestTruncatedOutput:
    def test_truncated_bash_block(self, big_bash_app, run_big_bash, snap_compare) -> None:
        assert snap_compare(big_bash_app, terminal_size=SIZE, run_before=run_big_bash)

    def test_output_viewer(self, big_bash_app, run_big_bash, snap_compare, ui) -> None:
        async def run_before(pilot) -> None:
            app = pilot.app
            await run_big_bash(pilot)
            app.query_one(ToolBlock).focus()
            await pilot.press("v")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, OutputViewerScreen), what="the viewer")
            view = app.screen.view
            await ui.wait_for(pilot, lambda: not view.indexing, what="the index")
            await pilot.press("slash", *"line 0000042", "enter")
            await ui.wait_for(pilot, lambda: view.cursor == 42, what="the match")
            await pilot.pause()

        assert snap_compare(big_bash_app, terminal_size=SIZE, run_before=run_before)


THOUGHT = ("add() subtracts, so test_add fails. Fix the operator in calc.py, keep the change minimal, "
           "then run the tests.")


class TestThink:
    @pytest.fixture
    def think_app(self, snapshot_app):
        replies = [{"tool_calls": [{"name": "think", "arguments": {"thought": THOUGHT}}]},
                   {"content": "I know what to change: `add` uses `-` instead of `+`."}]
        return snapshot_app(replies)

    def test_think_collapsed(self, think_app, settle, snap_compare, ui) -> None:
        async def run_before(pilot) -> None:
            await settle(pilot)
            await ui.submit(pilot, "why does test_add fail?")
            await ui.wait_turn(pilot, pilot.app)

        assert snap_compare(think_app, terminal_size=SIZE, run_before=run_before)

    def test_think_expanded(self, think_app, settle, snap_compare, ui) -> None:
        async def run_before(pilot) -> None:
            await settle(pilot)
            await ui.submit(pilot, "why does test_add fail?")
            await ui.wait_turn(pilot, pilot.app)
            await pilot.click(ThinkBlock)
            await pilot.pause()

        assert snap_compare(think_app, terminal_size=SIZE, run_before=run_before)


class TestStops:
    def test_max_turns_stop(self, snapshot_app, settle, snap_compare, ui) -> None:
        call = {"name": "read", "arguments": {"path": "calc.py"}}
        app = snapshot_app([{"tool_calls": [call]}, {"tool_calls": [call]}, {"content": "never"}], max_turns=1)

        async def run_before(pilot) -> None:
            await settle(pilot)
            await ui.submit(pilot, "read calc.py again and again")
            await ui.wait_turn(pilot, app)
            await pilot.pause()

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


class TestSidebar:
    def test_sidebar(self, snapshot_app, settle, snap_compare, ui) -> None:
        edit = {"name": "edit", "arguments": {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}}
        app = snapshot_app([{"tool_calls": [edit]}, {"content": "Fixed `add`."}])
        # A fixed snapshot (prepare() keeps one that is already there): the picture must not
        # depend on commit hashes or dates.
        status = "\n".join([" M calc.py", "?? notes.txt"] + [f"?? scratch/tmp{i}.txt" for i in range(9)])
        app.session.git = GitSnapshot(
            is_repo=True, root="/work/demo-repo", branch="fix/add-operator", default_branch="main",
            has_commits=True, status=status,
            recent_commits=[GitCommit(sha="3f2a9c1", subject="Add the calculator module"),
                            GitCommit(sha="b71e004", subject="Write a README for the demo project"),
                            GitCommit(sha="09d3e5a", subject="Initial commit")])

        async def run_before(pilot) -> None:
            await settle(pilot)
            await ui.submit(pilot, "fix add")
            await ui.wait_turn(pilot, app)
            await pilot.pause()

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
