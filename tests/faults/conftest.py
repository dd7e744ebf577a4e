"""Fixtures of the fault-injection suite: a fake OpenAI-compatible server and a headless run
against it (``opencli-tui run ... --output-format json --model openai/fake --api-base URL``,
in-process through ``tui.cli.main``), with a hang guard on every test."""

from __future__ import annotations

import json
import os
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.faults.fake_server import FakeServer, Reply

#: Every test of the suite is stopped after this many seconds (a hang is a failure, not a stall).
HANG_GUARD_S = 60


class HangGuardExpired(BaseException):
    """Raised in the test's thread by the hang guard; a BaseException, so that the code under
    test (which turns exceptions into provider errors) cannot swallow it."""


@pytest.fixture(autouse=True)
def hang_guard():
    """Fail the test with a traceback instead of hanging when it runs past ``HANG_GUARD_S``."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM"):
        yield
        return

    def expired(*_: Any) -> None:
        raise HangGuardExpired(f"fault test still running after {HANG_GUARD_S} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(HANG_GUARD_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class FaultRun:
    """What one headless run left: exit ``code``, JSON ``events``, ``stderr``, the ``server``
    (its recorded requests) and the session journal's ``journal_path``."""

    code: int
    events: list[dict[str, Any]]
    stderr: str
    server: FakeServer
    journal_path: Path | None
    workspace: Path
    extra: dict[str, Any] = field(default_factory=dict)

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    @property
    def finished(self) -> dict[str, Any]:
        return self.of_type("turn_finished")[-1]

    @property
    def reason_line(self) -> str:
        """The last stderr line (the one-line reason of a non-zero exit)."""
        lines = self.stderr.strip().splitlines()
        return lines[-1] if lines else ""


@pytest.fixture
def fault_run(tmp_path, capsys, monkeypatch, isolated_env) -> Callable[..., FaultRun]:
    """``fault_run(script, env={...}, model="openai/fake")`` serves ``script`` (a list of
    ``Reply``) and runs the headless agent once against it in full-auto mode."""
    from tui.cli import main

    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key-for-tests")
    servers: list[FakeServer] = []

    def run(script: list[Reply], *, env: dict[str, str] | None = None, model: str = "openai/fake",
            task: str = "look at a.py", models: list[str] | None = None) -> FaultRun:
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        ws = tmp_path / "ws"
        ws.mkdir(exist_ok=True)
        (ws / "a.py").write_text("x = 1\n")
        server = FakeServer(script, models=models).start()
        servers.append(server)
        capsys.readouterr()
        code = main(["run", task, "--output-format", "json", "--model", model, "--api-base", server.url,
                     "--permission-mode", "full-auto", "-C", str(ws)])
        out, err = capsys.readouterr()
        events = [json.loads(line) for line in out.splitlines() if line.strip()]
        journals = sorted(p for p in Path(os.environ["OPENCLI_DATA_DIR"]).rglob("*.jsonl")
                          if not p.name.endswith(".log.jsonl"))  # the session logs beside them
        return FaultRun(code, events, err, server, journals[-1] if journals else None, ws)

    yield run
    for server in servers:
        server.stop()


def assert_journal_intact(result: FaultRun) -> list[Any]:
    """The run's journal: every line is a record that ``agent.session.resume`` loads (no line
    skipped, none torn), it records the turn's end with its stop reason, and a user message opens
    the conversation.
    Returns the loaded messages."""
    from agent.session.resume import load_session

    assert result.journal_path is not None, "no session journal was written"
    raw = result.journal_path.read_bytes()
    assert raw.endswith(b"\n"), "the journal's last line is torn"
    lines = [line for line in raw.split(b"\n") if line.strip()]
    for line in lines:
        json.loads(line)
    loaded = load_session(result.journal_path)
    assert loaded.warnings == []
    assert len(loaded.records) == len(lines), "a journal line did not load as a record"
    assert loaded.messages and loaded.messages[0].role == "user"
    ends = [r for r in loaded.records if getattr(r, "event", None) == "turn_finished"]
    assert ends and ends[-1].stop_reason == result.finished["stop_reason"], "the turn's end is not journaled"
    return loaded.messages
