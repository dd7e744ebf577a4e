"""Pilot tests of the permission prompt in ``ask`` mode: allow once, deny with a reason."""

from __future__ import annotations

from textual.widgets import Input

from tui.screens.permission import PermissionScreen
from tui.widgets.tool_block import ToolBlock

WRITE_CALL = {"name": "write", "arguments": {"path": "notes.txt", "content": "hello [bold]world[/]\n"}}


async def _wait_modal(ui, pilot, app) -> PermissionScreen:
    await ui.wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), what="the permission prompt")
    await pilot.pause()
    return app.screen


class TestPermissionPrompt:
    async def test_allow_once_runs_the_tool(self, make_app, workspace, ui) -> None:
        app, provider = make_app([{"tool_calls": [WRITE_CALL]}, {"content": "Written."}], permission_mode="ask")
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "write notes")
            screen = await _wait_modal(ui, pilot, app)
            assert screen.tool_name == "write"
            await pilot.press("y")
            await ui.wait_turn(pilot, app)
            assert not isinstance(app.screen, PermissionScreen)
            tool = app.query_one(ToolBlock)
            assert tool.status == "ok", tool.output
        assert (workspace / "notes.txt").read_text() == "hello [bold]world[/]\n"
        assert len(provider.requests) == 2

    async def test_deny_with_reason_reaches_the_model(self, make_app, workspace, ui) -> None:
        app, provider = make_app([{"tool_calls": [WRITE_CALL]}, {"content": "Understood."}], permission_mode="ask")
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "write notes")
            screen = await _wait_modal(ui, pilot, app)
            reason = screen.query_one("#permission-reason", Input)
            reason.focus()
            reason.value = "use docs/notes.md instead"
            await pilot.press("enter")
            await ui.wait_turn(pilot, app)
            tool = app.query_one(ToolBlock)
            assert tool.status == "error" and tool.denied
            assert tool._meta().plain.startswith("denied")  # not "error": the user said no
        assert not (workspace / "notes.txt").exists()
        tool_messages = [m for m in provider.requests[-1].messages if m["role"] == "tool"]
        assert "use docs/notes.md instead" in tool_messages[-1]["content"]

    async def test_deny_key_without_reason(self, make_app, ui) -> None:
        app, provider = make_app([{"tool_calls": [WRITE_CALL]}, {"content": "ok"}], permission_mode="ask")
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "write notes")
            screen = await _wait_modal(ui, pilot, app)
            await pilot.press("n")  # focuses the reason box; an empty Enter denies without a reason
            await pilot.pause()
            assert isinstance(app.screen, PermissionScreen)
            assert screen.focused is screen.query_one("#permission-reason", Input)
            await pilot.press("enter")
            await ui.wait_turn(pilot, app)
        tool_messages = [m for m in provider.requests[-1].messages if m["role"] == "tool"]
        assert "did not allow" in tool_messages[-1]["content"]

    async def test_escape_in_the_app_while_asking_cancels_the_turn(self, make_app, ui) -> None:
        app, provider = make_app([{"tool_calls": [WRITE_CALL]}, {"content": "never"}], permission_mode="ask")
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "write notes")
            await _wait_modal(ui, pilot, app)
            await app.action_cancel_turn()
            await ui.wait_turn(pilot, app)
            assert not isinstance(app.screen, PermissionScreen)
            assert app.handler.turn_finished.stop_reason == "cancelled"
        assert len(provider.requests) == 1

    async def test_typing_a_reason_after_n_never_answers_with_its_letters(self, make_app, workspace, ui) -> None:
        app, provider = make_app([_bash("touch ran.txt"), {"content": "Understood."}], permission_mode="ask")
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "make a file")
            screen = await _wait_modal(ui, pilot, app)
            await pilot.press("n")
            await pilot.pause()
            assert isinstance(app.screen, PermissionScreen)  # n alone does not deny
            # "p", "y", "t" and "n" in the reason are text, not answers.
            await pilot.press(*["space" if c == " " else c for c in "please use printf, not touch"])
            await pilot.pause()
            assert app.screen is screen
            assert screen.query_one("#permission-reason", Input).value == "please use printf, not touch"
            await pilot.press("enter")
            await ui.wait_turn(pilot, app)
            assert app.query_one(ToolBlock).status == "error"
        assert not (workspace / "ran.txt").exists()
        assert app.session.permission_rules.session_prefixes == []
        tool_messages = [m for m in provider.requests[-1].messages if m["role"] == "tool"]
        assert "please use printf, not touch" in tool_messages[-1]["content"]

    async def test_letters_in_the_prefix_box_type_text(self, make_app, workspace, ui) -> None:
        app, provider = make_app([_bash("touch ran.txt"), {"content": "ok"}], permission_mode="ask")
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "make a file")
            screen = await _wait_modal(ui, pilot, app)
            prefix = screen.query_one("#permission-prefix", Input)
            prefix.focus()
            prefix.value = ""
            await pilot.press("t", "y", "n", "p")
            await pilot.pause()
            assert app.screen is screen and prefix.value == "tynp"
            await pilot.press("escape")
            await ui.wait_turn(pilot, app)
        assert not (workspace / "ran.txt").exists()

    async def test_escape_in_the_prompt_denies_and_cancels_the_turn(self, make_app, workspace, ui) -> None:
        calls = [{"name": "bash", "arguments": {"command": "touch one.txt"}},
                 {"name": "bash", "arguments": {"command": "touch two.txt"}}]
        app, provider = make_app([{"tool_calls": calls}, {"content": "never"}], permission_mode="ask")
        pushed: list = []
        push_screen = app.push_screen
        app.push_screen = lambda screen, *args, **kwargs: (pushed.append(screen), push_screen(screen, *args, **kwargs))[1]
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "make files")
            screen = await _wait_modal(ui, pilot, app)
            assert screen.command == "touch one.txt"
            await pilot.press("escape")
            await ui.wait_turn(pilot, app)
            assert not isinstance(app.screen, PermissionScreen)  # no second prompt
            assert app.handler.turn_finished.stop_reason == "cancelled"
            await pilot.pause(0.2)
            assert [type(s) for s in pushed].count(PermissionScreen) == 1
        assert not (workspace / "one.txt").exists() and not (workspace / "two.txt").exists()
        assert len(provider.requests) == 1


