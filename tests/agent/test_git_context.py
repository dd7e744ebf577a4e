"""Session-start git snapshot: real repositories in temp folders, every odd state, never raises."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.git_context import GitSnapshot, cap_status, clean_text, git_snapshot, render_snapshot, run_bounded

_RELOCATING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR")


def git(cwd: Path, *args: str) -> str:
    """Run git for test setup with no user/system config; return stdout."""
    env = {k: v for k, v in os.environ.items() if k not in _RELOCATING}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True).stdout.decode()


def make_repo(path: Path, branch: str = "main", commits: tuple[str, ...] = ("first",)) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", branch)
    git(path, "config", "user.email", "t@example.com")
    git(path, "config", "user.name", "t")
    for i, subject in enumerate(commits):
        (path / "file.txt").write_text(f"{i}\n")
        git(path, "add", "file.txt")
        git(path, "commit", "-qm", subject)
    return path


@pytest.fixture
def no_parent_repo(tmp_path, monkeypatch):
    """Make git stop looking for a repository above ``tmp_path``."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    return tmp_path


def test_outside_a_repository(no_parent_repo):
    snap = git_snapshot(no_parent_repo)
    assert snap == GitSnapshot(is_repo=False)
    assert render_snapshot(snap) == ""


def test_missing_folder(tmp_path):
    snap = git_snapshot(tmp_path / "nope")
    assert not snap.is_repo and "not a folder" in snap.error
    assert render_snapshot(snap) == ""


def test_normal_repository(tmp_path):
    repo = make_repo(tmp_path / "r", commits=tuple(f"commit {i}" for i in range(7)))
    (repo / "file.txt").write_text("changed\n")
    (repo / "new.txt").write_text("n\n")
    (repo / "build" / "deep").mkdir(parents=True)
    (repo / "build" / "deep" / "x.o").write_text("")
    snap = git_snapshot(repo)
    assert snap.is_repo and snap.error is None
    assert snap.root == str(repo.resolve())
    assert (snap.branch, snap.default_branch, snap.has_commits) == ("main", "main", True)
    assert [c.subject for c in snap.recent_commits] == [f"commit {i}" for i in (6, 5, 4, 3, 2)]
    assert snap.recent_commits[0].sha == git(repo, "rev-parse", "--short", "HEAD").strip()
    assert snap.status.splitlines() == [" M file.txt", "?? build/", "?? new.txt"]  # folders collapsed
    text = render_snapshot(snap)
    assert text.startswith("Git snapshot taken at session start (it does not update")
    for part in ("Current branch: main", "Default branch: main", "?? build/", "commit 6", str(repo.resolve())):
        assert part in text


def test_clean_repository_renders_clean(tmp_path):
    assert "(clean)" in render_snapshot(git_snapshot(make_repo(tmp_path / "r")))


def test_subfolder_reports_root_and_root_relative_paths(tmp_path):
    repo = make_repo(tmp_path / "r")
    (repo / "pkg" / "sub").mkdir(parents=True)
    (repo / "top.txt").write_text("")
    snap = git_snapshot(repo / "pkg" / "sub")
    assert snap.root == str(repo.resolve())
    assert "?? top.txt" in snap.status.splitlines()


def test_repository_without_commits(tmp_path):
    repo = make_repo(tmp_path / "r", branch="trunk", commits=())
    (repo / "a.txt").write_text("")
    snap = git_snapshot(repo)
    assert snap.is_repo and snap.error is None
    assert (snap.branch, snap.default_branch, snap.has_commits) == ("trunk", "trunk", False)
    assert snap.recent_commits == [] and snap.status == "?? a.txt"
    assert "(no commits yet)" in render_snapshot(snap)


def test_default_branch_from_origin_head(tmp_path):
    upstream = make_repo(tmp_path / "up")
    git(upstream, "checkout", "-q", "-b", "develop")
    git(tmp_path, "clone", "-q", str(upstream), "clone")
    clone = tmp_path / "clone"
    git(clone, "checkout", "-q", "-b", "feature")
    snap = git_snapshot(clone)
    assert (snap.branch, snap.default_branch) == ("feature", "develop")


