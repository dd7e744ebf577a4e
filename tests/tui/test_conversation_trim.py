"""A long conversation removes its oldest blocks and draws them again from the journal (issue 18):
beyond ``TRIM_AT`` hidden blocks the oldest turns are removed, a gap line stands for them, and
scrolling back up draws them from the session journal, in order, each prompt once, with the
answers and tool calls they had; a focused block is never removed; the journal position a
prompt's block is tagged with is where its turn starts in the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.config.settings import Settings
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session
from agent.session.resume import read_records
from tests.tui.test_resume_backfill import page_down_until_drawn
from tui.widgets import conversation as conversation_module
from tui.widgets.blocks import AssistantBlock, GapLine, UserBlock
from tui.widgets.conversation import Conversation
from tui.widgets.tool_block import ToolBlock

SIZE = (100, 30)
EXCHANGES = 30


@pytest.fixture(autouse=True)
def small_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same rules with smaller numbers, so tens of exchanges trim, not hundreds."""
    monkeypatch.setattr(conversation_module, "KEEP_SCREENS", 1)
    monkeypatch.setattr(conversation_module, "KEEP_MIN", 4)
    monkeypatch.setattr(conversation_module, "HIDE_SLACK", 4)
    monkeypatch.setattr(conversation_module, "REVEAL_BATCH", 6)
    monkeypatch.setattr(conversation_module, "TRIM_AT", 16)
    monkeypatch.setattr(conversation_module, "TRIM_KEEP", 6)


def scripted_replies(count: int) -> list[dict]:
    """``count`` exchanges' replies; every 5th starts with a read of calc.py."""
    out: list[dict] = []
    for n in range(count):
        if n % 5 == 0:
            out.append({"tool_calls": [{"id": f"call{n}", "name": "read", "arguments": {"path": "calc.py"}}]})
        out.append({"content": f"answer {n}"})
    return out


def prompts_in(conversation: Conversation) -> list[str]:
    return [block.text for block in conversation.children if isinstance(block, UserBlock)]


def answers_in(conversation: Conversation) -> list[str]:
    return [block.text.strip() for block in conversation.children if isinstance(block, AssistantBlock)]


async def settle(pilot, conversation: Conversation) -> None:
    for _ in range(300):
        await pilot.pause()
        if not any(w.group in ("earlier", "trim") and not w.is_finished for w in conversation.workers):
            return
    raise AssertionError("the conversation did not settle")


async def talk(app, pilot, ui, count: int, start: int = 0) -> list[str]:
    conversation = app.query_one(Conversation)
    sent = []
    for n in range(start, start + count):
        sent.append(f"question {n}")
        await app.send_prompt(sent[-1])  # as Enter does, leaving the focus where it is
        await ui.wait_turn(pilot, app)
        await settle(pilot, conversation)
    return sent


async def scroll_to_the_top(pilot, conversation: Conversation) -> None:
    """PageUp until every block is shown and no message is left to draw."""
    for _ in range(400):
        if not conversation.hidden_count and not conversation.has_earlier and conversation.scroll_y == 0:
            return
        await pilot.press("pageup")
        await settle(pilot, conversation)
    raise AssertionError("the top was not reached")


async def test_old_turns_are_removed_and_drawn_again_from_the_journal_when_scrolled_back(make_app, ui) -> None:
    app, _ = make_app(scripted_replies(EXCHANGES + 1))
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_prepared(pilot, app)
        conversation = app.query_one(Conversation)
        sent = await talk(app, pilot, ui, EXCHANGES)
        gap = conversation.earlier.gap
        assert isinstance(gap, GapLine) and gap.is_attached, "the oldest turns stand behind a gap"
        children = list(conversation.children)
        assert children.index(gap) == 1, "just under the welcome block"
        assert len(children) <= conversation_module.TRIM_AT + 30, "the pane no longer holds every block"
        kept = prompts_in(conversation)
        assert kept == sent[-len(kept):] and len(kept) < EXCHANGES
        assert len(app.handler.tools) < EXCHANGES // 5, "the handler forgot removed tool blocks"

        app.query_one("PromptInput").focus()
        await scroll_to_the_top(pilot, conversation)
        assert prompts_in(conversation) == sent, "every prompt once, in order"
        assert answers_in(conversation) == [f"answer {n}" for n in range(EXCHANGES)]
        tools = list(app.query(ToolBlock))
        assert len(tools) == EXCHANGES // 5 and all(t.status == "ok" for t in tools), "calls with their results"
        assert not list(app.query(GapLine))
        assert app.focused is app.query_one("PromptInput"), "drawing does not take the focus"

        # The conversation goes on at the end, and trims again.
        await pilot.press("ctrl+end")
        more = await talk(app, pilot, ui, 1, start=EXCHANGES)
        assert prompts_in(conversation)[-1] == more[-1]
        assert answers_in(conversation)[-1] == f"answer {EXCHANGES}"
    app.session.close()


