"""The sub-agent timeline above the prompt and the read-only conversation of one sub-agent:
cards side by side with status, time and tokens; F3, arrows, Enter and clicks; the conversation
replayed from the sub-agent's journal with the main pane's blocks; snapshots of both."""

from __future__ import annotations

import pytest

from agent.providers.scripted import ScriptedProvider
from tui.screens.subagent_view import SubagentViewScreen
from tui.widgets.blocks import AssistantBlock, UserBlock
from tui.widgets.prompt_input import PromptInput
from tui.widgets.subagent_timeline import SubagentCard, SubagentTimeline
from tui.widgets.tool_block import ToolBlock

SIZE = (120, 36)


def _task(description, **extra):
    return {"name": "task", "arguments": {"description": description, "prompt": f"Do: {description}", **extra}}


REPLIES = [
    {"tool_calls": [_task("find add"), _task("find the tests", max_turns=1)]},
    {"content": "One found, one ran out of steps."},
    {"for": "subagent", "task": 1, "tool_calls": [{"name": "grep", "arguments": {"pattern": "def add"}}],
     "usage": {"prompt_tokens": 1200, "completion_tokens": 40}},
    {"for": "subagent", "task": 1, "content": "`add` is defined in **calc.py:1**.",
     "usage": {"prompt_tokens": 1300, "completion_tokens": 20}},
    {"for": "subagent", "task": 2, "tool_calls": [{"name": "glob", "arguments": {"pattern": "test_*.py"}}]},
    {"for": "subagent", "task": 2, "tool_calls": [{"name": "glob", "arguments": {"pattern": "tests/*"}}]},
]


async def _run_turn(pilot, app, ui):
    await ui.wait_prepared(pilot, app)
    await ui.submit(pilot, "look around")
    await ui.wait_turn(pilot, app)
    await ui.wait_for(pilot, lambda: len(app.query(SubagentCard)) == 2 and
                      not any(c.running for c in app.query(SubagentCard)), what="both cards ended")


async def test_timeline_shows_each_subagent_with_its_status_time_and_tokens(make_app, ui):
    app, _ = make_app(REPLIES, app_kwargs={"duration_format": ui.frozen_duration})
    async with app.run_test(size=SIZE) as pilot:
        timeline = app.query_one(SubagentTimeline)
        assert not timeline.display  # hidden until a turn starts sub-agents
        await _run_turn(pilot, app, ui)
        assert timeline.display
        first, second = app.query(SubagentCard)
        assert (first.index, first.description, first.status, first.tokens) == (1, "find add", "done", 2560)
        assert (second.index, second.status) == (2, "max_turns")
        assert "turn cap" in second.message
        assert "1.2s" in str(first.render())
        # a new turn clears it
        await ui.submit(pilot, "again")
        await ui.wait_turn(pilot, app)
        assert not app.query(SubagentCard) and not timeline.display


async def test_timeline_collapses_and_f3_then_enter_opens_a_subagent_read_only(make_app, ui):
    app, _ = make_app(REPLIES, app_kwargs={"duration_format": ui.frozen_duration})
    async with app.run_test(size=SIZE) as pilot:
        await _run_turn(pilot, app, ui)
        timeline = app.query_one(SubagentTimeline)
        await pilot.click(timeline.query_one("_Header"))
        assert timeline.has_class("-collapsed")
        await pilot.click(timeline.query_one("_Header"))
        assert not timeline.has_class("-collapsed")
        await pilot.press("f3", "c")  # c on a card collapses; the focus stays on the timeline
        await pilot.pause()
        assert timeline.has_class("-collapsed") and not isinstance(app.focused, PromptInput)
        assert app.focused is timeline.query_one("_Header")
        await pilot.press("c")  # c again expands, the focus on the first card
        await pilot.pause()
        assert not timeline.has_class("-collapsed")
        assert isinstance(app.focused, SubagentCard) and app.focused.index == 1
        await pilot.press("c")
        await pilot.pause()
        assert timeline.has_class("-collapsed")
        await pilot.press("f3")  # expands and focuses the first card
        await pilot.pause()
        assert not timeline.has_class("-collapsed")
        assert isinstance(app.focused, SubagentCard) and app.focused.index == 1
        await pilot.press("right")
        assert app.focused.index == 2
        await pilot.press("left")
        await pilot.press("enter")
        await ui.wait_for(pilot, lambda: isinstance(app.screen, SubagentViewScreen), what="the sub-agent screen")
        screen = app.screen
        await ui.wait_for(pilot, lambda: bool(screen.query(AssistantBlock)), what="the replayed conversation")
        assert [b.text for b in screen.query(UserBlock)] == ["Do: find add"]
        (tool,) = screen.query(ToolBlock)
        assert tool.tool_name == "grep" and tool.status == "ok"
        assert "calc.py:1" in screen.query(AssistantBlock).last().text
        await pilot.press("q")
        await pilot.pause()
        assert not isinstance(app.screen, SubagentViewScreen)


