"""Retention of stored sessions (age and total size, oldest first, never the current or a locked
one) and ``opencli-tui sessions [--delete ID]``."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from agent.session.journal import SessionJournal, sessions_dir
from agent.session.retention import all_sessions, apply_retention


def _session(ws: Path, sid: str, age_days: float, size: int = 100, outputs: int = 0) -> Path:
    journal = sessions_dir(ws) / f"{sid}.jsonl"
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.write_text(json.dumps({"kind": "message", "message": {"role": "user", "content": f"task {sid}"}})
                       + "\n" + "x" * size + "\n")
    when = time.time() - age_days * 86400
    if outputs:
        folder = journal.with_suffix("")
        folder.mkdir()
        (folder / "tool-output-c1.txt").write_bytes(b"o" * outputs)
        os.utime(folder / "tool-output-c1.txt", (when, when))
        os.utime(folder, (when, when))
    os.utime(journal, (when, when))
    return journal


def test_retention_deletes_sessions_older_than_the_age_with_their_outputs(tmp_path):
    ws = tmp_path / "ws"
    old = _session(ws, "20250101-000000-aaaaaa", age_days=40, outputs=1000)
    recent = _session(ws, "20261101-000000-bbbbbb", age_days=2)
    report = apply_retention(30, 0)
    assert report.deleted == ["20250101-000000-aaaaaa"] and report.freed > 1000
    assert not old.exists() and not old.with_suffix("").exists() and recent.exists()
    assert "deleted 1 old session" in report.notice()


def test_retention_size_cap_deletes_oldest_first_but_never_current_or_locked(tmp_path):
    ws = tmp_path / "ws"
    current = _session(ws, "s0-current", age_days=9, size=400_000)
    locked = _session(ws, "s1-locked", age_days=8, size=400_000)
    oldest = _session(ws, "s2", age_days=7, size=400_000)
    middle = _session(ws, "s3", age_days=6, size=400_000)
    newest = _session(ws, "s4", age_days=1, size=400_000)
    holder = SessionJournal(locked)
    holder.lock()  # another instance has it open
    try:
        report = apply_retention(0, 1.3, keep={"s0-current"})  # 1.3 MB cap, 2 MB stored
    finally:
        holder.close()
    assert report.deleted == ["s2", "s3"]
    assert current.exists() and locked.exists() and newest.exists()
    assert not oldest.exists() and not middle.exists()


def test_retention_runs_at_start(tmp_path, capsys):
    from tui.cli import main

    ws = tmp_path / "ws"
    ws.mkdir()
    old = _session(ws, "20240101-000000-cccccc", age_days=365)
    replay = tmp_path / "r.json"
    replay.write_text(json.dumps([{"content": "ok"}]))
    code = main(["run", "hi", "--output-format", "json", "--replay", str(replay), "-C", str(ws)])
    out = capsys.readouterr().out
    assert code == 0 and not old.exists()
    assert any("Retention: deleted 1 old session" in json.loads(line).get("message", "") for line in out.splitlines())
    assert [s.id for s in all_sessions()] != []  # the new session stays


def test_sessions_command_lists_and_deletes(tmp_path, capsys):
    from tui.cli import main

    ws = tmp_path / "ws"
    ws.mkdir()
    _session(ws, "20261101-000000-dddddd", age_days=1, outputs=5000)
    assert main(["sessions", "-C", str(ws)]) == 0
    listing = capsys.readouterr().out
    assert "20261101-000000-dddddd" in listing and "kB" in listing and "task 20261101-000000-dddddd" in listing
    assert main(["sessions", "--delete", "20261101-000000-dddddd", "-C", str(ws)]) == 0
    assert "deleted session 20261101-000000-dddddd" in capsys.readouterr().out
    assert all_sessions() == []
    assert main(["sessions", "--delete", "nope", "-C", str(ws)]) == 2
