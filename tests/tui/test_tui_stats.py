"""``/stats`` and the sidebar's Stats tab: figures read from the session log (a scripted session's
own calls, and the history a resumed session's log already holds), and their pictures."""

from __future__ import annotations

import fcntl
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from tui.screens.stats_screen import StatsScreen
from tui.widgets.prompt_input import PromptInput
from tui.widgets.sidebar import Sidebar
from tui.widgets.stats_panel import StatsPanel

SIZE = (120, 36)
FIXED_ID = "20260101-090000-bbbbbb"


def history_records() -> list[dict]:
    """A fixed log: two turns with model calls (one a summary), tool calls, a compaction, a
    guard, a sub-agent and hooks, as an earlier run of the session left it."""
    def call(turn, step, prompt, completion, latency, cost, purpose="main", cached=None):
        return {"ts": 1.0, "type": "model_call_finished", "turn": turn, "step": step, "model": "openai/gpt-4.1",
                "purpose": purpose, "prompt_tokens": prompt, "completion_tokens": completion,
                "cached_prompt_tokens": cached, "latency_s": latency, "ttft_s": 0.4, "cost_usd": cost,
                "outcome": "ok", "usage_estimated": False, "error": ""}

    def tool(turn, step, name, arguments, duration):
        return {"ts": 1.0, "type": "tool_call_finished", "turn": turn, "step": step, "id": f"c{turn}{step}{name}",
                "name": name, "arguments": arguments, "duration_s": duration, "output_lines": 3,
                "output_bytes": 120, "truncated": False, "exit_code": 0 if name == "bash" else None, "outcome": "ok"}

    return [
        {"ts": 1.0, "type": "turn_started", "turn": 1, "step": 0, "model": "openai/gpt-4.1", "prompt": "fix add"},
        call(1, 1, 12000, 300, 2.5, 0.0264),
        tool(1, 1, "read", 'path="calc.py"', 0.01),
        call(1, 2, 12400, 150, 1.5, 0.026, cached=11000),
        tool(1, 2, "bash", 'command="pytest -q"', 4.2),
        tool(1, 2, "grep", 'pattern="def add"', 0.3),
        call(1, 0, 9000, 800, 3.0, 0.0244, purpose="summary"),
        {"ts": 1.0, "type": "compaction_done", "turn": 1, "step": 2, "tokens_before": 15000, "tokens_after": 4000,
         "summarized": 12, "pruned": 0, "aggregated": 0, "tokens_saved": 11000},
        {"ts": 1.0, "type": "turn_finished", "turn": 1, "step": 2, "stop_reason": "done", "usage": {}},
        {"ts": 1.0, "type": "turn_started", "turn": 2, "step": 0, "model": "openai/gpt-4.1", "prompt": "and test"},
        call(2, 1, 5000, 120, 1.0, 0.01096),
        tool(2, 1, "bash", 'command="npm test -- --watch=false"', 12.8),
        {"ts": 1.0, "type": "subagent_started", "turn": 2, "step": 1, "task_id": "t1", "index": 1,
         "description": "find callers", "journal_path": "/x"},
        {"ts": 1.0, "type": "subagent_completed", "turn": 2, "step": 1, "task_id": "t1", "index": 1,
         "duration_s": 8.0, "usage": {"prompt_tokens": 3000, "completion_tokens": 200}, "stop_reason": "done",
         "summary": "two callers"},
        {"ts": 1.0, "type": "hook_finished", "turn": 2, "step": 1, "hook": "verify", "event": "after_run",
         "round": 1, "verdict": "retry", "duration_s": 5.0, "message": "1 failed"},
        {"ts": 1.0, "type": "hook_finished", "turn": 2, "step": 2, "hook": "verify", "event": "after_run",
         "round": 2, "verdict": "accept", "duration_s": 5.0, "message": "ok"},
        {"ts": 1.0, "type": "guard_triggered", "turn": 2, "step": 2, "guard": "stuck", "message": "x"},
        {"ts": 1.0, "type": "turn_finished", "turn": 2, "step": 2, "stop_reason": "done", "usage": {}},
    ]


def write_history(session) -> Path:
    path = session.log_path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in history_records()))
    return path


async def open_stats_tab(pilot, app, ui) -> StatsPanel:
    await pilot.click("#sidebar-tabs #--content-tab-tab-stats")
    panel = app.query_one("#sidebar-stats", StatsPanel)
    await ui.wait_for(pilot, lambda: panel.stats is not None, what="the stats to be read")
    await pilot.pause()
    return panel


