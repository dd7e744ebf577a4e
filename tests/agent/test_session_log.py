"""The session log beside the journal: one record per model call, tool call, guard, compaction...
for scripted runs; secrets redacted; a failing disk never breaks a turn; a resumed session
appends; ``--debug`` mirrors the records on stderr."""

from __future__ import annotations

import json
import os
import stat
import threading

from agent.config.files import user_data_dir
from agent.config.settings import CompactionSettings
from agent.events import ModelCallFinished, Notice
from agent.observability.session_log import read_log
from agent.session.resume import list_sessions
from agent.session.retention import delete_session
from tests.helpers import Recorder, make_session
from tui.cli import main

SUMMARY = "## Task\nread\n## Progress\nread files\n## Decisions\n-\n## Errors\n-\n## Files\nf*.py\n## State\nreading"


def reads(n):
    replies = [{"tool_calls": [{"name": "read", "arguments": {"path": f"f{i}.py"}}]} for i in range(n)]
    replies[0]["usage"] = {"prompt_tokens": 900, "completion_tokens": 20}
    return replies


def same_call(n):
    return [{"tool_calls": [{"name": "read", "arguments": {"path": "f0.py"}}]} for _ in range(n)]


def records_of(session, kind=None):
    records = list(read_log(session.log_path))
    return [r for r in records if kind is None or r["type"] == kind]


def test_log_records_of_a_scripted_multi_step_run_with_a_compaction_and_a_guard(tmp_path):
    texts = {f"f{i}.py": "".join(f"value_{i}_{k} = {k}\n" for k in range(40)) for i in range(8)}
    replies = (reads(8) + [{"content": "Done reading.", "usage": {"prompt_tokens": 1500, "completion_tokens": 5}}]
               + [{"for": "summary", "content": SUMMARY}] * 4 + same_call(4) + [{"content": "unreachable"}])
    session, provider = make_session(tmp_path, replies, files=texts, prepare=True, context_window=4600)
    session.agent.config.compaction = CompactionSettings(keep_last_messages=4)
    rec = Recorder()
    assert session.run_turn("Read every file.", rec, threading.Event()).stop_reason == "done"
    assert session.run_turn("Read f0.py again.", rec, threading.Event()).stop_reason == "stuck"

    log = session.log_path
    assert log == session.journal_path.with_name(f"{session.session_id}.log.jsonl")
    assert stat.S_IMODE(os.stat(log).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(log.parent).st_mode) == 0o700
    records = records_of(session)
    assert all({"ts", "type", "turn", "step"} <= set(r) for r in records)

    calls = records_of(session, "model_call_finished")
    assert len(calls) == len(provider.requests)  # every request sent, summaries included
    summaries = [c for c in calls if c["purpose"] == "summary"]
    assert len(summaries) == sum(1 for r in provider.requests if r.purpose == "summary") >= 1
    main_calls = [c for c in calls if c["purpose"] == "main"]
    assert [c["turn"] for c in main_calls] == [1] * 9 + [2] * 4
    assert [c["step"] for c in main_calls[:9]] == list(range(1, 10))
    first = main_calls[0]
    assert first["prompt_tokens"] == 900 and first["completion_tokens"] == 20 and not first["usage_estimated"]
    assert first["cost_usd"] == round(900 * 2e-6 + 20 * 8e-6, 8)  # gpt-4.1's bundled prices
    assert 0 <= first["ttft_s"] <= first["latency_s"] and first["outcome"] == "ok"
    unreported = main_calls[-1]  # same_call replies report no usage: estimated, and marked so
    assert unreported["usage_estimated"] and unreported["prompt_tokens"] > 0
    # the events carry the same figures
    assert len(rec.of(ModelCallFinished)) == len(calls)

    tools = records_of(session, "tool_call_finished")
    assert len(tools) == 8 + 4  # every call has its result, the guard's refusals included
    assert all(t["name"] == "read" and isinstance(t["duration_s"], float) for t in tools)
    assert tools[0]["arguments"] == 'path="f0.py"' and tools[0]["outcome"] == "ok"
    assert [t["outcome"] for t in tools[-4:]] == ["ok", "ok", "error", "error"]  # warned, then stopped

    compactions = records_of(session, "compaction_done")
    assert compactions and all(c["tokens_saved"] > 0 and c["turn"] == 1 for c in compactions)
    guards = records_of(session, "guard_triggered")
    assert [g["guard"] for g in guards] == ["stuck"] and guards[0]["turn"] == 2
    finished = records_of(session, "turn_finished")
    assert [f["stop_reason"] for f in finished] == ["done", "stuck"]
    assert [r["turn"] for r in records_of(session, "turn_started")] == [1, 2]


