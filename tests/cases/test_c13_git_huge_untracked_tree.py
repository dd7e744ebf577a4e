"""C13: the git snapshot of a repository with 70 000 untracked files (Codex #35008): it finishes
within a hard time limit, the status is capped with an 'omitted' line, untracked folders stay
collapsed (no -uall), and git is stopped after a few KB instead of being read to the end.

The tree is built once per test session (it takes a few seconds) and only this module uses it.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from agent.git_context import git_snapshot

SETUP = """
git init -q -b main big_case && cd big_case
git config user.email t@example.com && git config user.name t
echo x > README.md && git add . && git commit -qm init
"""


def _touch(path: str) -> None:
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))


@pytest.fixture(scope="session")
def big_repo(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("c13")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(["bash", "-euc", SETUP], cwd=base, env=env, check=True, capture_output=True)
    repo = base / "big_case"
    for i in range(20000):  # 20k untracked files at the top level
        _touch(str(repo / f"out_{i:05d}.log"))
    for d in range(50):  # plus one large untracked folder (50k files)
        folder = repo / "artifacts" / f"run{d:02d}"
        folder.mkdir(parents=True)
        for i in range(1000):
            _touch(str(folder / f"f{i:04d}.bin"))
    return repo


def test_c13_huge_untracked_tree(big_repo: Path):
    t0 = time.monotonic()
    snap = git_snapshot(big_repo)
    dt = time.monotonic() - t0
    assert dt < 10  # hard ceiling: the snapshot's own 5 s budget plus the kill
    assert snap.is_repo and snap.branch == "main"
    assert len(snap.status) <= 2000 + 200
    assert "omitted" in snap.status or "more" in snap.status
    assert "artifacts/run00/f0000.bin" not in snap.status  # untracked folders collapsed, no -uall
    # git was stopped after a few KB (or at the deadline), not read to its ~20 000th line.
    assert snap.status.endswith("(listing stopped early)")
    assert snap.status.splitlines()[:2] == ["?? artifacts/", "?? out_00000.log"]


def test_c13_tiny_budget_is_a_hard_ceiling(big_repo: Path):
    t0 = time.monotonic()
    snap = git_snapshot(big_repo, timeout_s=0.2)  # must not raise, whatever part runs out of time
    assert time.monotonic() - t0 < 5
    assert len(snap.status) <= 2200
    assert snap.error is None or "0.2 s" in snap.error