class TestFigures:
    async def test_stats_figures_of_a_scripted_session(self, make_app, ui) -> None:
        replies = [
            {"tool_calls": [{"name": "read", "arguments": {"path": "calc.py"}}],
             "usage": {"prompt_tokens": 1000, "completion_tokens": 40}},
            {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}],
             "usage": {"prompt_tokens": 1100, "completion_tokens": 30, "cached_prompt_tokens": 900}},
            {"content": "Done.", "usage": {"prompt_tokens": 1200, "completion_tokens": 10}},
        ]
        app, _ = make_app(replies)
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "look at calc.py")
            await ui.wait_turn(pilot, app)
            await ui.submit(pilot, "/stats")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, StatsScreen) and app.screen.stats is not None,
                              what="the /stats screen")
            stats = app.screen.stats
            assert (stats.turns, stats.model_calls, stats.tool_calls) == (1, 3, 2)
            assert (stats.prompt_tokens, stats.completion_tokens, stats.cached_prompt_tokens) == (3300, 80, 900)
            # gpt-4.1: $2 / $8 per million tokens, cached input $0.50 per million
            expected = (3300 - 900) * 2e-6 + 900 * 0.5e-6 + 80 * 8e-6
            assert stats.cost_usd == pytest.approx(expected) and stats.unpriced_calls == 0
            assert [c.name for c in stats.slowest] == sorted(["read", "bash"], key=lambda n: -next(
                c.duration_s for c in stats.slowest if c.name == n))
            shown = app.screen.query_one("#stats-table").render()
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, StatsScreen)
            # the sidebar's tab shows the same figures, read after the turn ended
            panel = await open_stats_tab(pilot, app, ui)
            text = panel.render().plain
            assert "turns" in text and "3,300" in text and "(900 cached)" in text and "slowest tools" in text
            assert app.query_one(Sidebar).active_tab == "tab-stats"
            assert app.screen.focused is None or isinstance(app.screen.focused, PromptInput)
            assert shown is not None
        app.session.close()

    async def test_a_resumed_history_is_counted_and_the_tab_refreshes_at_turn_end(self, make_app, ui) -> None:
        app, _ = make_app([{"content": "ok", "usage": {"prompt_tokens": 700, "completion_tokens": 7}}])
        write_history(app.session)
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            panel = await open_stats_tab(pilot, app, ui)
            assert panel.stats.turns == 2 and panel.stats.model_calls == 4
            assert panel.stats.subagents == 1 and panel.stats.hook_verdicts == {"retry": 1, "accept": 1}
            await ui.submit(pilot, "one more")
            await ui.wait_turn(pilot, app)
            await ui.wait_for(pilot, lambda: panel.stats.turns == 3, what="the tab to refresh")
            assert panel.stats.model_calls == 5 and panel.stats.prompt_tokens == 12000 + 12400 + 9000 + 5000 + 700
        app.session.close()


@pytest.fixture
def fixed_workspace(monkeypatch):
    """The demo project at one fixed path (the system prompt holds it, and the status bar its
    token count), locked for one test at a time as in the other snapshot tests."""
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
def history_app(fixed_workspace, ui):
    """An app over the fixed workspace whose session log already holds ``history_records``."""
    from agent.config.settings import Settings
    from agent.providers.scripted import ScriptedProvider
    from agent.runtime.build import build_session
    from tui.app import OpenCLIApp

    session = build_session(fixed_workspace, Settings(model="openai/gpt-4.1", permission_mode="full-auto",
                                                      context_window=200_000),
                            provider=ScriptedProvider([]), interactive=True)
    session.session_id = FIXED_ID
    write_history(session)
    app = OpenCLIApp(session=session, watch_themes=False, duration_format=ui.frozen_duration)
    app.animation_level = "none"
    return app


class TestStatsSnapshots:
    def test_stats_tab(self, history_app, snap_compare, ui) -> None:
        app = history_app

        async def run_before(pilot) -> None:
            app.query_one(PromptInput).cursor_blink = False
            await ui.wait_prepared(pilot, app)
            await open_stats_tab(pilot, app, ui)

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)

    def test_stats_screen(self, history_app, snap_compare, ui) -> None:
        app = history_app

        async def run_before(pilot) -> None:
            app.query_one(PromptInput).cursor_blink = False
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "/stats")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, StatsScreen) and app.screen.stats is not None,
                              what="the /stats screen")
            await pilot.pause()

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


class TestBudgetStop:
    async def test_budget_stop_names_the_limit_and_the_figures(self, make_app, ui) -> None:
        from tui.widgets.blocks import StopBlock

        replies = [{"tool_calls": [{"name": "read", "arguments": {"path": "calc.py"}}],
                    "usage": {"prompt_tokens": 900, "completion_tokens": 200}}, {"content": "never sent"}]
        app, provider = make_app(replies, budget={"max_tokens": 1000})
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "look")
            await ui.wait_turn(pilot, app)
            [block] = app.query(StopBlock)
            text = block.render().plain
            assert text.startswith("■ Stopped: budget reached: 1100 tokens used of --max-tokens 1000")
            assert len(provider.requests) == 1
        app.session.close()