EDIT_CALL = {"name": "edit", "arguments": {"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}}


def _bash(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


class TestPermissionScopes:
    async def test_allow_tool_for_the_session_is_not_asked_again(self, make_app, workspace, ui) -> None:
        second = {"name": "write", "arguments": {"path": "more.txt", "content": "again\n"}}
        app, provider = make_app([{"tool_calls": [WRITE_CALL]}, {"tool_calls": [second]}, {"content": "Both."}],
                                 permission_mode="ask")
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "write two files")
            await _wait_modal(ui, pilot, app)
            await pilot.press("t")
            await ui.wait_turn(pilot, app)
            assert [b.status for b in app.query(ToolBlock)] == ["ok", "ok"]
        assert (workspace / "more.txt").read_text() == "again\n"
        assert app.session.permission_rules.session_tools == {"write"}

    async def test_allow_prefix_for_the_session(self, make_app, workspace, ui) -> None:
        app, provider = make_app([_bash("echo one -x"), _bash("echo two && echo three"), _bash("touch made.txt"),
                                  {"content": "done"}], permission_mode="ask")
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "echo things")
            screen = await _wait_modal(ui, pilot, app)
            prefix = screen.query_one("#permission-prefix", Input)
            assert prefix.value == "echo one"  # prefilled: first words; editable
            prefix.value = "echo"
            await pilot.press("p")
            # "echo two && echo three" runs without asking; "touch" asks again.
            screen = await _wait_modal(ui, pilot, app)
            assert screen.command == "touch made.txt"
            await pilot.press("n", "enter")
            await ui.wait_turn(pilot, app)
            statuses = [b.status for b in app.query(ToolBlock)]
            assert statuses == ["ok", "ok", "error"]
        assert app.session.permission_rules.session_prefixes == ["echo"]
        assert not (workspace / "made.txt").exists()

    async def test_risky_command_is_highlighted(self, make_app, ui) -> None:
        app, provider = make_app([_bash("ls && rm -rf build"), {"content": "ok"}], permission_mode="ask")
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "clean")
            screen = await _wait_modal(ui, pilot, app)
            risks = str(screen.query_one("#permission-risks").render())
            assert "rm -rf build: deletes files" in risks
            await pilot.press("escape")
            await ui.wait_turn(pilot, app)

    async def test_edit_shows_a_unified_diff_from_disk(self, make_app, workspace, ui) -> None:
        from tui.widgets.diff_view import DiffView

        app, provider = make_app([{"tool_calls": [EDIT_CALL]}, {"content": "Fixed."}], permission_mode="ask")
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "fix add")
            screen = await _wait_modal(ui, pilot, app)
            diff = screen.query_one(".permission-change", DiffView).diff
            assert "--- a/calc.py" in diff and "+++ b/calc.py" in diff
            assert "-    return a - b" in diff and "+    return a + b" in diff
            assert " def add(a, b):" in diff  # context from the file on disk
            assert (workspace / "calc.py").read_text().endswith("return a - b\n")  # preview wrote nothing
            await pilot.press("y")
            await ui.wait_turn(pilot, app)
        assert (workspace / "calc.py").read_text().endswith("return a + b\n")

    async def test_config_deny_rule_refuses_without_asking(self, make_app, workspace, ui) -> None:
        app, provider = make_app([_bash("echo hi; rm -rf build"), {"content": "ok"}], permission_mode="full-auto",
                                 permissions={"deny": ["rm -rf"]})
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "clean")
            await ui.wait_turn(pilot, app)
            assert app.query_one(ToolBlock).status == "error"
        tool_messages = [m for m in provider.requests[-1].messages if m["role"] == "tool"]
        assert "deny rule 'rm -rf'" in tool_messages[-1]["content"]
