"""The project-server approval can't be given by accident, and it shows everything it covers:
typed-ahead keys are ignored while the dialog is new, the safe answer has the focus, and the
dialog and ``opencli-tui mcp list`` show command, args, cwd, env (secrets masked), url and
header names."""

from __future__ import annotations

import json
import sys

from agent.mcp import approvals
from agent.mcp.project import server_specs
from tests.mcp.mcp_helpers import SERVER
from tests.mcp.test_mcp_tui import _app, _wait


def _evil_project(ws):
    ws.mkdir()
    entry = {"command": sys.executable, "args": [str(SERVER)], "cwd": "tools",
             "env": {"PYTHONPATH": "evil", "API_TOKEN": "s3cr3t-value", "DB_PASSWORD": "hunter2"}}
    (ws / "tools").mkdir()
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": entry}}))


async def test_typed_ahead_keys_do_not_approve_and_the_safe_answer_has_the_focus(tmp_path, monkeypatch):
    from textual.widgets import Button

    from tui.mcp_ui import ask_mcp_approvals
    from tui.screens.mcp_approval import McpApprovalScreen
    from tui.widgets.prompt_input import PromptInput

    ws = tmp_path / "ws"
    _evil_project(ws)
    app, session = _app(ws, [{"content": "hi"}])
    try:
        async with app.run_test() as pilot:
            await _wait(pilot, lambda: isinstance(app.screen, McpApprovalScreen))
            await pilot.pause(McpApprovalScreen.ARM_DELAY_S + 0.1)
            await pilot.press("n")  # not now: asked again when the session is asked again
            await _wait(pilot, lambda: not isinstance(app.screen, McpApprovalScreen))
            prompt = app.main_screen.query_one(PromptInput)
            prompt.focus()
            await pilot.press(*"fix the")
            # a longer guard for this check only, so a loaded machine's slow key presses still land inside it
            monkeypatch.setattr(McpApprovalScreen, "ARM_DELAY_S", 3.0)
            ask_mcp_approvals(app)  # the dialog opens while the user types
            await _wait(pilot, lambda: isinstance(app.screen, McpApprovalScreen) and app.screen.is_mounted)
            dialog = app.screen
            await pilot.press(*" bugs", "enter", "y", "enter")
            await pilot.pause(0.1)
            assert app.screen is dialog, "typed-ahead keys answered the dialog"
            assert isinstance(app.focused, Button) and app.focused.id == "mcp-approval-no"
            await pilot.pause(McpApprovalScreen.ARM_DELAY_S)
            await pilot.press("enter")  # the focused button: Not now
            await _wait(pilot, lambda: app.screen is not dialog)
            await pilot.pause(0.3)
            assert [s.status for s in session.mcp_statuses()] == ["needs approval"]
            assert not approvals.is_approved(ws, server_specs(ws, {})[0])
            assert prompt.text == "fix the"  # the keys typed before it opened stay in the prompt
            assert not session.agent.history  # and nothing was sent
    finally:
        session.close()


def test_the_question_shows_every_field_the_approval_covers(tmp_path):
    from tui.mcp_ui import approval_question

    ws = tmp_path / "ws"
    _evil_project(ws)
    spec = server_specs(ws, {})[0]
    text = approval_question(spec, ws)
    assert f"command: {sys.executable}" in text and str(SERVER) in text
    assert f"cwd: {(ws / 'tools').resolve()}" in text
    assert "PYTHONPATH=evil" in text
    assert "API_TOKEN=****" in text and "DB_PASSWORD=****" in text
    assert "s3cr3t-value" not in text and "hunter2" not in text


def test_mcp_list_shows_env_cwd_and_header_names(tmp_path, capsys):
    from tui.cli import main

    ws = tmp_path / "ws"
    _evil_project(ws)
    (ws / ".opencli.toml").write_text('[mcp.servers.web]\nurl = "https://mcp.example.com/mcp"\n'
                                      '[mcp.servers.web.headers]\nAuthorization = "Bearer abc123"\n')
    assert main(["mcp", "list", "-C", str(ws)]) == 0
    out = capsys.readouterr().out
    assert "PYTHONPATH=evil" in out and "API_TOKEN=****" in out and "s3cr3t-value" not in out
    assert f"cwd: {(ws / 'tools').resolve()}" in out
    assert "url: https://mcp.example.com/mcp" in out
    assert "headers: Authorization (values hidden)" in out and "abc123" not in out


def test_the_mcp_screen_shows_every_field_before_a_approves(tmp_path):
    from agent.mcp.manager import McpManager
    from tui.screens.mcp_screen import servers_text

    ws = tmp_path / "ws"
    _evil_project(ws)
    manager = McpManager(server_specs(ws, {}), ws, lambda spec: False)
    text = servers_text(manager.statuses(), 0).plain
    assert "PYTHONPATH=evil" in text and "API_TOKEN=****" in text and "s3cr3t-value" not in text
    assert f"cwd: {(ws / 'tools').resolve()}" in text
