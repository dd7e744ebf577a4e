"""The ReAct loop against the scripted provider: every path ends cleanly and every request the
provider received satisfies the pairing invariant."""

from __future__ import annotations

import json
import stat
import threading
import time
from pathlib import Path

import pytest

from agent.config.settings import Settings
from agent.context.repair import pairing_ok
from agent.events import (
    ErrorEvent, GuardTriggered, Notice, PermissionDecision, PermissionRequest, TextDelta,
    ToolCallFinished, ToolCallStarted, TurnFinished,
)
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session
from agent.session.journal import read_journal
from tests.helpers import Recorder, make_session


def make(tmp_path: Path, replies, **settings):
    return make_session(tmp_path, replies, files={"hello.py": "print('hello')\n"}, **settings)


def run(session, prompt="do it", cancel=None, rec=None):
    rec = rec if rec is not None else Recorder()
    result = session.run_turn(prompt, rec, cancel or threading.Event())
    return result, rec


def assert_requests_valid(provider):
    for req in provider.requests:
        assert req.messages[0]["role"] == "system"
        assert req.messages[1]["role"] == "user"
        assert pairing_ok(req.messages), json.dumps(req.messages, indent=1)[:3000]


def test_text_only_reply(tmp_path):
    session, provider = make(tmp_path, [{"content": "Hello there, nothing to do."}])
    result, rec = run(session)
    assert result.stop_reason == "done"
    assert result.final_text == "Hello there, nothing to do."
    assert "".join(e.text for e in rec.of(TextDelta)) == "Hello there, nothing to do."
    assert len(provider.requests) == 1
    assert {t["function"]["name"] for t in provider.requests[0].tools} >= {"read", "write", "edit", "bash", "grep", "glob"}
    assert_requests_valid(provider)


def test_multi_step_tool_use_sends_results_back(tmp_path):
    session, provider = make(tmp_path, [
        {"tool_calls": [{"name": "read", "arguments": {"path": "hello.py"}}]},
        {"content": "It prints hello."},
    ])
    result, rec = run(session)
    assert result.stop_reason == "done" and result.final_text == "It prints hello."
    finished = rec.of(ToolCallFinished)
    assert len(finished) == 1 and not finished[0].is_error and "print('hello')" in finished[0].output
    second = provider.requests[1].messages
    assert second[-1]["role"] == "tool" and "print('hello')" in second[-1]["content"]
    assert_requests_valid(provider)


def test_parallel_tool_calls_answered_in_order(tmp_path):
    session, provider = make(tmp_path, [
        {"tool_calls": [{"name": "read", "arguments": {"path": "hello.py"}, "id": "a"},
                        {"name": "glob", "arguments": {"pattern": "*.py"}, "id": "b"}]},
        {"content": "done"},
    ])
    result, rec = run(session)
    assert result.stop_reason == "done"
    msgs = provider.requests[1].messages
    assert [m.get("tool_call_id") for m in msgs[-2:]] == ["a", "b"]
    assert [e.id for e in rec.of(ToolCallStarted)] == ["a", "b"]
    assert_requests_valid(provider)


@pytest.mark.parametrize("bad", ["{\"path\": ", "", "not json at all", "[1, 2]"])
def test_malformed_arguments_become_error_results(tmp_path, bad):
    session, provider = make(tmp_path, [
        {"tool_calls": [{"name": "read", "arguments": bad}]},
        {"content": "sorry"},
    ])
    result, rec = run(session)
    assert result.stop_reason == "done"
    (finished,) = rec.of(ToolCallFinished)
    assert finished.is_error
    assert provider.requests[1].messages[-1]["role"] == "tool"
    assert_requests_valid(provider)


def test_unknown_tool_and_wrong_types(tmp_path):
    session, provider = make(tmp_path, [
        {"tool_calls": [{"name": "delete_everything", "arguments": {}},
                        {"name": "read", "arguments": {"path": 12}}]},
        {"content": "ok"},
    ])
    result, rec = run(session)
    unknown, wrong = rec.of(ToolCallFinished)
    assert unknown.is_error and "read" in unknown.output  # lists the available tools
    assert wrong.is_error and "path" in wrong.output
    assert result.stop_reason == "done"
    assert_requests_valid(provider)


