"""Fixtures of the sandbox tests: a fake machine in a temporary folder (HOME, a workspace that is a
git repository, watched folders outside it, another repository), each holding sentinel files, and
a way to run the real bash tool under a sandbox that the fixture first proves is active.

Nothing here runs a write corpus unsandboxed: ``run_sandboxed`` checks, before each command, that
the policy is set, and ``proven`` checks once per policy that a command under it has
``NoNewPrivs: 1``, a seccomp filter, and cannot create a file outside its writable folders."""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent.sandbox import SandboxMode, SandboxPolicy, probe
from agent.tools.base import ToolContext
from agent.tools.bash import BashArgs, BashTool

needs_sandbox = pytest.mark.skipif(not probe().available, reason=f"no OS sandbox here: {probe().reason}")


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with a fixed identity; returns stdout."""
    out = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo,
                         capture_output=True, text=True, check=True)
    return out.stdout


@dataclass
class Machine:
    """The fake machine: ``home`` (HOME), ``ws`` (the workspace repo), ``outside`` (a watched
    folder beside it), ``other`` (another repository), ``private`` (the private temp folder),
    ``data`` (stands for the journal's folder)."""

    root: Path
    home: Path
    ws: Path
    outside: Path
    other: Path
    private: Path
    data: Path

    def watched(self) -> list[Path]:
        return [self.home, self.ws, self.outside, self.other, self.data]

    def policy(self, mode: SandboxMode, *, network: bool | None = None) -> SandboxPolicy:
        writable = (str(self.ws),) if mode is SandboxMode.WORKSPACE_WRITE else ()
        net = network if network is not None else mode is SandboxMode.WORKSPACE_WRITE
        return SandboxPolicy(mode=mode, tmp_dir=str(self.private), writable=writable, network=net)


def _repo(path: Path) -> None:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("keep\n")
    (path / "dirty.txt").write_text("committed\n")
    (path / "sentinel.txt").write_text("keep\n")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "init")
    (path / "dirty.txt").write_text("uncommitted change\n")  # `git checkout -- dirty.txt` would revert it


@pytest.fixture
def machine(tmp_path, monkeypatch) -> Machine:
    root = tmp_path.resolve()
    home, outside, private, data = root / "home", root / "outside", root / "private", root / "data"
    for folder in (home, outside, private, data, home / ".ssh"):
        folder.mkdir()
    (home / ".bashrc").write_text("# keep\n")
    (home / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA keep\n")
    (outside / "sentinel.txt").write_text("keep\n")
    (data / "session.jsonl").write_text('{"keep": true}\n')
    ws, other = root / "ws", root / "other"
    _repo(ws)
    _repo(other)
    (ws / "link_out").symlink_to(outside)  # a symlink inside the repository pointing outside
    git(ws, "add", "link_out")
    git(ws, "commit", "-q", "-m", "link")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "t")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "t@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "t")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "t@example.com")
    monkeypatch.setenv("npm_config_cache", str(home / ".npm"))
    return Machine(root, home, ws, outside, other, private, data)


def snapshot(paths: list[Path], extra: list[Path] = ()) -> dict[str, str]:
    """Every file, folder and link under ``paths`` (content hash, link target, mode), ``git
    status --porcelain`` and HEAD of each repository among them, and whether each ``extra``
    path exists."""
    found: dict[str, str] = {}
    for base in paths:
        for folder, dirs, files in os.walk(base, followlinks=False):
            for name in dirs + files:
                path = Path(folder) / name
                if path.is_symlink():
                    found[str(path)] = "link:" + os.readlink(path)
                elif path.is_file():
                    found[str(path)] = f"{path.stat().st_mode:o}:" + hashlib.sha256(path.read_bytes()).hexdigest()
                else:
                    found[str(path)] = f"dir:{path.stat().st_mode:o}"
        if (base / ".git").exists():
            found[f"{base}:status"] = git(base, "status", "--porcelain", "--untracked-files=all")
            found[f"{base}:HEAD"] = git(base, "rev-parse", "HEAD")
    for path in extra:
        found[f"{path}:exists"] = str(os.path.lexists(path))
    return found


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The keys whose value differs (added, removed or changed)."""
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def run_sandboxed(machine: Machine, policy: SandboxPolicy, command: str, timeout: float = 60.0):
    """Run ``command`` through the real bash tool in the workspace under ``policy`` (never None)."""
    assert policy is not None and policy.available, "the corpus never runs unsandboxed"
    ctx = ToolContext(workspace=machine.ws, output_dir=machine.root / "agent-out", sandbox=policy)
    return BashTool().run(BashArgs(command=command, timeout=timeout), ctx)


def prove_active(machine: Machine, policy: SandboxPolicy) -> None:
    """Fail unless a command under ``policy`` is really confined: no new privileges, a seccomp
    filter, and a write outside its folders refused."""
    probe_file = machine.outside / "proof.txt"
    out = run_sandboxed(machine, policy, f"grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status; "
                                         f"echo x > {probe_file}")
    assert "NoNewPrivs:\t1" in out.text, out.text
    assert "Seccomp:\t2" in out.text, out.text
    assert not probe_file.exists(), "a write outside the sandbox succeeded: the sandbox is not active"
    assert "Permission denied" in out.text
