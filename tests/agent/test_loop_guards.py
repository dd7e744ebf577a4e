"""Loop guards and reminders wired into the loop (issue 3), checked on what the model was sent."""

from __future__ import annotations

import json
import subprocess
import threading

from agent.config.settings import Settings
from agent.context.repair import pairing_ok
from agent.events import GuardTriggered, Notice, ReminderInjected, ToolCallFinished
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session
from tui.cli import main


def session_for(tmp_path, replies, **settings):
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "a.txt").write_text("alpha\n")
    provider = ScriptedProvider(replies)
    settings.setdefault("permission_mode", "full-auto")
    session = build_session(ws, Settings(model="openai/gpt-4.1", **settings), provider=provider, interactive=False)
    return session, provider


def run(session):
    events = []
    result = session.run_turn("task", events.append, threading.Event())
    return result, events


def same_call(n):
    return [{"tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}]} for _ in range(n)]


def test_third_identical_call_is_answered_with_a_warning_then_the_run_stops(tmp_path):
    session, provider = session_for(tmp_path, same_call(4) + [{"content": "unreachable"}])
    result, events = run(session)
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [f.is_error for f in finished[:2]] == [False, False]
    assert finished[2].is_error and "alpha" not in finished[2].output  # warned, not executed
    assert result.stop_reason == "stuck"
    guards = [e for e in events if isinstance(e, GuardTriggered)]
    assert guards and guards[-1].guard == "stuck"
    assert any(isinstance(e, Notice) and "Loop guard" in e.message for e in events)
    assert len(provider.requests) == 4
    assert all(pairing_ok(r.messages) for r in provider.requests)


def test_polling_with_changing_results_is_not_a_loop(tmp_path):
    replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": "date +%s%N"}}]} for _ in range(4)]
    session, _ = session_for(tmp_path, replies + [{"content": "done"}])
    result, events = run(session)
    assert result.stop_reason == "done"
    assert not [e for e in events if isinstance(e, GuardTriggered)]


def test_stuck_exit_code_is_4(tmp_path, capsys):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    rp = tmp_path / "r.json"
    rp.write_text(json.dumps(same_call(5)))
    assert main(["run", "t", "--replay", str(rp), "-C", str(ws), "--model", "openai/gpt-4.1"]) == 4


def test_edit_reminder_once_per_turn_per_file_on_the_last_result(tmp_path):
    replies = [
        {"tool_calls": [{"name": "write", "arguments": {"path": "b.txt", "content": "1"}},
                        {"name": "read", "arguments": {"path": "a.txt"}}]},
        {"tool_calls": [{"name": "write", "arguments": {"path": "b.txt", "content": "2"}}]},
        {"content": "done"},
    ]
    session, provider = session_for(tmp_path, replies)
    result, events = run(session)
    assert result.stop_reason == "done"
    reminders = [e for e in events if isinstance(e, ReminderInjected)]
    assert len(reminders) == 1 and "test" in reminders[0].text
    sent = provider.requests[-1].messages
    tool_results = [m["content"] for m in sent if m["role"] == "tool"]
    assert "[reminder:" not in tool_results[0]          # not on the first result of the step
    assert "[reminder:" in tool_results[1]              # on the last one
    assert "[reminder:" not in tool_results[2]          # same file, same turn: not again
    assert sum(m["content"].count("[reminder:") for m in sent if m["role"] == "tool") == 1


def test_git_reminder_after_bash_git(tmp_path):
    replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": "git status"}}]}, {"content": "ok"}]
    session, provider = session_for(tmp_path, replies)
    run(session)
    last_tool = [m for m in provider.requests[-1].messages if m["role"] == "tool"][-1]
    assert "[reminder:" in last_tool["content"] and "commit" in last_tool["content"]


def test_git_snapshot_in_system_prompt(tmp_path):
    session, provider = session_for(tmp_path, [{"content": "hi"}])
    ws = session.workspace
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e",
           "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=ws, check=True)
    subprocess.run(["git", "add", "."], cwd=ws, check=True)
    subprocess.run(["git", "commit", "-qm", "first commit"], cwd=ws, check=True, env=env)
    run(session)
    system = provider.requests[0].messages[0]["content"]
    assert "first commit" in system and "main" in system and "snapshot" in system.lower()
    assert ".opencli" in (ws / ".git" / "info" / "exclude").read_text()
