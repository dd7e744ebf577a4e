"""Pilot tests: a task typed into the app runs the real loop against a scripted model, and the
conversation shows what happened."""

from __future__ import annotations

import time

from rich.text import Text
from textual.widgets import Static

from tests.helpers import tool_call_started
from agent.events import ToolCallFinished
from tui.bridge import AgentEventMessage
from tui.widgets.blocks import AssistantBlock, ReasoningBlock, StopBlock, UserBlock
from tui.widgets.conversation import Conversation
from tui.widgets.plain_output import PlainOutput
from tui.widgets.prompt_input import PromptInput
from tui.widgets.status_bar import StatusBar
from tui.widgets.stop_panel import StopPanel
from tui.widgets.tool_block import ToolBlock


def _blocks(app) -> list:
    return list(app.query_one(Conversation).children)


def _static_text(widget: Static) -> str:
    rendered = widget.render()
    return rendered.plain if isinstance(rendered, Text) else str(rendered)


class TestTaskRuns:
    async def test_blocks_appear_in_order(self, make_app, ui) -> None:
        replies = [
            {"content": "Let me read the README.",
             "tool_calls": [{"name": "read", "arguments": {"path": "README.md"}}]},
            {"content": "The README says it is a **tiny project**."},
        ]
        app, provider = make_app(replies)
        seen: list[str] = []

        def hook(message) -> None:
            if isinstance(message, AgentEventMessage):
                seen.append(message.event.type)

        async with app.run_test(size=(120, 36), message_hook=hook) as pilot:
            await ui.submit(pilot, "what is this project?")
            await ui.wait_turn(pilot, app)

            blocks = _blocks(app)
            kinds = [type(b).__name__ for b in blocks]
            assert kinds[-4:] == ["UserBlock", "AssistantBlock", "ToolBlock", "AssistantBlock"]
            user = app.query_one(UserBlock)
            assert user.text == "what is this project?"
            first, second = app.query(AssistantBlock)
            assert first.text == "Let me read the README."
            assert second.text == "The README says it is a **tiny project**."
            tool = app.query_one(ToolBlock)
            assert tool.tool_name == "read" and tool.status == "ok"
            assert "tiny project used by the TUI tests" in (tool.output or "")
            assert not tool.expanded
            assert not tool.query(".tool-body"), "collapsed bodies are not mounted"
            assert app.handler.turn_finished.stop_reason == "done"
            assert not app.query(StopBlock)

        # Events arrive in the loop's order; deltas may be merged but keep their place.
        assert seen[0] == "turn_started" and seen[-1] == "turn_finished"
        assert seen.index("tool_call_started") < seen.index("tool_call_finished")
        assert len(provider.requests) == 2

    async def test_status_bar_shows_model_and_context(self, make_app, ui) -> None:
        app, _ = make_app([{"content": "hi"}], context_window=200_000)
        async with app.run_test(size=(120, 36)) as pilot:
            status = app.query_one(StatusBar)
            await ui.wait_prepared(pilot, app)
            text = status.info_text().plain
            assert "openai/gpt-4.1" in text and "200k ctx" in status.context_text()  # drawn by the ContextMeter
            assert "perm full-auto" in text and "Act" in text

    async def test_reasoning_is_collapsed_and_expands(self, make_app, ui) -> None:
        app, _ = make_app([{"reasoning_content": "The user wants a greeting.", "content": "Hello!"}])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "say hello")
            await ui.wait_turn(pilot, app)
            block = app.query_one(ReasoningBlock)
            assert block.text == "The user wants a greeting."
            assert not block.query(".reasoning-body")
            await pilot.click(ReasoningBlock)
            await pilot.pause()
            assert block.expanded
            body = block.query_one(".reasoning-body", Static)
            assert "greeting" in _static_text(body)

    async def test_max_turns_shows_a_stop_message_not_an_error(self, make_app, ui) -> None:
        call = {"name": "read", "arguments": {"path": "README.md"}}
        app, _ = make_app([{"tool_calls": [call]}, {"tool_calls": [call]}, {"content": "never"}], max_turns=1)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "loop")
            await ui.wait_turn(pilot, app)
            stop = app.query_one(StopPanel)
            assert stop.reason == "max_turns"
            texts = [_static_text(s) for s in stop.query(Static)]
            assert "Step limit reached" in texts[0]
            assert texts[1].startswith("Stopped after 1 steps"), "it says so, it is not an error"
            assert not app.query("ErrorBlock") and not app.query(StopBlock)