async def test_ctrl_home_draws_the_first_turns_and_scrolling_down_the_rest(make_app, ui) -> None:
    app, _ = make_app(scripted_replies(EXCHANGES + 1))
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_prepared(pilot, app)
        conversation = app.query_one(Conversation)
        sent = await talk(app, pilot, ui, EXCHANGES)
        app.query_one("PromptInput").focus()
        await pilot.press("ctrl+home")
        await settle(pilot, conversation)
        await pilot.pause()
        assert conversation.scroll_y == 0
        assert prompts_in(conversation)[0] == "question 0"
        def in_order() -> None:
            shown = prompts_in(conversation)
            assert shown == sorted(set(shown), key=sent.index), "in order, nothing twice"
        await page_down_until_drawn(pilot, conversation, in_order, settled=settle)
        assert prompts_in(conversation) == sent
    app.session.close()


async def test_a_focused_block_is_never_removed(make_app, ui) -> None:
    app, _ = make_app(scripted_replies(EXCHANGES + 1))
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_prepared(pilot, app)
        conversation = app.query_one(Conversation)
        await talk(app, pilot, ui, 3)
        tool = app.query(ToolBlock).first()
        tool.focus()
        await talk(app, pilot, ui, EXCHANGES - 3, start=3)
        assert tool.is_attached, "the focused tool block stays"
        app.query_one("PromptInput").focus()
        await talk(app, pilot, ui, 0)
    app.session.close()


async def test_a_resumed_conversation_drawn_whole_is_trimmed_at_its_prompts_and_drawn_from_what_was_read(
        workspace: Path, ui, monkeypatch: pytest.MonkeyPatch) -> None:
    """A resumed session drawn in full (every message mounted) trims at its replayed prompts; the
    gap draws them from the records the resume read (the file is not read again)."""
    import agent.session.resume as resume_module
    from tui import resume_backfill
    from tests.tui.test_resume_backfill import resumed_app, write_journal

    session_id, prompts, _ = write_journal(workspace, pairs=40)
    monkeypatch.setattr(resume_backfill, "FIRST_SHOWN_MESSAGES", 10**6)
    app = resumed_app(workspace, session_id)
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_prepared(pilot, app)
        conversation = app.query_one(Conversation)
        await settle(pilot, conversation)
        assert conversation.has_earlier and len(prompts_in(conversation)) < len(prompts), "trimmed"

        def no_read(path):  # noqa: ANN001, ANN202
            raise AssertionError("the journal was read again")
        monkeypatch.setattr(resume_module, "load_session", no_read)
        app.query_one("PromptInput").focus()
        await scroll_to_the_top(pilot, conversation)
        assert prompts_in(conversation) == prompts
    app.session.close()


def test_a_prompts_journal_position_is_where_its_turn_starts_in_the_file(workspace: Path) -> None:
    """``journal_position()`` counts the records a resume read plus the ones queued since, so a
    prompt tagged with it is the first record read back after that many."""
    from agent.messages import UserMessage

    session = build_session(workspace, Settings(model="openai/gpt-4.1"), provider=ScriptedProvider([]))
    session.prepare()
    session.journal.append_message(UserMessage(content="first"))
    assert session.journal_position() == len(list(read_records(session.journal_path, [])))
    session_id, path = session.session_id, session.journal_path
    session.close()
    with path.open("ab") as handle:
        handle.write(b'{"kind": "message", "torn')  # a torn last line: skipped when read back
    resumed = build_session(workspace, Settings(model="openai/gpt-4.1"), provider=ScriptedProvider([]),
                            resume=session_id)
    resumed.prepare()
    at = resumed.journal_position()
    resumed.journal.append_message(UserMessage(content="second"))
    records = list(read_records(path, []))
    assert resumed.journal_position() == len(records)
    assert records[at].message.content == "second"
    resumed.close()


def test_no_journal_position_once_a_record_was_lost(workspace: Path) -> None:
    session = build_session(workspace, Settings(model="openai/gpt-4.1"), provider=ScriptedProvider([]))
    session.prepare()
    session.journal.lost = 1
    assert session.journal_position() is None
    session.close()
