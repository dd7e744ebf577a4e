"""Pilot tests: the truncation badge of a tool block and the output viewer screen (search, jumps,
copy, close), plus case C23 (a huge bash output must not freeze the UI)."""

from __future__ import annotations

import time
from pathlib import Path

from tests.helpers import tool_call_started
from agent.events import ToolCallFinished
from tui.screens.output_viewer import OutputViewerScreen
from tui.widgets.file_view import CACHE_LINES, FileView
from tui.widgets.plain_output import PlainOutput
from tui.widgets.status_bar import StatusBar
from tui.widgets.tool_block import ToolBlock, TruncationBadge


def _numbered(n: int) -> bytes:
    return b"".join(b"row %05d of the output\n" % i for i in range(n))


async def _open_viewer(app, pilot, ui, path: Path) -> OutputViewerScreen:
    screen = OutputViewerScreen(path)
    await app.push_screen(screen)
    await ui.wait_for(pilot, lambda: not screen.view.indexing, what="the index")
    await pilot.pause()
    return screen


class TestTruncationBadge:
    async def test_badge_counts_lines_and_v_opens_the_viewer(self, make_app, ui) -> None:
        replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": "seq 1 5000"}}]},
                   {"content": "Counted."}]
        app, _ = make_app(replies, max_tool_output=300)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "count to 5000")
            await ui.wait_turn(pilot, app)
            block = app.query_one(ToolBlock)
            assert block.truncated and block.saved_path, block.output
            await ui.wait_for(pilot, lambda: block.saved_lines is not None, what="the line count")
            size = Path(block.saved_path).stat().st_size
            assert block.saved_size == size and block.saved_lines == 5000
            assert block.badge_text() == f"truncated: {size / 1024:.1f} KB, 5 000 lines"
            badge = block.query_one(TruncationBadge)
            assert badge.display and badge.has_class("-link")
            assert "truncated" not in block._meta().plain, "the badge says it once"
            block.focus()
            await pilot.press("v")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, OutputViewerScreen), what="the viewer")
            viewer = app.screen
            await ui.wait_for(pilot, lambda: not viewer.view.indexing, what="the index")
            assert viewer.view.line_count == 5000
            assert viewer.view.line_text(4999)[0] == "5000"
            await pilot.press("q")
            await pilot.pause()
            assert not isinstance(app.screen, OutputViewerScreen)
            assert not block.expanded, "v does not toggle the block"

    async def test_clicking_the_badge_opens_the_viewer(self, make_app, ui, tmp_path) -> None:
        saved = tmp_path / "tool-output-c1.txt"
        saved.write_bytes(_numbered(300))
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            handler = app.handler
            await handler.handle(tool_call_started("c1", "bash", {"command": "make"}))
            await handler.handle(ToolCallFinished(id="c1", name="bash", output="head\n[... cut ...]\ntail",
                                                  truncated=True, saved_path=str(saved), exit_code=0))
            block = app.query_one(ToolBlock)
            await ui.wait_for(pilot, lambda: block.saved_lines == 300, what="the line count")
            await pilot.click(TruncationBadge)
            await ui.wait_for(pilot, lambda: isinstance(app.screen, OutputViewerScreen), what="the viewer")
            assert app.screen.path == saved
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, OutputViewerScreen)
            assert not block.expanded, "the click went to the badge, not the block"

    async def test_unsaved_output_says_so_and_v_does_nothing(self, make_app, ui) -> None:
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            handler = app.handler
            await handler.handle(tool_call_started("c1", "grep", {"pattern": "x"}))
            await handler.handle(ToolCallFinished(id="c1", name="grep", output="a\n[... cut ...]\nb",
                                                  truncated=True, saved_path=None))
            block = app.query_one(ToolBlock)
            assert block.badge_text() == "truncated (full output not saved)"
            block.focus()
            await pilot.press("v")
            await pilot.pause()
            assert not isinstance(app.screen, OutputViewerScreen)

    async def test_binary_output_saved_without_truncation_can_be_viewed(self, make_app, ui, tmp_path) -> None:
        saved = tmp_path / "tool-output-b1.txt"
        saved.write_bytes(b"\x00\x01binary\x00\n" * 100)  # 1000 bytes
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            await app.handler.handle(tool_call_started("b1", "bash", {"command": "cat a.bin"}))
            await app.handler.handle(ToolCallFinished(id="b1", name="bash", output="(binary output, 1.2 KB)",
                                                      saved_path=str(saved), exit_code=0))
            block = app.query_one(ToolBlock)
            await ui.wait_for(pilot, lambda: block.saved_lines == 100, what="the line count")
            assert block.badge_text() == "saved output: 1000 bytes, 100 lines"
            block.focus()
            await pilot.press("v")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, OutputViewerScreen), what="the viewer")
            view = app.screen.view
            await ui.wait_for(pilot, lambda: not view.indexing, what="the index")
            assert view.line_text(0)[0] == "\u2400binary\u2400"

    async def test_v_opens_an_untruncated_result_whole_from_memory(self, make_app, ui) -> None:
        """The body shows at most 400 lines of a result under the truncation cap; v shows every
        line the model received, from the result itself (nothing written to disk)."""
        output = "\n".join(f"row {i}" for i in range(1500)) + "\n[exit code: 0]"
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            await app.handler.handle(tool_call_started("c1", "bash", {"command": "seq 1500"}))
            await app.handler.handle(ToolCallFinished(id="c1", name="bash", output=output, exit_code=0))
            block = app.query_one(ToolBlock)
            assert "1500 lines" in block._meta().plain
            block.focus()
            await pilot.press("v")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, OutputViewerScreen), what="the viewer")
            screen = app.screen
            view = screen.view
            await ui.wait_for(pilot, lambda: not view.indexing, what="the index")
            assert view.line_count == 1501 and view.line_text(1499)[0] == "row 1499"
            assert not str(screen.path).startswith(str(app.session.workspace))
            await pilot.press("q")
            await pilot.pause()
            assert not isinstance(app.screen, OutputViewerScreen)

    async def test_an_untruncated_block_has_no_badge(self, make_app, ui) -> None:
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            await app.handler.handle(tool_call_started("c1", "bash", {"command": "ls"}))
            await app.handler.handle(ToolCallFinished(id="c1", name="bash", output="a\nb\n", exit_code=0))
            block = app.query_one(ToolBlock)
            await pilot.pause()
            assert block.badge_text() == "" and not block.query_one(TruncationBadge).display
            assert "2 lines" in block._meta().plain


