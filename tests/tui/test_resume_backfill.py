"""A resumed long session is drawn from its end (issue 18): the last messages at once, the earlier
ones when the view reaches the top (PageUp) or all of them with Ctrl+Home, in the journal's order,
a tool call with its result, compaction marks and stop lines as history, without touching the
sidebar or a turn sent meanwhile."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agent.config.settings import Settings
from agent.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session
from agent.session.records import CompactionRecord, EventRecord
from tui import resume_backfill
from tui.resume_backfill import batch_end, batch_start, first_shown, message_positions, records_before
from tui.widgets import conversation as conversation_module
from tui.widgets.blocks import AssistantBlock, GapLine, UserBlock
from tui.widgets.compaction_mark import CompactionMark
from tui.widgets.conversation import Conversation
from tui.widgets.stop_panel import StopPanel
from tui.widgets.tool_block import ToolBlock

SIZE = (100, 30)
PAIRS = 40  # exchanges in the journal
TOOL_EVERY = 4  # every 4th exchange reads a file first
COMPACTED_AT = 9  # a compaction mark after this exchange
STOPPED_AT = 6  # this exchange's turn ended on max_turns


@pytest.fixture(autouse=True)
def small_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same rules with smaller numbers, so a test replays tens of messages, not thousands."""
    monkeypatch.setattr(resume_backfill, "FIRST_SHOWN_MESSAGES", 12)
    monkeypatch.setattr(conversation_module, "REVEAL_BATCH", 10)


def write_journal(workspace: Path, pairs: int = PAIRS) -> tuple[str, list[str], int]:
    """A closed session of ``pairs`` exchanges; returns its id, the user prompts in order and the
    number of tool calls."""
    session = build_session(workspace, Settings(model="openai/gpt-4.1"), provider=ScriptedProvider([]))
    session.prepare()
    journal = session.journal
    prompts, calls = [], 0
    for i in range(pairs):
        prompts.append(f"question {i}")
        journal.append_message(UserMessage(content=prompts[-1]))
        if i % TOOL_EVERY == 0:
            call = ToolCall(id=f"call{i}", name="read", arguments='{"path": "calc.py"}')
            journal.append_message(AssistantMessage(content=None, tool_calls=[call]))
            journal.append_message(ToolResultMessage(tool_call_id=call.id, name="read", content=f"file text {i}"))
            calls += 1
        journal.append_message(AssistantMessage(content=f"answer {i}"))
        journal.append(EventRecord.turn_finished("max_turns" if i == STOPPED_AT else "done", time.time()))
        if i == COMPACTED_AT:
            journal.append(CompactionRecord(tokens_before=9000, tokens_after=3000))
    session_id = session.session_id
    session.close()
    return session_id, prompts, calls


def resumed_app(workspace: Path, ref: str, replies: list[dict] | None = None):
    """An app started on session ``ref``, as ``opencli-tui --resume ID`` starts."""
    from tui.app import OpenCLIApp

    session = build_session(workspace, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                            provider=ScriptedProvider(replies or []), interactive=True, resume=ref)
    app = OpenCLIApp(session=session, watch_themes=False)
    app.animation_level = "none"
    return app


def user_prompts(conversation: Conversation) -> list[str]:
    return [block.text for block in conversation.children if isinstance(block, UserBlock)]


async def settle(pilot, conversation: Conversation) -> None:
    """Until the loader has nothing running."""
    for _ in range(200):
        await pilot.pause()
        if not any(w.group == "earlier" and not w.is_finished for w in conversation.workers):
            return
    raise AssertionError("the earlier messages did not finish loading")


def in_view(conversation: Conversation) -> list[int]:
    """The numbers of the questions whose prompt block is within the view (as laid out)."""
    top, height = conversation.scroll_y, conversation.scrollable_content_region.height
    return [int(block.text.split()[-1]) for block in conversation.children
            if isinstance(block, UserBlock) and block.display and block.virtual_region.height
            and block.virtual_region.y < top + height and block.virtual_region.bottom > top]


async def page_down_until_drawn(pilot, conversation: Conversation, each_step=None, settled=None) -> None:
    """PageDown until no message is left to draw; ``each_step()`` after every key; ``settled``:
    how to wait for the drawing (this module's ``settle`` by default)."""
    for _ in range(400):
        if not conversation.has_earlier:
            return
        await pilot.press("pagedown")
        await (settled or settle)(pilot, conversation)
        if each_step is not None:
            each_step()
    raise AssertionError("messages were left to draw")


