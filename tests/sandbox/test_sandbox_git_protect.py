"""Workspace-write keeps the repository's program-naming git files read-only (issue 16, escape):
a sandboxed command cannot plant ``core.fsmonitor`` / a hook / a replaced ``.git`` for the app's
or the user's later git calls, and ``git commit`` still works."""

from __future__ import annotations

from agent.sandbox import SandboxMode, probe
from agent.sandbox.setup import choose_policy

from .conftest import git, needs_sandbox, prove_active, run_sandboxed

pytestmark = needs_sandbox


def _policy(machine):
    policy, _ = choose_policy(SandboxMode.WORKSPACE_WRITE, workspace=machine.ws, tmp_dir=machine.private,
                              writable=[], network=None, unix_sockets=False, protected=[machine.data],
                              support=probe())
    return policy


def test_git_config_hooks_and_dot_git_cannot_be_replaced(machine):
    assert probe().namespaces
    policy = _policy(machine)
    assert str(machine.ws / ".git" / "config") in policy.readonly
    prove_active(machine, policy)
    sentinel = machine.outside / "pwned"
    before = (machine.ws / ".git" / "config").read_text()
    attempts = [
        f"git config core.fsmonitor 'touch {sentinel}'",
        f"git config core.hooksPath {machine.private}",
        f"printf '[core]\\n\\tfsmonitor = touch {sentinel}\\n' >> .git/config",
        "cp .git/config /tmp/c 2>/dev/null; sed -i 's/bare/bare/' .git/config",
        f"printf '#!/bin/sh\\ntouch {sentinel}\\n' > .git/hooks/post-commit; chmod +x .git/hooks/post-commit",
        "mkdir -p .git/hooks/x",
        "echo '* filter=evil' > .git/info/attributes",
        "mv .git .git-old",
        "mv .git/config .git/config-old",
        f"mkdir -p {machine.private}/evil && cp .git/config {machine.private}/evil/ && "
        f"mv {machine.private}/evil/config .git/config",
    ]
    for command in attempts:
        run_sandboxed(machine, policy, command)
    assert (machine.ws / ".git" / "config").read_text() == before
    assert not (machine.ws / ".git" / "hooks" / "post-commit").exists()
    assert not (machine.ws / ".git" / "hooks" / "x").exists()
    assert not (machine.ws / ".git-old").exists() and (machine.ws / ".git" / "HEAD").exists()
    assert not (machine.ws / ".git" / "info" / "attributes").exists() or \
        "evil" not in (machine.ws / ".git" / "info" / "attributes").read_text()
    out = run_sandboxed(machine, policy, "echo more >> README.md && git commit -qam 'in the sandbox' && "
                                         "git log --oneline -1 && git status --short")
    assert "in the sandbox" in out.text, out.text
    assert git(machine.ws, "log", "-1", "--format=%s").strip() == "in the sandbox"
    assert not sentinel.exists()
    # Deleting the repository is a write like any other in the workspace, but what is left of
    # .git still cannot name a program: config and hooks stay in place, read-only.
    run_sandboxed(machine, policy, f"rm -rf .git 2>/dev/null; git init -q . ; git config core.fsmonitor 'touch {sentinel}'")
    assert (machine.ws / ".git" / "config").read_text() == before


def test_read_only_mode_has_no_git_exceptions(machine):
    policy, _ = choose_policy(SandboxMode.READ_ONLY, workspace=machine.ws, tmp_dir=machine.private, writable=[],
                              network=None, unix_sockets=False, protected=[], support=probe())
    assert policy.readonly == () and policy.pinned == ()


def test_read_only_sandbox_never_offers_an_unsandboxed_rerun_and_names_the_real_mode(machine):
    from types import SimpleNamespace

    from agent.sandbox.refusal import refusal_note
    from agent.sandbox.rerun import should_offer

    act_ro, _ = choose_policy(SandboxMode.READ_ONLY, workspace=machine.ws, tmp_dir=machine.private, writable=[],
                              network=None, unix_sockets=False, protected=[], support=probe(), can_ask=True)
    out = run_sandboxed(machine, act_ro, f"echo x > {machine.ws}/new.txt")
    assert out.metadata.get("sandbox_refused")
    assert not should_offer(out, SimpleNamespace(sandbox=act_ro), "ask")
    assert "Plan mode" not in out.text and "Act mode runs commands read-only" in out.text
    from dataclasses import replace

    plan = replace(act_ro, plan=True)
    assert not should_offer(out, SimpleNamespace(sandbox=plan), "ask")
    assert "In Plan mode, propose the step in the plan" in refusal_note(plan, interactive=True)
    ww = _policy(machine)
    ww = replace(ww, can_ask=True)
    refused = run_sandboxed(machine, ww, f"echo x > {machine.outside}/new.txt")
    assert should_offer(refused, SimpleNamespace(sandbox=ww), "ask")