async def test_clicking_a_card_opens_that_subagent(make_app, ui):
    app, _ = make_app(REPLIES, app_kwargs={"duration_format": ui.frozen_duration})
    async with app.run_test(size=SIZE) as pilot:
        await _run_turn(pilot, app, ui)
        second = list(app.query(SubagentCard))[1]
        await pilot.click(second)
        await ui.wait_for(pilot, lambda: isinstance(app.screen, SubagentViewScreen), what="the sub-agent screen")
        assert app.screen.title_text == "Sub-agent 2: find the tests"
        await ui.wait_for(pilot, lambda: len(app.screen.query(ToolBlock)) == 1, what="its tool block")


@pytest.fixture
def settled_turn(ui):
    async def run_before(pilot):
        from tui.widgets.prompt_input import PromptInput

        app = pilot.app
        app.query_one(PromptInput).cursor_blink = False
        await _run_turn(pilot, app, ui)
        await pilot.pause()

    return run_before


def test_timeline_snapshot(snap_compare, make_app, ui, settled_turn):
    app, _ = make_app(REPLIES, context_window=200_000, app_kwargs={"duration_format": ui.frozen_duration})
    assert snap_compare(app, terminal_size=SIZE, run_before=settled_turn)


def test_timeline_snapshot_while_running(snap_compare, make_app, ui):
    from agent.events import SubagentProgress, SubagentStarted

    app, _ = make_app([], context_window=200_000, app_kwargs={"duration_format": ui.frozen_duration})

    async def run_before(pilot):
        from tui.widgets.prompt_input import PromptInput

        app.query_one(PromptInput).cursor_blink = False
        await ui.wait_prepared(pilot, app)
        for n, title in enumerate(["map the config loading", "find every caller of decide()", "read the README"], 1):
            await app.handler.handle(SubagentStarted(task_id=f"c{n}", index=n, description=title, journal_path=""))
            await app.handler.handle(SubagentProgress(task_id=f"c{n}", index=n, step=2, tokens=1500 * n,
                                                      last_tool="grep"))
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_subagent_view_snapshot(snap_compare, make_app, ui, settled_turn):
    app, _ = make_app(REPLIES, context_window=200_000, app_kwargs={"duration_format": ui.frozen_duration})

    async def run_before(pilot):
        await settled_turn(pilot)
        await pilot.press("f3", "enter")
        await ui.wait_for(pilot, lambda: isinstance(app.screen, SubagentViewScreen)
                          and bool(app.screen.query(AssistantBlock)), what="the replayed conversation")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


class _HoldingProvider(ScriptedProvider):
    """Scripted replies (a scripted provider: prepare() looks nothing up), but every sub-agent
    request waits until its cancel is set (Esc)."""

    def stream(self, request, cancel):
        if request.purpose == "subagent":
            cancel.wait(30)
            return
        yield from super().stream(request, cancel)


