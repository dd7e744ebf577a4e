"""Pasting into the prompt: escape sequences and control characters never reach the text or the
key bindings, line ends become newlines, and one paste is one undo step.

The end-to-end test runs the real terminal input thread (``PasteSafeLinuxDriver``) on a pipe
against the running app: raw terminal bytes in, prompt text out.
"""

from __future__ import annotations

import contextlib

import os
import signal
import sys
import threading
import time

import pytest
from textual import events
from textual._xterm_parser import XTermParser
from textual.drivers.headless_driver import HeadlessDriver
from textual.drivers.linux_driver import LinuxDriver
from textual.widgets.text_area import Selection

from tui.widgets.blocks import UserBlock
from tui.widgets.bracketed_paste import (PASTE_END, PASTE_START, PasteSafeLinuxDriver, PasteSafeParser,
                                         paste_safe_driver_class)
from tui.widgets.prompt_input import PromptInput, clean_paste

COLOURED = "ls \x1b[1;31mred\x1b[0m done\r\nnext\x1b\x07 line\x1b[0m\r"


# -- cleaning ---------------------------------------------------------------------------------------
class TestCleanPaste:
    @pytest.mark.parametrize("raw, clean", [
        ("plain text", "plain text"),
        ("\x1b[31mred\x1b[0m and \x1b[38;2;1;2;3mtrue colour\x1b[m", "red and true colour"),
        ("a\x1b", "a"),  # a lone ESC at the end
        ("a\x1bb", "ab"),  # an ESC that starts no sequence goes alone
        ("\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC 8 hyperlink
        ("\x1b]0;title\x07after", "after"),  # window title ended by BEL
        ("\x1b(B\x1b[mok\x1b7\x1b8", "ok"),  # tput sgr0, save / restore cursor
        ("\x9b1mC1 CSI", "C1 CSI"),
        ("one\r\ntwo\rthree\nfour", "one\ntwo\nthree\nfour"),
        ("tab\tkept\x00\x07\x08\x0b\x0c\x7f\x85", "tab\tkept"),
        ("\x1bPlease keep me", "Please keep me"),  # an unended DCS does not eat the text
    ])
    def test_clean(self, raw: str, clean: str) -> None:
        assert clean_paste(raw) == clean


# -- the parser -------------------------------------------------------------------------------------
def _kinds(messages) -> list[str]:
    return [f"paste:{m.text}" if isinstance(m, events.Paste) else f"key:{m.key}" for m in messages]


class TestPasteSafeParser:
    def test_a_paste_with_escapes_is_one_paste_event(self) -> None:
        parser = PasteSafeParser(XTermParser())
        out = parser.feed(f"a{PASTE_START}{COLOURED}{PASTE_END}b")
        assert _kinds(out) == ["key:a", f"paste:{COLOURED}", "key:b"]

    # Every cut but the one right after the start marker's ESC (a lone ESC is passed on at once,
    # as the Esc key; that cut is left to the stock parser).
    @pytest.mark.parametrize("cut", range(2, len(PASTE_START + "x\x1b[31my" + PASTE_END)))
    def test_markers_cut_between_reads(self, cut: int) -> None:
        data = PASTE_START + "x\x1b[31my" + PASTE_END
        parser = PasteSafeParser(XTermParser())
        out = parser.feed(data[:cut]) + parser.feed(data[cut:] + "z")
        assert _kinds(out) == ["paste:x\x1b[31my", "key:z"]

    def test_a_lone_esc_is_never_held_back(self) -> None:
        parser = PasteSafeParser(XTermParser())
        assert parser.feed("\x1b") == []
        deadline = time.monotonic() + 2
        out: list = []
        while not out and time.monotonic() < deadline:
            time.sleep(0.02)
            out = parser.tick()
        assert _kinds(out) == ["key:escape"]

    def test_a_held_partial_start_is_released_by_tick(self) -> None:
        parser = PasteSafeParser(XTermParser())
        assert parser.feed("\x1b[") == []
        deadline = time.monotonic() + 2
        out: list = []
        while time.monotonic() < deadline and not out:
            time.sleep(0.02)
            out = parser.tick()
        assert out and not any(isinstance(m, events.Paste) for m in out)

    def test_end_of_input_inside_a_paste_keeps_the_text(self) -> None:
        parser = PasteSafeParser(XTermParser())
        assert parser.feed(PASTE_START + "half") == []
        assert _kinds(parser.feed("")) == ["paste:half"]


@contextlib.contextmanager
def real_input_thread(app, monkeypatch: pytest.MonkeyPatch, typed_ahead: bytes = b""):
    """Run ``PasteSafeLinuxDriver``'s real input thread for ``app`` on a pipe; yields the write
    end (bytes written there are what the terminal sends). ``typed_ahead`` is pending before the
    thread starts, as keys typed while the app was starting."""
    read_fd, write_fd = os.pipe()
    if typed_ahead:
        os.write(write_fd, typed_ahead)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTSTP, signal.SIGCONT)}
    with open(os.dup(read_fd), "rb", buffering=0) as fake_stdin:  # the constructor asks for fd 0
        monkeypatch.setattr(sys, "__stdin__", fake_stdin)
        try:
            driver = PasteSafeLinuxDriver(app)
        finally:  # the driver's constructor installs its own suspend handlers
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
    driver.fileno = read_fd
    thread = threading.Thread(target=driver.run_input_thread, daemon=True)
    thread.start()
    try:
        yield write_fd
    finally:
        driver.exit_event.set()
        thread.join(5)
        os.close(read_fd)
        os.close(write_fd)


