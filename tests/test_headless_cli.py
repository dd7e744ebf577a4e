"""``opencli-tui run``: the JSON event stream and exit codes are a public interface (DESIGN.md 5a)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tui.cli import main

ROOT = Path(__file__).resolve().parents[1]


def replay(tmp_path, replies):
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(replies))
    return path


def run_json(tmp_path, capsys, replies, *extra):
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "a.py").write_text("x = 1\n")
    code = main(["run", "task", "--output-format", "json", "--replay", str(replay(tmp_path, replies)),
                 "-C", str(ws), "--model", "openai/gpt-4.1", *extra])
    out, err = capsys.readouterr()
    events = [json.loads(line) for line in out.splitlines()]
    return code, events, err


def test_done_run_prints_events_and_exits_0(tmp_path, capsys):
    code, events, err = run_json(tmp_path, capsys, [
        {"tool_calls": [{"name": "read", "arguments": {"path": "a.py"}, "id": "c1"}]},
        {"content": "x is 1"},
    ])
    assert code == 0
    types = [e["type"] for e in events]
    assert types[0] == "turn_started" and types[-1] == "turn_finished"
    started = next(e for e in events if e["type"] == "tool_call_started")
    assert started == {**started, "id": "c1", "name": "read", "arguments": {"path": "a.py"}}
    finished = next(e for e in events if e["type"] == "tool_call_finished")
    for key in ("id", "name", "output", "is_error", "truncated", "saved_path"):
        assert key in finished
    last = events[-1]
    assert last["stop_reason"] == "done" and last["final_text"] == "x is 1"
    assert last["session_id"] and "usage" in last
    assert events[0]["session_id"] == last["session_id"] and events[0]["model"] == "openai/gpt-4.1"
    assert "".join(e["text"] for e in events if e["type"] == "text_delta") == "x is 1"


def test_raw_string_arguments_are_printed_as_given(tmp_path, capsys):
    code, events, _ = run_json(tmp_path, capsys, [
        {"tool_calls": [{"name": "read", "arguments": "{oops"}]}, {"content": "k"}])
    started = next(e for e in events if e["type"] == "tool_call_started")
    assert started["arguments"] == "{oops"
    assert code == 0


def test_error_exit_1_with_reason_on_stderr(tmp_path, capsys):
    code, events, err = run_json(tmp_path, capsys, [{"error": "auth"}])
    assert code == 1
    assert events[-1]["stop_reason"] == "error"
    assert any(e["type"] == "error" for e in events)
    assert "authentication" in err and len(err.strip().splitlines()) == 1


def test_max_turns_exit_3(tmp_path, capsys):
    replies = [{"tool_calls": [{"name": "glob", "arguments": {"pattern": f"*{i}"}}]} for i in range(5)]
    code, events, err = run_json(tmp_path, capsys, replies, "--max-turns", "2")
    assert code == 3
    assert any(e["type"] == "guard_triggered" and e["guard"] == "max_turns" for e in events)
    assert events[-1]["stop_reason"] == "max_turns" and "max_turns" in err or "max-turns" in err


def test_headless_never_prompts(tmp_path, capsys):
    code, events, _ = run_json(tmp_path, capsys, [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi > out.txt"}}]},
        {"content": "ok"}], "--permission-mode", "ask")
    finished = next(e for e in events if e["type"] == "tool_call_finished")
    assert finished["is_error"] and "--permission-mode full-auto" in finished["output"]
    assert not (tmp_path / "ws" / "out.txt").exists()
    assert code == 0


def test_replay_log_records_each_request(tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    code, _, _ = run_json(tmp_path, capsys, [
        {"tool_calls": [{"name": "glob", "arguments": {"pattern": "*"}}]}, {"content": "ok"}],
        "--replay-log", str(log))
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == 2 and code == 0
    assert set(lines[0]) >= {"purpose", "model", "messages", "tools"}
    assert lines[0]["purpose"] == "main" and lines[1]["messages"][-1]["role"] == "tool"


@pytest.mark.parametrize("args,needle", [
    (["run", "x", "--replay", "/nonexistent.json"], "replay"),
    (["run", "x", "--max-turns", "0", "--replay", "__R__"], "max_turns"),
])
def test_usage_errors_exit_2(tmp_path, capsys, args, needle):
    rp = replay(tmp_path, [{"content": "x"}])
    args = [a.replace("__R__", str(rp)) for a in args]
    assert main(args + ["-C", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


def test_invalid_env_value_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENCLI_MAX_TOOL_OUTPUT", "-1")
    rp = replay(tmp_path, [{"content": "x"}])
    assert main(["run", "x", "--replay", str(rp), "-C", str(tmp_path)]) == 2
    assert "max_tool_output" in capsys.readouterr().err


def test_run_does_not_import_textual(tmp_path):
    rp = replay(tmp_path, [{"content": "hi"}])
    code = (
        "import sys; from tui.cli import main\n"
        f"rc = main(['run', 'x', '--replay', {str(rp)!r}, '-C', {str(tmp_path)!r}, '--model', 'openai/gpt-4.1'])\n"
        "assert 'textual' not in sys.modules, 'textual imported'\n"
        "assert 'litellm' not in sys.modules, 'litellm imported for a replay run'\n"
        "sys.exit(rc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "hi" in out.stdout


def test_text_output_shows_tool_lines(tmp_path, capsys):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\n")
    rp = replay(tmp_path, [{"tool_calls": [{"name": "read", "arguments": {"path": "a.py"}}]}, {"content": "All good."}])
    assert main(["run", "t", "--replay", str(rp), "-C", str(ws), "--model", "openai/gpt-4.1"]) == 0
    out = capsys.readouterr().out
    assert "read(" in out and "All good." in out


def test_flags_before_run_are_kept(tmp_path, capsys):
    code, events, _ = run_json(tmp_path, capsys, [{"content": "ok"}])
    assert events[0]["model"] == "openai/gpt-4.1"
    ws = tmp_path / "ws"
    rp = replay(tmp_path, [{"content": "ok"}])
    assert main(["--model", "anthropic/claude-sonnet-4-5", "run", "t", "--replay", str(rp), "-C", str(ws),
                 "--output-format", "json"]) == 0
    first = json.loads(capsys.readouterr().out.splitlines()[0])
    assert first["model"] == "anthropic/claude-sonnet-4-5"


def test_compaction_flag_sets_only_the_mode(tmp_path, isolated_env):
    from agent.config.loading import load_settings

    (isolated_env / "config.toml").write_text("[compaction]\nthreshold = 0.7\n")
    s = load_settings(tmp_path, {"compaction": {"mode": "off"}})
    assert s.compaction.mode == "off" and s.compaction.threshold == 0.7


def test_compaction_flag_rejects_unknown_values(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["run", "x", "--compaction", "sometimes", "-C", str(tmp_path)])
    assert info.value.code == 2


def test_empty_task_is_a_usage_error(tmp_path, capsys):
    assert main(["run", "   ", "-C", str(tmp_path)]) == 2
    assert "empty" in capsys.readouterr().err


def test_replay_without_model_gets_a_full_tool_set(tmp_path, capsys):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("old\n")
    rp = replay(tmp_path, [{"tool_calls": [{"name": "edit", "arguments": {"path": "a.txt", "old_string": "old",
                                                                          "new_string": "new"}}]},
                           {"content": "edited"}])
    assert main(["run", "fix", "--replay", str(rp), "-C", str(ws), "--permission-mode", "full-auto"]) == 0
    assert (ws / "a.txt").read_text() == "new\n"


def test_model_text_cannot_drive_the_terminal(tmp_path, capsys):
    ws = tmp_path / "ws"
    ws.mkdir()
    rp = replay(tmp_path, [{"content": "clear \x1b[2J\x1b]0;PWNED\x07 done"}])
    assert main(["run", "t", "--replay", str(rp), "-C", str(ws)]) == 0
    out = capsys.readouterr().out
    assert "\x1b]0" not in out and "\x1b[2J" not in out and "done" in out


def test_closed_pipe_does_not_crash(tmp_path):
    rp = replay(tmp_path, [{"tool_calls": [{"name": "glob", "arguments": {"pattern": f"*{i}"}}]} for i in range(3)]
                + [{"content": "ok"}])
    code = f"{sys.executable} -m tui run t --replay {rp} -C {tmp_path} --output-format json | head -1"
    proc = subprocess.run(["bash", "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert json.loads(proc.stdout)["type"] in ("notice", "turn_started")
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_the_tui_without_a_terminal_says_so_instead_of_hanging(tmp_path):
    """`opencli-tui < /dev/null` (or in a pipe) used to draw into the pipe and wait forever."""
    proc = subprocess.run([sys.executable, "-c", "import sys; from tui.cli import main; sys.exit(main())",
                           "-C", str(tmp_path), "--model", "openai/gpt-4.1"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "needs a terminal" in proc.stderr and 'opencli-tui run "TASK"' in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def _wait_for_file(path: Path, timeout_s: float = 20.0) -> str:
    import time

    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def _gone(pid: int, timeout_s: float = 5.0) -> bool:
    import os
    import time

    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie counts as gone (its parent, bash, was killed first)
            if Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z"):
                return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def test_sigterm_kills_the_running_command_tree_before_exiting(tmp_path):
    """`kill PID` (or a closed terminal: SIGHUP) during a long bash command: the command runs in
    a session of its own, so without the handler it would keep running after we are gone."""
    import os
    import signal

    ws = tmp_path / "ws"
    ws.mkdir()
    command = "sleep 300 & echo $! > child.pid; wait"
    path = replay(tmp_path, [{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
                             {"content": "done"}])
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from tui.cli import main; sys.exit(main())",
                             "run", "wait", "--output-format", "json", "--replay", str(path), "-C", str(ws),
                             "--model", "openai/gpt-4.1", "--permission-mode", "full-auto"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        child = int(_wait_for_file(ws / "child.pid"))
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
        assert proc.returncode == 143
        assert _gone(child), "the command's child outlived the app"
    finally:
        if proc.poll() is None:
            proc.kill()


def _run_text(tmp_path, capsys, replies):
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    code = main(["run", "task", "--replay", str(replay(tmp_path, replies)), "-C", str(ws),
                 "--model", "openai/gpt-4.1"])
    return code, capsys.readouterr()


@pytest.mark.parametrize("replies,needle", [
    ([{"error": "auth"}], "authentication"),
    ([], "no more replies"),
    ([{"tool_calls": [{"name": "glob", "arguments": {"pattern": "*"}}]}], "no more replies"),
])
def test_a_failed_text_run_puts_one_reason_line_on_stderr(tmp_path, capsys, replies, needle):
    """Text mode used to print "error: ..." and then "opencli-tui: error: ..." for the same error."""
    code, captured = _run_text(tmp_path, capsys, replies)
    assert code == 1
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("opencli-tui: error:") and needle in lines[0]
    assert needle not in captured.out


def test_an_exhausted_replay_in_json_mode_is_an_error_event_and_one_stderr_line(tmp_path, capsys):
    code, events, err = run_json(tmp_path, capsys, [])
    assert code == 1
    assert [e["message"] for e in events if e["type"] == "error"] == ["the replay script has no more replies"]
    assert events[-1]["type"] == "turn_finished" and events[-1]["stop_reason"] == "error"
    assert len(err.strip().splitlines()) == 1 and "no more replies" in err


def test_text_printer_still_prints_an_error_that_does_not_end_the_turn():
    import io

    from agent.events import ErrorEvent, Notice, TurnFinished
    from tui.headless import TextPrinter

    out, err = io.StringIO(), io.StringIO()
    printer = TextPrinter(out, err)
    printer(ErrorEvent(message="first problem"))
    printer(Notice(message="carrying on"))
    printer(ErrorEvent(message="second problem"))
    printer(TurnFinished(stop_reason="error", final_text="second problem"))
    printer(ErrorEvent(message="left over"))
    printer.flush()
    assert err.getvalue().splitlines() == ["error: first problem", "error: left over"]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_replay_reply_with_no_known_key_is_refused_at_load(tmp_path, capsys, fmt):
    rp = replay(tmp_path, [{"content": "ok"}, {"bogus": 1}])
    assert main(["run", "x", "--replay", str(rp), "-C", str(tmp_path), "--output-format", fmt]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "reply 1" in lines[0] and "'bogus'" in lines[0]
    assert captured.out == ""  # refused before the run started


@pytest.mark.parametrize("args,source,absent", [
    (["--max-turns", "-3"], "--max-turns", "OPENCLI_MAX_TURNS"),
    ([], "__USER__", "OPENCLI_MAX_TURNS"),
])
def test_invalid_settings_name_their_real_source(tmp_path, capsys, isolated_env, args, source, absent):
    user = isolated_env / "config.toml"
    if not args:
        user.write_text("max_turns = -3\n")
    rp = replay(tmp_path, [{"content": "x"}])
    assert main(["run", "x", "--replay", str(rp), "-C", str(tmp_path), *args]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "max_turns=-3" in lines[0]
    assert source.replace("__USER__", str(user)) in lines[0] and absent not in lines[0]


def test_a_missing_opencli_config_is_a_notice_event(tmp_path, capsys, monkeypatch):
    missing = tmp_path / "nowhere" / "config.toml"
    monkeypatch.setenv("OPENCLI_CONFIG", str(missing))
    code, events, err = run_json(tmp_path, capsys, [{"content": "ok"}])
    assert code == 0 and err.startswith("opencli-tui: notice: OPENCLI_CONFIG names") and "error" not in err
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert any("OPENCLI_CONFIG" in n and str(missing) in n for n in notices), notices


def test_ctrl_c_before_the_app_runs_ends_quietly_with_130(monkeypatch, tmp_path, capsys):
    """Ctrl+C while the TUI is still loading raised KeyboardInterrupt through imports: a traceback."""
    import tui.cli

    def interrupted(_request):
        raise KeyboardInterrupt

    monkeypatch.setattr(tui.cli, "open_session", interrupted)
    code = main(["run", "task", "-C", str(tmp_path), "--model", "openai/gpt-4.1"])
    out, err = capsys.readouterr()
    assert code == 130 and "Traceback" not in err and out == ""


def test_settings_mistakes_are_refused_or_said_on_stderr(tmp_path, capsys, monkeypatch):
    """An out-of-range value stops the run with one line (exit 2); an unknown key is a notice that
    reaches stderr in json mode too, with the key it probably meant."""
    replay = tmp_path / "r.json"
    replay.write_text('[{"content": "hi"}]')
    bad = tmp_path / "bad.toml"
    bad.write_text("[compaction]\nthreshold = 5\n")
    monkeypatch.setenv("OPENCLI_CONFIG", str(bad))
    assert main(["run", "t", "--replay", str(replay), "-C", str(tmp_path)]) == 2
    assert "compaction.threshold=5" in capsys.readouterr().err
    bad.write_text("tool_time_limits = {default = -1}\n")
    assert main(["run", "t", "--replay", str(replay), "-C", str(tmp_path)]) == 2
    assert "tool_time_limits.default=-1" in capsys.readouterr().err
    bad.write_text('modle = "x"\n')
    assert main(["run", "t", "--replay", str(replay), "-C", str(tmp_path), "--output-format", "json"]) == 0
    err = capsys.readouterr().err
    assert "unknown setting 'modle'" in err and "did you mean 'model'" in err


def test_a_replay_with_a_known_models_identity_knows_its_context_window(tmp_path, capsys):
    """The meter and context_usage need the window: a scripted run as openai/gpt-4.1 takes it
    from litellm's bundled model list (read as a file, litellm not imported)."""
    code, events, _ = run_json(tmp_path, capsys, [{"tool_calls": [{"name": "read", "arguments": {"path": "a.py"}}]},
                                                 {"content": "ok"}])
    usage = [e for e in events if e["type"] == "context_usage"]
    assert code == 0 and usage and all(e["window_tokens"] == 1_047_576 for e in usage)
