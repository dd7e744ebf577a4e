"""Session journals: crash safety (torn lines), the single-writer lock, secrets, listing, resume."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent.config.settings import Settings
from agent.plan.model import Plan, PlanStep
from agent.providers.scripted import ScriptedProvider
from agent.session.resume import SessionNotFoundError, find_session, latest_session, list_sessions, load_session
from agent.runtime.build import build_session
from agent.session.journal import SessionJournal, SessionLockedError, read_journal, sessions_dir
from tui.cli import main

ROOT = Path(__file__).resolve().parents[2]


def records(path):
    return list(read_journal(path))


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "a.py").write_text("x = 1\n")
    return ws


def session_for(ws, replies, settings_model="openai/gpt-4.1", **kw):
    provider = ScriptedProvider(replies)
    session = build_session(ws, Settings(model=settings_model, permission_mode="full-auto"),
                            provider=provider, interactive=False, **kw)
    return session, provider


def run(session, prompt):
    return session.run_turn(prompt, lambda e: None, threading.Event())


# ------------------------------------------------------------------------------ crash safety
def test_torn_last_line_is_skipped_with_warning_and_later_appends_stay_readable(tmp_path):
    path = tmp_path / "s.jsonl"
    journal = SessionJournal(path)
    journal.append({"kind": "event", "n": 1})
    journal.append({"kind": "event", "n": 2})
    journal.close()
    with path.open("ab") as fh:  # power loss in the middle of the third line
        fh.write(b'{"kind": "message", "message": {"role": "us')
    warnings: list[str] = []
    assert [r["n"] for r in read_journal(path, warnings)] == [1, 2]
    assert len(warnings) == 1 and "line 3" in warnings[0]

    reopened = SessionJournal(path)
    reopened.append({"kind": "event", "n": 3})
    reopened.close()
    warnings = []
    assert [r["n"] for r in read_journal(path, warnings)] == [1, 2, 3]
    assert len(warnings) == 1  # only the torn line is lost


def test_record_glued_to_a_torn_line_is_recovered(tmp_path):
    path = tmp_path / "old.jsonl"  # written by a version that did not start a new line
    path.write_text('{"kind": "event", "n": 1}\n{"kind": "mess{"kind": "event", "n": 2}\n')
    warnings: list[str] = []
    assert [r["n"] for r in read_journal(path, warnings)] == [1, 2]
    assert warnings


def test_load_session_keeps_messages_before_a_torn_line(tmp_path):
    ws = workspace(tmp_path)
    session, _ = session_for(ws, [{"content": "hello"}])
    run(session, "first")
    session.close()
    with session.journal_path.open("ab") as fh:
        fh.write('{"kind": "message", "message": {"role": "assistant", "content": "hal'.encode())
    loaded = load_session(session.journal_path)
    assert [m.role for m in loaded.messages] == ["user", "assistant"]
    assert loaded.warnings and "torn" in loaded.warnings[0]


def test_journal_mode_0600_and_folder_0700(tmp_path):
    path = tmp_path / "d" / "s.jsonl"
    SessionJournal(path).append({"kind": "event"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


# ------------------------------------------------------------------------------------ lock
def test_second_journal_on_the_same_file_refuses(tmp_path):
    path = tmp_path / "s.jsonl"
    first = SessionJournal(path)
    first.append({"kind": "event", "n": 1})
    second = SessionJournal(path)
    with pytest.raises(SessionLockedError, match="in use by another"):
        second.lock()
    second.append({"kind": "event", "n": 2})
    assert second.error and "in use" in second.error
    assert [r["n"] for r in records(path)] == [1]
    first.close()
    third = SessionJournal(path)
    third.append({"kind": "event", "n": 3})  # released on close
    assert [r["n"] for r in records(path)] == [1, 3]
    third.close()


def test_lock_held_by_another_process_and_released_when_it_dies(tmp_path):
    path = tmp_path / "s.jsonl"
    code = ("import sys, time; sys.path.insert(0, sys.argv[2]); from agent.session.journal import SessionJournal; "
            "j = SessionJournal(sys.argv[1]); j.lock(); print('locked', flush=True); time.sleep(60)")
    child = subprocess.Popen([sys.executable, "-c", code, str(path), str(ROOT)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "locked"
        with pytest.raises(SessionLockedError):
            SessionJournal(path).lock()
    finally:
        child.send_signal(signal.SIGKILL)  # a crash: the kernel drops the lock
        child.wait()
    journal = SessionJournal(path)
    journal.lock()
    journal.close()


def test_resuming_a_session_open_elsewhere_is_refused(tmp_path, capsys):
    ws = workspace(tmp_path)
    session, _ = session_for(ws, [{"content": "hi"}])
    run(session, "first")  # keeps its journal locked
    with pytest.raises(SessionLockedError):
        session_for(ws, [], resume="latest")
    code = main(["run", "--continue", "next", "-C", str(ws), "--replay", str(replay(tmp_path, [{"content": "x"}]))])
    assert code == 2
    assert "in use by another" in capsys.readouterr().err
    session.close()


# --------------------------------------------------------------------------------- secrets
def test_secrets_never_reach_the_journal(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    ws = workspace(tmp_path)
    session, _ = session_for(ws, [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo key=$OPENAI_API_KEY"}}]},
        {"content": "the key is sk-test-secret"},
    ])
    run(session, "show me the key")
    session.close()
    text = session.journal_path.read_text()
    assert "sk-test-secret" not in text
    assert "[redacted OPENAI_API_KEY]" in text
    assert "\"api_key\"" not in text and "permission_mode" not in text  # no settings


# ------------------------------------------------------------------------- listing, resume
def replay(tmp_path, replies, name="replay.json"):
    path = tmp_path / name
    path.write_text(json.dumps(replies))
    return path


def test_resume_round_trip_restores_history_and_appends_to_the_same_file(tmp_path):
    ws = workspace(tmp_path)
    first, _ = session_for(ws, [
        {"tool_calls": [{"name": "read", "arguments": {"path": "a.py"}, "id": "r1"}]},
        {"content": "x is one"},
    ])
    run(first, "what is x?")
    first.close()
    path, sid = first.journal_path, first.session_id

    second, provider = session_for(ws, [{"content": "still one"}], resume="latest")
    assert second.session_id == sid and second.journal_path == path
    result = run(second, "and now?")
    assert result.stop_reason == "done"
    sent = provider.requests[0].messages
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[1]["content"] == "what is x?" and sent[-1]["content"] == "and now?"
    second.close()

    assert sorted(sessions_dir(ws).iterdir()) == [path, path.with_name(f"{path.stem}.log.jsonl")]  # + its log
    kinds = [(r["kind"], r.get("event")) for r in records(path)]
    assert kinds.count(("session", "started")) == 1 and kinds.count(("session", "resumed")) == 1
    assert kinds.count(("event", "turn_finished")) == 2
    [info] = list_sessions(ws)
    assert (info.id, info.turns, info.first_task, info.model) == (sid, 2, "what is x?", "openai/gpt-4.1")


def test_resume_restores_plan_and_model_unless_model_given(tmp_path):
    ws = workspace(tmp_path)
    first, _ = session_for(ws, [{"content": "ok"}], settings_model="anthropic/claude-sonnet-4-5")
    run(first, "task")
    plan = Plan(title="P", steps=[PlanStep(description="change a.py", files=["a.py"])])
    first.journal.append({"kind": "plan", "event": "approved", "plan": plan.model_dump(mode="json")})
    first.close()

    resumed, _ = session_for(ws, [], resume=first.session_id, model=None)
    assert resumed.model == "anthropic/claude-sonnet-4-5"
    resumed.prepare()
    assert resumed.plan is not None and resumed.plan.steps[0].description == "change a.py"
    assert len(resumed.agent.history) == 2
    resumed.close()

    overridden, _ = session_for(ws, [], resume=first.session_id[:12], model="openai/gpt-4.1")
    assert overridden.model == "openai/gpt-4.1"
    overridden.close()


def test_unknown_or_missing_session_is_a_clear_error(tmp_path):
    ws = workspace(tmp_path)
    with pytest.raises(SessionNotFoundError, match="no saved session"):
        find_session(ws, "latest")
    session, _ = session_for(ws, [{"content": "hi"}])
    run(session, "t")
    session.close()
    with pytest.raises(SessionNotFoundError, match=f"no session 'nope'.*recent: {session.session_id}"):
        find_session(ws, "nope")
    with pytest.raises(SessionNotFoundError):
        find_session(ws, "../x")


def test_list_sessions_newest_first(tmp_path):
    ws = workspace(tmp_path)
    ids = []
    for n in range(3):
        s, _ = session_for(ws, [{"content": "ok"}])
        run(s, f"task {n}")
        s.close()
        os.utime(s.journal_path, (1000 + n, 1000 + n))
        ids.append(s.session_id)
    assert [i.id for i in list_sessions(ws)] == ids[::-1]
    assert latest_session(ws).id == ids[-1]
    assert [i.first_task for i in list_sessions(ws, limit=2)] == ["task 2", "task 1"]


# -------------------------------------------------------------------------------------- CLI
def cli_run(tmp_path, capsys, replies, *extra, task="task"):
    ws = workspace(tmp_path)
    code = main(["run", task, "--output-format", "json", "--replay", str(replay(tmp_path, replies)),
                 "-C", str(ws), "--model", "openai/gpt-4.1", *extra])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def test_headless_continue_picks_the_latest_session(tmp_path, capsys):
    _, ev1, _ = cli_run(tmp_path, capsys, [{"content": "one"}], task="first")
    first_id = ev1[0]["session_id"]
    ws = tmp_path / "ws"
    older = time.time() - 3600  # older than the next session, younger than the retention age
    os.utime(sessions_dir(ws) / f"{first_id}.jsonl", (older, older))
    _, ev2, _ = cli_run(tmp_path, capsys, [{"content": "two"}], task="second")
    second_id = ev2[-1]["session_id"]
    assert second_id != first_id
    code, ev3, _ = cli_run(tmp_path, capsys, [{"content": "three"}], "--continue", task="third")
    assert code == 0
    started = next(e for e in ev3 if e["type"] == "turn_started")
    assert started["session_id"] == second_id == ev3[-1]["session_id"]
    assert any(e["type"] == "notice" and "Resumed session" in e["message"] for e in ev3)
    assert len([p for p in sessions_dir(ws).iterdir() if not p.name.endswith(".log.jsonl")]) == 2


def test_headless_unknown_resume_id_exits_2(tmp_path, capsys):
    code, events, err = cli_run(tmp_path, capsys, [{"content": "x"}], "--resume", "nope")
    assert code == 2 and events == []
    assert "no session 'nope'" in err


def test_headless_resume_without_id_lists_sessions_and_exits_2(tmp_path, capsys):
    _, ev1, _ = cli_run(tmp_path, capsys, [{"content": "one"}], task="first")
    code = main(["run", "again", "--resume", "-C", str(tmp_path / "ws")])
    err = capsys.readouterr().err
    assert code == 2 and "needs a session id" in err and ev1[0]["session_id"] in err


def test_continue_and_resume_together_is_a_usage_error(tmp_path, capsys):
    code, _, err = cli_run(tmp_path, capsys, [], "--continue", "--resume", "x")
    assert code == 2 and "either --continue or --resume" in err


def test_tui_resume_without_id_opens_the_picker(tmp_path):
    from tui.cli import _resume_target, build_parser

    args = build_parser().parse_args(["--resume"])
    assert _resume_target(args, tmp_path) == (None, None)  # the TUI opens its session picker
    args = build_parser().parse_args(["--resume", "20260101-000000-abcdef"])
    assert _resume_target(args, tmp_path) == ("20260101-000000-abcdef", None)
    assert _resume_target(build_parser().parse_args(["--continue"]), tmp_path) == ("latest", None)


def test_resume_restores_the_compacted_view(tmp_path):
    ws = workspace(tmp_path)
    for i in range(8):
        (ws / f"m{i}.py").write_text(f"# module {i}\n" + "y = 2\n" * 300)
    replies = [{"tool_calls": [{"name": "read", "arguments": {"path": f"m{i}.py"}}]} for i in range(8)]
    replies += [{"content": "read them all"}, {"for": "summary", "content": "Task: read modules. Progress: done."}]
    first, _ = session_for(ws, replies)
    run(first, "Read every module.")
    done = first.agent.compact(None)
    assert done is not None
    compacted_len = len(first.agent.context_view())
    first.close()

    second, provider = session_for(ws, [{"content": "ok"}], resume="latest")
    run(second, "next")
    sent = provider.requests[0].messages
    assert len(sent) == 1 + compacted_len + 1          # system + compacted view + the new prompt
    assert "Read every module." in str(sent)             # the task is kept verbatim
    assert len(second.agent.history) > compacted_len     # the full history is still there
    second.close()


def test_resume_restores_modes_but_never_loosens_permissions(tmp_path):
    ws = workspace(tmp_path)
    first = build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="ask"),
                          provider=ScriptedProvider([{"content": "hi"}]), interactive=False)
    run(first, "hello")
    first.record_modes(plan_mode=True)
    first.set_permission_mode("read-only")
    first.close()
    strict = build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="ask"),
                           provider=ScriptedProvider([]), interactive=False, resume="latest")
    assert strict.plan_mode is True and strict.settings.permission_mode.value == "read-only"
    strict.set_permission_mode("full-auto")
    strict.close()
    # Launched in ask mode: a recorded full-auto is not restored.
    again = build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="ask"),
                          provider=ScriptedProvider([]), interactive=False, resume="latest")
    assert again.settings.permission_mode.value == "ask" and again.plan_mode is True
    again.close()


def test_an_explicit_permission_mode_on_resume_wins_and_a_restored_one_is_said(tmp_path):
    ws = workspace(tmp_path)
    first = build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="ask"),
                          provider=ScriptedProvider([{"content": "hi"}]), interactive=False)
    run(first, "hello")
    first.set_permission_mode("read-only")
    first.close()
    # From config / default: the stricter recorded mode comes back, and a notice says so.
    restored = build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                             provider=ScriptedProvider([]), interactive=False, resume="latest")
    assert restored.settings.permission_mode.value == "read-only"
    assert any("read-only restored" in n and "full-auto" in n for n in restored.startup_notices())
    restored.close()
    # --permission-mode full-auto on the resuming command: the user's explicit choice wins.
    explicit = build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                             provider=ScriptedProvider([]), interactive=False, resume="latest",
                             permission_mode_given=True)
    assert explicit.settings.permission_mode.value == "full-auto"
    assert not any("restored" in n for n in explicit.startup_notices())
    explicit.close()


def test_a_lone_surrogate_in_a_message_keeps_its_record(tmp_path):
    from agent.messages import UserMessage
    from agent.session.journal import SessionJournal
    from agent.session.resume import load_session

    journal = SessionJournal(tmp_path / "s.jsonl")
    journal.append_message(UserMessage(content="broken \ud800 text"))
    journal.append_message(UserMessage(content="next"))
    journal.close()
    loaded = load_session(tmp_path / "s.jsonl")
    assert [m.content for m in loaded.messages] == ["broken \ud800 text", "next"] and not loaded.warnings


def test_appends_and_close_from_two_threads_lose_nothing(tmp_path):
    import threading

    from agent.messages import UserMessage
    from agent.session.journal import SessionJournal
    from agent.session.resume import load_session

    journal = SessionJournal(tmp_path / "s.jsonl")

    def write(tag: str) -> None:
        for i in range(200):
            journal.append_message(UserMessage(content=f"{tag}{i}"))
            if i % 50 == 0:
                journal.close()  # the UI closing while the loop writes: reopens on the next append

    threads = [threading.Thread(target=write, args=(tag,)) for tag in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    journal.close()
    assert len(load_session(tmp_path / "s.jsonl").messages) == 400
