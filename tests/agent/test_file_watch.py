"""The file watcher: read files and the git index, reported once, deduplicated with the stamps."""

from __future__ import annotations

import threading
import time

import pytest

from agent.events import ReminderInjected, ToolCallFinished
from agent.session.file_watch import FileWatcher, find_git_dir
from tests import helpers
from tests.helpers import Recorder as Rec


class Calls:
    def __init__(self):
        self.items = []
        self.event = threading.Event()

    def __call__(self, *args):
        self.items.append(args)
        self.event.set()

    def wait(self, timeout=5.0):
        ok = self.event.wait(timeout)
        self.event.clear()
        return ok


def test_find_git_dir(tmp_path):
    import subprocess

    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], cwd=repo, check=True)
    assert find_git_dir(repo / "sub") == (repo / ".git").resolve()
    worktree = tmp_path / "wt"
    subprocess.run([*git, "worktree", "add", "-q", str(worktree)], cwd=repo, check=True)
    assert find_git_dir(worktree) == (repo / ".git" / "worktrees" / "wt").resolve()
    lone = tmp_path / "lone"
    lone.mkdir()
    assert find_git_dir(lone) in (None, find_git_dir(tmp_path))


@pytest.mark.parametrize("polling", [False, True])
def test_watcher_reports_a_read_file_change_once_and_git_index(tmp_path, polling):
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "index").write_bytes(b"i0")
    watched = ws / "a.py"
    watched.write_text("x = 1\n")
    (ws / "other.py").write_text("y\n")
    files, git = Calls(), Calls()
    watcher = FileWatcher(lambda: [watched], on_files_changed=files, on_git_changed=git, git_dir=ws / ".git",
                          debounce_ms=100, rescan_s=0.1, polling=polling)
    watcher.start()
    try:
        assert watcher.ready.wait(5)
        time.sleep(0.2)
        (ws / "other.py").write_text("not watched\n")
        watched.write_text("x = 2\n")
        assert files.wait()
        time.sleep(0.5)
        assert files.items == [([str(watched.resolve())],)]
        (ws / ".git" / "index.lock").write_bytes(b"i1")
        (ws / ".git" / "index.lock").rename(ws / ".git" / "index")  # how git writes it
        assert git.wait()
    finally:
        watcher.stop()


def make_session(tmp_path, replies):
    session, _ = helpers.make_session(tmp_path, replies, files={"a.py": "x = 1\n", "b.py": "y = 1\n"})
    return session, tmp_path / "ws"


def test_external_change_gives_one_reminder_and_own_writes_none(tmp_path):
    session, ws = make_session(tmp_path, [
        {"tool_calls": [{"name": "read", "arguments": {"path": "a.py"}}]}, {"content": "read it"},
        {"tool_calls": [{"name": "read", "arguments": {"path": "b.py"}}]},
        {"tool_calls": [{"name": "read", "arguments": {"path": "b.py"}, "id": "again"}]}, {"content": "ok"},
        {"tool_calls": [{"name": "write", "arguments": {"path": "a.py", "content": "x = 3\n"}}]}, {"content": "ok"},
    ])
    session.run_turn("read a", Rec(), threading.Event())
    changed = Calls()
    session.start_watching(on_files_changed=changed)
    try:
        assert session._watcher.ready.wait(5)
        time.sleep(0.3)
        (ws / "a.py").write_text("x = 2  # changed by the user\n")
        assert changed.wait()
        assert session.agent.reminders.has_pending()  # queued live, before any tool call

        rec = Rec()
        session.run_turn("go on", rec, threading.Event())
        reminders = [e for e in rec if isinstance(e, ReminderInjected) and "a.py changed" in e.text]
        assert len(reminders) == 1
        outputs = [e.output for e in rec if isinstance(e, ToolCallFinished)]
        assert "a.py changed on disk" in outputs[0] and "a.py changed" not in outputs[1]

        rec = Rec()  # the agent's own write is not an external change
        session.run_turn("write a", rec, threading.Event())
        time.sleep(0.8)
        assert not session.agent.reminders.has_pending()
        assert not any(isinstance(e, ReminderInjected) and "changed on disk" in e.text for e in rec)
    finally:
        session.close()
