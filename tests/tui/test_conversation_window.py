"""A long conversation keeps only its last blocks laid out (issue 18): the last blocks filling
two heights of the pane stay, older blocks are hidden while the pane follows the end, come back when the view reaches the top (PageUp, the mouse
wheel) or with Ctrl+Home, and a focused block is never hidden."""

from __future__ import annotations

import pytest

from tui.widgets import conversation as conversation_module
from tui.widgets.blocks import NoticeBlock, UserBlock
from tui.widgets.conversation import Conversation

SIZE = (100, 30)


@pytest.fixture(autouse=True)
def small_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same rules with explicit numbers (the defaults may change)."""
    monkeypatch.setattr(conversation_module, "KEEP_SCREENS", 2)
    monkeypatch.setattr(conversation_module, "KEEP_MIN", 6)
    monkeypatch.setattr(conversation_module, "HIDE_SLACK", 10)
    monkeypatch.setattr(conversation_module, "REVEAL_BATCH", 15)


def shown_rows(conversation: Conversation) -> int:
    """Rows the laid-out blocks take, margins included (as ``first_kept`` counts them)."""
    return sum(block.outer_size.height + max(block.styles.margin.top, block.styles.margin.bottom)
               for block in conversation.children[conversation.hidden_count:])


async def fill(conversation: Conversation, count: int) -> None:
    for n in range(count):
        await conversation.add(UserBlock(f"message number {n}"))


async def filled_with_hidden(app, pilot) -> tuple[Conversation, int]:
    """90 blocks added while following (so the oldest are hidden), the prompt focused; returns
    the pane and how many blocks are hidden."""
    conversation = app.query_one(Conversation)
    await fill(conversation, 90)
    await pilot.pause()
    app.query_one("PromptInput").focus()
    return conversation, conversation.hidden_count


def shown(conversation: Conversation) -> list[str]:
    return [str(block.content) for block in conversation.children if block.display and isinstance(block, UserBlock)]


async def test_old_blocks_are_hidden_while_following_and_the_last_ones_stay(make_app) -> None:
    app, _ = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        conversation = app.query_one(Conversation)
        await fill(conversation, 90)
        await pilot.pause()
        assert conversation.hidden_count > 0
        # Two pane heights of the last blocks stay laid out; fewer than HIDE_SLACK blocks more.
        height = conversation.size.height
        assert shown_rows(conversation) >= 2 * height
        assert conversation.first_kept() - conversation.hidden_count < conversation_module.HIDE_SLACK
        assert len(conversation.children) - conversation.hidden_count < 90 // 2
        assert shown(conversation)[-1] == "message number 89"
        assert "message number 0" not in shown(conversation)
        assert conversation.scroll_y == conversation.max_scroll_y  # still at the end


async def test_page_up_to_the_top_shows_earlier_blocks_and_moves_a_whole_page(make_app, ui) -> None:
    """The PageUp that reaches the top of what is shown moves a whole page all the same: into
    the blocks shown again above (before, it stopped at the top, a short step, then the view
    stayed on the block that had been first)."""
    app, _ = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        conversation, hidden = await filled_with_hidden(app, pilot)
        first_shown = conversation.children[hidden]
        page = conversation.scrollable_content_region.height - 1
        while conversation.hidden_count == hidden:
            row_before = first_shown.virtual_region.y - conversation.scroll_y
            await pilot.press("pageup")
            await pilot.pause()
        assert conversation.hidden_count == max(0, hidden - conversation_module.REVEAL_BATCH)
        await pilot.pause()
        await pilot.pause()
        row_after = first_shown.region.y - conversation.content_region.y
        assert page - 2 <= row_after - row_before <= page, (row_before, row_after, page)  # (margins)
        assert conversation.scroll_y > 0


async def test_ctrl_home_shows_the_first_message_and_ctrl_end_follows_again(make_app) -> None:
    app, _ = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        conversation = app.query_one(Conversation)
        await fill(conversation, 90)
        await pilot.pause()
        await pilot.press("ctrl+home")
        await pilot.pause()
        await pilot.pause()
        assert conversation.hidden_count == 0
        assert conversation.scroll_y == 0
        first = next(b for b in conversation.children if isinstance(b, UserBlock))
        assert str(first.content) == "message number 0" and first.region.height > 0
        await pilot.press("ctrl+end")
        await pilot.pause()
        assert conversation.following
        await conversation.add(NoticeBlock("after"))
        await pilot.pause()
        assert conversation.scroll_y == conversation.max_scroll_y


async def test_nothing_is_hidden_while_the_user_reads_above(make_app) -> None:
    app, _ = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        conversation = app.query_one(Conversation)
        await fill(conversation, 20)
        await pilot.pause()
        conversation.page(-1)
        await pilot.pause()
        assert not conversation.following
        before = conversation.scroll_y
        await fill(conversation, 70)
        await pilot.pause()
        assert conversation.hidden_count == 0
        assert conversation.scroll_y == before


async def test_a_focused_block_is_not_hidden(make_app) -> None:
    app, _ = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        conversation = app.query_one(Conversation)
        focusable = UserBlock("the focused one")
        focusable.can_focus = True
        await conversation.add(focusable)
        focusable.focus()
        await pilot.pause()
        await fill(conversation, 90)
        await pilot.pause()
        assert conversation.hidden_count > 0
        assert focusable.display and app.focused is focusable


async def test_reaching_the_top_after_hidden_blocks_were_removed_shows_the_rest(make_app) -> None:
    app, _ = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        conversation = app.query_one(Conversation)
        await fill(conversation, 90)
        await pilot.pause()
        hidden = conversation.hidden_count
        await conversation.remove_children(list(conversation.children[hidden - 5:]))
        await pilot.pause()
        conversation.to_start()
        await pilot.pause()
        assert conversation.hidden_count == 0
        assert all(block.display for block in conversation.children)


async def test_the_window_is_rows_not_blocks_and_keeps_a_minimum(make_app) -> None:
    """One-line blocks: many more of them stay laid out than of tall ones, and a few very tall
    blocks never leave fewer than KEEP_MIN laid out."""
    app, _ = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        conversation = app.query_one(Conversation)
        for n in range(60):
            await conversation.add(NoticeBlock(f"line {n}"))
            await pilot.pause()
        one_line = len(conversation.children) - conversation.hidden_count
        assert conversation.hidden_count > 0 and shown_rows(conversation) >= 2 * conversation.size.height
        for n in range(30):
            await conversation.add(UserBlock("\n".join(f"tall {n} row {r}" for r in range(60))))
            await pilot.pause()
        tall = len(conversation.children) - conversation.hidden_count
        assert conversation_module.KEEP_MIN <= tall < one_line
        assert all(block.display for block in conversation.children[conversation.hidden_count:])


async def test_the_first_frame_after_a_reveal_already_shows_the_same_place(make_app) -> None:
    """Blocks shown again above the view do not flash at the top for a frame: the block that was
    at the top is held in place in the layout pass that first has them."""
    app, _ = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        conversation, hidden = await filled_with_hidden(app, pilot)
        assert hidden > 0
        conversation.release_anchor()
        conversation.scroll_to(y=1, animate=False)  # one row under the top of what is shown
        await pilot.pause()
        assert conversation.hidden_count == hidden
        first_shown = conversation.children[hidden]
        frames: list[int] = []  # where that block is on the first frame after the reveal, then after
        reveal = conversation.reveal

        def spied_reveal(count=None):
            shown_again = reveal(count)
            conversation.call_after_refresh(lambda: frames.append(first_shown.region.y - conversation.content_region.y))
            return shown_again

        conversation.reveal = spied_reveal
        await pilot.press("pageup")  # at the top: the previous blocks are shown again
        await pilot.pause()
        await pilot.pause()
        assert conversation.hidden_count < hidden
        frames.append(first_shown.region.y - conversation.content_region.y)
        # The PageUp moved a whole page (the block a page down the view), the first frame as the last.
        page = conversation.scrollable_content_region.height - 1
        assert len(frames) == 2 and frames[0] == frames[1], frames
        assert page - 2 <= frames[0] <= page + first_shown.styles.margin.top, (frames, page)


async def test_page_ups_while_blocks_come_back_each_move_a_whole_page(make_app) -> None:
    """Two PageUps in a row across the top of what is shown (the second while the first one's
    blocks are still held in place) move two whole pages (the second once stopped at the top
    and lost the rest of its page)."""
    app, _ = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        conversation, hidden = await filled_with_hidden(app, pilot)
        conversation.release_anchor()
        page = conversation.scrollable_content_region.height - 1
        conversation.scroll_to(y=min(conversation.max_scroll_y, page // 2), animate=False)
        await pilot.pause()
        marker = conversation.children[hidden + 2]
        row_before = marker.virtual_region.y - conversation.scroll_y
        await pilot.press("pageup", "pageup")
        for _ in range(5):
            await pilot.pause()
        row_after = marker.virtual_region.y - conversation.scroll_y
        assert 2 * page - 4 <= row_after - row_before <= 2 * page, (row_before, row_after, page)