class TestToolBlocks:
    async def test_expand_shows_output_as_plain_text(self, make_app, ui) -> None:
        replies = [
            {"tool_calls": [{"name": "read", "arguments": {"path": "calc.py"}}]},
            {"content": "Found it."},
        ]
        app, _ = make_app(replies)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "read calc.py")
            await ui.wait_turn(pilot, app)
            tool = app.query_one(ToolBlock)
            await pilot.click(ToolBlock)
            await pilot.pause()
            assert tool.expanded and tool.has_class("-expanded")
            outputs = tool.query(".tool-output")
            assert len(outputs) == 1
            assert "return a - b" in _static_text(outputs.first(Static))
            # ctrl+o toggles the latest tool block
            await pilot.press("ctrl+o")
            await pilot.pause()
            assert not tool.expanded

    async def test_markup_in_real_bash_output_renders_literally(self, make_app, ui) -> None:
        command = "printf '[bold]x[/] [red]y \\033[31mred\\033[0m\\r\\nend [/]\\n'"
        replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"content": "ok"}]
        app, _ = make_app(replies)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "print some markup")
            await ui.wait_turn(pilot, app)
            tool = app.query_one(ToolBlock)
            assert tool.status == "ok", tool.output
            tool.expanded = True
            await pilot.pause()
            output = tool.query(".tool-output").first(PlainOutput)
            plain = output.text.plain
            assert "[bold]x[/] [red]y red\nend [/]" in plain
            assert "\r" not in plain and "\x1b" not in plain
            assert "[bold]x[/] [red]y red" in _static_text(output)

    async def test_ansi_colours_in_a_tool_result_are_shown(self, make_app) -> None:
        # The bash tool strips escapes for the model; a tool result that keeps them (e.g. a
        # future MCP tool) is drawn in colour, never as raw escape bytes.
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            handler = app.handler
            await handler.handle(tool_call_started("c1", "bash", {"command": "pytest"}))
            await handler.handle(ToolCallFinished(id="c1", name="bash", exit_code=1, is_error=True,
                                                  output="\x1b[31mFAILED\x1b[0m [x]\n50%\r100%\n"))
            tool = app.query_one(ToolBlock)
            tool.expanded = True
            await pilot.pause()
            output = tool.query(".tool-output").first(PlainOutput)
            assert output.text.plain == "FAILED [x]\n100%"
            assert [span.style.color.number for span in output.text.spans] == [1]
            assert tool.status == "error" and "exit 1" in tool._meta().plain

    async def test_edit_block_shows_its_diff(self, make_app, workspace, ui) -> None:
        replies = [
            {"tool_calls": [{"name": "edit", "arguments": {"path": "calc.py", "old_string": "a - b",
                                                           "new_string": "a + b"}}]},
            {"content": "Fixed."},
        ]
        app, _ = make_app(replies)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "fix add")
            await ui.wait_turn(pilot, app)
            tool = app.query_one(ToolBlock)
            assert tool.status == "ok", tool.output
            assert tool.diff and "+    return a + b" in tool.diff
            assert tool.expanded, "a change is shown at once"
            assert tool.query(".tool-diff")
            assert "+1 -1" in tool._meta().plain
        assert "a + b" in (workspace / "calc.py").read_text()


class TestCancel:
    async def test_escape_cancels_a_running_bash(self, make_app, ui) -> None:
        replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 30"}}]},
                   {"content": "should not be reached"}]
        app, provider = make_app(replies)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "wait a long time")
            await ui.wait_for(pilot, lambda: bool(app.query(ToolBlock)), what="the bash block")
            tool = app.query_one(ToolBlock)
            assert tool.status == "running"
            await pilot.pause(0.3)
            started = time.monotonic()
            await pilot.press("escape")
            await ui.wait_turn(pilot, app, timeout=10)
            assert time.monotonic() - started < 5
            assert tool.status == "cancelled"
            assert app.handler.turn_finished.stop_reason == "cancelled"
            assert app.query_one(StopBlock).reason == "cancelled"
            assert len(provider.requests) == 1
            # The app is usable again.
            assert not app.runner.running


