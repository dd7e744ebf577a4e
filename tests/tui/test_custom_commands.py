"""Custom slash commands from markdown files: /NAME sends the file's prompt with $ARGUMENTS
filled in; they are listed in /help and completed by Tab; the project's win over the user's;
built-in names stay built-in."""

from __future__ import annotations

from pathlib import Path

from agent.config.custom_commands import load_custom_commands
from tui.command_table import COMMANDS_BY_NAME, command_rows, complete_command, set_custom_commands


def _write(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")


def test_loading_precedence_and_prompts(tmp_path, monkeypatch):
    user = tmp_path / "user"
    monkeypatch.setenv("OPENCLI_CONFIG", str(user / "config.toml"))
    ws = tmp_path / "ws"
    _write(user / "commands", "review.md", "# Review the diff\nReview the change for bugs.")
    _write(user / "commands", "fixbug.md", "# User fixbug\nFix $ARGUMENTS")
    _write(ws / ".opencli" / "commands", "fixbug.md", "# Fix a bug\nFind and fix the bug: $ARGUMENTS. Add a test.")
    _write(ws / ".opencli" / "commands", "help.md", "not allowed to replace /help")
    _write(ws / ".opencli" / "commands", "bad name.md", "ignored")
    commands = {c.name: c for c in load_custom_commands(ws, frozenset(COMMANDS_BY_NAME))}
    assert sorted(commands) == ["fixbug", "review"]
    assert commands["fixbug"].description == "Fix a bug"
    assert commands["fixbug"].prompt("add() subtracts") == "# Fix a bug\nFind and fix the bug: add() subtracts. Add a test."
    assert commands["review"].prompt("in calc.py").endswith("Review the change for bugs.\n\nin calc.py")


def test_help_and_tab_know_them():
    from agent.config.custom_commands import CustomCommand

    set_custom_commands([CustomCommand("fixbug", "Fix $ARGUMENTS", "Fix a bug", Path("fixbug.md"))])
    try:
        assert ("/fixbug [ARGS]", "Fix a bug (custom: fixbug.md)") in command_rows()
        assert complete_command("/fix").text == "/fixbug "
    finally:
        set_custom_commands([])


async def test_typing_the_command_sends_its_prompt(make_app, workspace, ui) -> None:
    from tui.widgets.blocks import UserBlock

    _write(workspace / ".opencli" / "commands", "explain.md", "Explain what $ARGUMENTS does, briefly.")
    app, provider = make_app([{"content": "It adds."}])
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_prepared(pilot, app)
        await ui.submit(pilot, "/explain calc.add")
        await ui.wait_turn(pilot, app)
        assert [b.text for b in app.query(UserBlock)] == ["Explain what calc.add does, briefly."]
        assert provider.requests[0].messages[-1]["content"] == "Explain what calc.add does, briefly."
    set_custom_commands([])
