"""C10: the git snapshot in a detached HEAD (Aider #520): no crash, no bare 'HEAD' or empty
branch, the short sha shown, commits and default branch still right."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agent.git_context import git_snapshot, render_snapshot

SCRIPT = """
git init -q -b main detached_case && cd detached_case
git config user.email t@example.com && git config user.name t
echo a > a.txt && git add a.txt && git commit -qm first
echo b >> a.txt && git commit -qam second
git checkout -q --detach HEAD~1
"""


def shell(cwd: Path, script: str) -> str:
    """Run the case's shell input with no user/system git config and no inherited GIT_DIR."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["bash", "-euc", script], cwd=cwd, env=env, check=True,
                          capture_output=True).stdout.decode()


def test_c10_detached_head(tmp_path: Path):
    shell(tmp_path, SCRIPT)
    cwd = tmp_path / "detached_case"
    short_sha = shell(cwd, "git rev-parse --short HEAD").strip()
    snap = git_snapshot(cwd)  # must not raise
    assert snap.branch not in ("", "HEAD", None)
    assert "detached" in snap.branch.lower() and short_sha in snap.branch
    assert [c.subject for c in snap.recent_commits] == ["first"]
    assert snap.default_branch == "main"
    assert snap.error is None
    assert f"Current branch: HEAD (detached at {short_sha})" in render_snapshot(snap)