async def test_esc_cancels_the_running_subagents_and_their_cards_say_so(workspace, ui):
    from agent.config.settings import Settings
    from agent.runtime.build import build_session
    from tui.app import OpenCLIApp

    provider = _HoldingProvider([{"tool_calls": [_task("one"), _task("two")]},
                                 {"for": "subagent", "content": "never"}, {"for": "subagent", "content": "never"}])
    session = build_session(workspace, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                            provider=provider, interactive=True)
    app = OpenCLIApp(session=session, watch_themes=False, duration_format=ui.frozen_duration)
    app.animation_level = "none"
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_prepared(pilot, app)
        await ui.submit(pilot, "go")
        await ui.wait_for(pilot, lambda: len(app.query(SubagentCard)) == 2, what="two running cards")
        assert all(card.running for card in app.query(SubagentCard))
        await pilot.press("escape")
        await ui.wait_turn(pilot, app)
        await ui.wait_for(pilot, lambda: not any(c.running for c in app.query(SubagentCard)), what="cards to end")
        assert [card.status for card in app.query(SubagentCard)] == ["cancelled", "cancelled"]
        blocks = list(app.query(ToolBlock))
        assert [b.status for b in blocks] == ["cancelled", "cancelled"]



async def test_a_subagent_cancelled_before_it_started_gets_a_card_with_its_title(make_app, ui):
    from agent.events import SubagentFailed

    app, _ = make_app([], app_kwargs={"duration_format": ui.frozen_duration})
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_prepared(pilot, app)
        await app.handler.handle(SubagentFailed(
            task_id="c5", index=5, duration_s=0.0, stop_reason="cancelled",
            message="Sub-agent 5 (find callers of decide()) was cancelled before it started"))
        await pilot.pause()
        (card,) = app.query(SubagentCard)
        assert (card.index, card.description, card.status) == (5, "find callers of decide()", "cancelled")
        card.action_open()
        await ui.wait_for(pilot, lambda: isinstance(app.screen, SubagentViewScreen), what="the screen")
        await pilot.pause()
        from tui.widgets.blocks import NoticeBlock

        assert "never started" in app.screen.query(NoticeBlock).first().message


async def test_running_cards_tick_and_stop_at_their_run_time():
    from textual.app import App

    from agent.events import SubagentCompleted, SubagentStarted
    from agent.messages import Usage

    now = [100.0]

    class Host(App):
        def compose(self):
            yield SubagentTimeline(clock=lambda: now[0], duration_format=lambda s: f"{s:.0f}s")

    async with Host().run_test(size=(80, 10)) as pilot:
        timeline = pilot.app.query_one(SubagentTimeline)
        card = await timeline.started(SubagentStarted(task_id="c1", index=1, description="look", journal_path=""))
        assert "0s" in str(card.render())
        now[0] += 7
        timeline._tick()
        assert "7s" in str(card.render())
        await timeline.finished(SubagentCompleted(task_id="c1", index=1, duration_s=3.0, summary="found it",
                                                  usage=Usage(prompt_tokens=10, completion_tokens=5)))
        now[0] += 50
        text = str(card.render())
        assert "done" in text and "3s" in text and "15 tok" in text and "found it" in text


async def test_resumed_session_shows_its_last_turn_subagents_and_opens_them(workspace, ui):
    import threading

    from agent.config.settings import Settings
    from agent.providers.scripted import ScriptedProvider
    from agent.runtime.build import build_session
    from tui.app import OpenCLIApp

    settings = Settings(model="openai/gpt-4.1", permission_mode="full-auto")
    later = [dict(reply, task=reply["task"] + 1) if "task" in reply else reply for reply in REPLIES]
    provider = ScriptedProvider([{"tool_calls": [_task("old one")]}, {"content": "first turn"},
                                 {"for": "subagent", "task": 1, "content": "old"}, *later])
    first = build_session(workspace, settings, provider=provider, interactive=False)
    first.run_turn("turn one", lambda event: None, threading.Event())
    first.run_turn("turn two", lambda event: None, threading.Event())  # its sub-agents are the 2nd and 3rd
    first.close()
    session = build_session(workspace, settings, provider=ScriptedProvider([]), interactive=True,
                            resume=first.session_id)
    app = OpenCLIApp(session=session, watch_themes=False, duration_format=ui.frozen_duration)
    app.animation_level = "none"
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_prepared(pilot, app)
        await ui.wait_for(pilot, lambda: len(app.query(SubagentCard)) == 2, what="the last turn's cards")
        cards = list(app.query(SubagentCard))
        assert [(c.index, c.description, c.status) for c in cards] == [(2, "find add", "done"),
                                                                        (3, "find the tests", "max_turns")]
        assert cards[0].tokens == 2560
        await pilot.press("f3", "enter")
        await ui.wait_for(pilot, lambda: isinstance(app.screen, SubagentViewScreen)
                          and bool(app.screen.query(AssistantBlock)), what="its conversation")
        assert "calc.py:1" in app.screen.query(AssistantBlock).last().text


