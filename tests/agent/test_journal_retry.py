"""A failed journal write is retried, never dropped silently; a journal that cannot resume says so."""

from __future__ import annotations

import errno
import os
import threading

from agent.events import JournalStatus
from agent.session import journal as journal_module
from agent.session.journal import MAX_FAILED_APPENDS, SessionJournal
from agent.session.records import read_journal
from tests.helpers import Recorder, make_session


class FlakyDisk:
    """Replaces the journal's low-level write: the next ``failures`` calls write half of what they
    are given, then raise ENOSPC (a disk that fills up mid-line)."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.real = journal_module._write_all

    def __call__(self, fd: int, data: bytes) -> None:
        if self.failures > 0:
            self.failures -= 1
            half = bytes(data[: max(1, len(data) // 2)])
            if len(data) > 1:
                os.write(fd, half)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.real(fd, data)


def _records(path):
    warnings: list[str] = []
    return [r for r in read_journal(path, warnings) if "n" in r], warnings


def test_journal_enospc_once_keeps_every_record_and_warns(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    journal = SessionJournal(path)
    journal.append({"kind": "test", "n": 0})
    disk = FlakyDisk(failures=1)
    monkeypatch.setattr(journal_module, "_write_all", disk)
    journal.append({"kind": "test", "n": 1})  # half a line, then ENOSPC
    assert journal.state == "retrying" and journal.pending == 1
    reports = journal.take_reports()
    assert [r.state for r in reports] == ["retrying"]
    assert "No space left on device" in reports[0].message and "retried" in reports[0].message
    for n in range(2, 6):
        journal.append({"kind": "test", "n": n})
    journal.close()
    records, warnings = _records(path)
    assert [r["n"] for r in records] == [0, 1, 2, 3, 4, 5]  # in order, none twice
    assert len(warnings) == 1 and "torn" in warnings[0]  # the half line is skipped on load
    assert [r.state for r in journal.take_reports()] == ["ok"]
    assert journal.lost == 0


def test_journal_failed_write_with_only_the_newline_missing_is_not_written_twice(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    journal = SessionJournal(path)
    real = journal_module._write_all
    calls = {"n": 0}

    def all_but_newline(fd, data):
        calls["n"] += 1
        if calls["n"] == 1:
            real(fd, data[:-1])
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(fd, data)

    monkeypatch.setattr(journal_module, "_write_all", all_but_newline)
    journal.append({"kind": "test", "n": 1})
    journal.append({"kind": "test", "n": 2})
    journal.close()
    records, warnings = _records(path)
    assert [r["n"] for r in records] == [1, 2] and warnings == []


def test_journal_persistent_failure_reports_failed_then_resumes(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    journal = SessionJournal(path)
    disk = FlakyDisk(failures=10**6)
    monkeypatch.setattr(journal_module, "_write_all", disk)
    for n in range(MAX_FAILED_APPENDS + 2):
        journal.append({"kind": "test", "n": n})
    states = [r.state for r in journal.take_reports()]
    assert states == ["retrying", "failed"] and journal.state == "failed"
    assert journal.pending == MAX_FAILED_APPENDS + 2  # kept, not dropped
    disk.failures = 0
    journal.append({"kind": "test", "n": 99})
    assert journal.state == "ok" and [r.state for r in journal.take_reports()] == ["ok"]
    journal.close()
    records, _ = _records(path)
    assert [r["n"] for r in records] == list(range(MAX_FAILED_APPENDS + 2)) + [99]


def test_journal_deleted_file_is_reported_as_failed(tmp_path):
    path = tmp_path / "s.jsonl"
    journal = SessionJournal(path)
    journal.append({"kind": "test", "n": 0})
    path.unlink()
    journal.append({"kind": "test", "n": 1})
    reports = journal.take_reports()
    assert [r.state for r in reports] == ["failed"] and "deleted" in reports[0].message
    assert journal.lost == 1
    journal.close()


def test_journal_enospc_in_a_turn_emits_a_warning_and_the_reload_has_every_message(tmp_path, monkeypatch):
    session, _ = make_session(tmp_path, [{"content": "one"}, {"content": "two"}])
    rec = Recorder()
    disk = FlakyDisk(failures=1)
    session.run_turn("first", rec, threading.Event())
    monkeypatch.setattr(journal_module, "_write_all", disk)
    session.run_turn("second", rec, threading.Event())
    statuses = rec.of(JournalStatus)
    assert [s.state for s in statuses] == ["retrying", "ok"]
    path = session.journal_path
    session.close()
    texts = [r["message"].get("content") for r in read_journal(path) if r.get("kind") == "message"]
    assert texts == ["first", "one", "second", "two"]


def test_journal_persistent_failure_marks_the_status_bar(tmp_path):
    import asyncio

    from tui.widgets.status_bar import StatusBar
    from textual.app import App

    class Host(App):
        def compose(self):
            yield StatusBar()

    async def run() -> str:
        app = Host()
        async with app.run_test(size=(160, 5)) as pilot:
            bar = app.query_one(StatusBar)
            bar.journal_failed = True
            await pilot.pause()
            return bar.info_text().plain

    assert "journal not saved" in asyncio.run(run())


def test_journal_failure_warns_on_stderr_in_headless_runs(tmp_path, monkeypatch):
    import io

    from tui.headless import run_headless

    session, _ = make_session(tmp_path, [{"content": "done"}])
    monkeypatch.setattr(journal_module, "_write_all", FlakyDisk(failures=1))
    out, err = io.StringIO(), io.StringIO()
    code = run_headless(session, "task", output_format="json", out=out, err=err)
    path = session.journal_path
    session.close()
    assert code == 0
    lines = err.getvalue().splitlines()
    assert any(line.startswith("opencli-tui: warning: session journal") and "No space left" in line for line in lines)
    assert any("writes resumed" in line for line in lines)
    kinds = [r.get("kind") for r in read_journal(path)]
    assert "session" in kinds and kinds.count("message") == 2


def test_journal_queue_over_its_memory_cap_reports_the_dropped_records(tmp_path, monkeypatch):
    monkeypatch.setattr(journal_module, "MAX_PENDING_CHARS", 2000)
    journal = SessionJournal(tmp_path / "s.jsonl")
    monkeypatch.setattr(journal_module, "_write_all", FlakyDisk(failures=10**6))
    for n in range(30):
        journal.append({"kind": "test", "n": n, "pad": "x" * 200})
    reports = journal.take_reports()
    assert journal.lost > 0 and journal.state == "failed"
    assert len([r for r in reports if "dropped" in r.message and r.state == "failed"]) == 1
    journal.close()