def test_secret_in_a_tool_argument_is_redacted_in_the_log(tmp_path, monkeypatch):
    monkeypatch.setenv("DEPLOY_TOKEN", "tok-9f8e7d6c5b4a39281706")
    key = "sk-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": f"echo {key} tok-9f8e7d6c5b4a39281706"}}]},
               {"content": "done"}]
    session, _ = make_session(tmp_path, replies)
    session.run_turn(f"use the key {key}", Recorder(), threading.Event())
    raw = session.log_path.read_text()
    assert key not in raw and "tok-9f8e7d6c5b4a39281706" not in raw
    bash = records_of(session, "tool_call_finished")[0]
    assert bash["arguments"].startswith('command="echo [redacted') and "[redacted DEPLOY_TOKEN]" in bash["arguments"]


def test_log_write_failure_shows_one_notice_and_the_turns_go_on(tmp_path):
    replies = [{"tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}]}, {"content": "one"}, {"content": "two"}]
    session, _ = make_session(tmp_path, replies, files={"a.txt": "alpha\n"}, prepare=True)
    session.log_path.mkdir(parents=True)  # the log's name is taken by a folder: every write fails
    rec = Recorder()
    assert session.run_turn("first", rec, threading.Event()).stop_reason == "done"
    assert session.run_turn("second", rec, threading.Event()).stop_reason == "done"
    notices = [n for n in rec.of(Notice) if "session log" in n.message]
    assert len(notices) == 1 and str(session.log_path) in notices[0].message
    assert len(rec.of(ModelCallFinished)) == 3  # the events still reach the UI


def _run(ws, replay_path, *extra):
    return main(["run", "task", "--output-format", "json", "--replay", str(replay_path), "-C", str(ws),
                 "--model", "openai/gpt-4.1", "--permission-mode", "full-auto", *extra])


def test_a_resumed_session_appends_to_the_same_log(tmp_path, capsys):
    ws = tmp_path / "ws"
    ws.mkdir()
    replay = tmp_path / "r.json"
    replay.write_text(json.dumps([{"content": "first", "usage": {"prompt_tokens": 100, "completion_tokens": 5}}]))
    assert _run(ws, replay) == 0
    session_id = json.loads(capsys.readouterr().out.splitlines()[-1])["session_id"]
    replay.write_text(json.dumps([{"content": "second", "usage": {"prompt_tokens": 200, "completion_tokens": 5}}]))
    assert _run(ws, replay, "--resume", session_id) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e for e in events if e["type"] == "model_call_finished"][0]["turn"] == 2
    [log] = list(user_data_dir().rglob(f"{session_id}.log.jsonl"))
    records = list(read_log(log))
    assert [r["turn"] for r in records if r["type"] == "turn_started"] == [1, 2]
    assert [r["prompt_tokens"] for r in records if r["type"] == "model_call_finished"] == [100, 200]
    # the log is no session of its own: listing, resuming and deleting see the journal only
    assert [info.id for info in list_sessions(ws)] == [session_id]
    delete_session(log.with_name(f"{session_id}.jsonl"))
    assert not log.exists()


def test_debug_prints_each_log_record_on_stderr(tmp_path, capsys):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\n")
    replay = tmp_path / "r.json"
    replay.write_text(json.dumps([{"tool_calls": [{"name": "read", "arguments": {"path": "a.py"}}]},
                                  {"content": "x is 1"}]))
    assert _run(ws, replay, "--debug") == 0
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.startswith("{")]
    records = [json.loads(line) for line in lines]
    assert [r["type"] for r in records] == ["turn_started", "model_call_finished", "tool_call_finished",
                                            "model_call_finished", "turn_finished"]
    session_id = json.loads(captured.out.splitlines()[-1])["session_id"]
    [log] = list(user_data_dir().rglob(f"{session_id}.log.jsonl"))
    assert log.read_text().splitlines() == lines
    # without --debug, stderr holds no records
    assert _run(ws, replay) == 0
    assert not [line for line in capsys.readouterr().err.splitlines() if line.startswith("{")]