class TestLongReplies:
    async def test_long_reply_is_split_into_one_widget_blocks(self, make_app, ui) -> None:
        from textual.widgets import Markdown

        from tui.widgets.flat_markdown import FlatMarkdownView

        paragraph = "A sentence about the change, long enough to matter. " * 8
        fence = "```python\n" + "\n\n".join(f"x{i} = {i}" for i in range(60)) + "\n```\n\n"
        reply = "\n\n".join([paragraph] * 12) + "\n\n" + fence + "\n\n".join([paragraph] * 12)
        app, _ = make_app([{"content": reply}])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "explain")
            await ui.wait_turn(pilot, app)
            blocks = list(app.query(AssistantBlock))
            assert len(blocks) > 3
            assert "".join(b.text for b in blocks) == reply  # nothing lost or repeated
            assert all(len(b.text) < 2000 for b in blocks)
            # Each part is one widget showing its whole text; no per-paragraph widget tree.
            views = [b.query_one(FlatMarkdownView) for b in blocks]
            assert [v.markdown for v in views] == [b.carry + b.text for b in blocks]
            assert not app.query(Markdown)
            assert "x59 = 59" in "".join(str(v.render()) for v in views)
            # Parts cut at a paragraph break keep the blank line between them (a top margin).
            assert not any(b.has_class("continuation") for b in blocks if b.text.startswith("A sentence"))

    async def test_a_long_code_block_and_list_are_split_without_a_seam(self, make_app, ui) -> None:
        from tui.widgets.flat_markdown import FlatMarkdownView

        code = "".join(f"value_{i} = compute({i})  # step {i}\n" for i in range(150))
        items = "".join(f"- item {i} reads the **config**\n" for i in range(120))
        reply = f"Here is the file:\n\n```python\n{code}```\n\nSteps:\n{items}"
        app, _ = make_app([{"content": reply}])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "write it")
            await ui.wait_turn(pilot, app)
            blocks = list(app.query(AssistantBlock))
            assert "".join(b.text for b in blocks) == reply
            assert all(len(b.text) < 2000 for b in blocks), [len(b.text) for b in blocks]
            code_parts = [b for b in blocks if b.carry == "```python\n"]
            assert code_parts and all(b.code_continues_above for b in code_parts)
            assert all(b.has_class("continuation") for b in code_parts)
            # Drawn, the code reads as one block: every line once, in order, no blank row at a seam.
            drawn = "\n".join(str(b.query_one(FlatMarkdownView).render()) for b in blocks)
            code_rows = [row.strip() for row in drawn.split("\n") if "compute(" in row]
            assert code_rows == [line.strip() for line in code.splitlines()]
            first = drawn.index("value_0 =")
            last = drawn.index("value_149 =")
            assert "\n\n" not in drawn[first:last].replace(" ", "")
            # The list too: each item once, in order, as bullets.
            bullets = [row.strip() for row in drawn.split("\n") if "item " in row]
            assert bullets == [f"• item {i} reads the config" for i in range(120)]


    async def test_a_streaming_block_redraws_without_layout_when_no_line_is_added(self, make_app) -> None:
        from tui.widgets.flat_markdown import FlatMarkdownView

        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            block = AssistantBlock()
            await app.query_one(Conversation).add(block)
            await block.write("Hello")
            await block.finish()
            await pilot.pause()
            view = block.query_one(FlatMarkdownView)
            assert str(view.render()) == "Hello"
            layouts: list[bool] = []
            original = view.refresh

            def spy(*regions, layout: bool = False, **kwargs):
                layouts.append(layout)
                return original(*regions, layout=layout, **kwargs)

            view.refresh = spy
            await block.write(", world")  # same line: a repaint
            await block.finish()
            await block.write("\n\nA second paragraph")  # two more lines: a layout pass
            await block.finish()
            assert layouts == [False, True]
            await pilot.pause()
            assert str(view.render()) == "Hello, world\n\nA second paragraph"
            assert block.size.height == 3
            # Copying gets the plain text, with no padding spaces.
            from textual.selection import Selection

            assert view.get_selection(Selection(None, None)) == ("Hello, world\n\nA second paragraph", "\n")