async def draw_everything(pilot, conversation: Conversation) -> None:
    """Ctrl+Home, then PageDown until no message is left to draw."""
    await pilot.press("ctrl+home")
    await settle(pilot, conversation)
    await page_down_until_drawn(pilot, conversation)


class TestBatchBoundaries:
    def test_a_batch_never_starts_at_a_tool_result(self, workspace: Path) -> None:
        from agent.session.resume import find_session, load_session

        session_id, _, _ = write_journal(workspace, pairs=5)
        records = load_session(find_session(workspace, session_id)).records
        positions = message_positions(records)
        roles = [records[p].message.role for p in positions]
        tool = roles.index("tool")
        assert batch_start(records, positions, tool) == tool - 1  # the call's message comes along
        assert batch_start(records, positions, tool + 1) == tool + 1
        assert batch_start(records, positions, -3) == 0
        # Ending a batch: moved on past the results, so they come with their call.
        assert batch_end(records, positions, tool) == tool + 1
        assert batch_end(records, positions, tool - 1) == tool - 1
        assert batch_end(records, positions, 10**6) == len(positions)
        assert roles[first_shown(records, 3)] != "tool"
        assert first_shown(records, 100) == 0
        # A batch's records start just after the previous batch's last message.
        assert records_before(positions, 0) == 0
        assert records_before(positions, 2) == positions[1] + 1