def test_a_failed_attempt_is_a_model_call_of_its_own(tmp_path):
    replies = [{"error": "server"}, {"content": "ok", "usage": {"prompt_tokens": 50, "completion_tokens": 2}}]
    session, _ = make_session(tmp_path, replies)
    rec = Recorder()
    assert session.run_turn("hi", rec, threading.Event()).stop_reason == "done"
    failed, ok = rec.of(ModelCallFinished)
    assert failed.outcome == "error" and failed.error and failed.prompt_tokens == 0 and failed.ttft_s is None
    assert ok.outcome == "ok" and ok.prompt_tokens == 50
    assert session.agent.spending.tokens == 52


def test_sessions_stats_prints_the_figures_of_the_latest_session(tmp_path, capsys):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\n")
    replay = tmp_path / "r.json"
    replay.write_text(json.dumps([
        {"tool_calls": [{"name": "read", "arguments": {"path": "a.py"}}], "usage": {"prompt_tokens": 1000, "completion_tokens": 50}},
        {"content": "x is 1", "usage": {"prompt_tokens": 1100, "completion_tokens": 5}}]))
    assert _run(ws, replay) == 0
    session_id = json.loads(capsys.readouterr().out.splitlines()[-1])["session_id"]
    assert main(["sessions", "stats", "-C", str(ws)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"session {session_id}\n")
    assert "model calls  2" in out and "tokens in    2,100" in out and "read path=\"a.py\"" in out
    assert "$0.0046" in out  # 2,100 x $2 + 55 x $8 per million tokens
    assert main(["sessions", "stats", "nope", "-C", str(ws)]) == 2


def test_hook_and_subagent_events_are_logged_by_their_type_and_fields(tmp_path):
    from typing import Literal

    from agent.events import _Event
    from agent.observability.session_log import SessionLog
    from agent.observability.sink import LogSink

    class HookFinished(_Event):  # the shape the pipeline's event has (contract), built here
        type: Literal["hook_finished"] = "hook_finished"
        hook: str
        event: str
        round: int
        verdict: str
        duration_s: float
        message: str
        detail: str = ""

    class SubagentProgress(_Event):
        type: Literal["subagent_progress"] = "subagent_progress"
        task_id: str
        step: int

    sink = LogSink(SessionLog(tmp_path / "s.log.jsonl"), turn=4, clock=lambda: 12.5)
    seen = []
    emit = sink.wrap(seen.append)
    hook = HookFinished(hook="verify", event="after_run", round=2, verdict="retry", duration_s=3.25,
                        message="2 failed", detail="E" * 2000)
    emit(hook)
    emit(SubagentProgress(task_id="t1", step=3))
    assert seen == [hook, SubagentProgress(task_id="t1", step=3)]  # every event passes on unchanged
    [record] = read_log(tmp_path / "s.log.jsonl")  # progress heartbeats are not logged
    assert record == {**record, "ts": 12.5, "type": "hook_finished", "turn": 4, "step": 0, "hook": "verify",
                      "round": 2, "verdict": "retry", "duration_s": 3.25, "message": "2 failed"}
    assert len(record["detail"]) == 500  # long fields are cut