def test_typeahead_keys_turn_line_feeds_back_into_enter_outside_pastes() -> None:
    from tui.widgets.bracketed_paste import typeahead_keys

    assert typeahead_keys("fix it\n") == "fix it\r"
    assert typeahead_keys("pasted\nlines\nhere") == "pasted\nlines\nhere"  # stays one prompt, unsent
    assert typeahead_keys("two lines\nthen enter\n") == "two lines\nthen enter\r"
    assert typeahead_keys(f"go\n{PASTE_START}a\nb{PASTE_END}\n") == f"go\r{PASTE_START}a\nb{PASTE_END}\n"
    assert typeahead_keys("") == ""


def test_driver_class_choice() -> None:
    assert paste_safe_driver_class(LinuxDriver) is PasteSafeLinuxDriver
    assert paste_safe_driver_class(HeadlessDriver) is HeadlessDriver


# -- the prompt -------------------------------------------------------------------------------------
class TestPasteIntoThePrompt:
    async def test_terminal_bytes_through_the_input_thread(self, make_app, ui,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
        """Raw bytes of a coloured paste, read by the real input thread: the prompt gets the
        clean text, no key of it reaches the app (no Enter sends it, no Esc cancels), and one
        undo takes the whole paste back."""
        app, provider = make_app([{"content": "never"}])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            prompt = app.query_one(PromptInput)
            prompt.focus()
            await pilot.press("a", "b")
            with real_input_thread(app, monkeypatch) as terminal:
                os.write(terminal, f"{PASTE_START}{COLOURED}{PASTE_END}".encode())
                os.write(terminal, b"c")  # typed after the paste
                await ui.wait_for(pilot, lambda: prompt.text.endswith("c"), what="the paste and the key")
            await pilot.pause()
            assert prompt.text == "abls red done\nnext line\nc"
            assert not app.query(UserBlock) and provider.requests == [] and not app.runner.running
            assert app.focused is prompt
            await pilot.press("ctrl+z")  # the "c"
            await pilot.press("ctrl+z")  # the whole paste
            await pilot.pause()
            assert prompt.text == "ab"

    async def test_a_paste_event_replaces_the_selection_as_one_undo_step(self, make_app, ui) -> None:
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            prompt = app.query_one(PromptInput)
            prompt.focus()
            await pilot.press(*"fix THIS now")
            prompt.selection = Selection((0, 4), (0, 8))  # "THIS"
            app.post_message(events.Paste("\x1b[32mthe\tbug\x1b[0m\x00"))
            await pilot.pause()
            assert prompt.text == "fix the\tbug now"
            assert prompt.cursor_location == (0, 11)
            await pilot.press("ctrl+z")
            await pilot.pause()
            assert prompt.text == "fix THIS now"

    async def test_a_task_typed_before_the_app_took_the_terminal_is_sent(self, make_app, ui,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
        """Typed during start-up, Enter reached us as a line feed (the terminal was still in cooked
        mode): the task stayed in the box as two lines. Pending input at start is typed-ahead keys."""
        app, provider = make_app([{"content": "on it"}])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            with real_input_thread(app, monkeypatch, typed_ahead=b"fix the tests\n") as terminal:
                await ui.wait_for(pilot, lambda: bool(provider.requests), what="the typed-ahead task")
                await ui.wait_turn(pilot, app)
                os.write(terminal, b"a\nb")  # once running, a line feed is Ctrl+J: a new line
                await ui.wait_for(pilot, lambda: app.query_one(PromptInput).text == "a\nb", what="two lines")
            assert [b.text for b in app.query(UserBlock)] == ["fix the tests"]
            assert len(provider.requests) == 1

    async def test_undoing_a_paste_taller_than_the_box_does_not_crash(self, make_app, ui) -> None:
        """The box grows to 12 rows; a longer paste gets a scrollbar. Undoing it used to crash
        the app inside Textual (the box shrank before the cursor moved back)."""
        for lines in (12, 20, 500):
            app, _ = make_app([])
            async with app.run_test(size=(120, 36)) as pilot:
                prompt = app.query_one(PromptInput)
                prompt.focus()
                await pilot.press(*"keep")
                app.post_message(events.Paste("\n" + "\n".join(f"line {i}" for i in range(lines))))
                await pilot.pause()
                assert prompt.document.line_count == lines + 1
                await pilot.press("ctrl+z")
                await pilot.pause()
                assert app.is_running and prompt.text == "keep"
                assert prompt.cursor_location == (0, 4)
                await pilot.press("ctrl+y")  # redo brings it back
                await pilot.pause()
                assert prompt.document.line_count == lines + 1
            app.session.close()

    async def test_a_one_character_paste_is_its_own_undo_step(self, make_app, ui) -> None:
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            prompt = app.query_one(PromptInput)
            prompt.focus()
            await pilot.press("a", "b")
            app.post_message(events.Paste("\x1b[1mc\x1b[0m"))
            await pilot.pause()
            await pilot.press("d")
            assert prompt.text == "abcd"
            await pilot.press("ctrl+z")
            await pilot.pause()
            assert prompt.text == "abc"
            await pilot.press("ctrl+z")
            await pilot.pause()
            assert prompt.text == "ab"

    async def test_nothing_left_to_paste_changes_nothing(self, make_app, ui) -> None:
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            prompt = app.query_one(PromptInput)
            prompt.focus()
            await pilot.press("x")
            app.post_message(events.Paste("\x1b[0m\x1b"))
            await pilot.pause()
            assert prompt.text == "x" and app.screen is app.main_screen

    async def test_ctrl_v_pastes_the_app_clipboard_cleaned(self, make_app, ui) -> None:
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            prompt = app.query_one(PromptInput)
            prompt.focus()
            app.copy_to_clipboard("\x1b[33mwarning:\x1b[0m line\r\n")
            await pilot.press("ctrl+v")
            await pilot.pause()
            assert prompt.text == "warning: line\n"
