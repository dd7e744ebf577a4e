"""Resumed sessions keep their "allow for this session" answers, and never more than that.

Session 1 answers a permission prompt with a session grant (a tool, or a bash command prefix);
the grant is journaled as a ``permission_grant`` record. Session 2 resumes the journal: the same
call runs without a ``PermissionRequest``. The restored grant is checked like a live one, so the
launch settings of session 2 still win: its config deny rules, a read-only mode, and the
``.git/`` protection. Tool result details (the diff of an edit) are journaled too and read back.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from agent.config.settings import Settings
from agent.events import PermissionDecision, PermissionRequest, ToolCallFinished
from agent.permissions.rules import PermissionRules
from agent.permissions.grants import SessionGrant
from agent.providers.scripted import ScriptedProvider
from agent.session.resume import load_session
from agent.runtime.build import build_session
from agent.session.journal import read_journal
from agent.session.records import PermissionGrantRecord, ToolDetailsRecord


class Answers:
    """An ``emit`` that records events and answers each permission request with the next
    decision (a test that expects no request passes none: any request then fails the call)."""

    def __init__(self, *decisions: PermissionDecision) -> None:
        self.decisions = list(decisions)
        self.events: list[Any] = []

    def __call__(self, event: Any) -> None:
        self.events.append(event)
        if isinstance(event, PermissionRequest):
            event.reply.set_result(self.decisions.pop(0) if self.decisions
                                   else PermissionDecision(allow=False, reason="unexpected prompt"))

    @property
    def requests(self) -> list[PermissionRequest]:
        return [e for e in self.events if isinstance(e, PermissionRequest)]

    @property
    def results(self) -> list[ToolCallFinished]:
        return [e for e in self.events if isinstance(e, ToolCallFinished)]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "edit", "arguments": {"path": path, "old_string": old, "new_string": new}}]}


def turn(ws: Path, replies: list[dict], answers: Answers, *, resume: str | None = None,
         mode: str = "ask", **settings: Any):
    """Run one turn of a new session (or of the resumed one) and close it; return the session."""
    session = build_session(ws, Settings(model="openai/gpt-4.1", permission_mode=mode, **settings),
                            provider=ScriptedProvider(replies + [{"content": "done"}]), interactive=True,
                            resume=resume)
    try:
        session.run_turn("go", answers, threading.Event())
    finally:
        session.close()
    return session


def grant_records(session) -> list[dict]:
    return [r for r in read_journal(session.journal_path) if r.get("kind") == "permission_grant"]


# ------------------------------------------------------------------------------------ restored
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_prefix_grant_survives_resume(ws: Path) -> None:
    first = Answers(PermissionDecision(allow=True, scope="session_prefix", prefix="git status"))
    session = turn(ws, [bash("git status")], first)
    assert len(first.requests) == 1 and not first.results[0].is_error
    [record] = grant_records(session)
    assert (record["scope"], record["tool"], record["prefix"]) == ("session_prefix", "bash", "git status")

    second = Answers()  # no decisions: a prompt would deny
    turn(ws, [bash("git status --short")], second, resume="latest")
    assert second.requests == []
    assert not second.results[0].is_error, second.results[0].output
    # the prefix still means what it meant: other commands ask
    third = Answers(PermissionDecision(allow=False))
    turn(ws, [bash("git log -1")], third, resume="latest")
    assert len(third.requests) == 1 and third.results[0].is_error


def test_tool_grant_survives_resume_and_is_journaled_once(ws: Path) -> None:
    first = Answers(PermissionDecision(allow=True, scope="session_tool"))
    session = turn(ws, [edit("a.py", "x = 1", "x = 2"), edit("a.py", "x = 2", "x = 3")], first)
    assert len(first.requests) == 1 and (ws / "a.py").read_text() == "x = 3\n"

    second = Answers()
    resumed = turn(ws, [edit("a.py", "x = 3", "x = 4")], second, resume=session.session_id)
    assert second.requests == [] and not second.results[0].is_error
    assert (ws / "a.py").read_text() == "x = 4\n"
    assert [(r["scope"], r["tool"]) for r in grant_records(resumed)] == [("session_tool", "edit")]


# ------------------------------------------------------------------------------ never looser
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_deny_rule_added_in_config_still_denies_a_restored_grant(ws: Path) -> None:
    session = turn(ws, [bash("git status")],
                   Answers(PermissionDecision(allow=True, scope="session_prefix", prefix="git status")))
    second = Answers()
    turn(ws, [bash("git status --short")], second, resume=session.session_id,
         permissions={"deny": ["git status"]})
    assert second.requests == []
    [result] = second.results
    assert result.is_error and "deny rule 'git status'" in result.output


def test_deny_rule_beats_a_restored_tool_grant(ws: Path) -> None:
    session = turn(ws, [edit("a.py", "x = 1", "x = 2")], Answers(PermissionDecision(allow=True, scope="session_tool")))
    second = Answers()
    turn(ws, [edit("a.py", "x = 2", "x = 3")], second, resume=session.session_id,
         permissions={"deny": ["tool:edit"]})
    assert second.requests == [] and second.results[0].is_error and "deny rule" in second.results[0].output
    assert (ws / "a.py").read_text() == "x = 2\n"


def test_read_only_launch_refuses_a_restored_grant(ws: Path) -> None:
    session = turn(ws, [edit("a.py", "x = 1", "x = 2"), bash("echo hi")],
                   Answers(PermissionDecision(allow=True, scope="session_tool"),
                           PermissionDecision(allow=True, scope="session_tool")))
    assert {r["tool"] for r in grant_records(session)} == {"edit", "bash"}
    second = Answers()
    turn(ws, [edit("a.py", "x = 2", "x = 3"), bash("echo hi > b.txt")], second, resume=session.session_id,
         mode="read-only")
    assert second.requests == []
    assert all(r.is_error and "read-only" in r.output for r in second.results)
    assert (ws / "a.py").read_text() == "x = 2\n" and not (ws / "b.txt").exists()


@pytest.mark.parametrize("mode", ["ask", "auto-edit"])
def test_restored_grant_does_not_bypass_git_protection(ws: Path, mode: str) -> None:
    (ws / ".git").mkdir(exist_ok=True)
    (ws / ".git" / "notes.txt").write_text("keep\n")
    session = turn(ws, [edit("a.py", "x = 1", "x = 2")], Answers(PermissionDecision(allow=True, scope="session_tool")))
    second = Answers(PermissionDecision(allow=False, reason="no"))
    turn(ws, [edit(".git/notes.txt", "keep", "changed")], second, resume=session.session_id, mode=mode)
    assert len(second.requests) == 1 and second.requests[0].tool_name == "edit"
    assert second.results[0].is_error
    assert (ws / ".git" / "notes.txt").read_text() == "keep\n"


def test_malformed_or_foreign_grant_records_are_ignored(ws: Path) -> None:
    session = turn(ws, [], Answers())
    with session.journal_path.open("a", encoding="utf-8") as fh:
        for record in [
            {"kind": "permission_grant", "scope": "session_tool", "tool": 5},
            {"kind": "permission_grant", "scope": "everything", "tool": "bash"},
            {"kind": "permission_grant", "scope": "session_prefix", "tool": "edit", "prefix": "x"},
            {"kind": "permission_grant", "scope": "session_prefix", "tool": "bash", "prefix": "  "},
            {"kind": "permission_grant", "scope": "session_tool", "tool": "tool:bash"},
            {"kind": "permission_grant", "scope": "session_prefix", "tool": "bash", "prefix": "tool:bash"},
        ]:
            fh.write(json.dumps(record) + "\n")
    loaded = load_session(session.journal_path)
    assert loaded.grants == [SessionGrant("session_prefix", "bash", "tool:bash")]
    second = Answers(PermissionDecision(allow=False))
    turn(ws, [bash("echo hi")], second, resume=session.session_id)
    assert len(second.requests) == 1  # a prefix is a command prefix, never a tool rule


def test_old_journal_without_grants_still_resumes_and_asks(ws: Path) -> None:
    session = turn(ws, [], Answers())
    assert load_session(session.journal_path).grants == []
    second = Answers(PermissionDecision(allow=True))
    turn(ws, [edit("a.py", "x = 1", "x = 2")], second, resume=session.session_id)
    assert len(second.requests) == 1 and not second.results[0].is_error


def test_rules_restore_does_not_notify_and_prefixes_are_not_tool_rules() -> None:
    seen: list[SessionGrant] = []
    rules = PermissionRules()
    rules.on_grant = seen.append
    assert rules.restore([SessionGrant("session_tool", "edit"), SessionGrant("session_tool", "edit")]) == 1
    assert seen == [] and rules.check("edit", {"path": "a"}).verdict == "allow"
    rules.allow_tool("edit")  # already granted: not told again
    rules.allow_prefix("write")
    rules.allow_prefix("write")
    assert seen == [SessionGrant("session_prefix", "bash", "write")]
    assert rules.check("write", {"path": "a"}).verdict == "none"
    assert rules.check("bash", {"command": "write x"}).verdict == "allow"
    assert [PermissionGrantRecord.of(g).dump() for g in rules.session_grants()] == [
        {"kind": "permission_grant", "scope": "session_tool", "tool": "edit"},
        {"kind": "permission_grant", "scope": "session_prefix", "tool": "bash", "prefix": "write"},
    ]


# -------------------------------------------------------------------------- tool result details
def test_edit_diff_is_journaled_and_read_back(ws: Path) -> None:
    live = Answers()
    read = {"tool_calls": [{"name": "read", "arguments": {"path": "a.py"}}]}
    session = turn(ws, [edit("a.py", "x = 1", "x = 2"), read], live, mode="full-auto")
    edit_result, read_result = live.results
    assert edit_result.diff and "+x = 2" in edit_result.diff
    loaded = load_session(session.journal_path)
    tools = [m for m in loaded.messages if m.role == "tool"]
    assert loaded.details_for(tools[0])["diff"] == edit_result.diff
    assert set(loaded.details_for(tools[1])) == {"outcome", "duration_s"}  # a read shows nothing more
    assert len(loaded.of_kind(ToolDetailsRecord)) == 2  # one per result: its outcome and duration
