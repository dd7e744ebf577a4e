"""The bash tool (agent/tools/bash.py): process group, time limit, cancel, exit code, output."""

from __future__ import annotations

import re
import sys
import threading
import time
from pathlib import Path

import pytest

from agent.context.truncation.truncate import MARKER_RE
from agent.tools import bash as bash_module
from agent.tools.base import Capability, ToolContext, ToolError
from agent.tools.bash import BashArgs, BashTool

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path.resolve(), output_dir=tmp_path / ".opencli" / "tmp", call_id="b1")


def run(ctx, command, timeout=None):
    return BashTool().run(BashArgs(command=command, timeout=timeout), ctx)


def live_processes(needle: bytes) -> list[int]:
    """Pids of non-zombie processes whose command line contains ``needle`` (NUL-separated argv)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if needle in cmdline and stat[stat.rfind(")") + 2] != "Z":
            found.append(int(entry.name))
    return found


def wait_gone(needle: bytes, within: float = 3.0) -> list[int]:
    end = time.monotonic() + within
    while time.monotonic() < end:
        left = live_processes(needle)
        if not left:
            return []
        time.sleep(0.05)
    return live_processes(needle)


def test_output_exit_code_and_stderr_merged(ctx):
    out = run(ctx, "echo out; echo err >&2; exit 3")
    assert out.text == "out\nerr\n[exit code: 3]"
    assert out.exit_code == 3 and not out.is_error
    assert BashTool.capability is Capability.EXEC and BashTool.truncates_output


def test_runs_in_workspace_without_stdin(ctx, tmp_path):
    started = time.monotonic()
    out = run(ctx, "pwd; cat; echo done")
    assert out.text.splitlines()[0] == str(tmp_path.resolve())
    assert "done" in out.text and time.monotonic() - started < 5


def test_no_output(ctx):
    out = run(ctx, "true")
    assert out.text == "(no output)\n[exit code: 0]" and out.exit_code == 0


def test_timeout_kills_the_whole_group(ctx):
    started = time.monotonic()
    out = run(ctx, "echo begin; sleep 987 & sleep 988; wait", timeout=1)
    elapsed = time.monotonic() - started
    assert elapsed < 10
    assert out.is_error
    assert out.text.startswith("begin\n")
    assert out.text.endswith("[timed out after 1 s; process group killed]")
    assert wait_gone(b"sleep\x00987") == [] and wait_gone(b"sleep\x00988") == []


def test_sigterm_ignored_escalates_to_sigkill(ctx):
    started = time.monotonic()
    out = run(ctx, "trap '' TERM; sleep 986", timeout=1)
    assert time.monotonic() - started < 10
    assert "timed out" in out.text
    assert wait_gone(b"sleep\x00986") == []


def test_cancel_from_another_thread(ctx):
    timer = threading.Timer(0.5, ctx.cancel.set)
    timer.start()
    started = time.monotonic()
    try:
        out = run(ctx, "sleep 985 & sleep 984; wait")
    finally:
        timer.cancel()
    assert time.monotonic() - started < 10
    assert out.is_error and "[cancelled by user" in out.text
    assert wait_gone(b"sleep\x00985") == [] and wait_gone(b"sleep\x00984") == []


def test_cancel_before_start_runs_nothing(ctx, tmp_path):
    ctx.cancel.set()
    out = run(ctx, "touch made.txt")
    assert out.is_error and "cancelled" in out.text
    assert not (tmp_path / "made.txt").exists()


def test_background_job_holding_output_is_killed(ctx, monkeypatch):
    monkeypatch.setattr(bash_module, "PIPE_GRACE_S", 0.5)
    started = time.monotonic()
    out = BashTool().run(BashArgs(command="sleep 983 & echo started"), ctx)
    assert time.monotonic() - started < 10
    assert out.text.startswith("started\n[exit code: 0]")
    assert "background processes" in out.text
    assert wait_gone(b"sleep\x00983") == []


def test_background_job_with_redirected_output_is_left_alone(ctx):
    started = time.monotonic()
    out = run(ctx, "sleep 2 > /dev/null 2>&1 & echo ok")
    assert time.monotonic() - started < 1.5
    assert out.text == "ok\n[exit code: 0]"


def test_killed_by_signal_exit_code(ctx):
    out = run(ctx, "kill -KILL $$")
    assert out.exit_code == 137 and "SIGKILL" in out.text


def test_large_output_is_truncated_and_saved(ctx):
    out = run(ctx, "seq 1 200000")
    assert out.truncated and out.saved_path
    assert out.text.startswith("1\n2\n3\n")
    assert out.text.endswith("200000\n[exit code: 0]")
    assert len(out.text) < ctx.max_output_chars + 600
    saved = Path(out.saved_path).read_text()
    assert saved.splitlines()[-1] == "200000" and len(saved.splitlines()) == 200000


def test_missing_bash_is_a_clear_error(ctx, monkeypatch):
    monkeypatch.setattr(bash_module.shutil, "which", lambda name: None)
    with pytest.raises(ToolError, match="bash is not installed"):
        run(ctx, "echo hi")


def test_timeout_must_be_positive():
    with pytest.raises(Exception):
        BashArgs(command="x", timeout=0)
    with pytest.raises(Exception):
        BashArgs(command="")


def test_multi_megabyte_output_is_counted_and_saved_exactly(ctx):
    # ~6 MB: long lines, then seq-like short ones, then long again (the newline counter switches).
    script = (
        "import sys\n"
        "w = sys.stdout.buffer.write\n"
        "for i in range(30000): w(b'%06d ' % i + b'x' * 90 + b'\\n')\n"
        "for i in range(400000): w(b'%d\\n' % i)\n"
        "for i in range(20000): w(b'tail %06d ' % i + b'y' * 60 + b'\\n')\n"
    )
    (ctx.workspace / "gen.py").write_text(script)
    out = run(ctx, f"{sys.executable} gen.py")
    expected = b"".join(b"%06d " % i + b"x" * 90 + b"\n" for i in range(30000))
    expected += b"".join(b"%d\n" % i for i in range(400000))
    expected += b"".join(b"tail %06d " % i + b"y" * 60 + b"\n" for i in range(20000))
    assert out.exit_code == 0 and out.truncated
    assert out.output_lines == 450000
    assert out.output_bytes == len(expected)
    assert Path(out.saved_path).read_bytes() == expected
    assert out.text.startswith("000000 xxx")
    assert out.text.endswith("tail 019999 " + "y" * 60 + "\n[exit code: 0]")
    match = MARKER_RE.search(out.text)
    assert match is not None
    # The marker's line numbers agree with the saved file: the tail starts on line last+1.
    last_line = int(re.search(r"to line (\d+)", match.group()).group(1))
    tail_first = out.text[match.end():].splitlines()[0]
    assert expected.split(b"\n")[last_line].decode() == tail_first


def test_run_streaming_needs_one_consumer(tmp_path):
    with pytest.raises(ValueError):
        bash_module.run_streaming(["true"], cwd=tmp_path, cancel=threading.Event(), timeout_s=5)
    with pytest.raises(ValueError):
        bash_module.run_streaming(["true"], cwd=tmp_path, sink=lambda b: None, reader=lambda fd: 0,
                                  cancel=threading.Event(), timeout_s=5)


def test_colours_kept_for_the_ui_but_never_sent_to_the_model(tmp_path):
    from agent.messages import ToolCall
    from agent.tools.base import ToolContext
    from agent.tools.registry import ToolRegistry, default_tools

    registry = ToolRegistry(default_tools(include_think=False))
    ctx = ToolContext(workspace=tmp_path, output_dir=tmp_path / "out")
    call = ToolCall(id="c1", name="bash", arguments='{"command": "printf \'\\\\033[31mRED\\\\033[0m \\\\033[2Kplain\\\\n\'"}')
    out = registry.execute(call, ctx)
    assert "\x1b" not in out.text and "RED plain" in out.text
    assert out.display is not None and "\x1b[31mRED\x1b[0m" in out.display
    assert "\x1b[2K" not in out.display  # only colours survive


def test_deep_process_tree_with_own_sessions_is_killed_on_timeout(tmp_path):
    """Issue 6: a bounded deep tree (50 nested sleeping children, every fifth in its own session
    via setsid) ends with the tool's time limit and every descendant killed."""
    import os
    import time as _time
    from pathlib import Path as _Path

    from agent.messages import ToolCall
    from agent.tools.base import ToolContext
    from agent.tools.registry import ToolRegistry, default_tools

    script = tmp_path / "nest.sh"
    script.write_text(
        '#!/bin/sh\n'
        'd=$1; echo $$ >> "$2"\n'
        'if [ "$d" -gt 0 ]; then\n'
        '  if [ $((d % 5)) -eq 0 ]; then setsid sh "$0" $((d-1)) "$2" & else sh "$0" $((d-1)) "$2" & fi\n'
        'fi\n'
        'exec sleep 1000\n'
    )
    pids_file = tmp_path / "pids.txt"
    registry = ToolRegistry(default_tools(include_think=False))
    ctx = ToolContext(workspace=tmp_path, output_dir=tmp_path / "out")
    args = '{"command": "sh nest.sh 50 pids.txt; sleep 1000", "timeout": 3}'
    started = _time.monotonic()
    out = registry.execute(ToolCall(id="deep", name="bash", arguments=args), ctx)
    assert _time.monotonic() - started < 20
    assert out.is_error and "timed out" in out.text
    pids = [int(x) for x in pids_file.read_text().split()]
    assert len(pids) == 51

    def alive(pid):
        try:
            stat = _Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        return stat[stat.rfind(")") + 2:].split()[:1] != ["Z"]

    deadline = _time.monotonic() + 5
    while _time.monotonic() < deadline and any(alive(p) for p in pids):
        _time.sleep(0.1)
    assert [p for p in pids if alive(p)] == []


