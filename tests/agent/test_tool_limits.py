"""No tool can hang the agent: grep's engines, Esc and the per-tool time limit of every tool
(agent/tools/limits.py through the registry), and file tools refusing pipes and devices."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import psutil
import pytest

from agent.messages import ToolCall
from agent.plan.controller import PlanController
from agent.plan.tools import SubmitPlanTool, UpdatePlanTool
from agent.tools import grep as grep_module
from agent.tools import limits
from agent.tools.base import ToolContext, ToolOutput
from agent.tools.bash import BashTool
from agent.tools.edit import EditTool
from agent.tools.glob_tool import GlobTool
from agent.tools.grep import GrepTool, find_ripgrep
from agent.tools.read import ReadTool
from agent.tools.registry import ToolRegistry
from agent.tools.think import ThinkTool
from agent.tools.write import WriteTool

#: A hang guard for every call in this file (seconds); the calls end far sooner when they work.
GUARD_S = 30.0
EVIL_LINE = "a" * 34 + "!"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path.resolve()
    (root / "evil.txt").write_text(EVIL_LINE + "\n")
    (root / "notes.txt").write_text("hello\n")
    return root


def _ctx(ws: Path, **limits_by_tool: float) -> ToolContext:
    return ToolContext(workspace=ws, output_dir=ws / ".out", call_id="c1", tool_time_limits=dict(limits_by_tool))


def _call(name: str, **arguments) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=json.dumps(arguments))


def _execute(registry: ToolRegistry, call: ToolCall, ctx: ToolContext, *, cancel_after_s: float | None = None
             ) -> tuple[ToolOutput, float]:
    """Run one call through the registry in a thread (hang guard ``GUARD_S``); optionally press
    Esc after ``cancel_after_s`` seconds. Returns the output and the wall time (seconds)."""
    box: dict[str, ToolOutput] = {}
    started = time.monotonic()
    worker = threading.Thread(target=lambda: box.setdefault("out", registry.execute(call, ctx)), daemon=True)
    worker.start()
    if cancel_after_s is not None:
        time.sleep(cancel_after_s)
        ctx.cancel.set()
    worker.join(GUARD_S)
    assert not worker.is_alive(), f"{call.name} hung past the {GUARD_S} s guard"
    return box["out"], time.monotonic() - started


ENGINES = ["rg", "python"]


def _grep_tool(engine: str) -> GrepTool:
    if engine == "rg" and find_ripgrep() is None:
        pytest.skip("ripgrep not installed")
    return GrepTool(use_ripgrep=None if engine == "rg" else False)


# ------------------------------------------------------------------------------------ grep


@pytest.mark.parametrize("engine", ENGINES)
def test_grep_catastrophic_regex_is_cancelled(ws, engine):
    """``(a+)+$`` on 34 ``a``s and ``!`` backtracks for ever in Python's ``re``; neither engine may
    hang on it: under a time limit it answers, and under Esc it answers too."""
    registry = ToolRegistry([_grep_tool(engine)])
    out, _ = _execute(registry, _call("grep", pattern="(a+)+$"), _ctx(ws, grep=5.0))
    assert not out.is_error and out.text.startswith("No matches"), out.text
    out, _ = _execute(registry, _call("grep", pattern="(a+)+$"), _ctx(ws, grep=5.0), cancel_after_s=0.0)
    assert out.text.startswith("No matches") or out.outcome == "cancelled", out.text
    assert registry.execute(_call("grep", pattern="a+!"), _ctx(ws)).text == f"evil.txt:1:{EVIL_LINE}"


@pytest.fixture
def slow_rg(tmp_path, monkeypatch):
    """A stand-in ``rg`` that starts a grandchild in a session of its own and waits on it: killing
    only the direct child would leave the grandchild running."""
    pidfile = tmp_path / "grandchild.pid"
    script = tmp_path / "rg"
    script.write_text(f"#!/bin/sh\nsetsid sleep 60 &\necho $! > {pidfile}\nwait\n")
    script.chmod(0o755)
    monkeypatch.setattr(grep_module, "find_ripgrep", lambda: str(script))
    return pidfile


def _wait_dead(pidfile: Path) -> None:
    for _ in range(100):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        time.sleep(0.05)
    pid = int(pidfile.read_text())
    end = time.monotonic() + 10
    while time.monotonic() < end:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} outlived the stopped grep")


def test_grep_ripgrep_is_killed_with_its_tree_at_the_time_limit(ws, slow_rg):
    out, _ = _execute(ToolRegistry([GrepTool()]), _call("grep", pattern="x"), _ctx(ws, grep=1.0))
    assert out.is_error and out.text.startswith("stopped: over the 1 s limit of grep"), out.text
    _wait_dead(slow_rg)


def test_grep_ripgrep_is_killed_with_its_tree_on_esc(ws, slow_rg):
    out, _ = _execute(ToolRegistry([GrepTool()]), _call("grep", pattern="x"), _ctx(ws, grep=30.0),
                      cancel_after_s=0.5)
    assert out.is_error and out.outcome == "cancelled", out.text
    _wait_dead(slow_rg)


class _SlowRegex:
    """A compiled pattern whose every search takes 10 ms (a slow disk, a huge line)."""

    def search(self, line):
        time.sleep(0.01)
        return None


def test_grep_fallback_stops_on_esc_and_at_the_time_limit(ws, monkeypatch):
    (ws / "big.txt").write_text("line\n" * 100_000)  # 1000 s at 10 ms a line
    monkeypatch.setattr(grep_module, "compile_re2", lambda pattern: _SlowRegex())
    monkeypatch.setattr(grep_module, "_CHECK_EVERY_LINES", 20)
    registry = ToolRegistry([GrepTool(use_ripgrep=False)])
    out, _ = _execute(registry, _call("grep", pattern="x"), _ctx(ws, grep=1.0))
    assert out.is_error and out.text.startswith("stopped: over the 1 s limit of grep"), out.text
    out, _ = _execute(registry, _call("grep", pattern="x"), _ctx(ws, grep=60.0), cancel_after_s=0.5)
    assert out.is_error and out.outcome == "cancelled", out.text


def test_grep_fallback_refuses_what_re2_cannot_run(ws):
    registry = ToolRegistry([GrepTool(use_ripgrep=False)])
    out = registry.execute(_call("grep", pattern=r"(a)\1"), _ctx(ws))
    assert out.is_error and "backreferences are not supported" in out.text
    out = registry.execute(_call("grep", pattern=r"foo(?=bar)"), _ctx(ws))
    assert out.is_error and "lookahead/lookbehind are not supported" in out.text
    out = registry.execute(_call("grep", pattern="a[b"), _ctx(ws))
    assert out.is_error and "invalid regular expression" in out.text


def test_find_ripgrep_finds_the_packaged_binary():
    found = find_ripgrep()
    if found is None:
        pytest.skip("ripgrep not installed")
    assert os.access(found, os.X_OK)


# ------------------------------------------------------------------- every tool: Esc and limit


def _plan_controller() -> PlanController:
    return PlanController(Path("."))


TOOLS = {
    "read": (lambda: ReadTool(), {"path": "notes.txt"}),
    "write": (lambda: WriteTool(), {"path": "new.txt", "content": "x\n"}),
    "edit": (lambda: EditTool(), {"path": "notes.txt", "old_string": "hello", "new_string": "bye"}),
    "glob": (lambda: GlobTool(), {"pattern": "*.txt"}),
    "grep": (lambda: GrepTool(use_ripgrep=False), {"pattern": "hello"}),
    "think": (lambda: ThinkTool(), {"thought": "hmm"}),
    "update_plan": (lambda: UpdatePlanTool(_plan_controller()), {"step": 1, "status": "done"}),
    "submit_plan": (lambda: SubmitPlanTool(lambda plan: None), {"title": "t", "steps": []}),
}


@pytest.fixture
def blocked(monkeypatch):
    """Make a tool's ``run`` block without looking at cancel (a read stuck on a dead network disk);
    released at teardown so no thread is left sleeping."""
    release = threading.Event()
    monkeypatch.setattr(limits, "STOP_GRACE_S", 0.2)

    def block(tool):
        def run(args, ctx):
            release.wait(GUARD_S)
            return ToolOutput(text="finished late")

        monkeypatch.setattr(tool, "run", run)
        return tool

    yield block
    release.set()


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_every_tool_obeys_esc_and_its_time_limit(ws, name, blocked):
    make, arguments = TOOLS[name]
    registry = ToolRegistry([blocked(make())])
    call = ToolCall(id="c1", name=name, arguments=json.dumps(arguments))
    out, took = _execute(registry, call, _ctx(ws, **{name: 0.5}))
    assert out.is_error and out.text.startswith(f"stopped: over the 0.5 s limit of {name}"), out.text
    assert "abandoned" in out.text
    out, took = _execute(registry, call, _ctx(ws, **{name: 60.0}), cancel_after_s=0.3)
    assert out.is_error and out.outcome == "cancelled" and name in out.text, out.text


def test_bash_obeys_esc_and_keeps_its_own_timeout(ws):
    registry = ToolRegistry([BashTool()])
    ctx = _ctx(ws, bash=0.1, default=0.1)  # the per-tool table does not apply to bash
    out, _ = _execute(registry, _call("bash", command="sleep 30", timeout=1), ctx)
    assert out.is_error and "[timed out after 1 s; process group killed]" in out.text, out.text
    out, _ = _execute(registry, _call("bash", command="echo started; sleep 30"), _ctx(ws), cancel_after_s=0.8)
    assert out.is_error and "started" in out.text and "cancelled by user" in out.text, out.text
    assert BashTool().time_limit_s(BashTool.Args(command="x", timeout=5), ctx) > 5


def test_time_limits_come_from_the_settings():
    from agent.config.settings import Settings

    limits_table = Settings().tool_time_limits
    assert limits_table["default"] > 0 and limits_table["grep"] >= limits_table["default"]


# ------------------------------------------------------------------- pipes, devices, sockets


@pytest.mark.parametrize("name", ["read", "write", "edit"])
def test_file_tools_refuse_a_fifo_instead_of_blocking(ws, name):
    os.mkfifo(ws / "pipe")
    make, arguments = TOOLS[name]
    arguments = dict(arguments, path="pipe")
    out, _ = _execute(ToolRegistry([make()]), ToolCall(id="c1", name=name, arguments=json.dumps(arguments)),
                      _ctx(ws, **{name: 10.0}))
    assert out.is_error and "not a regular file" in out.text, out.text


def test_grep_falls_back_to_re2_when_the_rg_binary_cannot_run(ws, tmp_path, monkeypatch):
    broken = tmp_path / "rg"
    broken.write_bytes(b"\x7fELF not really a program")
    broken.chmod(0o755)
    monkeypatch.setattr(grep_module, "find_ripgrep", lambda: str(broken))
    out = ToolRegistry([GrepTool()]).execute(_call("grep", pattern="hel+o"), _ctx(ws))
    assert not out.is_error and out.text == "notes.txt:1:hello"
    assert out.metadata["engine"] == "python"
