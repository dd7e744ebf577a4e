"""``run --verify`` in a real scratch git repository: a failing test hands its output back for
another round; still failing after ``verify.max_rounds`` ends the run as ``verify_failed`` (exit 5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui.cli import main

BUGGY = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A tiny pytest project with one failing test, committed; this interpreter first on PATH."""
    ws = tmp_path / "ws"
    (ws / "tests").mkdir(parents=True)
    (ws / "calc.py").write_text(BUGGY)
    (ws / "tests" / "test_calc.py").write_text(TEST)
    (ws / "pyproject.toml").write_text("[tool.pytest.ini_options]\npythonpath = [\".\"]\n")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "start"]):
        subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True)
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    return ws


def edit(old: str, new: str) -> dict:
    return {"tool_calls": [{"name": "edit", "arguments": {"path": "calc.py", "old_string": old, "new_string": new}}]}


def run(tmp_path, capsys, ws, replies, *extra):
    script = tmp_path / "replay.json"
    script.write_text(json.dumps(replies))
    log = tmp_path / "requests.jsonl"
    code = main(["run", "fix add", "--output-format", "json", "--replay", str(script), "--replay-log", str(log),
                 "-C", str(ws), "--model", "openai/gpt-4.1", "--permission-mode", "auto-edit", *extra])
    out, err = capsys.readouterr()
    requests = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return code, [json.loads(line) for line in out.splitlines()], err, requests


def test_verify_failing_then_passing_round_exits_0(tmp_path, capsys, repo):
    code, events, err, requests = run(tmp_path, capsys, repo, [
        edit("a - b", "a * b"), {"content": "Fixed."},
        edit("a * b", "a + b"), {"content": "Fixed for real."},
    ], "--verify")
    assert code == 0, err
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    hooks = [e for e in events if e["type"] == "hook_finished"]
    assert [(h["hook"], h["verdict"], h["round"]) for h in hooks] == [("verify", "retry", 1), ("verify", "accept", 2)]
    assert hooks[0]["message"] == "1 failed · round 1 of 2" and "assert 6 == 5" in hooks[0]["detail"]
    # the second round's user message carries the failing output, in the same conversation
    second = requests[2]["messages"]
    feedback = second[-1]["content"]
    assert second[-1]["role"] == "user" and "verify ran `python -m pytest -q`" in feedback and "assert 6 == 5" in feedback
    assert any(m["role"] == "user" and m["content"] == "fix add" for m in second)
    # one turn for the user: one turn_started, one turn_finished (the last event)
    assert [e["type"] for e in events].count("turn_started") == 1
    assert [e["type"] for e in events].count("turn_finished") == 1
    assert events[-1]["type"] == "turn_finished" and events[-1]["stop_reason"] == "done"


def test_verify_failing_twice_exits_5_with_verify_failed(tmp_path, capsys, repo):
    code, events, err, _ = run(tmp_path, capsys, repo, [
        edit("a - b", "a * b"), {"content": "Fixed."},
        edit("a * b", "a ** b"), {"content": "Fixed again."},
    ], "--verify")
    assert code == 5
    last = events[-1]
    assert last["type"] == "turn_finished" and last["stop_reason"] == "verify_failed"
    assert "verify still fails after 2 rounds" in last["final_text"]
    assert err.strip().splitlines() == [f"opencli-tui: stopped: {last['final_text']}"]
    hooks = [h for h in events if h["type"] == "hook_finished"]
    assert [h["verdict"] for h in hooks] == ["retry", "fail"]  # the last round: no rounds left
    assert hooks[-1]["message"] == "1 failed · round 2 of 2 · no rounds left"


def test_verify_steps_share_the_max_turns_budget(tmp_path, capsys, repo):
    code, events, err, _ = run(tmp_path, capsys, repo, [
        edit("a - b", "a * b"), {"content": "Fixed."},
        edit("a * b", "a ** b"), {"content": "never reached"},
    ], "--verify", "--max-turns", "1")
    assert code == 3
    guard = next(e for e in events if e["type"] == "guard_triggered")
    assert guard["guard"] == "max_turns" and "max_turns = 1" in guard["message"]
    assert events[-1]["stop_reason"] == "max_turns" and "Stopped after 1 steps" in events[-1]["final_text"]
    assert "max_turns = 1" in err


def test_verify_is_skipped_when_nothing_changed(tmp_path, capsys, repo):
    code, events, _, _ = run(tmp_path, capsys, repo, [{"content": "add subtracts; that is a bug."}], "--verify")
    assert code == 0
    hook = next(e for e in events if e["type"] == "hook_finished")
    assert hook["verdict"] == "skipped" and hook["message"] == "no file changed"


def test_verify_config_without_the_flag_does_not_run_headless_in_ask_mode(tmp_path, capsys, repo):
    (repo / ".opencli.toml").write_text("[verify]\nenabled = true\n")
    script = tmp_path / "replay.json"
    script.write_text(json.dumps([edit("a - b", "a * b"), {"content": "Fixed."}]))
    code = main(["run", "fix add", "--output-format", "json", "--replay", str(script), "-C", str(repo),
                 "--permission-mode", "auto-edit"])
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    hook = next(e for e in events if e["type"] == "hook_finished")
    assert code == 0 and hook["verdict"] == "skipped" and "pass --verify" in hook["message"]