class TestColouredOutput:
    async def test_bash_colours_reach_the_block_but_not_the_model(self, make_app, ui) -> None:
        command = "printf '\\033[32mok\\033[0m [x]\\n'"
        replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"content": "ok"}]
        app, _ = make_app(replies)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "print in colour")
            await ui.wait_turn(pilot, app)
            tool = app.query_one(ToolBlock)
            assert "\x1b" not in (tool.output or ""), "the model's copy has no escapes"
            tool.expanded = True
            await pilot.pause()
            assert tool.display, "the widget stays visible"
            output = tool.query(".tool-output").first(PlainOutput)
            assert output.text.plain.startswith("ok [x]")
            assert tool.display_output and "\x1b[32m" in tool.display_output, "the core kept the colours"
            assert [span.style.color.number for span in output.text.spans if span.style.color] == [2]


class TestKeyboardScrolling:
    async def test_page_keys_scroll_the_conversation_from_the_prompt(self, make_app, ui) -> None:
        reply = "\n\n".join(f"Paragraph {i} of a long answer." for i in range(80))
        app, _ = make_app([{"content": reply}])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "explain at length")
            await ui.wait_turn(pilot, app)
            await pilot.pause()
            conversation = app.query_one(Conversation)
            assert app.focused is app.query_one(PromptInput)
            bottom = conversation.scroll_y
            assert bottom == conversation.max_scroll_y > 0
            await pilot.press("pageup")
            await pilot.pause()
            assert conversation.scroll_y < bottom
            assert app.focused is app.query_one(PromptInput), "the prompt keeps the focus"
            scrolled = conversation.scroll_y
            from agent.events import TextDelta

            await app.handler.handle(TextDelta(text="\n\n".join(["More output."] * 30)))
            await app.handler.end_streams()
            await pilot.pause()
            assert conversation.scroll_y == scrolled, "new output does not pull a scrolled-up view down"
            await pilot.press("ctrl+home")
            await pilot.pause()
            assert conversation.scroll_y == 0
            await pilot.press("pagedown")
            await pilot.pause()
            assert 0 < conversation.scroll_y < bottom
            await pilot.press("ctrl+end")
            await pilot.pause()
            assert conversation.scroll_y == conversation.max_scroll_y

    async def test_page_keys_pressed_faster_than_the_screen_refreshes_each_move_a_page(self, make_app, ui) -> None:
        """Keys that arrive before the screen has refreshed (a held PageUp, a fast typist over
        ssh) each move a whole page: the scroll was deferred to the next refresh, and every
        PageUp until then started from the same place (10 fast PageUps moved 2 pages)."""
        from textual import events

        reply = "\n\n".join(f"Paragraph {i} of a long answer." for i in range(200))
        app, _ = make_app([{"content": reply}])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "explain at length")
            await ui.wait_turn(pilot, app)
            await pilot.pause()
            conversation = app.query_one(Conversation)
            bottom = conversation.scroll_y
            page = conversation.scrollable_content_region.height - 1
            assert bottom > 6 * page, "tall enough for the test"
            for _ in range(5):  # posted together: handled before any refresh
                app.post_message(events.Key("pageup", None))
            await pilot.pause()
            await pilot.pause()
            assert conversation.scroll_y == bottom - 5 * page
            for _ in range(3):
                app.post_message(events.Key("pagedown", None))
            await pilot.pause()
            await pilot.pause()
            assert conversation.scroll_y == bottom - 2 * page