def test_transient_error_is_retried_with_notice(tmp_path):
    session, provider = make(tmp_path, [{"error": "rate_limit"}, {"error": "server"}, {"content": "fine"}])
    result, rec = run(session)
    assert result.stop_reason == "done" and result.final_text == "fine"
    notices = [n.message for n in rec.of(Notice)]
    assert any("retry" in n for n in notices) and len(provider.requests) == 3


def test_fatal_error_stops_with_one_line(tmp_path):
    session, provider = make(tmp_path, [{"error": "auth"}, {"content": "never"}])
    result, rec = run(session)
    assert result.stop_reason == "error"
    (err,) = rec.of(ErrorEvent)
    assert "authentication" in err.message and "\n" not in err.message
    assert len(provider.requests) == 1


def test_empty_reply_retried_once(tmp_path):
    session, provider = make(tmp_path, [{"content": ""}, {"content": "second try"}])
    result, _ = run(session)
    assert result.stop_reason == "done" and result.final_text == "second try"


def test_script_exhausted_is_an_error(tmp_path):
    session, _ = make(tmp_path, [{"tool_calls": [{"name": "glob", "arguments": {"pattern": "*"}}]}])
    result, _ = run(session)
    assert result.stop_reason == "error" and "no more replies" in result.final_text


def test_cancel_mid_stream_keeps_history_valid(tmp_path):
    session, provider = make(tmp_path, [
        {"content": "x" * 400, "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
        {"content": "after"},
    ])
    cancel = threading.Event()
    rec = Recorder()
    rec.hooks.append((TextDelta, lambda e: cancel.set()))
    result, rec = run(session, cancel=cancel, rec=rec)
    assert result.stop_reason == "cancelled"
    assert not rec.of(ToolCallStarted)  # the unfinished call was dropped, not executed
    # The next turn's request is valid.
    result2, _ = run(session, "continue")
    assert result2.final_text == "after"
    assert_requests_valid(provider)


def test_cancel_mid_tool_kills_and_answers_every_call(tmp_path):
    session, provider = make(tmp_path, [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 30"}},
                        {"name": "bash", "arguments": {"command": "echo never"}}]},
        {"content": "next turn"},
    ])
    cancel = threading.Event()
    rec = Recorder()
    rec.hooks.append((ToolCallStarted, lambda e: threading.Timer(0.3, cancel.set).start()))
    started = time.monotonic()
    result, rec = run(session, cancel=cancel, rec=rec)
    assert time.monotonic() - started < 15
    assert result.stop_reason == "cancelled"
    first, second = rec.of(ToolCallFinished)
    assert first.is_error or "cancel" in first.output.lower()
    assert second.is_error and "Interrupted" in second.output
    run(session, "go on")
    assert_requests_valid(provider)


def test_c08_max_turns_stops_before_the_next_call(tmp_path):
    replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": f"ls -la src/pkg{i}"}, "id": f"call_{i}"}]}
               for i in range(1, 10)]
    session, provider = make(tmp_path, replies, max_turns=3)
    result, rec = run(session, "Survey every package under src/ and summarize each one.")
    assert result.stop_reason == "max_turns"
    assert len(provider.requests) <= 3
    assert len(rec.of(ToolCallFinished)) <= 3
    (guard,) = rec.of(GuardTriggered)
    assert guard.guard == "max_turns" and "3" in guard.message and "continue" in guard.message
    # The saved journal is complete and passes the pairing check.
    records = [r["message"] for r in read_journal(session.journal_path) if r.get("kind") == "message"]
    sent = [{k: v for k, v in m.items() if k in ("role", "tool_call_id", "tool_calls")} for m in records]
    for m in sent:
        if m.get("tool_calls"):
            m["tool_calls"] = [{"id": tc["id"]} for tc in m["tool_calls"]]
    assert pairing_ok(sent)
    assert_requests_valid(provider)