class TestOutputViewer:
    async def test_jumps_and_cursor_keys(self, make_app, ui, tmp_path) -> None:
        path = tmp_path / "out.txt"
        path.write_bytes(_numbered(1000))
        app, _ = make_app([])
        async with app.run_test(size=(100, 30)) as pilot:
            viewer = await _open_viewer(app, pilot, ui, path)
            view = viewer.view
            assert app.focused is view and view.cursor == 0
            await pilot.press("G")
            assert view.cursor == 999 and view.scroll_offset.y == 1000 - view.size.height
            await pilot.press("g")
            assert view.cursor == 0 and view.scroll_offset.y == 0
            await pilot.press("end")
            assert view.cursor == 999
            await pilot.press("home", "down", "down")
            assert view.cursor == 2
            await pilot.press("pagedown")
            assert view.cursor == 2 + view.size.height
            await pilot.press("up")
            assert view.cursor == 1 + view.size.height
            assert f"line {view.cursor + 1}/1 000" in viewer.query_one("#viewer-message").render().plain
            title = viewer.query_one("#viewer-title").render().plain
            assert "out.txt" in title and "1 000 lines" in title

    async def test_search_next_previous_and_wrap(self, make_app, ui, tmp_path) -> None:
        path = tmp_path / "log.txt"
        lines = [f"step {i}: ok" for i in range(500)]
        for i in (40, 250, 430):
            lines[i] = f"step {i}: ERROR disk full"
        path.write_text("\n".join(lines) + "\n")
        app, _ = make_app([])
        async with app.run_test(size=(100, 30)) as pilot:
            viewer = await _open_viewer(app, pilot, ui, path)
            view = viewer.view

            async def wait_cursor(line: int) -> None:
                await ui.wait_for(pilot, lambda: view.cursor == line, what=f"the cursor on line {line}")

            await pilot.press("slash")
            search = viewer.query_one("#viewer-search")
            assert app.focused is search and search.display
            await pilot.press(*"error", "enter")  # lower case: ignores case
            await wait_cursor(40)
            assert app.focused is view and not search.display
            assert view.search_query == "error" and view.ignore_case
            top = int(view.scroll_offset.y)
            assert top <= 40 < top + view.size.height
            await ui.wait_for(pilot, lambda: "match 1 of 3 on line 41" in viewer.message, what="match 1 of 3")
            await pilot.press("n")
            await wait_cursor(250)
            await ui.wait_for(pilot, lambda: "match 2 of 3 on line 251" in viewer.message, what="match 2 of 3")
            await pilot.press("n")
            await wait_cursor(430)
            await pilot.press("n")
            await wait_cursor(40)
            assert "wrapped" in viewer.message and "match 1 of 3" in viewer.message
            await pilot.press("G")  # moving off the match: its message goes
            await ui.wait_for(pilot, lambda: view.cursor > 430, what="the end")
            assert "match" not in viewer.message
            await pilot.press("g")
            await wait_cursor(0)
            assert viewer.message == ""
            await pilot.press("n")
            await wait_cursor(40)
            await pilot.press("N")
            await wait_cursor(430)
            await pilot.press("N")
            await wait_cursor(250)
            # a capital letter makes the search case-sensitive: no match
            await pilot.press("slash")
            search.value = ""
            await pilot.press(*"Error", "enter")
            await ui.wait_for(pilot, lambda: viewer.message.startswith("not found"), what="not found")
            assert view.cursor == 250

    async def test_copy_line_and_page(self, make_app, ui, tmp_path) -> None:
        path = tmp_path / "out.txt"
        path.write_bytes(_numbered(200))
        app, _ = make_app([])
        async with app.run_test(size=(100, 30)) as pilot:
            viewer = await _open_viewer(app, pilot, ui, path)
            await pilot.press("down", "down", "c")
            assert app.clipboard == "row 00002 of the output"
            await pilot.press("C")
            height = viewer.view.size.height
            copied = app.clipboard.split("\n")
            assert len(copied) == height and copied[0] == "row 00000 of the output"

    async def test_escape_closes_search_then_viewer(self, make_app, ui, tmp_path) -> None:
        path = tmp_path / "out.txt"
        path.write_bytes(_numbered(10))
        app, _ = make_app([])
        async with app.run_test(size=(100, 30)) as pilot:
            viewer = await _open_viewer(app, pilot, ui, path)
            await pilot.press("slash", "x")
            assert viewer.has_class("-searching")
            await pilot.press("escape")
            assert not viewer.has_class("-searching") and app.screen is viewer
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is not viewer

    async def test_raw_bytes_are_shown_as_plain_text(self, make_app, ui, tmp_path) -> None:
        path = tmp_path / "raw.txt"
        path.write_bytes(b"\x1b[1;31mFAILED\x1b[0m [bold]x[/]\r\n50%\r100%\n\xff\xfe\n" + b"y" * 20000 + b"\nend")
        app, _ = make_app([])
        async with app.run_test(size=(100, 30)) as pilot:
            viewer = await _open_viewer(app, pilot, ui, path)
            view = viewer.view
            assert view.line_count == 5, "a last line without a newline counts"
            assert view.line_text(0) == ("FAILED [bold]x[/]", False)
            assert view.line_text(1) == ("100%", False)
            assert view.line_text(2) == ("\ufffd\ufffd", False)
            text, cut = view.line_text(3)
            assert cut and len(text) == 8192
            assert view.line_text(4) == ("end", False)
            strip = view.render_line(0)
            assert "[bold]x[/]" in strip.text and "\x1b" not in strip.text

    async def test_empty_and_missing_files(self, make_app, ui, tmp_path) -> None:
        empty = tmp_path / "empty.txt"
        empty.write_bytes(b"")
        app, _ = make_app([])
        async with app.run_test(size=(100, 30)) as pilot:
            viewer = await _open_viewer(app, pilot, ui, empty)
            assert "(empty file)" in viewer.view.render_line(0).text
            await pilot.press("c", "C", "G", "n")  # nothing to copy or find: no crash
            await pilot.press("escape", "escape")
            await pilot.pause()
            viewer = await _open_viewer(app, pilot, ui, tmp_path / "gone.txt")
            assert viewer.view.error and "cannot" in viewer.view.render_line(0).text

    async def test_memory_stays_bounded_while_paging_a_big_file(self, make_app, ui, tmp_path) -> None:
        path = tmp_path / "big.txt"
        path.write_bytes(_numbered(60000))  # 1.4 MB, more than the first chunk
        app, _ = make_app([])
        progress: list[bool] = []

        def hook(message) -> None:
            if isinstance(message, FileView.Indexed):
                progress.append(message.done)

        async with app.run_test(size=(100, 30), message_hook=hook) as pilot:
            screen = OutputViewerScreen(path)
            await app.push_screen(screen)
            view = screen.view
            await ui.wait_for(pilot, lambda: not view.indexing, what="the index")
            await pilot.pause()
            assert view.line_count == 60000
            for _ in range(60):
                await pilot.press("pagedown")
            await pilot.press("G")
            await pilot.pause()
            assert view.cache_size <= CACHE_LINES
            assert view.index.index_bytes < 60000, "8 bytes per 32 lines, not per line"
            assert view.line_text(59999)[0] == "row 59999 of the output"
            assert False in progress and progress[-1] is True, "lines were shown before the index was done"


