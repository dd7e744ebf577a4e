"""Plan mode with the OS sandbox: the planning pass runs bash under the read-only sandbox, so a
scripted model gets the output of ``git log``, ``ls`` and ``pytest --collect-only``, the mode
message says bash is read-only, and a write it tries is refused by the sandbox with a note telling
it to put the step in the plan; without a sandbox (``sandbox.mode = off``) bash stays refused."""

from __future__ import annotations

import sys
import threading

from agent.config.settings import Settings
from agent.events import ToolCallFinished
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session
from agent.tools.base import ToolContext
from agent.tools.bash import BashArgs, BashTool
from tests import helpers

from .conftest import git, needs_sandbox, snapshot

pytestmark = needs_sandbox

PLAN = {"tool_calls": [{"name": "submit_plan", "arguments": {
    "title": "Add a test", "steps": [
        {"description": "Add a test of add", "files": ["test_calc.py"], "rationale": "cover it"},
        {"description": "Run the tests", "files": [], "rationale": "verify"},
        {"description": "Update the README", "files": ["README.md"], "rationale": "docs"}],
    "risks": ["none"], "assumptions": ["none"]}}]}


def bash(command: str) -> dict:
    return {"name": "bash", "arguments": {"command": command}}


def test_planning_pass_runs_git_log_ls_and_pytest_collect_under_the_read_only_sandbox(machine):
    (machine.ws / "test_calc.py").write_text("def test_add():\n    assert 1 + 1 == 2\n")
    git(machine.ws, "add", "test_calc.py")
    git(machine.ws, "commit", "-q", "-m", "add the calc test")
    provider = ScriptedProvider([
        {"tool_calls": [bash("git log --oneline"), bash("ls"),
                        bash(f"{sys.executable} -m pytest --collect-only -q -p no:cacheprovider"),
                        bash("echo x > new.txt")]},
        PLAN])
    session = build_session(machine.ws, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                            provider=provider, interactive=False)
    session.prepare()  # the app's own folder (.opencli, .git/info/exclude) is the agent's doing
    before = snapshot(machine.watched())
    rec = helpers.Recorder()
    result = session.plan_turn("add a test", rec, threading.Event())
    log, ls, collect, write = [e for e in rec.of(ToolCallFinished) if e.name == "bash"]
    assert "add the calc test" in log.output and not log.is_error
    assert "test_calc.py" in ls.output and "README.md" in ls.output
    assert "test_calc.py::test_add" in collect.output and "[exit code: 0]" in collect.output
    assert "Permission denied" in write.output
    assert "the read-only sandbox refused writes" in write.output
    assert "propose the step in the plan" in write.output
    assert result.plan is not None
    task = provider.requests[0].messages[1]["content"]
    assert "bash is read-only here" in task and "bash" in task.split("Only these tools run:")[1].split(".")[0]
    agent_own = "/.opencli"  # the loop's undo checkpoints: written by the agent, not by a command
    assert {k: v for k, v in snapshot(machine.watched()).items() if agent_own not in k} == \
        {k: v for k, v in before.items() if agent_own not in k}


def test_planning_pass_without_a_sandbox_refuses_bash(machine):
    provider = ScriptedProvider([{"tool_calls": [bash("ls")]}, PLAN])
    session = build_session(machine.ws, Settings(model="openai/gpt-4.1", sandbox={"mode": "off"}),
                            provider=provider, interactive=False)
    rec = helpers.Recorder()
    session.plan_turn("t", rec, threading.Event())
    (ls,) = [e for e in rec.of(ToolCallFinished) if e.name == "bash"]
    assert "bash (exec) is not available in Plan mode" in ls.output
    assert "bash is read-only here" not in provider.requests[0].messages[1]["content"]


def test_act_mode_defaults_to_workspace_write_and_the_flag_turns_it_off(machine):
    outside = machine.outside / "act.txt"
    replies = [{"tool_calls": [bash(f"echo in > inside.txt; echo out > {outside}")]}, {"content": "done"}]
    session = build_session(machine.ws, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                            provider=ScriptedProvider(list(replies)), interactive=False)
    rec = helpers.Recorder()
    session.run_turn("write", rec, threading.Event())
    (call,) = rec.of(ToolCallFinished)
    assert (machine.ws / "inside.txt").exists() and not outside.exists()
    assert "[sandbox: the workspace-write sandbox refused writes outside" in call.output
    assert "Running it unsandboxed needs `--sandbox off`" in call.output  # headless: the flag, no prompt
    assert session.sandbox_label() == "sandbox: workspace-write"
    off = build_session(machine.ws, Settings(model="openai/gpt-4.1", sandbox={"mode": "off"}), provider=ScriptedProvider([]),
                        interactive=False)
    assert off.sandbox_label() == "sandbox off" and off.act_sandbox() is None
    read_only = build_session(machine.ws, Settings(model="openai/gpt-4.1", permission_mode="read-only"),
                              provider=ScriptedProvider([]), interactive=False)
    assert read_only.sandbox_label() == "sandbox: read-only"


def test_the_sessions_folder_is_never_writable(machine, monkeypatch):
    """A workspace that holds the user data folder (e.g. the workspace is HOME) stays read-only
    rather than exposing the journal."""
    monkeypatch.setenv("OPENCLI_DATA_DIR", str(machine.ws / ".local" / "opencli"))
    session = build_session(machine.ws, Settings(model="openai/gpt-4.1"), provider=ScriptedProvider([]),
                            interactive=False)
    policy = session.act_sandbox()
    assert str(machine.ws) not in policy.writable
    assert any("stays read-only" in n for n in session.startup_notices())


def test_git_commit_works_in_a_worktree_and_a_subfolder_under_workspace_write(machine):
    """A worktree's git dir, and the repository of a workspace that is a subfolder, lie outside
    the workspace: workspace-write makes them writable so `git commit` works."""
    worktree = machine.root / "wt"
    git(machine.ws, "worktree", "add", "-q", "-b", "feature", str(worktree))
    sub = machine.ws / "pkg"
    sub.mkdir()
    for workspace in (worktree, sub):
        session = build_session(workspace, Settings(model="openai/gpt-4.1"), provider=ScriptedProvider([]),
                                interactive=False)
        ctx = ToolContext(workspace=workspace, output_dir=machine.root / "agent-out", sandbox=session.act_sandbox())
        out = BashTool().run(BashArgs(command="echo x > new.txt && git add new.txt && git commit -q -m inside "
                                              "&& git log --oneline -1"), ctx)
        assert "inside" in out.text and "[exit code: 0]" in out.text, out.text
    other = build_session(machine.other, Settings(model="openai/gpt-4.1"), provider=ScriptedProvider([]),
                          interactive=False).act_sandbox()
    assert str(machine.ws / ".git") not in other.writable  # another repository's git dir stays read-only