def test_headless_ask_mode_denies_with_the_flag_named(tmp_path):
    session, provider = make(tmp_path, [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "touch made.txt"}}]},
        {"content": "ok"},
    ], permission_mode="ask")
    result, rec = run(session)
    (finished,) = rec.of(ToolCallFinished)
    assert finished.is_error and "--permission-mode full-auto" in finished.output
    assert not (session.workspace / "made.txt").exists()


def test_interactive_permission_deny_with_reason_reaches_model(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    provider = ScriptedProvider([
        {"tool_calls": [{"name": "write", "arguments": {"path": "a.txt", "content": "x"}}]},
        {"tool_calls": [{"name": "write", "arguments": {"path": "b.txt", "content": "y"}}]},
        {"content": "ok"},
    ])
    session = build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="ask"), provider=provider,
                            interactive=True)
    answers = iter([PermissionDecision(allow=False, reason="use b.txt instead"), PermissionDecision(allow=True)])
    rec = Recorder()
    rec.hooks.append((PermissionRequest, lambda e: e.reply.set_result(next(answers))))
    result, rec = run(session, rec=rec)
    assert result.stop_reason == "done"
    denied, allowed = rec.of(ToolCallFinished)
    assert denied.is_error and "use b.txt instead" in denied.output
    assert not allowed.is_error and (ws / "b.txt").read_text() == "y" and not (ws / "a.txt").exists()
    assert "use b.txt instead" in provider.requests[1].messages[-1]["content"]


def test_cut_off_tool_call_is_reported(tmp_path):
    session, provider = make(tmp_path, [
        {"tool_calls": [{"name": "write", "arguments": "{\"path\": \"big.txt\", \"content\": \"aaaa"}],
         "finish_reason": "length"},
        {"content": "ok"},
    ])
    result, rec = run(session)
    (finished,) = rec.of(ToolCallFinished)
    assert finished.is_error and "cut off" in finished.output
    assert not (session.workspace / "big.txt").exists()


def test_reused_call_ids_across_steps(tmp_path):
    session, provider = make(tmp_path, [
        {"tool_calls": [{"name": "glob", "arguments": {"pattern": "*.py"}, "id": "call_0"}]},
        {"tool_calls": [{"name": "read", "arguments": {"path": "hello.py"}, "id": "call_0"}]},
        {"content": "ok"},
    ])
    result, _ = run(session)
    assert result.stop_reason == "done"
    assert_requests_valid(provider)


def test_journal_records_every_message_with_private_mode(tmp_path):
    session, provider = make(tmp_path, [
        {"reasoning_content": "let me look", "tool_calls": [{"name": "read", "arguments": {"path": "hello.py"}}]},
        {"content": "done"},
    ])
    run(session)
    path = session.journal_path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    records = list(read_journal(path))
    roles = [r["message"]["role"] for r in records if r["kind"] == "message"]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assistant = next(r["message"] for r in records if r["kind"] == "message" and r["message"]["role"] == "assistant")
    assert assistant["reasoning_content"] == "let me look"


def test_turn_finished_is_last_and_usage_summed(tmp_path):
    session, provider = make(tmp_path, [
        {"tool_calls": [{"name": "glob", "arguments": {"pattern": "*"}}], "usage": {"prompt_tokens": 100, "completion_tokens": 5}},
        {"content": "ok", "usage": {"prompt_tokens": 150, "completion_tokens": 7}},
    ])
    result, rec = run(session)
    assert isinstance(rec.events[-1], TurnFinished)
    assert result.usage.prompt_tokens == 250 and result.usage.completion_tokens == 12


def test_context_usage_estimated_before_and_reported_after_each_call(tmp_path):
    session, provider = make(tmp_path, [
        {"tool_calls": [{"name": "glob", "arguments": {"pattern": "*"}}], "usage": {"prompt_tokens": 900, "completion_tokens": 10}},
        {"content": "ok", "usage": {"prompt_tokens": 1000, "completion_tokens": 5}},
    ], context_window=8000)
    result, rec = run(session)
    from agent.events import ContextUsage

    usages = rec.of(ContextUsage)
    assert [u.approximate for u in usages] == [True, False, True, False]
    assert usages[1].used_tokens == 910 and usages[3].used_tokens == 1005
    assert all(u.window_tokens == 8000 for u in usages)
    # After reconciliation the next estimate starts from the reported figure (case C22).
    assert usages[2].used_tokens >= 900