class TestViewerDuringATurn:
    async def test_a_turn_may_end_while_the_viewer_is_open(self, make_app, ui) -> None:
        replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": "seq 1 3000"}}]},
                   {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 0.6; echo done"}}]},
                   {"content": "All done."}]
        app, _ = make_app(replies, max_tool_output=300)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "go")
            await ui.wait_for(pilot, lambda: any(b.saved_path for b in app.query(ToolBlock)), what="the output")
            block = next(b for b in app.query(ToolBlock) if b.saved_path)
            block.action_view_output()
            await ui.wait_for(pilot, lambda: isinstance(app.screen, OutputViewerScreen), what="the viewer")
            await ui.wait_turn(pilot, app)
            assert isinstance(app.screen, OutputViewerScreen), "the viewer stays open"
            assert app.main_screen.query_one(StatusBar).activity == ""
            await pilot.press("q")
            await pilot.pause()
            assert app.handler.turn_finished.stop_reason == "done"


class TestC23HugeToolOutput:
    async def test_c23_huge_bash_output_does_not_freeze_the_ui(self, make_app, workspace, ui) -> None:
        big = "\n".join(f"line {i:07d} " + "x" * 60 for i in range(75000))  # ~5.5 MB, 75,000 lines
        (workspace / "big.txt").write_text(big, encoding="utf-8")
        replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": "cat big.txt"}}]},
                   {"content": "That is a big file."}]
        app, _ = make_app(replies)  # full-auto: the real bash tool runs
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            last = [time.monotonic()]
            worst = [0.0]

            def tick() -> None:
                now = time.monotonic()
                worst[0] = max(worst[0], now - last[0])
                last[0] = now

            timer = app.set_interval(0.05, tick)
            await ui.submit(pilot, "show me big.txt")
            await ui.wait_turn(pilot, app, timeout=60)
            block = app.query_one(ToolBlock)
            await ui.wait_for(pilot, lambda: block.saved_lines is not None, what="the line count")
            block.expanded = True  # the body draws the model's truncated view, never the 5.5 MB
            await pilot.pause(0.2)
            timer.stop()
            assert worst[0] < 0.5, f"the event loop was blocked for {worst[0]:.2f}s"

            assert block.status == "ok" and block.truncated and block.saved_path
            assert len(block.output or "") < 21000, "the 20k-char truncated view plus its marker"
            assert str(block.saved_path) in (block.output or ""), "the marker points at the saved file"
            shown = sum(len(widget.text.plain) for widget in block.query(PlainOutput))
            assert shown < 21000
            assert block.saved_size == len(big) and block.saved_lines == 75000

            block.expanded = False
            await pilot.pause()
            await pilot.click(TruncationBadge)
            await ui.wait_for(pilot, lambda: isinstance(app.screen, OutputViewerScreen), what="the viewer")
            view = app.screen.view
            await ui.wait_for(pilot, lambda: not view.indexing, what="the index")
            assert view.line_count == 75000
            await pilot.press("G")
            assert view.current_line_text() == "line 0074999 " + "x" * 60


