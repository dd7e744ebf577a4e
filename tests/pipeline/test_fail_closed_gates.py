"""Fail-closed gates, as a fresh-user tester met them in headless ``run`` with a replay file: a
``before_tool`` hook that keeps failing is never switched off (each call still runs it and a
failure blocks that call); ``--verify`` after a failing round is not skipped because the model
then changed nothing."""

from __future__ import annotations

import json

from tui.cli import main


def bash(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def headless(tmp_path, capsys, ws, replies, *extra, fmt="json"):
    script = tmp_path / "replay.json"
    script.write_text(json.dumps(replies))
    code = main(["run", "go", "--output-format", fmt, "--replay", str(script), "-C", str(ws),
                 "--model", "openai/gpt-4.1", "--permission-mode", "full-auto", *extra])
    out, err = capsys.readouterr()
    return code, ([json.loads(line) for line in out.splitlines()] if fmt == "json" else out), err


# The tester's policy hook: it refuses rm, and hangs on an argument the model controls.
POLICY = ("j=$(cat); case \"$j\" in *SLOWCHECK*) sleep 5;; *rm\\ *) echo 'no rm here' >&2; exit 1;; esac; exit 0")


def test_a_before_tool_hook_that_keeps_timing_out_still_gates_every_call(tmp_path, capsys, isolated_env):
    (isolated_env / "config.toml").write_text(
        f"[[hooks.before_tool]]\ncommand = {json.dumps(POLICY)}\ntimeout_s = 0.5\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "precious.txt").write_text("keep me\n")
    replies = [bash(f"echo SLOWCHECK {n}") for n in range(4)] + [bash("rm precious.txt"), {"content": "done"}]
    code, events, err = headless(tmp_path, capsys, ws, replies)
    assert code == 0, err
    assert (ws / "precious.txt").read_text() == "keep me\n", "the hook was switched off and rm ran unchecked"
    hooks = [e for e in events if e["type"] == "hook_finished"]
    assert [h["verdict"] for h in hooks] == ["timeout"] * 4 + ["block"]
    results = [e for e in events if e["type"] == "tool_call_finished"]
    assert all(r["is_error"] for r in results)
    assert "did not finish" in results[3]["output"] and "no rm here" in results[4]["output"]
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert not any("switched off" in n for n in notices)
    keeps = [n for n in notices if "keeps failing" in n]
    assert len(keeps) == 1 and "blocks each call" in keeps[0] and "user config" in keeps[0]
    assert len([n for n in notices if n.startswith("Hook user:before_tool ")]) == 4  # 3 failures + that one


def test_after_tool_hooks_are_still_switched_off_after_three_failures(tmp_path, capsys, isolated_env):
    (isolated_env / "config.toml").write_text('[[hooks.after_tool]]\ncommand = "exit 1"\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    code, events, _ = headless(tmp_path, capsys, ws, [bash(f"echo {n}") for n in range(4)] + [{"content": "ok"}])
    assert code == 0
    assert [h["verdict"] for h in events if h["type"] == "hook_finished"] == ["error"] * 3 + ["disabled"]
    assert any("switched off for this session" in e["message"] for e in events if e["type"] == "notice")
