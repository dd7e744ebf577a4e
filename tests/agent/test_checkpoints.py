"""Per-turn checkpoints and undo: exact bytes back (CRLF, non-UTF-8), created files deleted,
modes kept, one turn at a time, bash noted, git untouched."""

from __future__ import annotations

import stat
import subprocess
import threading
from pathlib import Path

from agent.session.checkpoints import BASH_NOTE, Checkpoints
from agent.config.settings import Settings
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session

CRLF = b"first line\r\nsecond line\r\n"
LATIN1 = b"caf\xe9 = 1\n\xff\xfe raw\n"


def make_ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "crlf.txt").write_bytes(CRLF)
    (ws / "latin1.txt").write_bytes(LATIN1)
    return ws


def test_checkpoint_and_undo_restore_bytes_and_delete_created_files(tmp_path):
    ws = make_ws(tmp_path)
    cp = Checkpoints(ws, "s1")
    cp.start_turn()
    for name in ("crlf.txt", "latin1.txt", "sub/new.txt"):
        assert cp.before_change(name) is None
    (ws / "crlf.txt").write_bytes(b"changed\n")
    (ws / "latin1.txt").write_bytes(b"changed\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "new.txt").write_text("new")
    lines = cp.undo_last_turn()
    assert lines == ["restored crlf.txt", "restored latin1.txt", "deleted sub/new.txt (created by that turn)"]
    assert (ws / "crlf.txt").read_bytes() == CRLF
    assert (ws / "latin1.txt").read_bytes() == LATIN1
    assert not (ws / "sub" / "new.txt").exists()
    assert cp.undo_last_turn() == ["nothing to undo"]


def test_first_state_of_the_turn_is_kept_and_mode_restored(tmp_path):
    ws = make_ws(tmp_path)
    script = ws / "run.sh"
    script.write_bytes(b"#!/bin/sh\n")
    script.chmod(0o755)
    cp = Checkpoints(ws, "s1")
    cp.start_turn()
    cp.before_change("run.sh")
    script.write_bytes(b"one\n")
    cp.before_change("./run.sh")  # same file again in the same turn: not saved again
    script.write_bytes(b"two\n")
    script.chmod(0o600)
    assert cp.undo_last_turn() == ["restored run.sh"]
    assert script.read_bytes() == b"#!/bin/sh\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


def test_turns_undo_one_at_a_time_and_survive_a_new_instance(tmp_path):
    ws = make_ws(tmp_path)
    target = ws / "crlf.txt"
    cp = Checkpoints(ws, "s1")
    cp.start_turn()
    cp.before_change("crlf.txt")
    target.write_bytes(b"turn 1\n")
    cp.start_turn()  # a read-only turn takes no checkpoint
    cp.start_turn()
    cp.before_change("crlf.txt")
    target.write_bytes(b"turn 3\n")
    again = Checkpoints(ws, "s1")  # e.g. after --resume
    assert again.turns() == [1, 3]
    assert again.undo_last_turn() == ["restored crlf.txt"]
    assert target.read_bytes() == b"turn 1\n"
    assert again.undo_last_turn() == ["restored crlf.txt"]
    assert target.read_bytes() == CRLF


def test_bash_is_noted_and_too_large_files_are_reported(tmp_path):
    ws = make_ws(tmp_path)
    cp = Checkpoints(ws, "s1", max_file_bytes=4)
    cp.start_turn()
    assert cp.before_tool("exec", {"command": "make"}) is None
    warning = cp.before_tool("mutating", {"path": "crlf.txt"})
    assert warning and "no checkpoint" in warning
    assert cp.before_tool("read", {"path": "latin1.txt"}) is None
    assert cp.undo_last_turn() == ["not restored: crlf.txt (too large)", BASH_NOTE]


def session(ws, replies):
    provider = ScriptedProvider(replies)
    return build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                         provider=provider, interactive=False)


def test_undo_through_the_loop_keeps_git_history(tmp_path):
    ws = make_ws(tmp_path)
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    subprocess.run([*git, "add", "."], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=ws, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ws, capture_output=True, text=True).stdout
    s = session(ws, [
        {"tool_calls": [
            {"name": "edit", "arguments": {"path": "crlf.txt", "old_string": "second", "new_string": "2nd"}},
            {"name": "edit", "arguments": {"path": "latin1.txt", "old_string": "raw", "new_string": "cooked"}},
            {"name": "write", "arguments": {"path": "made.txt", "content": "hello\n"}},
        ]},
        {"content": "done"},
    ])
    result = s.run_turn("change things", lambda e: None, threading.Event())
    assert result.stop_reason == "done"
    assert (ws / "crlf.txt").read_bytes() == b"first line\r\n2nd line\r\n"
    assert (ws / "latin1.txt").read_bytes() != LATIN1 and (ws / "made.txt").exists()

    lines = s.undo()
    assert lines == ["restored crlf.txt", "restored latin1.txt", "deleted made.txt (created by that turn)"]
    assert (ws / "crlf.txt").read_bytes() == CRLF and (ws / "latin1.txt").read_bytes() == LATIN1
    assert not (ws / "made.txt").exists()
    assert subprocess.run(["git", "rev-parse", "HEAD"], cwd=ws, capture_output=True, text=True).stdout == head
    assert subprocess.run(["git", "status", "--porcelain"], cwd=ws, capture_output=True, text=True).stdout == ""
    assert s.undo() == ["nothing to undo"]
    s.close()


def test_denied_calls_take_no_checkpoint(tmp_path):
    ws = make_ws(tmp_path)
    provider = ScriptedProvider([
        {"tool_calls": [{"name": "write", "arguments": {"path": "x.txt", "content": "x"}}]}, {"content": "ok"}])
    s = build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="read-only"), provider=provider,
                      interactive=False)
    s.run_turn("try", lambda e: None, threading.Event())
    assert s.undo() == ["nothing to undo"]
    s.close()


def test_undo_never_overwrites_edits_made_after_the_turn(tmp_path):
    """A file changed after the agent's turn (by the user) is not restored, and says why."""
    import threading

    from agent.config.settings import Settings
    from agent.providers.scripted import ScriptedProvider
    from agent.runtime.build import build_session

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("a - b\n")
    (ws / "other.py").write_text("x\n")
    edits = [{"tool_calls": [{"name": "edit", "arguments": {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}},
                             {"name": "edit", "arguments": {"path": "other.py", "old_string": "x", "new_string": "y"}}]},
             {"content": "done"}]
    session = build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                            provider=ScriptedProvider(edits), interactive=False)
    session.run_turn("fix", lambda e: None, threading.Event())
    with open(ws / "calc.py", "a") as fh:
        fh.write("# USER WORK\n")
    lines = session.undo()
    assert (ws / "calc.py").read_text() == "a + b\n# USER WORK\n"
    assert any("calc.py" in line and "changed since" in line for line in lines)
    assert (ws / "other.py").read_text() == "x\n" and any(line == "restored other.py" for line in lines)
    session.close()