async def test_resumed_cards_show_the_same_summary_as_the_live_ones(workspace, ui):
    from agent.config.settings import Settings
    from agent.providers.scripted import ScriptedProvider
    from agent.runtime.build import build_session
    from tui.app import OpenCLIApp

    settings = Settings(model="openai/gpt-4.1", permission_mode="full-auto")

    def app_for(session):
        app = OpenCLIApp(session=session, watch_themes=False, duration_format=ui.frozen_duration)
        app.animation_level = "none"
        return app

    live = build_session(workspace, settings, provider=ScriptedProvider(REPLIES), interactive=True)
    app = app_for(live)
    async with app.run_test(size=SIZE) as pilot:
        await _run_turn(pilot, app, ui)
        seen = [(c.status, c.message, c.tokens, c.duration_s, str(c.render())) for c in app.query(SubagentCard)]
    live.close()
    assert seen[0][1] == "`add` is defined in **calc.py:1**." and "turn cap" in seen[1][1]
    resumed = build_session(workspace, settings, provider=ScriptedProvider([]), interactive=True,
                            resume=live.session_id)
    app = app_for(resumed)
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_prepared(pilot, app)
        await ui.wait_for(pilot, lambda: len(app.query(SubagentCard)) == 2, what="the resumed cards")
        again = [(c.status, c.message, c.tokens, c.duration_s, str(c.render())) for c in app.query(SubagentCard)]
    assert again == seen


async def test_viewer_opened_while_the_subagent_runs_updates_live(make_app, ui, monkeypatch):
    import threading

    from agent.tools.grep import GrepTool

    release = threading.Event()
    real_run = GrepTool.run

    def slow_run(self, args, ctx):
        release.wait(20)
        return real_run(self, args, ctx)

    monkeypatch.setattr(GrepTool, "run", slow_run)
    replies = [{"tool_calls": [_task("find add")]}, {"content": "Found it."},
               {"for": "subagent", "task": 1, "tool_calls": [{"name": "grep", "arguments": {"pattern": "def add"}}]},
               {"for": "subagent", "task": 1, "content": "`add` is in calc.py."}]
    app, _ = make_app(replies, app_kwargs={"duration_format": ui.frozen_duration})
    try:
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "look around")
            await ui.wait_for(pilot, lambda: any(c.last_tool == "grep" for c in app.query(SubagentCard)),
                              what="the sub-agent's grep call")
            await pilot.press("f3", "enter")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, SubagentViewScreen), what="the viewer")
            screen = app.screen
            await ui.wait_for(pilot, lambda: len(screen.query(ToolBlock)) == 1, what="the running tool block")
            await pilot.pause(0.6)  # a few polls later it still runs: not "cancelled"
            (tool,) = screen.query(ToolBlock)
            assert tool.status == "running"
            assert not screen.query(AssistantBlock) or "calc.py" not in screen.query(AssistantBlock).last().text
            release.set()
            await ui.wait_for(pilot, lambda: tool.status == "ok", what="the tool result to arrive")
            await ui.wait_for(pilot, lambda: bool(screen.query(AssistantBlock))
                              and "calc.py" in screen.query(AssistantBlock).last().text, what="the final reply")
            await ui.wait_turn(pilot, app)
    finally:
        release.set()