class TestFocusAfterViewer:
    """Typing after closing the viewer (or help) must reach the prompt, never be lost."""

    async def _truncated_block(self, app, pilot, ui, tmp_path) -> ToolBlock:
        saved = tmp_path / "tool-output-f1.txt"
        saved.write_bytes(_numbered(300))
        await app.handler.handle(tool_call_started("f1", "bash", {"command": "make"}))
        await app.handler.handle(ToolCallFinished(id="f1", name="bash", output="head\n[... cut ...]\ntail",
                                                  truncated=True, saved_path=str(saved), exit_code=1))
        block = app.query_one(ToolBlock)
        await ui.wait_for(pilot, lambda: block.saved_lines == 300, what="the line count")
        return block

    async def test_typing_after_q_goes_to_the_prompt(self, make_app, ui, tmp_path) -> None:
        from tui.widgets.prompt_input import PromptInput

        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            block = await self._truncated_block(app, pilot, ui, tmp_path)
            block.focus()
            await pilot.pause()
            await pilot.press("v")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, OutputViewerScreen), what="the viewer")
            await pilot.press("q")
            await ui.wait_for(pilot, lambda: not isinstance(app.screen, OutputViewerScreen), what="close")
            await pilot.pause()
            prompt = app.query_one(PromptInput)
            assert app.focused is prompt
            await pilot.press("a", "b", "c")
            assert prompt.text == "abc"

    async def test_typing_on_a_focused_block_goes_to_the_prompt(self, make_app, ui, tmp_path) -> None:
        from tui.widgets.prompt_input import PromptInput

        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            block = await self._truncated_block(app, pilot, ui, tmp_path)
            block.focus()
            await pilot.pause()
            await pilot.press("f", "i", "x")
            await pilot.pause()
            prompt = app.query_one(PromptInput)
            assert app.focused is prompt and prompt.text == "fix"
            block.focus()
            await pilot.pause()
            await pilot.press("v")  # bound on the block: opens the viewer, not typed
            await ui.wait_for(pilot, lambda: isinstance(app.screen, OutputViewerScreen), what="the viewer")
            await pilot.press("escape")
            await pilot.pause()
            assert prompt.text == "fix"

    async def test_focus_returns_to_the_prompt_after_help(self, make_app, ui, tmp_path) -> None:
        from tui.screens.help import HelpScreen
        from tui.widgets.prompt_input import PromptInput

        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            block = await self._truncated_block(app, pilot, ui, tmp_path)
            block.focus()
            await pilot.pause()
            await pilot.press("f1")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
            await pilot.press("escape")
            await pilot.pause()
            assert app.focused is app.query_one(PromptInput)
