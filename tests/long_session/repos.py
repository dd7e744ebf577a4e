"""The scratch repositories the scripts run against (real files, committed with git).

- ``dev_repo(modules)``: ``pkg/mod_MM.py`` constants, settings, ``setup.py``, generated logs,
  passing tests;
- ``BuggyRepo(buggy)``: ``calc/mod_NN.py`` modules with bugs and three tests each; the outcome of
  any mix of module versions is computed in-process (``failing``, ``run``), the ground truth the
  real pytest output must match.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, Callable

from .script import PYTEST, PytestRun

#: Constants per generated module of the dev repository.
VALUES_PER_MODULE = 40


def _git(ws: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=h@example.invalid", "-c", "user.name=harness", *args],
                   cwd=ws, check=True, capture_output=True)


def _commit_all(ws: Path) -> None:
    _git(ws, "init", "-q")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-q", "-m", "initial")


def module_source(m: int, values: dict[int, int] | None = None) -> str:
    """``pkg/mod_MM.py`` of the dev repo: ``VALUE_MM_JJ = v`` lines (``values`` overrides 0)."""
    values = values or {}
    lines = [f'"""Constants of module {m:02d}."""', ""]
    lines += [f"VALUE_{m:02d}_{j:02d} = {values.get(j, 0)}" for j in range(VALUES_PER_MODULE)]
    return "\n".join(lines) + "\n"


def log_text(i: int, lines: int = 60) -> str:
    """A generated log file of ``lines`` lines (about 65 characters each)."""
    return "".join(f"2026-01-0{1 + i % 9}T10:{k % 60:02d}:{(k * 7) % 60:02d} INFO worker-{k % 5} "
                   f"processed batch {i * 1000 + k} in {(k * 37) % 400 + 3} ms\n" for k in range(lines))


def dev_repo(modules: int, logs: int = 12, big_logs: int = 0) -> Callable[[Path], None]:
    """A scratch repo: ``pkg/mod_MM.py`` constants, ``pkg/settings.py``, ``setup.py``,
    ``data/log_I.txt`` (about 4 KB each), ``data/big_I.log`` (5000 lines each), passing tests
    ``tests/test_values.py`` (one per module), a ``pytest.ini``; committed."""

    def setup(ws: Path) -> None:
        (ws / "pkg").mkdir(parents=True)
        (ws / "tests").mkdir()
        (ws / "data").mkdir()
        (ws / "pkg" / "__init__.py").write_text("")
        for m in range(modules):
            (ws / "pkg" / f"mod_{m:02d}.py").write_text(module_source(m))
        (ws / "pkg" / "settings.py").write_text('DEBUG = True\nLEVEL = "info"\n')
        (ws / "setup.py").write_text('from setuptools import setup\n\nsetup(name="pkg", version="0.1.0")\n')
        for i in range(logs):
            (ws / "data" / f"log_{i}.txt").write_text(log_text(i))
        for i in range(big_logs):
            (ws / "data" / f"big_{i}.log").write_text(log_text(i + 50, lines=5000))
        tests = ["import importlib\n"]
        for m in range(modules):
            tests.append(f"\n\ndef test_mod_{m:02d}_values_are_ints():\n"
                         f"    mod = importlib.import_module('pkg.mod_{m:02d}')\n"
                         f"    assert all(isinstance(v, int) for k, v in vars(mod).items() if k.startswith('VALUE'))\n")
        (ws / "tests" / "test_values.py").write_text("".join(tests))
        (ws / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\ntestpaths = tests\n")
        (ws / ".gitignore").write_text("__pycache__/\n")
        _commit_all(ws)

    return setup


#: Bug kinds of the failing-tests repo: (function source template, the bug, a wrong fix, the right
#: fix, tests); the three versions fill ``{body}``.
#: ``{n}`` is the module number; each test is (name suffix, expression, expected value).
_BUGS = {
    "total": ("def total_{n}(xs):\n    result = {body}\n    for x in xs:\n        result += x\n    return result\n",
              "1", "-1", "0",
              [("basic", "total_{n}([1, 2, 3])", 6), ("empty", "total_{n}([])", 0), ("signs", "total_{n}([-1, 1])", 0)]),
    "ratio": ("def ratio_{n}(a, b):\n    return a / {body}\n", "(b - b)", "(b - 1)", "b",
              [("basic", "ratio_{n}(6, 3)", 2), ("edge", "ratio_{n}(0, 5)", 0), ("quarter", "ratio_{n}(1, 4)", 0.25)]),
    "label": ("def label_{n}(n):\n    return {body}\n", "'item-' + n", "'item-' + str(n + 1)", "'item-' + str(n)",
              [("basic", "label_{n}(1)", "item-1"), ("zero", "label_{n}(0)", "item-0"), ("big", "label_{n}(12)", "item-12")]),
}


class BuggyRepo:
    """``calc/mod_NN.py`` modules (``buggy`` of them with a bug, the rest healthy) and one test
    file per module with three tests. Outcomes of any mix of versions are computed by evaluating
    the module sources in-process (``failing``, ``run``), the ground truth the real pytest must match."""

    def __init__(self, buggy: int, healthy: int = 2) -> None:
        self.n = buggy + healthy
        self.kinds = [list(_BUGS)[j % 3] for j in range(self.n)]
        self.version = ["bug" if j < buggy else "right" for j in range(self.n)]

    def body(self, j: int, version: str) -> str:
        template, bug, wrong, right, _ = _BUGS[self.kinds[j]]
        return {"bug": bug, "wrong": wrong, "right": right}[version]

    def line(self, j: int, version: str) -> str:
        """The source line holding the bug (or its fix) in ``version``: an edit's unique old_string."""
        text = self.source(j, version)
        return next(line.strip() for line in text.splitlines() if self.body(j, version) in line and "def " not in line)

    def source(self, j: int, version: str | None = None) -> str:
        template = _BUGS[self.kinds[j]][0]
        return template.format(n=f"{j:02d}", body=self.body(j, version or self.version[j]))

    def tests(self, j: int) -> list[str]:
        return [f"test_mod_{j:02d}_{suffix}" for suffix, _, _ in _BUGS[self.kinds[j]][4]]

    def test_source(self, j: int) -> str:
        lines = [f"from calc.mod_{j:02d} import *\n"]
        for suffix, expr, expected in _BUGS[self.kinds[j]][4]:
            lines.append(f"\n\ndef test_mod_{j:02d}_{suffix}():\n    assert {expr.format(n=f'{j:02d}')} == {expected!r}\n")
        return "".join(lines)

    def failing(self, j: int) -> list[str]:
        """Names of the tests of module ``j`` that fail with its current version."""
        scope: dict[str, Any] = {}
        exec(self.source(j), scope)
        out = []
        for suffix, expr, expected in _BUGS[self.kinds[j]][4]:
            try:
                ok = eval(expr.format(n=f"{j:02d}"), scope) == expected
            except Exception:
                ok = False
            if not ok:
                out.append(f"test_mod_{j:02d}_{suffix}")
        return out

    def run(self, modules: list[int], keyword: str | None = None) -> PytestRun:
        """The expected ``PytestRun`` of pytest over ``modules``' test files (all files when every
        module is listed: the plain command), optionally ``-k keyword``."""
        whole = modules == list(range(self.n))
        command = PYTEST if whole else PYTEST + " " + " ".join(f"tests/test_mod_{j:02d}.py" for j in modules)
        if keyword:
            command += f" -k {keyword}"
        covers, failed, deselected = [], [], 0
        for j in modules:
            bad = set(self.failing(j))
            for name in self.tests(j):
                if keyword and keyword not in name:
                    deselected += 1
                    continue
                covers.append(name)
                if name in bad:
                    failed.append(name)
        return PytestRun(command, frozenset(covers), tuple(failed), len(covers) - len(failed), deselected)

    def setup(self, ws: Path) -> None:
        (ws / "calc").mkdir(parents=True)
        (ws / "tests").mkdir()
        (ws / "calc" / "__init__.py").write_text("")
        for j in range(self.n):
            (ws / "calc" / f"mod_{j:02d}.py").write_text(self.source(j))
            (ws / "tests" / f"test_mod_{j:02d}.py").write_text(self.test_source(j))
        (ws / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\ntestpaths = tests\n")
        (ws / ".gitignore").write_text("__pycache__/\n")
        _commit_all(ws)
