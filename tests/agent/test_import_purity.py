"""agent/ stays UI-free: importing any of its modules loads neither textual nor rich (and not
litellm either: it is imported lazily, after the first paint). Idea from Harlequin's tests."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import agent

ROOT = Path(__file__).resolve().parents[2]


def _modules():
    return sorted(m.name for m in pkgutil.walk_packages(agent.__path__, "agent."))


def test_agent_modules_do_not_load_ui_libraries():
    modules = _modules()
    assert "agent.loop" in modules and "agent.runtime" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in ('textual', 'rich', 'litellm', 'llama_cpp') if m in sys.modules)\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == ""


def test_import_linter_contract_holds():
    lint = Path(sys.executable).with_name("lint-imports")
    out = subprocess.run([str(lint)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
