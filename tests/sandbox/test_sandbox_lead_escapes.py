"""Ways around the sandbox a tester found, closed: undo steered by a planted checkpoint manifest,
file tools writing .git/config in full-auto while commands may not, and a session rerun answer
covering a risky line or one naming .git."""

from __future__ import annotations

import json
import subprocess
import threading
from dataclasses import dataclass
from types import SimpleNamespace

from agent.events import ToolCallFinished
from agent.sandbox.rerun import RERUN_HEADER, offer_unsandboxed
from agent.session.checkpoints import Checkpoints
from agent.tools.base import ToolOutput
from tests.helpers import Recorder, make_session

from .conftest import needs_sandbox


def test_undo_ignores_manifest_entries_outside_the_workspace_or_under_git(tmp_path):
    ws, outside = tmp_path / "ws", tmp_path / "other"
    (ws / ".git").mkdir(parents=True)
    outside.mkdir()
    (outside / "sentinel.txt").write_text("keep\n")
    (outside / "sentinel2.txt").write_text("keep too\n")
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "a.txt").write_text("new\n")
    cp = Checkpoints(ws, "s1", root=tmp_path / "cps")
    cp.start_turn()
    cp.before_tool("mutating", {"path": "a.txt"})
    turn = tmp_path / "cps" / "1"
    (turn / "evil.bin").write_text("PWNED\n")
    manifest = json.loads((turn / "manifest.json").read_text())
    manifest["files"] += [
        {"path": str(outside / "sentinel.txt"), "existed": True, "blob": "evil.bin", "mode": None},
        {"path": str(outside / "sentinel2.txt"), "existed": False, "blob": None, "mode": None},
        {"path": str(ws / ".git" / "config"), "existed": True, "blob": "evil.bin", "mode": None},
        {"path": str(ws / "b.txt"), "existed": True, "blob": "../../cps/1/evil.bin", "mode": None},
    ]
    (turn / "manifest.json").write_text(json.dumps(manifest))
    lines = cp.undo_last_turn()
    assert (outside / "sentinel.txt").read_text() == "keep\n" and (outside / "sentinel2.txt").exists()
    assert (ws / ".git" / "config").read_text() == "[core]\n" and not (ws / "b.txt").exists()
    assert sum("refused" in line for line in lines) == 4, lines


def test_the_session_keeps_its_checkpoints_outside_the_workspace(tmp_path):
    session, _ = make_session(tmp_path, [{"tool_calls": [{"name": "write", "arguments": {
        "path": "a.txt", "content": "x\n"}}]}, {"content": "done"}])
    session.run_turn("write it", Recorder(), threading.Event())
    root = session.checkpoints.root
    assert root.is_dir() and session.workspace.resolve() not in root.resolve().parents
    assert not (session.workspace / ".opencli" / "checkpoints").exists()
    assert session.undo()[0].startswith("deleted a.txt")


@needs_sandbox
def test_file_tools_may_not_change_git_config_while_the_sandbox_is_on(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENCLI_SANDBOX__MODE", "workspace-write")
    session, _ = make_session(tmp_path, [
        {"tool_calls": [{"name": "write", "arguments": {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}},
                        {"name": "edit", "arguments": {"path": ".git/config", "old_string": "[core]",
                                                       "new_string": "[core]\n\tfsmonitor = touch /tmp/x"}}]},
        {"content": "done"}])
    subprocess.run(["git", "init", "-q"], cwd=session.workspace, check=True)
    before = (session.workspace / ".git" / "config").read_text()
    rec = Recorder()
    session.run_turn("plant it", rec, threading.Event())
    results = rec.of(ToolCallFinished)
    assert len(results) == 2 and all("Refused" in r.output and "sandbox" in r.output for r in results)
    assert (session.workspace / ".git" / "config").read_text() == before
    assert not (session.workspace / ".git" / "hooks" / "pre-commit").exists()


def test_every_unsandboxed_rerun_asks_even_after_a_session_answer(tmp_path):
    """A ``t`` (session) answer to the rerun offer counts as once: the next refused command asks
    again (a tester got around every line analysis: python3 -c deletes, $(git rev-parse ...))."""
    from agent.events import PermissionDecision

    policy = SimpleNamespace(mode=SimpleNamespace(value="workspace-write"), network=False,
                             allowed_text=lambda: "the workspace")

    @dataclass
    class Ctx:
        sandbox: object
        workspace: object

    asked: list[str] = []

    def ask(_ctx, note):
        asked.append(note)
        return PermissionDecision(allow=True, scope="session_tool")

    for command in ("touch /tmp/other/a1", "python3 -c 'import os; os.remove(\"/tmp/other/s\")'"):
        out = offer_unsandboxed(ToolOutput(text="Permission denied"), Ctx(policy, tmp_path), ask,
                                lambda _ctx: ToolOutput(text="ran"))
        assert out.text.startswith(RERUN_HEADER), command
    assert len(asked) == 2 and all("every unsandboxed rerun asks" in n and "a network connection" in n for n in asked)


@needs_sandbox
def test_full_auto_asks_before_a_file_tool_changes_git_while_the_sandbox_is_on(tmp_path, monkeypatch):
    """Interactive full-auto: the .git/ edit asks (the note says why); a denial keeps the file,
    an approval writes it."""
    from agent.events import PermissionDecision, PermissionRequest

    monkeypatch.setenv("OPENCLI_SANDBOX__MODE", "workspace-write")
    hook = {"name": "write", "arguments": {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}}
    session, _ = make_session(tmp_path, [{"tool_calls": [hook]}, {"tool_calls": [hook]}, {"content": "done"}],
                              interactive=True)
    subprocess.run(["git", "init", "-q"], cwd=session.workspace, check=True)
    answers = iter([PermissionDecision(allow=False), PermissionDecision(allow=True)])
    rec = Recorder()
    notes: list[str] = []
    rec.hooks.append((PermissionRequest, lambda e: (notes.append(e.note), e.reply.set_result(next(answers)))))
    session.run_turn("plant it", rec, threading.Event())
    denied, allowed = rec.of(ToolCallFinished)
    assert denied.is_error and "Refused" in denied.output and not allowed.is_error
    assert all("under .git/" in n for n in notes) and len(notes) == 2
    assert (session.workspace / ".git" / "hooks" / "pre-commit").read_text() == "#!/bin/sh\n"
