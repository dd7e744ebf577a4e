"""C14: the git snapshot inside a submodule and a linked worktree (Claude Code #95820): both have
a ``.git`` file, the root is the working tree (never ``.git/modules/...``), branches are right."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agent.git_context import git_snapshot, render_snapshot

SCRIPT = """
git init -q -b main lib && (cd lib && git config user.email t@example.com && git config user.name t &&
  echo lib > lib.txt && git add . && git commit -qm 'lib init')
git init -q -b main app && cd app && git config user.email t@example.com && git config user.name t
echo app > app.txt && git add . && git commit -qm 'app init'
git -c protocol.file.allow=always submodule add -q ../lib vendor/lib && git commit -qm 'add submodule'
git -C vendor/lib checkout -q --detach
git worktree add -q -b feature/wt ../app-wt
"""


def shell(cwd: Path, script: str) -> None:
    """Run the case's shell input with no user/system git config and no inherited GIT_DIR."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(["bash", "-euc", script], cwd=cwd, env=env, check=True, capture_output=True)


def test_c14_submodule_and_worktree(tmp_path: Path):
    shell(tmp_path, SCRIPT)
    assert (tmp_path / "app" / "vendor" / "lib" / ".git").is_file()
    assert (tmp_path / "app-wt" / ".git").is_file()

    s1 = git_snapshot(tmp_path / "app" / "vendor" / "lib")
    assert s1.is_repo and s1.root.endswith("app/vendor/lib") and ".git/modules" not in s1.root
    assert "detached" in s1.branch.lower() and s1.recent_commits[0].subject == "lib init"
    assert s1.default_branch == "main" and s1.error is None

    s2 = git_snapshot(tmp_path / "app-wt")
    assert s2.is_repo and s2.branch == "feature/wt" and s2.default_branch == "main"
    assert s2.recent_commits[0].subject == "add submodule"
    assert s2.root == str((tmp_path / "app-wt").resolve())
    assert s2.error is None

    # The superproject itself: the submodule is not reported as changed, the root is app/.
    s0 = git_snapshot(tmp_path / "app")
    assert s0.root == str((tmp_path / "app").resolve()) and s0.branch == "main" and s0.status == ""
    assert "Repository root: " + s1.root in render_snapshot(s1)
