"""C12: the git snapshot with non-UTF-8 file and branch names and core.quotePath=false
(Aider #1802): no UnicodeDecodeError, and the rendered block is valid UTF-8 and JSON-safe."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from agent.git_context import git_snapshot, render_snapshot

SCRIPT = r"""
git init -q -b main latin1_case && cd latin1_case
git config user.email t@example.com && git config user.name t
git config core.quotePath false
python3 -c "open(b'caf\xe9.txt','wb').write(b'x\n')"
git add -A && git commit -qm 'add latin-1 named file'
git checkout -q -b "$(printf 'feat-\xe9t\xe9')"
python3 -c "open(b'na\xefve_untracked.txt','wb').write(b'y\n')"
"""


def shell(cwd: Path, script: str) -> None:
    """Run the case's shell input with no user/system git config and no inherited GIT_DIR."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(["bash", "-euc", script], cwd=cwd, env=env, check=True, capture_output=True)


def test_c12_non_utf8_names(tmp_path: Path):
    shell(tmp_path, SCRIPT)
    cwd = tmp_path / "latin1_case"
    snap = git_snapshot(cwd)  # must not raise
    text = render_snapshot(snap)
    assert text.encode("utf-8")  # no lone surrogates
    assert json.dumps(text)
    assert "ve_untracked.txt" in text and "feat-" in text
    # Undecodable bytes are shown as escapes, so the model sees which byte it was.
    assert snap.branch == "feat-\\xe9t\\xe9"
    assert "?? na\\xefve_untracked.txt" in snap.status
    assert snap.default_branch == "main" and snap.error is None
    assert [c.subject for c in snap.recent_commits] == ["add latin-1 named file"]
    for value in (snap.root, snap.branch, snap.status, *(c.subject for c in snap.recent_commits)):
        value.encode("utf-8")
