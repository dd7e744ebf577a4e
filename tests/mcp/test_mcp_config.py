"""MCP configuration, project approval, the HTTP transport and a headless run that calls an MCP tool."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent.config.loading import load_settings
from agent.config.settings import ConfigError
from agent.events import ToolCallFinished
from tests.helpers import Recorder
from tests.mcp.mcp_helpers import SERVER, server_entry


def test_a_bad_user_entry_is_an_error_naming_the_key(isolated_env, tmp_path):
    (isolated_env / "config.toml").write_text('[mcp.servers.db]\ncomand = "x"\n')
    with pytest.raises(ConfigError, match=r"mcp\.servers\.db"):
        load_settings(tmp_path)
    (isolated_env / "config.toml").write_text('[mcp.servers.db]\ncommand = "x"\nurl = "http://h"\n')
    with pytest.raises(ConfigError, match="exactly one of command"):
        load_settings(tmp_path)


def test_project_servers_need_approval_once_per_project(mcp_session, tmp_path):
    from agent.mcp import approvals

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {
        "type": "stdio", "command": sys.executable, "args": [str(SERVER)]}}}))
    session, provider = mcp_session([{"content": "a"}], mcp={"servers": {}})
    events = Recorder()
    session.run_turn("go", events, threading.Event())
    assert [(s.name, s.status) for s in session.mcp_statuses()] == [("proj", "needs approval")]
    assert any("proj not started: not approved" in n for n in session.startup_notices())
    assert not any(t["function"]["name"].startswith("mcp__") for t in provider.requests[0].tools)
    spec = session.mcp.spec("proj")
    assert not approvals.is_approved(ws, spec)
    session.approve_mcp("proj")
    session.mcp.settle()
    assert approvals.is_approved(ws, spec)
    assert [t.name for t in session.mcp.tools()][0] == "mcp__proj__big"
    changed = spec.settings.model_copy(update={"args": [str(SERVER), "--other"]})
    assert not approvals.is_approved(ws, type(spec)("proj", changed, "project", ".mcp.json"))
    assert approvals.revoke(ws, "proj") and not approvals.is_approved(ws, spec)


def test_a_project_file_may_not_start_a_server_by_itself(tmp_path):
    from agent.mcp.project import server_specs

    (tmp_path / ".opencli.toml").write_text('[mcp.servers.x]\ncommand = "evil"\n[mcp.servers.bad]\nport = 1\n')
    notices: list[str] = []
    settings = load_settings(tmp_path, {}, notices)
    assert settings.mcp.servers == {}
    specs = server_specs(tmp_path, settings.mcp.servers, notices)
    assert [(s.name, s.origin) for s in specs] == [("x", "project")]
    assert any(".opencli.toml mcp.servers.bad" in n for n in notices)


def test_the_mcp_cli_lists_approves_and_revokes(tmp_path):
    (tmp_path / ".opencli.toml").write_text(f'[mcp.servers.p]\ncommand = "{sys.executable}"\n')
    from tui.cli import main

    assert main(["mcp", "approve", "nope", "-C", str(tmp_path)]) == 2
    assert main(["mcp", "approve", "p", "-C", str(tmp_path)]) == 0
    from agent.mcp import approvals
    from agent.mcp.project import server_specs

    spec = server_specs(tmp_path, {})[0]
    assert approvals.is_approved(tmp_path, spec)
    assert main(["mcp", "list", "-C", str(tmp_path)]) == 0
    assert main(["mcp", "revoke", "p", "-C", str(tmp_path)]) == 0
    assert not approvals.is_approved(tmp_path, spec)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def http_server():
    """The test server over streamable HTTP on 127.0.0.1 (uvicorn in a thread); yields its URL."""
    import uvicorn

    sys.path.insert(0, str(SERVER.parent))
    try:
        import server as test_server  # noqa: PLC0415 - the test server module
    finally:
        sys.path.pop(0)
    port = _free_port()
    app = test_server.build(port=port).streamable_http_app()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp"
    server.should_exit = True
    thread.join(5)


def test_the_streamable_http_transport(mcp_session, http_server):
    replies = [{"tool_calls": [{"name": "mcp__t__lookup", "arguments": {"key": "h"}}]}, {"content": "ok"}]
    session, provider = mcp_session(replies, entry={"url": http_server, "headers": {"X-Test": "1"}})
    events = Recorder()
    session.run_turn("go", events, threading.Event())
    names = [t["function"]["name"] for t in provider.requests[0].tools]
    assert "mcp__t__lookup" in names
    assert events.of(ToolCallFinished)[0].output == "value of h (limit 3)"
    assert session.mcp_statuses()[0].transport == "http"


def test_headless_run_with_a_replay_file_calls_an_mcp_tool(isolated_env, tmp_path):
    entry = server_entry()
    (isolated_env / "config.toml").write_text(
        f'[mcp.servers.t]\ncommand = {json.dumps(entry["command"])}\nargs = {json.dumps(entry["args"])}\n')
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps([{"tool_calls": [{"name": "mcp__t__lookup", "arguments": {"key": "q"}}]},
                                  {"content": "done"}]))
    ws = tmp_path / "ws"
    ws.mkdir()
    proc = subprocess.run([sys.executable, "-m", "tui", "run", "look it up", "--replay", str(replay),
                           "--output-format", "json", "-C", str(ws)],
                          capture_output=True, text=True, timeout=60, cwd=Path(__file__).parents[2])
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    done = [e for e in events if e["type"] == "tool_call_finished"]
    assert done[0]["name"] == "mcp__t__lookup" and done[0]["output"] == "value of q (limit 3)"
    assert events[-1]["type"] == "turn_finished" and events[-1]["stop_reason"] == "done"


def test_a_server_name_with_other_characters_is_refused_as_the_readme_says(isolated_env, tmp_path):
    from agent.mcp.project import server_specs

    config = Path(os.environ["OPENCLI_CONFIG"])
    config.write_text(f'[mcp.servers."a.b"]\ncommand = "{sys.executable}"\n')
    with pytest.raises(ConfigError, match="letters, digits, _ and -"):
        load_settings(tmp_path, {}, [])
    config.write_text("")
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"a.b": {"command": "x"}}}')
    notices: list[str] = []
    assert server_specs(tmp_path, load_settings(tmp_path, {}, notices).mcp.servers, notices) == []
    assert any("mcpServers.a.b: a server name may hold only letters, digits, _ and -" in n for n in notices)
    for bad in ("a__b", "_a", "a_"):  # server a + tool b__c would clash with server a__b + tool c
        config.write_text(f'[mcp.servers.{bad}]\ncommand = "{sys.executable}"\n')
        with pytest.raises(ConfigError, match="no __"):
            load_settings(tmp_path, {}, [])
    config.write_text("")
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert "Server names may hold only letters, digits, `_` and `-`" in readme
