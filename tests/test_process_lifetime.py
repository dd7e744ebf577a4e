"""Nothing outlives the agent: ``kill -9`` of a headless run kills its command tree, grandchildren
that called ``setsid`` included (agent/supervisor.py), and ``--continue`` tells the model the
interrupted command may have run and what changed (agent/session/interrupted.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.helpers import alive, wait_for_file

from agent.supervised import supervision_available

pytestmark = pytest.mark.skipif(not supervision_available(), reason="the subreaper supervisor is Linux-only")

CLI = [sys.executable, "-c", "import sys; from tui.cli import main; sys.exit(main())"]
#: The command: a grandchild in a session of its own that would write two.txt 3 s later, and a
#: long sleep that keeps the call running.
COMMAND = ("echo one > one.txt; (setsid sh -c 'sleep 3; echo two > two.txt' &) ; "
           "echo started > started.txt; sleep 30")


def _start(tmp_path: Path, ws: Path, replies: list, *extra: str) -> subprocess.Popen:
    replay = tmp_path / f"replay-{len(list(tmp_path.glob('replay-*')))}.json"
    replay.write_text(json.dumps(replies))
    return subprocess.Popen([*CLI, "run", "go", "--output-format", "json", "--replay", str(replay), "-C", str(ws),
                             "--model", "openai/gpt-4.1", "--permission-mode", "full-auto", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_kill_9_of_the_agent_kills_its_commands_grandchildren_included(tmp_path, isolated_env):
    ws = tmp_path / "ws"
    ws.mkdir()
    proc = _start(tmp_path, ws, [{"tool_calls": [{"name": "bash", "arguments": {"command": COMMAND}, "id": "b1"}]},
                                 {"content": "done"}])
    try:
        wait_for_file(ws / "started.txt")
        tree = psutil.Process(proc.pid).children(recursive=True)
        assert any("sleep 3" in " ".join(p.cmdline()) for p in alive(tree)), "the grandchild is not in the tree"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        end = time.monotonic() + 5
        while alive(tree) and time.monotonic() < end:
            time.sleep(0.05)
        assert not alive(tree), f"outlived the agent: {[p.cmdline() for p in alive(tree)]}"
        time.sleep(4)  # past the moment the grandchild would have written
        assert not (ws / "two.txt").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()

    # --continue: the interrupted call gets a stand-in result that says it may have run.
    log = tmp_path / "requests.jsonl"
    resumed = _start(tmp_path, ws, [{"content": "checked"}], "--continue", "--replay-log", str(log))
    out, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    request = json.loads(log.read_text().splitlines()[0])
    results = [m for m in request["messages"] if m["role"] == "tool"]
    assert len(results) == 1 and results[0]["tool_call_id"] == "b1"
    text = results[0]["content"]
    assert "the command may have run" in text and "one.txt" in text and "started.txt" in text, text


def test_the_supervisor_reports_exit_codes_and_start_failures(tmp_path):
    from agent.process import run_streaming

    import threading

    chunks: list[bytes] = []
    result = run_streaming(["sh", "-c", "echo hi; exit 7"], cwd=tmp_path, sink=chunks.append,
                           cancel=threading.Event(), timeout_s=20)
    assert result.returncode == 7 and b"".join(chunks) == b"hi\n"
    result = run_streaming(["sh", "-c", "kill -9 $$"], cwd=tmp_path, sink=chunks.append,
                           cancel=threading.Event(), timeout_s=20)
    assert result.returncode == -9
    with pytest.raises(FileNotFoundError):
        run_streaming([str(tmp_path / "no-such-program")], cwd=tmp_path, sink=chunks.append,
                      cancel=threading.Event(), timeout_s=20)


def test_a_supervisor_that_cannot_start_falls_back_to_running_the_command_directly(tmp_path, monkeypatch):
    import threading

    import agent.supervised as supervised
    from agent.process import run_streaming

    monkeypatch.setattr(supervised, "_SUPERVISOR", str(tmp_path / "missing-supervisor.py"))
    chunks: list[bytes] = []
    result = run_streaming(["sh", "-c", "echo direct; exit 4"], cwd=tmp_path, sink=chunks.append,
                           cancel=threading.Event(), timeout_s=20)
    assert result.returncode == 4 and b"".join(chunks) == b"direct\n"