def test_verify_text_output_prints_each_verdict(tmp_path, capsys, repo):
    script = tmp_path / "replay.json"
    script.write_text(json.dumps([edit("a - b", "a + b"), {"content": "Fixed."}]))
    code = main(["run", "fix add", "--replay", str(script), "-C", str(repo), "--permission-mode", "auto-edit",
                 "--verify"])
    out = capsys.readouterr().out
    assert code == 0
    assert any(line.startswith("✓ verify · accept: pytest · 1 passed (") for line in out.splitlines())


def test_verify_asks_once_for_its_command_in_ask_mode(tmp_path, repo):
    import threading

    from agent.config.settings import Settings
    from agent.events import HookFinished, PermissionDecision, PermissionRequest
    from agent.providers.scripted import ScriptedProvider
    from agent.runtime.build import build_session
    from tests.helpers import Recorder

    provider = ScriptedProvider([edit("a - b", "a * b"), {"content": "1"}, edit("a * b", "a + b"),
                                 {"content": "2"}, edit("a + b", "b + a"), {"content": "3"}])
    settings = Settings(model="openai/gpt-4.1", permission_mode="auto-edit", verify={"enabled": True})
    session = build_session(repo, settings, provider=provider, interactive=True)
    emit = Recorder()
    asked: list[PermissionRequest] = []

    def answer(request: PermissionRequest) -> None:
        asked.append(request)
        request.reply.set_result(PermissionDecision(allow=True))

    emit.hooks.append((PermissionRequest, answer))
    first = session.run_turn("fix add", emit, threading.Event())
    second = session.run_turn("swap the operands", emit, threading.Event())
    assert (first.stop_reason, second.stop_reason) == ("done", "done")
    assert [r.preview for r in asked] == ["python -m pytest -q"]
    assert [h.verdict for h in emit.of(HookFinished)] == ["retry", "accept", "accept"]


def test_verify_runs_after_a_command_changed_a_file(tmp_path, capsys, repo):
    sed = {"tool_calls": [{"name": "bash", "arguments": {"command": "sed -i 's/a - b/a + b/' calc.py"}}]}
    code, events, err, _ = run(tmp_path, capsys, repo, [sed, {"content": "Fixed with sed."}], "--verify",
                               "--permission-mode", "full-auto")
    assert code == 0, err
    hook = next(e for e in events if e["type"] == "hook_finished")
    assert (hook["verdict"], hook["message"]) == ("accept", "pytest · 1 passed")


@pytest.mark.parametrize("config, verdict, reason", [
    ('[verify]\ncommand = "no-such-test-runner-xyz"\n', "error", "exit 127: command not found"),
    ('[verify]\ncommand = "chmod -x run-tests.sh; ./run-tests.sh"\n', "error", "exit 126: not executable"),
    ('[verify]\ncommand = "sleep 20"\ntimeout_s = 1\n', "timeout", "did not finish within 1 s"),
])
def test_verify_that_cannot_run_or_times_out_is_no_test_failure(tmp_path, capsys, repo, config, verdict, reason):
    (repo / ".opencli.toml").write_text(config)
    (repo / "run-tests.sh").write_text("#!/bin/sh\nexit 0\n")
    code, events, err, requests = run(tmp_path, capsys, repo, [edit("a - b", "a + b"), {"content": "Fixed."},
                                                               {"content": "must not be asked for"}], "--verify")
    hooks = [h for h in events if h["type"] == "hook_finished"]
    assert [(h["hook"], h["verdict"]) for h in hooks] == [("verify", verdict)]
    assert reason in hooks[0]["message"] and "`" in hooks[0]["message"]
    assert len(requests) == 2, "another round ran"
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert any("Hook verify" in n and reason in n for n in notices)
    last = events[-1]
    assert last["type"] == "turn_finished" and last["stop_reason"] == "done" and code == 0, err


def test_verify_outside_git_sees_a_file_bash_changed(tmp_path, capsys, repo):
    import shutil

    shutil.rmtree(repo / ".git")
    (repo / "node_modules" / "x").mkdir(parents=True)
    sed = {"tool_calls": [{"name": "bash", "arguments": {"command": "sed -i 's/a - b/a + b/' calc.py"}}]}
    code, events, err, _ = run(tmp_path, capsys, repo, [sed, {"content": "Fixed with sed."}], "--verify",
                               "--permission-mode", "full-auto")
    assert code == 0, err
    hook = next(e for e in events if e["type"] == "hook_finished")
    assert (hook["verdict"], hook["message"]) == ("accept", "pytest · 1 passed")


def test_stat_snapshot_skips_caches_and_venvs_and_is_bounded(tmp_path):
    from agent.pipeline.changes import RoundChanges, stat_snapshot

    for name in ("a.py", "src/b.py", ".git/HEAD", "node_modules/m/i.js", "__pycache__/a.pyc", "env/pyvenv.cfg",
                 "env/lib/x.py", ".pytest_cache/v"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    assert sorted(stat_snapshot(tmp_path)) == ["a.py", "src/b.py"]
    assert len(stat_snapshot(tmp_path, max_files=1)) == 1
    changes = RoundChanges(tmp_path)
    changes.start()
    (tmp_path / "node_modules" / "m" / "i.js").write_text("changed")
    assert not changes.changed()
    (tmp_path / "src" / "new.py").write_text("y")
    assert changes.changed() and changes.diff_text() == "changed: src/new.py"
