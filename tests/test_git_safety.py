"""The app's own git calls never run a program the repository's config names (issue 16: a
sandboxed command can write ``.git/config``; the app's later git calls run unsandboxed)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from agent.git_context import git_snapshot
from agent.git_repo import changed_files, repository_dirs, workspace_files
from agent.git_safety import safe_argv, safe_env
from agent.pipeline.changes import RoundChanges

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

#: config key -> the value that would run a program (each touches its own sentinel).
TRAPS = {
    "core.fsmonitor": "{trap}",
    "core.pager": "{trap}",
    "pager.status": "{trap}",
    "pager.log": "{trap}",
    "pager.diff": "{trap}",
    "core.editor": "{trap}",
    "sequence.editor": "{trap}",
    "diff.external": "{trap}",
    "diff.evil.textconv": "{trap}",
    "diff.evil.command": "{trap}",
    "filter.evil.clean": "{trap}",
    "filter.evil.smudge": "{trap}",
    "filter.evil.process": "{trap}",
    "merge.evil.driver": "{trap}",
    "gpg.program": "{trap}",
    "gpg.ssh.program": "{trap}",
    "core.sshCommand": "{trap}",
    "core.askPass": "{trap}",
    "credential.helper": "!{trap}",
    "core.alternateRefsCommand": "{trap}",
    "core.hooksPath": "{hooks}",
}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=20,
                          env={**safe_env(), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}).stdout


def _script(path: Path, sentinel: Path) -> Path:
    path.write_text(f"#!/bin/sh\necho fired >> {sentinel}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def trap_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose config names a sentinel-touching program in every key of ``TRAPS``,
    with attributes selecting the drivers, a hook of every kind, changed and untracked files and
    a signed-looking commit; returns ``(repo, sentinel folder)``."""
    repo, marks = tmp_path / "repo", tmp_path / "marks"
    repo.mkdir()
    marks.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("one\n")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "first")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("pre-commit", "post-commit", "post-checkout", "post-index-change", "reference-transaction",
                 "fsmonitor-watchman", "pre-auto-gc", "post-rewrite"):
        _script(hooks / name, marks / f"hook-{name}")
        _script(repo / ".git" / "hooks" / name, marks / f"dothook-{name}")
    for key, value in TRAPS.items():
        trap = _script(tmp_path / f"trap-{key}", marks / key)
        _git(repo, "config", key, value.format(trap=trap, hooks=hooks))
    _git(repo, "config", "log.showSignature", "true")
    _git(repo, "config", "filter.evil.required", "true")
    (repo / ".gitattributes").write_text("* diff=evil filter=evil merge=evil\n")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* diff=evil filter=evil\n")
    (repo / "a.txt").write_text("two\n")  # changed: status and diff look at content
    (repo / "new.txt").write_text("untracked\n")
    os.utime(repo / "a.txt", (1, 1))
    return repo, marks


def test_the_traps_are_real(tmp_path: Path) -> None:
    """Control: plain git fires the fsmonitor and filter traps (so a silent run below proves the
    overrides, not a dud trap)."""
    repo, marks = trap_repo(tmp_path)
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, env=safe_env(), stdin=subprocess.DEVNULL,
                   timeout=20)
    subprocess.run(["git", "diff"], cwd=repo, capture_output=True, env=safe_env(), stdin=subprocess.DEVNULL,
                   timeout=20)
    fired = {p.name for p in marks.iterdir()}
    assert {"core.fsmonitor", "filter.evil.process"} <= fired, fired


def test_no_app_git_call_runs_a_configured_program(tmp_path: Path) -> None:
    repo, marks = trap_repo(tmp_path)
    snap = git_snapshot(repo)
    assert snap.is_repo and snap.branch == "main" and "a.txt" in snap.status
    assert repository_dirs(repo) is not None
    files = {f.path for f in changed_files(repo) or []}
    assert {"a.txt", "new.txt", ".gitattributes"} <= files
    assert "a.txt" in workspace_files(repo)
    changes = RoundChanges(repo)
    changes._git_paths = ["a.txt"]
    assert "two" in changes._git_diff()
    assert sorted(p.name for p in marks.iterdir()) == []
    assert len(TRAPS) >= 12


def test_safe_argv_blanks_every_configured_driver(tmp_path: Path) -> None:
    repo, _ = trap_repo(tmp_path)
    argv = safe_argv(repo, ["status"])
    for key in ("filter.evil.clean=", "filter.evil.smudge=", "filter.evil.process=", "diff.evil.textconv=",
                "diff.evil.command=", "merge.evil.driver=", "core.fsmonitor=false", "core.hooksPath=/dev/null"):
        assert key in argv
    assert argv[-1] == "status"


def test_safe_env_drops_inherited_program_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GIT_CONFIG_PARAMETERS", "GIT_EXTERNAL_DIFF", "GIT_SSH_COMMAND", "GIT_DIR", "GIT_CONFIG_COUNT",
                 "GIT_CONFIG_KEY_0"):
        monkeypatch.setenv(name, "x")
    env = safe_env()
    assert not {k for k in env if k.startswith("GIT_CONFIG") or k in ("GIT_EXTERNAL_DIFF", "GIT_SSH_COMMAND",
                                                                      "GIT_DIR")}
    assert env["GIT_PAGER"] == "cat"
