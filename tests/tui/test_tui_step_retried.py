"""Pilot tests: a retried step drops the failed attempt's text and reasoning blocks; a retry
countdown and a "waiting for the model" status update one notice in place."""

from __future__ import annotations

from rich.text import Text

from agent.events import (
    Notice, ReasoningDelta, StepRetried, StepStarted, TextDelta, ToolCallFinished, ToolCallStarted, TurnStarted,
)
from tui.widgets.blocks import AssistantBlock, NoticeBlock, ReasoningBlock
from tui.widgets.tool_block import ToolBlock


def _plain(widget) -> str:
    rendered = widget.render()
    return rendered.plain if isinstance(rendered, Text) else str(rendered)


async def test_step_retried_drops_the_partial_assistant_and_reasoning_blocks(make_app) -> None:
    app, _ = make_app([])
    async with app.run_test(size=(120, 36)) as pilot:
        handle = app.handler.handle
        await handle(TurnStarted(session_id="s", model="m"))
        await handle(StepStarted(step=1))
        await handle(TextDelta(text="Reading it."))
        await handle(ToolCallStarted(id="c1", name="read", arguments={"path": "a.py"}))
        await handle(ToolCallFinished(id="c1", name="read", output="x = 1"))
        await handle(StepStarted(step=2))
        await handle(ReasoningDelta(text="Half a thought"))
        await handle(TextDelta(text="The first attempt, cut off"))
        await handle(StepRetried(attempt=2, reason="the provider is unavailable", discard_partial=True))
        await handle(Notice(message="retrying in 1 s", key="retry_1", retry_in_s=1.0))
        await handle(TextDelta(text="x is 1."))
        await pilot.pause()
        blocks = [b for b in app.query(AssistantBlock)]
        assert [b.text for b in blocks] == ["Reading it.", "x is 1."]  # the step before is kept
        assert not app.query(ReasoningBlock)
        assert app.query(ToolBlock)
        assert [n.message for n in app.query(NoticeBlock) if n.message.startswith("retrying")] == ["retrying in 1 s"]


async def test_step_retried_without_partial_keeps_the_blocks(make_app) -> None:
    app, _ = make_app([])
    async with app.run_test(size=(120, 36)) as pilot:
        await app.handler.handle(TurnStarted(session_id="s", model="m"))
        await app.handler.handle(TextDelta(text="kept"))
        await app.handler.handle(StepRetried(attempt=2, reason="rate limited", discard_partial=False))
        await pilot.pause()
        assert [b.text for b in app.query(AssistantBlock)] == ["kept"]


async def test_keyed_notices_update_one_block_in_place(make_app) -> None:
    app, _ = make_app([])
    async with app.run_test(size=(120, 36)) as pilot:
        handle = app.handler.handle
        await handle(Notice(message="waiting for the model (10 s)", key="wait_a", waiting_s=10.0))
        await handle(Notice(message="waiting for the model (15 s)", key="wait_a", waiting_s=15.0))
        await handle(Notice(message="rate limited; retrying in 20 s", key="retry_b", retry_in_s=20.0))
        await handle(Notice(message="rate limited; retrying in 15 s", key="retry_b", retry_in_s=15.0))
        await pilot.pause()
        texts = [_plain(n) for n in app.query(NoticeBlock)]
        assert "waiting for the model (15 s)" in texts and "waiting for the model (10 s)" not in texts
        assert "rate limited; retrying in 15 s" in texts and "rate limited; retrying in 20 s" not in texts


async def test_tui_against_a_fake_server_waits_visibly_and_shows_only_the_retried_reply(
        workspace, ui, monkeypatch) -> None:
    from agent.config.settings import Settings
    from agent.providers.litellm_provider import LiteLLMProvider
    from agent.runtime.build import build_session
    from tests.faults.fake_server import FakeServer, text_reply
    from tui.app import OpenCLIApp

    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key-for-tests")
    cut = text_reply("The first attempt, cut off mid-way by a dying server")
    cut.chunks, cut.cut = cut.chunks[:8], True
    slow = text_reply("x is 1.")
    slow.hang_s = 1.5
    with FakeServer([cut, slow]) as server:
        provider = LiteLLMProvider(first_token_timeout_s=20, wait_notice_after_s=0.4)
        settings = Settings(model="openai/fake", api_base=server.url, permission_mode="full-auto")
        session = build_session(workspace, settings, provider=provider, interactive=True)
        app = OpenCLIApp(session=session, watch_themes=False)
        app.animation_level = "none"
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "what is x?")
            await ui.wait_turn(pilot, app, timeout=30)
            assert [b.text for b in app.query(AssistantBlock)] == ["x is 1."]
            notices = [n.message for n in app.query(NoticeBlock)]
            assert any(m.startswith("waiting for the model (") for m in notices), notices
            assert any("retrying in" in m for m in notices), notices
