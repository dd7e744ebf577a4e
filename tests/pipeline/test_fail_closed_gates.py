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


# ------------------------------------------------------------------ rounds after a failing one
from tests.pipeline.test_verify_headless import edit, repo  # noqa: E402,F401  (repo: a fixture)


def test_verify_after_a_failing_round_is_not_skipped_when_the_model_changes_nothing(tmp_path, capsys, repo):
    code, events, err = headless(tmp_path, capsys, repo, [
        edit("a - b", "a * b"), {"content": "Fixed."},
        {"content": "It works now, trust me."},  # round 2: no change, a claim of success
    ], "--verify")
    assert code == 5, err
    hooks = [(h["verdict"], h["message"]) for h in events if h["type"] == "hook_finished"]
    assert hooks == [("retry", "1 failed · round 1 of 2"), ("fail", "1 failed · round 2 of 2 · no rounds left")]
    assert events[-1]["type"] == "turn_finished" and events[-1]["stop_reason"] == "verify_failed"


def test_refine_points_stand_when_the_next_round_changes_nothing(tmp_path, capsys, repo, isolated_env):
    (isolated_env / "config.toml").write_text("[pipeline]\nrefine = true\n")
    code, events, err = headless(tmp_path, capsys, repo, [
        edit("a - b", "a * b"), {"content": "Fixed."},
        {"content": "1. add must add, not multiply."},  # refine of round 1
        {"content": "It is fine as it is."},  # round 2: no change
    ])
    assert code == 0, err
    hooks = [(h["hook"], h["verdict"], h["round"]) for h in events if h["type"] == "hook_finished"]
    assert hooks == [("refine", "retry", 1), ("refine", "retry", 2)]
    last = [h for h in events if h["type"] == "hook_finished"][-1]
    assert "no file changed since: the points stand" in last["message"]
    assert any("refine asked for another round, but max_rounds = 2 is reached" in e["message"]
               for e in events if e["type"] == "notice")


def test_a_verify_command_that_cannot_run_names_the_setting_to_check_once_in_text_output(tmp_path, capsys, repo,
                                                                                        isolated_env):
    (isolated_env / "config.toml").write_text('[verify]\ncommand = "no-such-test-runner -q"\n')
    code, out, err = headless(tmp_path, capsys, repo, [edit("a - b", "a + b"), {"content": "Fixed."}], "--verify",
                              fmt="text")
    assert code == 0, err
    assert "check verify.command" in out and "set verify.command" not in out
    assert out.count("could not run") == 1, out


def test_a_verify_command_from_the_project_file_is_named_before_it_runs(tmp_path, capsys, repo):
    (repo / ".opencli.toml").write_text('[verify]\ncommand = "python -m pytest -q tests"\n')
    code, events, err = headless(tmp_path, capsys, repo, [edit("a - b", "a + b"), {"content": "Fixed."}], "--verify")
    assert code == 0, err
    kinds = [(e["type"], e.get("message", "")) for e in events if e["type"] in ("notice", "hook_started")]
    named = [i for i, (t, m) in enumerate(kinds) if t == "notice" and "`python -m pytest -q tests`" in m
             and ".opencli.toml" in m]
    started = next(i for i, (t, _) in enumerate(kinds) if t == "hook_started")
    assert len(named) == 1 and named[0] < started