def test_default_branch_master_fallback(tmp_path):
    repo = make_repo(tmp_path / "r", branch="master")
    git(repo, "checkout", "-q", "-b", "topic")
    assert git_snapshot(repo).default_branch == "master"


def test_detached_head_without_main_or_master(tmp_path):
    repo = make_repo(tmp_path / "r", branch="trunk", commits=("one", "two"))
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    snap = git_snapshot(repo)
    assert snap.branch == f"HEAD (detached at {git(repo, 'rev-parse', '--short', 'HEAD').strip()})"
    assert snap.default_branch is None and "Default branch: unknown" in render_snapshot(snap)


def test_inherited_git_variables_do_not_redirect_the_snapshot(tmp_path, monkeypatch):
    other = make_repo(tmp_path / "other", branch="elsewhere")
    repo = make_repo(tmp_path / "r")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    snap = git_snapshot(repo)
    assert snap.branch == "main" and snap.root == str(repo.resolve())


def test_status_is_capped_with_an_omitted_line(tmp_path):
    repo = make_repo(tmp_path / "r")
    for i in range(300):
        (repo / f"untracked_file_with_a_long_name_{i:04d}.txt").write_text("")
    snap = git_snapshot(repo, status_cap_chars=2000)
    body, _, last = snap.status.rpartition("\n")
    assert len(body) <= 2000 and len(snap.status) <= 2200
    assert "omitted" in last
    assert all(line.startswith("?? untracked_file") for line in body.splitlines())


def test_commit_subject_control_characters_and_bad_bytes_are_made_safe(tmp_path):
    repo = make_repo(tmp_path / "r", commits=())
    (repo / "a").write_text("")
    git(repo, "add", "a")
    msg = tmp_path / "msg"
    msg.write_bytes(b"fix \x1b[31mred\x1b[0m caf\xe9\n")
    git(repo, "-c", "i18n.commitEncoding=latin-1", "commit", "-q", "-F", str(msg))
    subject = git_snapshot(repo).recent_commits[0].subject
    assert "\x1b" not in subject and "red" in subject
    text = render_snapshot(git_snapshot(repo))
    assert text.encode("utf-8") and json.dumps(text)


def test_git_that_hangs_is_killed_at_the_deadline(tmp_path, monkeypatch):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "git").write_text("#!/bin/sh\nsleep 30\n")
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    started = time.monotonic()
    snap = git_snapshot(tmp_path, timeout_s=0.5)
    assert time.monotonic() - started < 5  # bounded by timeout_s plus the kill, not by sleep 30
    assert not snap.is_repo and "did not answer within 0.5 s" in snap.error


def test_git_not_installed(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    snap = git_snapshot(tmp_path)
    assert not snap.is_repo and snap.error == "git is not installed"


def test_run_bounded_stops_a_process_after_max_bytes(tmp_path):
    argv = [sys.executable, "-c", "import sys\nwhile True: sys.stdout.write('x' * 1000 + '\\n')"]
    started = time.monotonic()
    result = run_bounded(argv, tmp_path, deadline=time.monotonic() + 20, max_bytes=4000)
    assert time.monotonic() - started < 10
    assert result.cut and not result.timed_out and len(result.stdout) == 4000
    assert result.returncode is not None  # reaped, not left running


def test_cap_status_counts_and_partial_output():
    raw = b"".join(f"?? f{i:03d}\n".encode() for i in range(100))
    complete = cap_status(raw, 40, complete=True)
    assert complete.splitlines()[:5] == ["?? f000", "?? f001", "?? f002", "?? f003", "?? f004"]
    assert complete.endswith("... 95 more entries omitted")
    partial = cap_status(raw[:-3], 40, complete=False)  # last line cut mid-way is dropped
    assert partial.endswith("... at least 94 more entries omitted (listing stopped early)")
    assert cap_status(b"?? " + b"x" * 100 + b"\n", 10, complete=True) == "?? xxxxxxx"
    assert cap_status(b"", 10, complete=True) == ""


def test_clean_text_is_always_valid_utf8():
    assert clean_text(b"caf\xe9") == "caf\\xe9"
    assert clean_text("a\udce9b\x00c\td\ne") == "a\ufffdb\ufffdc\td\ne"
    assert clean_text(b"\xe2\x82\xac") == "\u20ac"
