"""The sandbox's parts on their own: the seccomp program per architecture, the refusal note, the
project file that may not loosen the sandbox, failing closed (a command whose sandbox cannot be
applied never runs), signals that may not leave the sandbox, and the real session's journal and
saved outputs that no sandboxed command can write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agent.config.loading import load_settings
from agent.config.settings import Settings
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session
from agent.sandbox import SandboxMode, SandboxPolicy
from agent.sandbox.confine import seccomp_program
from agent.sandbox.refusal import looks_refused, refusal_note
from agent.supervised import SandboxFailed, spawn
from agent.tools.base import ToolContext, ToolError
from agent.tools.bash import BashArgs, BashTool

from .conftest import needs_sandbox, run_sandboxed


@pytest.mark.parametrize("machine_name,arch", [("x86_64", 0xC000003E), ("aarch64", 0xC00000B7)])
def test_seccomp_program_is_built_per_architecture(machine_name, arch):
    program = seccomp_program(False, False, machine_name)
    assert len(program) % 8 == 0
    assert arch.to_bytes(4, "little") in program
    assert len(seccomp_program(True, True, machine_name)) == len(program) + 3 * 8  # AF_UNIX, AF_INET, AF_INET6
    with pytest.raises(KeyError):
        seccomp_program(False, False, "sparc64")


def test_refusal_note_names_the_mode_the_places_and_what_to_do():
    read_only = SandboxPolicy(SandboxMode.READ_ONLY, "/tmp/p", plan=True)
    note = refusal_note(read_only, interactive=False)
    assert note.startswith("[sandbox: the read-only sandbox refused writes outside the private temp folder /tmp/p")
    assert "; the network is off" in note and "propose the step in the plan" in note
    ws = SandboxPolicy(SandboxMode.WORKSPACE_WRITE, "/tmp/p", writable=("/w",), network=True)
    assert "outside /w, the private temp folder /tmp/p (the OS sandbox" in refusal_note(ws, interactive=False)
    assert "`--sandbox off`" in refusal_note(ws, interactive=False)
    assert "--sandbox off" not in refusal_note(ws, interactive=True)
    assert looks_refused("bash: x: Permission denied", 1)
    assert not looks_refused("bash: x: Permission denied", 0)
    assert looks_refused("OSError: [Errno 30] Read-only file system", 1)
    assert not looks_refused("1 failed, 3 passed", 1)


def test_project_file_may_not_loosen_the_sandbox(tmp_path):
    (tmp_path / ".opencli.toml").write_text(
        '[sandbox]\nmode = "off"\nwritable = ["/"]\nnetwork = true\nunix_sockets = true\n')
    notices: list[str] = []
    settings = load_settings(tmp_path, notices=notices)
    assert settings.sandbox.mode == "auto" and settings.sandbox.writable == []
    assert settings.sandbox.network is None and settings.sandbox.unix_sockets is False
    assert any(".opencli.toml may not loosen the sandbox" in n for n in notices)
    (tmp_path / ".opencli.toml").write_text('[sandbox]\nmode = "read-only"\nnetwork = false\n')
    tightened = load_settings(tmp_path)
    assert tightened.sandbox.mode == "read-only" and tightened.sandbox.network is False


def test_sandboxed_command_never_falls_back_to_running_unconfined(tmp_path, monkeypatch):
    marker = tmp_path / "ran.txt"
    monkeypatch.setattr("agent.supervised.supervision_available", lambda: False)
    with pytest.raises(SandboxFailed):
        spawn(["sh", "-c", f"echo x > {marker}"], tmp_path, None, ["--sandbox"])
    policy = SandboxPolicy(SandboxMode.WORKSPACE_WRITE, str(tmp_path / "p"), writable=(str(tmp_path),))
    ctx = ToolContext(workspace=tmp_path, output_dir=tmp_path / "out", sandbox=policy)
    with pytest.raises(ToolError, match="the command was not run"):
        BashTool().run(BashArgs(command=f"echo x > {marker}"), ctx)
    assert not marker.exists()


def test_a_sandbox_asked_for_but_unavailable_refuses_the_command(tmp_path):
    marker = tmp_path / "ran.txt"
    policy = SandboxPolicy(SandboxMode.WORKSPACE_WRITE, str(tmp_path / "p"), available=False,
                           reason="the kernel has no Landlock")
    ctx = ToolContext(workspace=tmp_path, output_dir=tmp_path / "out", sandbox=policy)
    with pytest.raises(ToolError, match="the workspace-write sandbox is unavailable .the kernel has no Landlock."):
        BashTool().run(BashArgs(command=f"echo x > {marker}"), ctx)
    assert not marker.exists()


@needs_sandbox
def test_signals_to_processes_outside_the_sandbox_are_refused(machine):
    outside = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        out = run_sandboxed(machine, machine.policy(SandboxMode.WORKSPACE_WRITE), f"kill -TERM {outside.pid}")
        assert "Operation not permitted" in out.text
        assert outside.poll() is None
    finally:
        outside.send_signal(signal.SIGKILL)
        outside.wait()


@needs_sandbox
def test_the_sessions_journal_and_saved_outputs_are_not_writable(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": "true"}}]}, {"content": "ok"}]
    session = build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                            provider=ScriptedProvider(replies), interactive=False)
    session.run_turn("start", lambda e: None, threading.Event())
    journal, outputs = session.journal_path, session.output_dir
    outputs.mkdir(parents=True, exist_ok=True)
    before = journal.read_bytes()
    for policy in (session.act_sandbox(), session.plan_sandbox()):
        ctx = ToolContext(workspace=ws, output_dir=outputs, sandbox=policy)
        out = BashTool().run(BashArgs(command=f"echo forged >> {journal}; echo x > {outputs}/tool-output-x.txt; "
                                              f"rm -f {journal}"), ctx)
        assert out.text.count("Permission denied") == 3, out.text
    assert journal.read_bytes() == before and not (outputs / "tool-output-x.txt").exists()
    assert not any(Path(p) in journal.parents for p in session.act_sandbox().writable)


@needs_sandbox
@pytest.mark.skipif(os.geteuid() != 0, reason="only a privileged agent has capabilities to drop")
def test_root_commands_lose_privileged_capabilities(machine):
    from agent.sandbox.confine import KEPT_CAPABILITIES

    out = run_sandboxed(machine, machine.policy(SandboxMode.WORKSPACE_WRITE),
                        f"grep -E '^Cap(Eff|Bnd):' /proc/self/status; {sys.executable} -c "
                        "\"import socket; socket.sethostname(socket.gethostname())\"; chown 1000 README.md && echo own")
    assert f"CapEff:\t{KEPT_CAPABILITIES:016x}" in out.text and f"CapBnd:\t{KEPT_CAPABILITIES:016x}" in out.text
    assert "PermissionError: [Errno 1] Operation not permitted" in out.text  # CAP_SYS_ADMIN is gone
    assert "\nown\n" in out.text  # file permissions in the workspace still work as root


@needs_sandbox
def test_a_sandbox_the_kernel_refuses_names_the_step_and_runs_nothing(machine):
    """Landlock refuses a rule on an internal filesystem (a namespace file): the command does
    not start and the error names the call that refused."""
    marker = machine.root / "ran.txt"
    with pytest.raises(SandboxFailed, match=r"could not be applied \(landlock_add_rule refused"):
        spawn(["sh", "-c", f"echo x > {marker}"], machine.ws, None, ["--sandbox", "--write", "/proc/self/ns/net"])
    assert not marker.exists()


@pytest.mark.parametrize("mode,expected", [
    ("auto", "Commands run unsandboxed; Plan mode has no bash."),
    ("workspace-write", "sandbox mode workspace-write was asked for, so bash commands are refused")])
def test_unavailable_sandbox_notice_says_why_and_what_follows(tmp_path, monkeypatch, mode, expected):
    from agent.sandbox import SandboxSupport

    monkeypatch.setattr("agent.runtime.sandboxing.probe",
                        lambda: SandboxSupport(False, reason="Landlock is disabled (add landlock to the lsm= boot parameter)"))
    session = build_session(tmp_path, Settings(model="openai/gpt-4.1", sandbox={"mode": mode}),
                            provider=ScriptedProvider([]), interactive=False)
    (notice,) = [n for n in session.startup_notices() if n.startswith("Sandbox unavailable")]
    assert "Landlock is disabled" in notice and expected in notice
    assert session.plan_sandbox() is None
    assert (session.act_sandbox() is None) == (mode == "auto")


@needs_sandbox
def test_the_users_own_command_runs_outside_the_sandbox_and_the_models_inside(tmp_path):
    """``!command`` is the user's own line: it runs as typed (it may write outside the workspace);
    the same line from the model is confined to the workspace by the Act sandbox."""
    from agent.loop.user_command import run_user_command

    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    line = f"echo made > {outside}/by_user.txt"
    replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": f"echo made > {outside}/by_model.txt"}}]},
               {"content": "ok"}]
    session = build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="full-auto",
                                         sandbox={"mode": "workspace-write"}),
                            provider=ScriptedProvider(replies), interactive=False)
    session.run_turn("write outside", lambda e: None, threading.Event())
    assert not (outside / "by_model.txt").exists()
    result = run_user_command(session.agent, line, lambda e: None, threading.Event())
    assert result.exit_code == 0 and (outside / "by_user.txt").read_text() == "made\n"
