"""Tab completes slash command names in the prompt; everywhere else Tab still moves the focus."""

from __future__ import annotations

import pytest

from tui import command_table as commands
from tui.command_table import Command, complete_command
from tui.screens.help import KEYS, HelpScreen
from tui.widgets.prompt_input import PromptInput
from tui.widgets.tool_block import ToolBlock

READ_TURN = [{"tool_calls": [{"name": "read", "arguments": {"path": "calc.py"}}]}, {"content": "read it"}]


def names(text: str) -> tuple[str, list[str]] | None:
    result = complete_command(text)
    return None if result is None else (result.text, [c.name for c in result.candidates])


class TestCompleteCommand:
    def test_unique_prefix_completes_with_a_space(self) -> None:
        assert names("/he") == ("/help ", ["help"])
        assert names("/co") == ("/compact ", ["compact"])
        assert names("/RES") == ("/resume ", ["resume"])  # case does not matter
        assert names("/quit") == ("/quit ", ["quit"])  # a full name gets its space

    def test_ambiguous_prefix_lists_the_candidates(self) -> None:
        assert names("/c") == ("/c", ["clear", "compact"])
        assert names("/") == ("/", [c.name for c in commands.COMMANDS])

    def test_ambiguous_prefix_extends_to_the_common_start(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(commands, "COMMANDS", commands.COMMANDS + [Command("compare", "/compare", "x")])
        assert names("/com") == ("/compa", ["compact", "compare"])
        assert names("/compa") == ("/compa", ["compact", "compare"])

    def test_no_match_changes_nothing(self) -> None:
        assert names("/xyz") == ("/xyz", [])

    @pytest.mark.parametrize("text", ["", "help", "/help ", "/model gpt", "//he", "/he\n", "/he\nmore",
                                      " /he", "/?"])
    def test_not_a_command_name_being_typed(self, text: str) -> None:
        assert complete_command(text) is None


async def _typed(pilot, app, text: str) -> PromptInput:
    prompt = app.query_one(PromptInput)
    prompt.focus()
    prompt.clear()
    prompt.insert(text)
    await pilot.pause()
    return prompt


class TestTabInThePrompt:
    async def test_unique_completion_then_enter_runs_the_command(self, make_app, ui) -> None:
        app, provider = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            prompt = await _typed(pilot, app, "/he")
            await pilot.press("tab")
            await pilot.pause()
            assert prompt.text == "/help " and prompt.cursor_location == (0, 6)
            assert app.focused is prompt and not prompt.border_subtitle
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
        assert provider.requests == []

    async def test_completion_is_one_undo_step(self, make_app, ui) -> None:
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            prompt = await _typed(pilot, app, "/mo")
            await pilot.press("tab")
            await pilot.press(*"gpt")
            await pilot.pause()
            assert prompt.text == "/model gpt"
            await pilot.press("ctrl+z")  # the typing
            await pilot.press("ctrl+z")  # the completion
            await pilot.pause()
            assert prompt.text == "/mo"

    async def test_ambiguous_prefix_shows_candidates_until_the_text_changes(
            self, make_app, ui, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(commands, "COMMANDS", commands.COMMANDS + [Command("compare", "/compare", "x")])
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            prompt = await _typed(pilot, app, "/c")
            await pilot.press("tab")
            await pilot.pause()
            assert prompt.text == "/c" and app.focused is prompt
            assert prompt.border_subtitle == "/clear  /compact  /compare"
            await pilot.press("o", "m", "tab")
            await pilot.pause()
            assert prompt.text == "/compa" and prompt.cursor_location == (0, 6)
            assert prompt.border_subtitle == "/compact  /compare"
            await pilot.press("c")
            await pilot.pause()
            assert not prompt.border_subtitle, "the hint goes once the text changes"
            await pilot.press("tab")
            await pilot.pause()
            assert prompt.text == "/compact " and not prompt.border_subtitle

    async def test_no_match_does_nothing(self, make_app, ui) -> None:
        app, _ = make_app(READ_TURN)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "read calc.py")  # a focusable tool block Tab could move to
            await ui.wait_turn(pilot, app)
            prompt = await _typed(pilot, app, "/xyz")
            await pilot.press("tab")
            await pilot.pause()
            assert prompt.text == "/xyz" and app.focused is prompt and not prompt.border_subtitle

    @pytest.mark.parametrize("text, cursor", [
        ("read the README", None),  # not a command
        ("/model gpt", None),  # arguments: the name is done
        ("/he", (0, 1)),  # the cursor is not at the end
        ("/he\nmore", None),  # more than one line
    ])
    async def test_tab_elsewhere_still_moves_the_focus(self, make_app, ui, text, cursor) -> None:
        app, _ = make_app(READ_TURN)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "read calc.py")
            await ui.wait_turn(pilot, app)
            prompt = await _typed(pilot, app, text)
            if cursor is not None:
                prompt.move_cursor(cursor)
            await pilot.press("tab")
            await pilot.pause()
            assert isinstance(app.focused, ToolBlock)
            assert prompt.text == text


def test_help_and_readme_mention_tab_completion() -> None:
    tab = dict(KEYS)["Tab"]
    assert "complete a /command name" in tab and "move focus" in tab
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert "| Tab | complete a `/command` name" in readme
