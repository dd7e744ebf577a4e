"""Changed files through gitpython: what differs from HEAD plus untracked files, bounded in time."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from agent.git_repo import ChangedFile, changed_files, changed_paths, repository_root


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=cwd, check=True,
                   capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("a\nb\n")
    (tmp_path / "gone.txt").write_text("x\n")
    (tmp_path / ".gitignore").write_text("ignored/\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "init")
    return tmp_path


def test_modified_added_deleted_untracked_with_line_counts(repo: Path) -> None:
    (repo / "a.txt").write_text("a\nc\nd\n")  # as `sed -i` would leave it
    (repo / "gone.txt").unlink()
    (repo / "staged.txt").write_text("s\n")
    _git(repo, "add", "staged.txt")
    (repo / "new.txt").write_text("1\n2\n3")  # as `printf > file` would
    (repo / "ignored").mkdir()
    (repo / "ignored" / "x.txt").write_text("not listed\n")
    (repo / "blob.bin").write_bytes(b"\0\1\2")
    assert changed_files(repo) == [
        ChangedFile("a.txt", "modified", 2, 1),
        ChangedFile("blob.bin", "untracked", None, None),
        ChangedFile("gone.txt", "deleted", 0, 1),
        ChangedFile("new.txt", "untracked", 3, 0),
        ChangedFile("staged.txt", "added", 1, 0),
    ]


def test_paths_are_relative_to_the_repository_root_from_a_subfolder(repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "m.py").write_text("x = 1\n")
    assert changed_paths(repo / "src") == {"src/m.py"}
    assert repository_root(repo / "src") == repo


def test_a_repository_without_commits_and_a_clean_one(tmp_path_factory, repo: Path) -> None:
    assert changed_files(repo) == []
    fresh = tmp_path_factory.mktemp("fresh")
    _git(fresh, "init", "-q")
    (fresh / "f.txt").write_text("f\n")
    _git(fresh, "add", "f.txt")
    assert changed_files(fresh) == [ChangedFile("f.txt", "added", 1, 0)]


def test_non_utf8_names_round_trip(repo: Path) -> None:
    name = os.fsdecode(b"caf\xe9.txt")
    with open(os.fsencode(repo) + b"/caf\xe9.txt", "wb") as handle:
        handle.write(b"z\n")
    paths = changed_paths(repo)
    assert paths == {name} and (repo / name).exists()


def test_outside_a_repository_and_without_git(tmp_path: Path, monkeypatch) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert changed_files(plain) is None and repository_root(plain) is None
    assert changed_files(tmp_path / "missing") is None


def test_missing_git_binary_gives_none(repo: Path, monkeypatch, tmp_path: Path) -> None:
    empty = tmp_path / "nobin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    (repo / "a.txt").write_text("changed\n")
    assert changed_files(repo) is None


def test_a_stuck_git_is_killed_at_the_time_limit(repo: Path, monkeypatch, tmp_path: Path) -> None:
    fake = tmp_path / "fakebin"
    fake.mkdir()
    script = fake / "git"
    script.write_text("#!/bin/sh\nsleep 30\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    started = time.monotonic()
    assert changed_files(repo, timeout_s=0.5) is None
    assert time.monotonic() - started < 10  # the hang guard: 30 s without the limit
