"""Resumed sessions, the core side: empty sessions (a launch where nothing was said) stay out of
listings and ``--continue``; the plan-approval instruction and the reminders are recognisable
from the journal (``LoadedSession.plan_prompts``, ``tool_details`` ``reminders``)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from agent.config.settings import Settings
from agent.plan.model import Plan, PlanStep
from agent.plan.prompts import approved_notice
from agent.session.resume import plan_prompts_from_journal
from agent.providers.scripted import ScriptedProvider
from agent.session.resume import (
    SessionNotFoundError, find_session, latest_session, list_sessions, load_session, session_info,
)
from agent.runtime.build import build_session
from agent.session.journal import SessionJournal, read_journal, sessions_dir
from agent.events import ToolResult
from agent.session.records import ToolDetailsRecord
from tui.cli import main

EDIT = {"name": "edit", "arguments": {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    return root


def new_session(ws: Path, replies=(), **kw):
    return build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                         provider=ScriptedProvider(list(replies)), interactive=False, **kw)


def session_with_turn(ws: Path, task: str, mtime: float | None = None) -> str:
    """A closed session with one finished turn; returns its id."""
    session = new_session(ws, [{"content": "ok"}])
    session.run_turn(task, lambda event: None, threading.Event())
    session.close()
    if mtime is not None:
        os.utime(session.journal_path, (mtime, mtime))
    return session.session_id


def empty_session(ws: Path, mtime: float | None = None, *, keep_open: bool = False):
    """A launch where nothing was typed: the loop is built (its ``session`` record is journaled),
    no message. Returns the session (still holding its lock when ``keep_open``)."""
    session = new_session(ws)
    session.prepare()
    assert session.journal_path.is_file()
    if not keep_open:
        session.close()
    if mtime is not None:
        os.utime(session.journal_path, (mtime, mtime))
    return session


# ------------------------------------------------------------------------------ empty sessions
def test_listings_and_latest_leave_empty_sessions_out(ws):
    older = session_with_turn(ws, "fix add", mtime=1000)
    empty = empty_session(ws, mtime=2000).session_id  # newer, but nothing was said in it

    assert session_info(sessions_dir(ws) / f"{empty}.jsonl").empty
    assert session_info(sessions_dir(ws) / f"{older}.jsonl").messages == 2  # the prompt and the reply
    assert [i.id for i in list_sessions(ws)] == [older]
    assert [i.id for i in list_sessions(ws, include_empty=True)] == [empty, older]
    assert latest_session(ws).id == older
    assert latest_session(ws, include_empty=True).id == empty
    assert find_session(ws, "latest").stem == older
    with pytest.raises(SessionNotFoundError) as error:  # the ids an error names are non-empty ones
        find_session(ws, "nope")
    assert older in str(error.value) and empty not in str(error.value)


def test_an_explicit_id_of_an_empty_session_still_resumes(ws):
    empty = empty_session(ws).session_id
    with pytest.raises(SessionNotFoundError, match="no saved session with a conversation"):
        find_session(ws, "latest")
    resumed = new_session(ws, resume=empty)
    assert resumed.session_id == empty and resumed.resumed.messages == []
    resumed.close()


def test_continue_skips_the_new_empty_session_another_window_holds(ws):
    older = session_with_turn(ws, "fix add", mtime=1000)
    other_window = empty_session(ws, keep_open=True)  # newest journal, locked by the other window
    try:
        resumed = new_session(ws, resume="latest")  # `--continue`: no "in use by another instance"
        assert resumed.session_id == older
        assert [m.content for m in resumed.resumed.messages] == ["fix add", "ok"]
        resumed.close()
    finally:
        other_window.close()


def test_continue_skips_a_launch_whose_prompt_got_no_reply(ws):
    older = session_with_turn(ws, "fix add", mtime=1000)
    failed = new_session(ws, [{"error": "auth"}])
    failed.run_turn("hello?", lambda event: None, threading.Event())  # the provider refused: no reply
    failed.close()
    info = session_info(failed.journal_path)
    assert info.messages >= 1 and info.replies == 0
    assert latest_session(ws).id == older and find_session(ws, "latest").stem == older
    assert failed.session_id in [i.id for i in list_sessions(ws)], "still listed, and resumable by id"


def test_the_listing_says_1_turn_not_1_turns(ws, capsys):
    from agent.session.resume import format_session_list

    session_with_turn(ws, "fix add")
    line = format_session_list(list_sessions(ws))
    assert "  1 turn  " in line and "1 turns" not in line


def test_a_torn_message_line_does_not_make_a_session_non_empty(ws):
    empty = empty_session(ws)
    with empty.journal_path.open("ab") as fh:  # a crash while the first prompt was written
        fh.write(b'{"kind": "message", "message": {"role": "user", "content": "hal')
    info = session_info(empty.journal_path)
    assert info.messages == 0 and list_sessions(ws) == []


def test_cli_listings_leave_empty_sessions_out(ws, capsys):
    kept = session_with_turn(ws, "fix add", mtime=1000)
    empty = empty_session(ws, mtime=2000).session_id
    assert main(["run", "again", "--resume", "-C", str(ws)]) == 2  # run --resume without an id
    err = capsys.readouterr().err
    assert "recent sessions" in err and kept in err and empty not in err and "fix add" in err
    code = main(["run", "again", "--resume", "nope", "-C", str(ws), "--model", "openai/gpt-4.1"])
    err = capsys.readouterr().err
    assert code == 2 and "no session 'nope'" in err and kept in err and empty not in err


# ------------------------------------------------------------------------ plan approval prompt
def test_the_approval_instruction_is_named_by_the_approved_record(ws):
    session = new_session(ws, [{"content": "Done."}])
    plan = Plan(title="Fix add", steps=[PlanStep(description="Read calc.add", files=["calc.py"]),
                                        PlanStep(description="Fix the sign", files=["calc.py"]),
                                        PlanStep(description="Run the tests")])
    session.execute_plan(plan, lambda event: None, threading.Event())
    session.close()

    records = list(read_journal(session.journal_path))
    [approved] = [r for r in records if r.get("kind") == "plan" and r.get("event") == "approved"]
    user = [r["message"] for r in records if r.get("kind") == "message" and r["message"]["role"] == "user"]
    assert len(user) == 1 and user[0]["content"].startswith("The user approved the plan below")
    assert approved["message_id"] == user[0]["id"]  # recorded, not guessed from the text

    loaded = load_session(session.journal_path)
    assert list(loaded.plan_prompts) == [user[0]["id"]]
    assert loaded.plan_prompts[user[0]["id"]].title == "Fix add"
    assert approved_notice(loaded.plan_prompts[user[0]["id"]]) == (
        "Plan approved: Fix add (3 steps). Carrying it out; the sidebar shows progress.")


def test_older_journals_match_the_message_right_after_the_approved_record():
    plan = Plan(title="P", steps=[PlanStep(description="one"), PlanStep(description="two")]).model_dump(mode="json")

    def message(mid: str, role: str = "user") -> dict:
        return {"kind": "message", "message": {"id": mid, "role": role, "content": "x"}}

    records = [message("m1"), {"kind": "plan", "event": "proposed", "plan": plan}, message("m2", "assistant"),
               {"kind": "plan", "event": "approved", "plan": plan}, message("m3"), message("m4"),
               {"kind": "plan", "event": "approved", "plan": plan}, message("m5", "assistant"), message("m6"),
               {"kind": "plan", "event": "approved", "plan": {"steps": "not a list"}}, message("m7")]
    found = plan_prompts_from_journal(records)
    assert list(found) == ["m3"]  # only the user message right after a valid approved record
    assert found["m3"].title == "P"


# ---------------------------------------------------------------------------------- reminders
def test_reminders_are_journaled_with_their_tool_result(ws):
    events = []
    session = new_session(ws, [{"tool_calls": [EDIT]}, {"content": "Fixed."}])
    session.run_turn("fix add", events.append, threading.Event())
    session.close()
    live = [e.text for e in events if e.type == "reminder_injected"]
    assert live, "an edit triggers a reminder (the default rules)"

    loaded = load_session(session.journal_path)
    [result] = [m for m in loaded.messages if m.role == "tool"]
    assert loaded.details_for(result)["reminders"] == live
    assert all(f"[reminder: {text}]" in result.content for text in live)


def test_reminder_details_are_read_only_when_well_formed():
    base = {"kind": "tool_details", "message_id": "m", "tool_call_id": "c", "name": "edit"}

    def details(record: dict) -> dict:
        return ToolDetailsRecord.model_validate(record).details()

    assert details({**base, "reminders": ["a", "b"]}) == {"reminders": ["a", "b"]}
    assert details({**base, "reminders": ["a", 3]}) == {}
    assert details({**base, "reminders": "a"}) == {}
    assert details({**base, "reminders": []}) == {}


def test_a_result_without_reminders_writes_no_reminders_field(tmp_path):
    from agent.messages import ToolResultMessage

    journal = SessionJournal(tmp_path / "s.jsonl")
    result = ToolResultMessage(tool_call_id="c", name="bash", content="ok")
    journal.append_tool_result(result, ToolResult(exit_code=0, reminders=()))
    journal.close()
    lines = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert len(lines) == 1 and "reminders" not in lines[0] and lines[0]["exit_code"] == 0


def test_run_resume_without_a_task_lists_sessions_and_exits_2(ws, capsys):
    sid = session_with_turn(ws, "fix add")
    assert main(["run", "--resume", "-C", str(ws)]) == 2
    err = capsys.readouterr().err
    assert "needs a session id" in err and sid in err and "the following arguments are required" not in err
    # A word that names no session is the task: the listing follows, exit 2.
    assert main(["run", "--resume", "explain", "-C", str(ws)]) == 2
    assert sid in capsys.readouterr().err
    # The id of a session, without a task: a task is needed.
    assert main(["run", "--resume", sid[:8], "-C", str(ws)]) == 2
    assert "run needs a task" in capsys.readouterr().err


def test_help_says_what_resume_without_an_id_does(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "session picker" in " ".join(capsys.readouterr().out.split())


def test_sessions_listing_into_a_closed_pipe_ends_quietly(ws, tmp_path):
    """``opencli-tui sessions | head -1``: the reader leaving early is not a crash (no traceback,
    no crash report), the listing just stops."""
    import subprocess
    import sys

    session_with_turn(ws, "fix add", mtime=1000)
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    for args in (["sessions"], ["sessions", "stats"]):
        proc = subprocess.Popen([sys.executable, "-m", "tui", *args, "-C", str(ws)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env)
        proc.stdout.close()  # as `head` does once it has its lines
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 0 and "Traceback" not in err and "crash" not in err, err
    assert not (tmp_path / "state").exists() or not list((tmp_path / "state").rglob("crash-*"))
