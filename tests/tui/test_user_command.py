"""``!command`` runs a shell line the user typed through the bash tool: its block shows in the
conversation and the command with its output reaches the model with the next prompt; the
permission mode and deny rules still apply."""

from __future__ import annotations

from tui.command_table import shell_line, unescape_prompt
from tui.widgets.tool_block import ToolBlock


def test_bang_lines():
    assert shell_line("!git status") == "git status" and shell_line("  ! ls ") == "ls"
    assert shell_line("!") == "" and shell_line("!!not a command") is None and shell_line("hi") is None
    assert unescape_prompt("!!hello") == "!hello"


async def test_the_command_runs_and_the_model_reads_it_next(make_app, workspace, ui) -> None:
    app, provider = make_app([{"content": "It says hello."}], permission_mode="ask")
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_prepared(pilot, app)
        await ui.submit(pilot, "!echo hello from the user")
        await ui.wait_for(pilot, lambda: any(b.status == "ok" for b in app.query(ToolBlock)), what="the block")
        await ui.wait_for(pilot, lambda: not app.runner.running, what="the job's end")
        block = app.query_one(ToolBlock)
        assert block.view.command == "echo hello from the user" and "hello from the user" in block.output
        assert provider.requests == [], "no model call for a command"
        await ui.submit(pilot, "what did it print?")
        await ui.wait_turn(pilot, app)
        sent = [m["content"] for m in provider.requests[0].messages if m["role"] == "user"]
        assert any("I ran this command myself:\n$ echo hello from the user" in m and "hello from the user\n" in m
                   for m in sent)


async def test_read_only_mode_refuses_it(make_app, workspace, ui) -> None:
    app, _ = make_app([], permission_mode="read-only")
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_prepared(pilot, app)
        await ui.submit(pilot, "!touch made.txt")
        await ui.wait_for(pilot, lambda: any(b.status == "error" for b in app.query(ToolBlock)), what="the refusal")
        assert app.query_one(ToolBlock).denied and not (workspace / "made.txt").exists()
        assert app.session.agent.history == [], "a refused command joins nothing"


async def test_a_resumed_command_is_its_block_again_not_a_user_message(make_app, workspace, ui) -> None:
    """Resumed, a ``!command`` is drawn as the bash block it was live (collapsed, its command,
    output and exit code), not as a user message holding the whole output."""
    from agent.config.settings import Settings
    from agent.loop.user_command import parse_user_command
    from agent.providers.scripted import ScriptedProvider
    from agent.runtime.build import build_session
    from tui.app import OpenCLIApp
    from tui.widgets.blocks import UserBlock

    app, _ = make_app([{"content": "Seen."}])
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_prepared(pilot, app)
        await ui.submit(pilot, "!printf 'line %s\\n' 1 2 3; exit 3")
        await ui.wait_for(pilot, lambda: list(app.query(ToolBlock)), what="the block")
        await ui.wait_for(pilot, lambda: not app.runner.running, what="the job's end")
        live = app.query_one(ToolBlock)
        await ui.submit(pilot, "and?")
        await ui.wait_turn(pilot, app)
        live_state = (live.view.command, live.output, live.expanded, live.status)
    session_id = app.session.session_id
    app.session.close()

    session = build_session(workspace, Settings(model="openai/gpt-4.1"), provider=ScriptedProvider([]),
                            interactive=True, resume=session_id)
    resumed = OpenCLIApp(session=session, watch_themes=False)
    async with resumed.run_test(size=(120, 36)) as pilot:
        await ui.wait_prepared(pilot, resumed)
        await pilot.pause()
        block = resumed.query_one(ToolBlock)
        assert (block.view.command, block.output, block.expanded, block.status) == live_state
        assert "exit code: 3" in block.output
        assert [b.text for b in resumed.query(UserBlock)] == ["and?"], "no user message for the command"
    session.close()
    assert parse_user_command("I ran this command myself:\n$ ls\n\nIts output:\na\n[exit code: 0]") == \
        ("ls", "a\n[exit code: 0]", 0)
    assert parse_user_command("a prompt") is None and parse_user_command(["parts"]) is None