class TestSteering:
    async def test_ctrl_s_sends_the_queued_message_into_the_running_turn(self, make_app, ui) -> None:
        from tui.widgets.blocks import UserBlock

        replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 1"}}]},
                   {"content": "Done, README too."}]
        app, provider = make_app(replies)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "run the slow thing")
            await ui.wait_for(pilot, lambda: bool(app.query(ToolBlock)), what="the bash block")
            await ui.submit(pilot, "also look at the README")
            assert app.queued == ["also look at the README"]
            await pilot.press("ctrl+s")
            await ui.wait_turn(pilot, app, timeout=15)
            await pilot.pause()
            assert app.queued == [] and app.steering == []
            texts = [b.text for b in app.query(UserBlock)]
            assert texts == ["run the slow thing", "also look at the README"]
            assert len(provider.requests) == 2, "one turn, not a second one"
            assert provider.requests[1].messages[-1]["content"] == "also look at the README"


class TestCopyingTheConversation:
    """Text selected with the mouse in the conversation is copied with Ctrl+C (the app's
    priority Ctrl+C binding used to take the key and copy only the prompt's selection), and the
    selected span is drawn visibly."""

    async def _selected_answer(self, app, pilot, ui):  # noqa: ANN001, ANN202
        from textual.selection import Selection

        from tui.widgets.flat_markdown import FlatMarkdownView

        await ui.submit(pilot, "say it")
        await ui.wait_turn(pilot, app)
        view = app.query(FlatMarkdownView).last()
        app.screen.selections = {view: Selection(None, None)}  # what a drag over it makes
        await pilot.pause()
        return view

    async def test_ctrl_c_copies_the_mouse_selection_and_says_so(self, make_app, ui) -> None:
        app, _ = make_app([{"content": "The answer is **42**.\n\nA second line."}])
        toasts: list[str] = []
        async with app.run_test(size=(120, 36)) as pilot:
            app.notify = lambda message, **_: toasts.append(str(message))  # type: ignore[method-assign]
            await self._selected_answer(app, pilot, ui)
            await pilot.press("ctrl+c")
            assert app.clipboard == "The answer is 42.\n\nA second line."
            assert toasts[-1] == "Copied 33 characters (3 lines)."
            assert not app.screen.selections, "the selection is cleared once copied"
            await pilot.press("ctrl+c")  # nothing selected now: the usual first Ctrl+C
            assert toasts[-1] == "Press Ctrl+C again to quit." and app.return_code is None

    async def test_the_selected_span_keeps_its_text_colour_over_the_selection_background(self, make_app,
                                                                                        ui) -> None:
        app, _ = make_app([{"content": "plain words here"}])
        async with app.run_test(size=(120, 36)) as pilot:
            view = await self._selected_answer(app, pilot, ui)
            segments = [seg for seg in view.render_line(0) if seg.text.strip()]
            assert segments and "".join(seg.text for seg in segments).strip() == "plain words here"
            selection_bg = app.screen.get_component_rich_style("screen--selection").bgcolor
            for seg in segments:
                assert seg.style.bgcolor == selection_bg
                assert seg.style.color is not None and seg.style.color != seg.style.bgcolor, seg

    async def test_both_themes_select_with_a_background_the_text_stays_readable_on(self, make_app) -> None:
        """WCAG contrast of the theme's text over the selection background: >= 4.5:1 (the
        primary colour at 50%, Textual's default, left code colours near 1.2:1 in the light
        theme)."""
        from textual.color import Color

        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            for theme in ("opencli-dark", "opencli-light"):
                app.theme = theme
                await pilot.pause()
                background = Color.parse(app.theme_variables["screen-selection-background"])
                text = Color.parse(app.current_theme.foreground)
                ratio = _contrast(text, background)
                assert ratio >= 4.5, (theme, round(ratio, 2))


def _contrast(first, second) -> float:  # noqa: ANN001 - two textual Colors
    """WCAG 2 contrast ratio of two colours (1 to 21)."""
    def luminance(colour) -> float:  # noqa: ANN001
        def channel(value: int) -> float:
            c = value / 255
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
        return 0.2126 * channel(colour.r) + 0.7152 * channel(colour.g) + 0.0722 * channel(colour.b)
    high, low = sorted((luminance(first), luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)
