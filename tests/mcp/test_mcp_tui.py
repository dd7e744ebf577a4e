"""The TUI with MCP servers: the approval question at session start, the /mcp screen (status,
tools, restart), and an MCP call drawn as a tool block with its server's name."""

from __future__ import annotations

import json
import sys

from agent.config.settings import Settings
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session
from tests.mcp.mcp_helpers import SERVER, server_entry
from tui.app import OpenCLIApp


async def _wait(pilot, condition, timeout=20.0):
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.05)


def _app(ws, replies, **settings):
    provider = ScriptedProvider(replies)
    session = build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="full-auto", **settings),
                            provider=provider, interactive=True)
    app = OpenCLIApp(session=session, watch_themes=False)
    app.animation_level = "none"
    return app, session


async def test_the_project_server_is_asked_about_and_approved(tmp_path):
    from tui.screens.mcp_approval import McpApprovalScreen

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {"command": sys.executable,
                                                                      "args": [str(SERVER)]}}}))
    app, session = _app(ws, [{"content": "hi"}])
    try:
        async with app.run_test() as pilot:
            await _wait(pilot, lambda: isinstance(app.screen, McpApprovalScreen))
            assert "MCP server 'proj'" in app.screen.question and str(SERVER) in app.screen.question
            await pilot.pause(McpApprovalScreen.ARM_DELAY_S + 0.1)  # keys are ignored at first
            await pilot.press("y")
            await _wait(pilot, lambda: [s.status for s in session.mcp_statuses()] == ["ready"])
    finally:
        session.close()


async def test_the_mcp_screen_lists_servers_and_restarts_one(tmp_path):
    from tui.screens.mcp_screen import McpScreen

    ws = tmp_path / "ws"
    ws.mkdir()
    replies = [{"tool_calls": [{"name": "mcp__t__lookup", "arguments": {"key": "k"}}]}, {"content": "done"}]
    app, session = _app(ws, replies, mcp={"servers": {"t": server_entry()}})
    try:
        async with app.run_test() as pilot:
            await _wait(pilot, lambda: session.is_prepared)
            session.mcp.settle()
            await app.send_prompt("look")
            await _wait(pilot, lambda: not app.runner.running and len(session.agent.history) >= 3)
            from tui.widgets.tool_block import ToolBlock

            blocks = list(app.main_screen.query(ToolBlock))
            assert blocks and blocks[0].view.title == "lookup · t (MCP)"
            from tui.commands import run_command

            await run_command(app, "mcp", "")
            await _wait(pilot, lambda: isinstance(app.screen, McpScreen) and app.screen.query("#mcp-list"))
            text = str(app.screen.query_one("#mcp-list").render())
            assert "ready" in text and "mcp__t__lookup" in text
            await pilot.press("r")
            await _wait(pilot, lambda: session.mcp_statuses()[0].status == "starting" or "Restarting" in app.screen.message)
            await _wait(pilot, lambda: session.mcp_statuses()[0].status == "ready")
            await pilot.press("escape")
    finally:
        session.close()
