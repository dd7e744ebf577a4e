"""One gate for the user's tool hooks on every tool call path: a cancel while a ``before_tool`` hook
runs stops the call and kills the hook; a failing ``before_tool`` hook fails closed, an
``after_tool`` one open; Plan-pass and sub-agent calls reach the hooks with ``agent`` and ``mode``."""

from __future__ import annotations

import json
import threading

import psutil

from agent.events import HookFinished, HookStarted, Notice, ToolCallFinished

from tests.helpers import Recorder, alive, make_session, wait_for_file


def bash(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def test_esc_while_a_before_tool_hook_runs_stops_the_call_and_kills_the_hook(tmp_path):
    pid_file = tmp_path / "hook.pid"
    hook = {"command": f"echo $$ > {pid_file}; sleep 30", "timeout_s": 60}
    session, _ = make_session(tmp_path, [bash("touch ran.txt"), {"content": "ok"}], hooks={"before_tool": [hook]})
    emit, cancel = Recorder(), threading.Event()

    def cancel_once_the_hook_runs(_event) -> None:
        def later() -> None:
            wait_for_file(pid_file)
            cancel.set()
        threading.Thread(target=later, daemon=True).start()

    emit.hooks.append((HookStarted, cancel_once_the_hook_runs))
    turn = session.run_turn("make a file", emit, cancel)
    assert turn.stop_reason == "cancelled"
    assert not (tmp_path / "ws" / "ran.txt").exists(), "the call ran after the cancel"
    (result,) = emit.of(ToolCallFinished)
    assert result.is_error and "Interrupted by user" in result.output and result.result.outcome == "cancelled"
    pid = int(pid_file.read_text())
    try:
        assert not alive([psutil.Process(pid)]), "the hook process still runs"
    except psutil.NoSuchProcess:
        pass


def test_a_before_tool_hook_that_times_out_blocks_the_call_and_after_tool_failures_only_notify(tmp_path):
    session, _ = make_session(tmp_path, [bash("touch ran.txt"), bash("echo hi"), {"content": "ok"}], hooks={
        "before_tool": [{"command": "test -e ws/ran.txt || test -e ran.txt || sleep 5", "timeout_s": 0.3}],
        "after_tool": [{"command": "exit 3"}]})
    emit = Recorder()
    session.run_turn("go", emit, threading.Event())
    first, second = emit.of(ToolCallFinished)
    assert not (tmp_path / "ws" / "ran.txt").exists(), "a timed-out before_tool hook let the call run"
    assert first.is_error and "before_tool hook" in first.output and "did not finish" in first.output
    assert second.is_error and "did not finish" in second.output  # still no file: blocked again
    assert [h.verdict for h in emit.of(HookFinished)] == ["timeout", "timeout"]
    assert any("Hook user:before_tool" in n.message for n in emit.of(Notice))


def test_after_tool_failure_is_a_notice_and_the_call_result_stands(tmp_path):
    session, _ = make_session(tmp_path, [bash("echo hi"), {"content": "ok"}],
                              hooks={"after_tool": [{"command": "exit 3"}]})
    emit = Recorder()
    session.run_turn("go", emit, threading.Event())
    (result,) = emit.of(ToolCallFinished)
    assert not result.is_error and "hi" in result.output
    assert [h.verdict for h in emit.of(HookFinished)] == ["error"]
    assert any("Hook user:after_tool failed" in n.message for n in emit.of(Notice))


def test_plan_pass_calls_reach_the_hooks_with_mode_plan(tmp_path):
    seen = tmp_path / "seen.jsonl"
    session, _ = make_session(tmp_path, [{"tool_calls": [{"name": "glob", "arguments": {"pattern": "*"}}]},
                                         {"content": "1. Do it (a.py)"}],
                              files={"a.py": "x = 1\n"}, hooks={"before_tool": [{"command": f"cat >> {seen}; echo >> {seen}"}]})
    emit = Recorder()
    session.plan_turn("plan it", emit, threading.Event())
    (payload,) = [json.loads(line) for line in seen.read_text().splitlines() if line.strip()]
    assert (payload["tool"], payload["agent"], payload["mode"]) == ("glob", "main", "plan")
    assert [(h.event, h.agent) for h in emit.of(HookFinished)] == [("before_tool", "main")]


def test_subagent_calls_reach_the_hooks_with_the_subagent_id(tmp_path):
    seen = tmp_path / "seen.jsonl"
    replies = [{"tool_calls": [{"id": "call_t1", "name": "task",
                                "arguments": {"description": "look", "prompt": "List files."}}]},
               {"content": "Done."},
               {"for": "subagent", "task": 1, "tool_calls": [{"name": "glob", "arguments": {"pattern": "*"}}]},
               {"for": "subagent", "task": 1, "content": "a.py"}]
    session, _ = make_session(tmp_path, replies, files={"a.py": "x = 1\n"},
                              hooks={"before_tool": [{"command": f"cat >> {seen}; echo >> {seen}"}]})
    emit = Recorder()
    turn = session.run_turn("look around", emit, threading.Event())
    assert turn.stop_reason == "done"
    payloads = [json.loads(line) for line in seen.read_text().splitlines() if line.strip()]
    assert [(p["tool"], p["agent"], p["mode"]) for p in payloads] == [("task", "main", "act"),
                                                                     ("glob", "call_t1", "act")]
    assert [(h.event, h.agent) for h in emit.of(HookStarted)] == [("before_tool", "main"), ("before_tool", "call_t1")]