def test_supervised_exit_is_reported_at_once(tmp_path):
    # The supervisor used to poll its life pipe for 50 ms after reaping the command before it
    # reported the exit, and wait() slept in 10 ms steps: every bash call paid it.
    from agent.supervised import spawn, supervision_available

    if not supervision_available():
        pytest.skip("no supervisor here")
    delays = []
    for _ in range(5):
        proc = spawn(["bash", "-c", "exit 3"], tmp_path, None)
        assert proc.stdout.read() == b""  # end of file: the command is gone
        started = time.monotonic()
        assert proc.wait(timeout=5) == 3
        delays.append(time.monotonic() - started)
        proc.stdout.close()
    assert min(delays) < 0.03, delays


@pytest.mark.parametrize("stop", ["timeout", "cancel"])
def test_endless_output_is_stopped_and_what_was_read_is_saved_whole(ctx, stop):
    # Output streaming at full speed through the saved-output writer and its redaction, then a
    # timeout or a cancel: the group dies and the saved file holds exactly the lines read.
    timer = threading.Timer(1.0, ctx.cancel.set) if stop == "cancel" else None
    if timer is not None:
        timer.start()
    started = time.monotonic()
    try:
        out = run(ctx, "yes 'data abcdefghij 0123' # endless-983", timeout=1 if stop == "timeout" else None)
    finally:
        if timer is not None:
            timer.cancel()
    assert time.monotonic() - started < 15
    assert out.is_error and out.truncated
    assert ("[timed out after 1 s" if stop == "timeout" else "[cancelled by user") in out.text
    saved = Path(out.saved_path).read_bytes()
    line = b"data abcdefghij 0123\n"
    assert len(saved) == out.output_bytes > 1 << 20
    whole = len(saved) - len(saved) % len(line)
    assert saved[:whole] == line * (whole // len(line)) and line.startswith(saved[whole:])
    assert wait_gone(b"endless-983") == []
