"""The test command of a repository, detected from its files (``verify`` without ``verify.command``).

In order: pytest (``pyproject.toml`` with a ``[tool.pytest...]`` table, ``pytest.ini``, ``setup.cfg``
with ``[tool:pytest]``, ``tox.ini`` with ``[pytest]``, or a ``tests``/``test`` folder of
``test_*.py`` files), ``npm test`` (``package.json`` with a ``test`` script that is not npm's
placeholder), ``cargo test`` (``Cargo.toml``), ``go test ./...`` (``go.mod``), ``make test`` (a
``Makefile`` with a ``test:`` target).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

_MAKE_TEST = re.compile(r"^test\s*:", re.MULTILINE)
_NPM_PLACEHOLDER = "no test specified"


def _read(path: Path, limit: int = 1_000_000) -> str:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            return handle.read(limit)
    except OSError:
        return ""


def _has_pytest(root: Path) -> bool:
    if "[tool.pytest" in _read(root / "pyproject.toml") or (root / "pytest.ini").is_file():
        return True
    if "[tool:pytest]" in _read(root / "setup.cfg") or "[pytest]" in _read(root / "tox.ini"):
        return True
    for folder in ("tests", "test"):
        path = root / folder
        if path.is_dir() and any(path.rglob("test_*.py")):
            return True
    return False


def _npm_test(root: Path) -> bool:
    try:
        scripts = json.loads(_read(root / "package.json") or "{}").get("scripts") or {}
    except (ValueError, AttributeError):
        return False
    test = scripts.get("test") if isinstance(scripts, dict) else None
    return isinstance(test, str) and bool(test.strip()) and _NPM_PLACEHOLDER not in test


def detect_test_command(workspace: Path) -> str | None:
    """The test command for the project at ``workspace`` (see the module docstring), or None when
    nothing says how its tests run. Reads a few files; never raises."""
    root = Path(workspace)
    if _has_pytest(root):
        return "python -m pytest -q"
    if _npm_test(root):
        return "npm test"
    if (root / "Cargo.toml").is_file():
        return "cargo test"
    if (root / "go.mod").is_file():
        return "go test ./..."
    for name in ("Makefile", "makefile", "GNUmakefile"):
        if _MAKE_TEST.search(_read(root / name)):
            return "make test"
    return None