@pytest.mark.parametrize("setting,model,expected", [
    ("auto", "openai/gpt-4.1", True),        # no native reasoning: think is offered
    ("auto", "openai/o3", False),            # native reasoning: not offered, not mentioned
    ("on", "openai/o3", True),
    ("off", "openai/gpt-4.1", False),
])
def test_think_tool_only_for_models_without_native_reasoning(tmp_path, setting, model, expected):
    ws = tmp_path / "ws"
    ws.mkdir()
    provider = ScriptedProvider([{"content": "hi"}])
    session = build_session(ws, Settings(model=model, think_tool=setting), provider=provider, interactive=False)
    run(session)
    names = {t["function"]["name"] for t in provider.requests[0].tools}
    assert ("think" in names) == expected
    system = provider.requests[0].messages[0]["content"]
    tools_line = next(line for line in system.splitlines() if line.startswith("Tools:"))
    assert ("think" in tools_line) == expected and ("Use think" in system) == expected


def test_auto_edit_asks_before_editing_inside_dot_git(tmp_path):
    """An edit of .git/config (core.fsmonitor, hooks) would run commands on the next git call:
    in auto-edit it is refused headless and asked for in the TUI, like a command."""
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    edit = {"name": "edit", "arguments": {"path": ".git/config", "old_string": "[core]\n",
                                          "new_string": "[core]\n\tfsmonitor = touch /tmp/pwned\n"}}
    provider = ScriptedProvider([{"tool_calls": [edit, {"name": "write", "arguments": {"path": "ok.txt", "content": "x"}}]},
                                 {"content": "done"}])
    session = build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="auto-edit"), provider=provider,
                            interactive=False)
    result, rec = run(session)
    git_edit, normal_write = rec.of(ToolCallFinished)
    assert git_edit.is_error and "fsmonitor" not in (ws / ".git" / "config").read_text()
    assert "under .git/" in git_edit.output and "--permission-mode full-auto" in git_edit.output
    assert "Rerun with --permission-mode auto-edit" not in git_edit.output, "not the mode in use"
    assert not normal_write.is_error and (ws / "ok.txt").read_text() == "x"


def test_a_message_sent_into_the_running_turn_is_read_at_the_next_step_boundary(tmp_path):
    from agent.events import ToolCallStarted, UserMessageAdded

    session, provider = make(tmp_path, [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "true"}}]},
        {"content": "answered, README included"},
    ])
    session.prepare()
    agent = session.agent
    assert agent.steer("too early") is False  # no turn runs
    rec = Recorder()
    rec.hooks.append((ToolCallStarted, lambda e: agent.steer("also check the README")))
    result, rec = run(session, rec=rec)
    assert result.stop_reason == "done" and result.final_text == "answered, README included"
    (added,) = rec.of(UserMessageAdded)
    assert added.text == "also check the README"
    second = provider.requests[1].messages
    assert second[-2]["role"] == "tool" and second[-1] == {"role": "user", "content": "also check the README"}


def test_a_message_sent_while_the_model_answers_keeps_the_turn_going(tmp_path):
    from agent.events import StepStarted, UserMessageAdded

    session, provider = make(tmp_path, [{"content": "done, I think"}, {"content": "now with your point"}])
    session.prepare()
    agent = session.agent
    rec = Recorder()
    rec.hooks.append((StepStarted, lambda e: e.step == 1 and agent.steer("one more thing")))
    result, rec = run(session, rec=rec)
    assert result.final_text == "now with your point" and len(rec.of(UserMessageAdded)) == 1
    assert provider.requests[1].messages[-1]["content"] == "one more thing"
    assert agent.steer("after the turn") is False