class TestDrawnFromTheEnd:
    async def test_the_last_messages_first_then_earlier_ones_on_page_up(self, workspace: Path, ui) -> None:
        session_id, prompts, _ = write_journal(workspace)
        app = resumed_app(workspace, session_id)
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            conversation = app.query_one(Conversation)
            await settle(pilot, conversation)
            drawn = user_prompts(conversation)
            assert drawn == prompts[-len(drawn):], "the last exchanges, in order"
            assert 3 <= len(drawn) <= 8, drawn
            assert conversation.has_earlier
            resumed_line = next(b.message for b in app.query("NoticeBlock") if b.message.startswith("Resumed"))
            assert resumed_line.endswith(f"({len(app.session.resumed.messages)} messages)")
            gap = conversation.earlier.gap
            assert isinstance(gap, GapLine)
            not_drawn = conversation.earlier.remaining
            assert f"{not_drawn} messages not drawn yet" in str(gap.render())
            assert conversation.scroll_y == conversation.max_scroll_y  # at the end

            children = list(conversation.children)
            assert children.index(gap) == children.index(app.query("NoticeBlock").last()) + 1, "under the header"
            first_drawn = children[children.index(gap) + 1]
            app.query_one("PromptInput").focus()
            page = conversation.scrollable_content_region.height - 1
            for _ in range(20):
                if len(user_prompts(conversation)) > len(drawn):
                    break
                row_before = first_drawn.virtual_region.y - conversation.scroll_y
                await pilot.press("pageup")
                await settle(pilot, conversation)
            more = user_prompts(conversation)
            assert more == prompts[-len(more):] and len(more) > len(drawn)
            assert conversation.earlier.remaining < not_drawn
            assert f"{conversation.earlier.remaining} messages" in str(gap.render()), "the count follows"
            await pilot.pause()
            # That PageUp moved a whole page, into the messages it drew: the block that was first
            # under the gap went a page down the view (not back to its top: that skipped them).
            row_after = first_drawn.virtual_region.y - conversation.scroll_y
            moved = row_after - row_before
            assert page - 4 <= moved <= page or (conversation.scroll_y == 0 and moved > 0), \
                (row_before, row_after, page)  # (margins; or a batch shorter than the page)
            assert app.focused is app.query_one("PromptInput"), "loading does not move the focus"
        app.session.close()

    async def test_the_first_frame_gets_the_last_few_messages_and_the_others_follow_it(
            self, workspace: Path, ui, monkeypatch: pytest.MonkeyPatch) -> None:
        """Issue 18: ``--continue`` draws the last ``FIRST_FRAME_MESSAGES`` before the first
        frame (the last message is on the screen sooner), then the rest of the last
        ``FIRST_SHOWN_MESSAGES`` above the view, which stays at the end."""
        session_id, prompts, _ = write_journal(workspace)
        before_frame: list[tuple[list[str], int]] = []
        fill = Conversation.fill_view

        def recording(self: Conversation, more: int = 0):  # noqa: ANN202
            before_frame.append((user_prompts(self), more))
            return fill(self, more)

        monkeypatch.setattr(Conversation, "fill_view", recording)
        app = resumed_app(workspace, session_id)
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            conversation = app.query_one(Conversation)
            await settle(pilot, conversation)
            (first, more), = before_frame
            # The last 6 messages: exchanges 39, 38 and 37 (two messages each).
            assert first == prompts[-3:] and more == resume_backfill.FIRST_SHOWN_MESSAGES - 6
            drawn = user_prompts(conversation)
            # Then 12 in all at least: exchange 36 (a tool call and its result too) and 35.
            assert drawn == prompts[-len(drawn):] and len(drawn) >= 5, drawn
            assert conversation.has_earlier and conversation.scroll_y == conversation.max_scroll_y
        app.session.close()

    async def test_no_frame_shows_a_resumed_conversation_half_drawn(self, workspace: Path, ui,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
        """The resumed blocks are laid out and painted together: the screen showed them in
        pieces, oldest first, the last message last (each piece laid out and painted)."""
        from textual.screen import Screen

        session_id, prompts, _ = write_journal(workspace)
        laid_out: list[list[str]] = []
        refresh_layout = Screen._refresh_layout

        def recording(self: Screen, *args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            laid_out.extend([user_prompts(c) for c in self.query(Conversation)])
            return refresh_layout(self, *args, **kwargs)

        monkeypatch.setattr(Screen, "_refresh_layout", recording)
        from tui.app import OpenCLIApp

        def start():  # noqa: ANN202 - as ``opencli-tui --resume ID`` opens it: after the first paint
            session = build_session(workspace, Settings(model="openai/gpt-4.1"), provider=ScriptedProvider([]),
                                    interactive=True, resume=session_id)
            return session, []

        app = OpenCLIApp(start=start, watch_themes=False)
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_for(pilot, lambda: app.session is not None, what="the session")
            await ui.wait_prepared(pilot, app)
            await settle(pilot, app.query_one(Conversation))
        with_messages = [drawn for drawn in laid_out if drawn]
        assert with_messages and with_messages[0][-1] == prompts[-1], with_messages[:3]
        assert with_messages[0] == prompts[-3:], "the first frame's messages, all at once"
        app.session.close()

    async def test_a_session_of_few_messages_is_drawn_whole_before_the_first_frame(self, workspace: Path,
                                                                                  ui) -> None:
        session_id, prompts, _ = write_journal(workspace, pairs=4)  # 10 messages: fewer than 12
        app = resumed_app(workspace, session_id)
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            conversation = app.query_one(Conversation)
            assert user_prompts(conversation) == prompts and not conversation.has_earlier
            assert not conversation.query(GapLine)
        app.session.close()

    async def test_ctrl_home_draws_the_first_messages_and_scrolling_down_the_rest(self, workspace: Path,
                                                                                ui) -> None:
        """Ctrl+Home draws only the first messages (at once, whatever the length), above the gap;
        scrolling down onto the gap draws the next ones, until the conversation is whole, as a
        full rebuild would draw it."""
        session_id, prompts, calls = write_journal(workspace)
        app = resumed_app(workspace, session_id)
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            conversation = app.query_one(Conversation)
            await settle(pilot, conversation)
            app.query_one("PromptInput").focus()
            tail = user_prompts(conversation)
            await pilot.press("ctrl+home")
            await settle(pilot, conversation)
            await pilot.pause()
            assert conversation.scroll_y == 0
            drawn = user_prompts(conversation)
            assert drawn[0] == prompts[0], "the first question is at the top"
            head = drawn[:len(drawn) - len(tail)]
            assert head == prompts[:len(head)] and 0 < len(head) < PAIRS - len(tail), "only the first ones"
            assert conversation.has_earlier
            children = list(conversation.children)
            assert children.index(conversation.earlier.gap) < children.index(
                next(b for b in children if isinstance(b, UserBlock) and b.text == tail[0])), "the gap is between"

            def in_order() -> None:
                shown = user_prompts(conversation)
                assert shown == prompts[:len(shown) - len(tail)] + tail, "always in order, nothing twice"
            await page_down_until_drawn(pilot, conversation, in_order)
            assert not conversation.has_earlier
            assert user_prompts(conversation) == prompts
            answers = [b for b in conversation.children if isinstance(b, AssistantBlock)]
            assert [b.text.strip() for b in answers] == [f"answer {i}" for i in range(PAIRS)]
            tools = list(app.query(ToolBlock))
            assert len(tools) == calls
            assert all(t.status == "ok" and "file text" in (getattr(t, "output", None) or "") for t in tools), \
                "every call drawn with its result"
            marks = list(app.query(CompactionMark))
            assert len(marks) == 1
            children = list(conversation.children)
            after = next(b for b in children if isinstance(b, UserBlock) and b.text == f"question {COMPACTED_AT + 1}")
            before = next(b for b in children if isinstance(b, UserBlock) and b.text == f"question {COMPACTED_AT}")
            assert children.index(before) < children.index(marks[0]) < children.index(after)
            panels = list(app.query(StopPanel))
            assert len(panels) == 1 and not panels[0].open, "a stop in history has no buttons"
            assert app.focused is app.query_one("PromptInput")
            assert not list(app.query(GapLine)), "the gap went"
        app.session.close()

    @pytest.mark.parametrize("arriving", ["together", "10 ms apart"])
    async def test_page_ups_pressed_while_a_batch_comes_in_each_move_a_page(self, workspace: Path, ui,
                                                                          arriving: str) -> None:
        """PageUps that arrive together or close together (a held key) while messages are drawn
        at the gap move as far as the same keys pressed one at a time: the rows they asked for
        past the top of a batch are carried into the next one (they were dropped: 40 fast keys
        moved 6 pages), once (keys that came while a batch was held also counted twice: 40
        keys 30 ms apart moved 63 pages in tmux)."""
        import asyncio

        from textual import events

        session_id, prompts, _ = write_journal(workspace, pairs=120)
        tops: list[int] = []
        for fast in (False, True):
            app = resumed_app(workspace, session_id)
            async with app.run_test(size=SIZE) as pilot:
                await ui.wait_prepared(pilot, app)
                conversation = app.query_one(Conversation)
                await settle(pilot, conversation)
                app.query_one("PromptInput").focus()
                for _ in range(12):
                    if fast:
                        app.post_message(events.Key("pageup", None))
                        if arriving != "together":
                            await asyncio.sleep(0.01)
                    else:
                        await pilot.press("pageup")
                        await settle(pilot, conversation)
                        await pilot.pause()
                for _ in range(3):
                    await settle(pilot, conversation)
                    await pilot.pause(0.1)
                tops.append(min(in_view(conversation)))
            app.session.close()
        slow_top, fast_top = tops
        assert slow_top < prompts.index("question 100"), "12 pages went past the first batch"
        assert abs(fast_top - slow_top) <= 1, tops

    @pytest.mark.parametrize("key", ["pageup", "pagedown"])
    async def test_paging_through_the_gap_never_skips_a_message(self, workspace: Path, ui, key: str) -> None:
        """Page by page through the messages drawn on demand, up from the end or down from
        Ctrl+Home: each view starts where the last one ended (a page may not jump over the gap,
        nor over messages drawn while it scrolls), until every question was in view, in order."""
        session_id, prompts, _ = write_journal(workspace, pairs=120)
        app = resumed_app(workspace, session_id)
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            conversation = app.query_one(Conversation)
            await settle(pilot, conversation)
            app.query_one("PromptInput").focus()
            if key == "pagedown":
                await pilot.press("ctrl+home")
                await settle(pilot, conversation)
            previous = in_view(conversation)
            seen = list(previous)
            for _ in range(300):
                await pilot.press(key)
                await settle(pilot, conversation)
                await pilot.pause()
                now = in_view(conversation)
                if now and previous:
                    if key == "pageup":
                        assert max(now) + 1 >= min(previous), f"skipped from {previous} to {now}"
                    else:
                        assert min(now) <= max(previous) + 1, f"skipped from {previous} to {now}"
                seen += now
                previous = now or previous
                if not conversation.has_earlier and (conversation.scroll_y == 0 if key == "pageup"
                                                      else conversation.scroll_y >= conversation.max_scroll_y):
                    break
            assert sorted(set(seen)) == list(range(len(prompts))), f"every question was in view: {previous}"
        app.session.close()

    async def test_a_reminder_mark_in_an_earlier_batch_is_shown_with_its_block(self, workspace: Path, ui) -> None:
        """A reminder mark under a tool block of a batch drawn at the gap comes with the batch
        (it was counted among the pane's hidden blocks, and stayed hidden)."""
        from agent.events import ToolResult
        from agent.session.resume import find_session
        from tui.widgets.blocks import ReminderMark

        session_id, prompts, _ = write_journal(workspace)
        path = find_session(workspace, session_id)
        session = build_session(workspace, Settings(model="openai/gpt-4.1"), provider=ScriptedProvider([]),
                                resume=session_id)
        session.prepare()
        call = ToolCall(id="callR", name="read", arguments='{"path": "calc.py"}')
        message = ToolResultMessage(tool_call_id=call.id, name="read", content="file text R")
        journal = session.journal
        journal.append_message(UserMessage(content="question with a reminder"))
        journal.append_message(AssistantMessage(content=None, tool_calls=[call]))
        journal.append_tool_result(message, ToolResult(reminders=("a reminder under the call",)))
        journal.append_message(message)
        journal.append_message(AssistantMessage(content="answer R"))
        journal.append(EventRecord.turn_finished("done", time.time()))
        for i in range(PAIRS):  # enough after it that it is drawn from the gap
            journal.append_message(UserMessage(content=f"later {i}"))
            journal.append_message(AssistantMessage(content=f"later answer {i}"))
            journal.append(EventRecord.turn_finished("done", time.time()))
        session.close()
        assert path.exists()
        app = resumed_app(workspace, session_id)
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            conversation = app.query_one(Conversation)
            await settle(pilot, conversation)
            app.query_one("PromptInput").focus()
            await draw_everything(pilot, conversation)
            marks = [m for m in app.query(ReminderMark) if "a reminder under the call" in str(m.render())]
            assert len(marks) == 1 and marks[0].display, "the mark is shown"
            assert conversation.hidden_count == 0
            assert all(block.display for block in conversation.children)
        app.session.close()

    async def test_a_turn_sent_after_resuming_stays_last_when_earlier_messages_load(self, workspace: Path,
                                                                                    ui) -> None:
        session_id, prompts, _ = write_journal(workspace)
        app = resumed_app(workspace, session_id, [{"content": "the new answer"}])
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            conversation = app.query_one(Conversation)
            await settle(pilot, conversation)
            await ui.submit(pilot, "a new question")
            await ui.wait_turn(pilot, app)
            await draw_everything(pilot, conversation)
            assert user_prompts(conversation) == prompts + ["a new question"]
            last = [b for b in conversation.children if isinstance(b, AssistantBlock)][-1]
            assert last.text.strip() == "the new answer"
        app.session.close()

    async def test_a_view_the_last_messages_do_not_fill_asks_for_more(self, workspace: Path, ui,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(resume_backfill, "FIRST_SHOWN_MESSAGES", 2)
        session_id, prompts, _ = write_journal(workspace)
        app = resumed_app(workspace, session_id)
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            conversation = app.query_one(Conversation)
            await settle(pilot, conversation)
            await pilot.pause()
            assert conversation.max_scroll_y > 0, "enough is drawn to scroll up to the rest"
            assert conversation.has_earlier
            drawn = user_prompts(conversation)
            assert drawn == prompts[-len(drawn):]
            assert conversation.scroll_y == conversation.max_scroll_y
        app.session.close()

    async def test_the_wheel_at_the_top_draws_earlier_messages(self, workspace: Path, ui) -> None:
        """At the top already, a wheel turn scrolls nothing (no scroll change to watch) and still
        draws the earlier messages."""
        from textual import events

        session_id, prompts, _ = write_journal(workspace)
        app = resumed_app(workspace, session_id)
        async with app.run_test(size=SIZE) as pilot:
            await ui.wait_prepared(pilot, app)
            conversation = app.query_one(Conversation)
            await settle(pilot, conversation)
            loader, conversation.earlier = conversation.earlier, None  # reach the top without loading
            conversation.release_anchor()
            conversation.scroll_home(animate=False)
            await pilot.pause()
            conversation.earlier = loader
            assert conversation.scroll_y == 0
            drawn = len(user_prompts(conversation))
            conversation.post_message(events.MouseScrollUp(conversation, 1, 1, 0, 0, 0, False, False, False))
            await pilot.pause()
            await settle(pilot, conversation)
            more = user_prompts(conversation)
            assert len(more) > drawn and more == prompts[-len(more):]
        app.session.close()
