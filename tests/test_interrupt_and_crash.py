"""SIGTERM / SIGHUP end a headless run cleanly (exit 143, ``turn_finished`` with stop reason
``interrupted``, the journal's end record, a reason on stderr, the command tree dead), and a crash
leaves a private traceback file whose path is printed."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.helpers import alive, wait_for_file

from tui.cli import main

CLI = [sys.executable, "-c", "import sys; from tui.cli import main; sys.exit(main())"]


def _all_dead(processes: list[psutil.Process], timeout_s: float = 5.0) -> bool:
    end = time.monotonic() + timeout_s
    while alive(processes) and time.monotonic() < end:
        time.sleep(0.05)
    return not alive(processes)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_mid_bash_ends_the_turn_interrupted_with_exit_143(tmp_path, isolated_env, signum):
    ws = tmp_path / "ws"
    ws.mkdir()
    replay = tmp_path / "replay.json"
    command = "(setsid sleep 60 &) ; echo started > started.txt; sleep 60"
    replay.write_text(json.dumps([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
                                  {"content": "never reached"}]))
    proc = subprocess.Popen([*CLI, "run", "go", "--output-format", "json", "--replay", str(replay), "-C", str(ws),
                             "--model", "openai/gpt-4.1", "--permission-mode", "full-auto"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_file(ws / "started.txt")
        tree = psutil.Process(proc.pid).children(recursive=True)
        os.kill(proc.pid, signum)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    events = [json.loads(line) for line in out.splitlines()]
    last = events[-1]
    assert last["type"] == "turn_finished" and last["stop_reason"] == "interrupted", last
    finished = [e for e in events if e["type"] == "tool_call_finished"]
    assert finished and finished[0]["is_error"]
    reason = err.strip().splitlines()[-1]
    assert reason == (f"opencli-tui: interrupted by {signal.Signals(signum).name}: the turn was stopped "
                      "(--continue resumes the session)")
    assert "Traceback" not in err
    journals = list((isolated_env / "data").rglob("*.jsonl"))
    records = [json.loads(line) for path in journals for line in path.read_text().splitlines()]
    ends = [r for r in records if r.get("kind") == "event" and r.get("event") == "turn_finished"]
    assert [r["stop_reason"] for r in ends] == ["interrupted"]
    assert _all_dead(tree), "the command tree outlived the interrupted run"


def test_a_crash_writes_a_private_traceback_file_and_prints_its_path(tmp_path, isolated_env, monkeypatch, capsys):
    import tui.headless

    def boom(*args, **kwargs):
        raise RuntimeError("forced crash for the test with sk-abcdefghijklmnopqrstuvwxyz123456 in it")

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(tui.headless, "run_headless", boom)
    ws = tmp_path / "ws"
    ws.mkdir()
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps([{"content": "hi"}]))
    code = main(["run", "go", "--replay", str(replay), "-C", str(ws), "--model", "openai/gpt-4.1"])
    err = capsys.readouterr().err
    assert code == 1
    line = err.strip().splitlines()[-1]
    assert line.startswith("opencli-tui: crashed: RuntimeError: forced crash for the test")
    path = Path(line.rsplit(" ", 1)[-1])
    assert path.parent == tmp_path / "state" / "opencli" and path.name.startswith("crash-")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    text = path.read_text()
    assert "Traceback (most recent call last)" in text and "forced crash for the test" in text and "boom" in text
    assert "sk-abcdefghijklmnopqrstuvwxyz123456" not in text, "the crash file is redacted"


def test_a_tui_crash_is_reported_after_the_terminal_is_restored(tmp_path, isolated_env, monkeypatch, capsys):
    """Textual restores the terminal and keeps the exception; the CLI saves it and names the file."""
    import tui.app

    class CrashedApp:
        def __init__(self, *args, **kwargs):
            self.session = None
            self.startup_error = None
            self.return_code = 1
            self.pick_session_at_start = False
            self._exception = None

        def run(self):
            try:
                raise ValueError("a widget failed")
            except ValueError as exc:
                self._exception = exc

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(tui.app, "OpenCLIApp", CrashedApp)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    code = main(["-C", str(tmp_path), "--model", "openai/gpt-4.1"])
    err = capsys.readouterr().err
    assert code == 1
    path = Path(err.strip().splitlines()[-1].rsplit(" ", 1)[-1])
    assert "ValueError: a widget failed" in path.read_text()
