"""The glob tool (agent/tools/glob_tool.py)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from agent.tools.base import Capability, ToolContext, ToolError
from agent.tools.glob_tool import GlobArgs, GlobTool, glob_to_regex


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path.resolve()
    for i, rel in enumerate(
        ["a.py", "b.txt", "src/c.py", "src/pkg/d.py", "src/pkg/e.ts", ".git/hooks/x.py",
         "node_modules/m/index.py", ".venv/lib/site.py", ".github/w.yml"]
    ):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
        os.utime(path, (1_000_000 + i, 1_000_000 + i))  # later in the list = newer
    return root


@pytest.fixture
def ctx(ws: Path) -> ToolContext:
    return ToolContext(workspace=ws, output_dir=ws / ".opencli" / "tmp" / "s")


def glob(ctx, pattern, **kw):
    out = GlobTool().run(GlobArgs(pattern=pattern, **kw), ctx)
    return out, out.text.splitlines()[:-1] if out.metadata.get("count") else []


def test_recursive_newest_first_skipping_git_and_dependencies(ctx):
    out, paths = glob(ctx, "**/*.py")
    assert paths == ["src/pkg/d.py", "src/c.py", "a.py"]
    assert out.text.splitlines()[-1] == "[3 paths, newest first]"
    assert GlobTool.capability is Capability.READ and GlobTool.truncates_output


def test_star_is_top_level_only_and_lists_folders(ctx):
    _, paths = glob(ctx, "*")
    assert set(paths) == {"a.py", "b.txt", "src/", ".github/"}


def test_path_argument_and_braces(ctx):
    _, paths = glob(ctx, "**/*.{py,ts}", path="src")
    assert set(paths) == {"src/c.py", "src/pkg/d.py", "src/pkg/e.ts"}


def test_named_heavy_folder_is_searched(ctx):
    _, paths = glob(ctx, "node_modules/**/*.py")
    assert paths == ["node_modules/m/index.py"]


def test_no_match(ctx):
    out, _ = glob(ctx, "**/*.rs")
    assert out.text.startswith("No files match") and not out.is_error


def test_bad_inputs(ctx):
    with pytest.raises(ToolError, match=r"\.\."):
        glob(ctx, "../*")
    with pytest.raises(ToolError, match="absolute"):
        glob(ctx, "/etc/*")
    with pytest.raises(ToolError, match="not a folder|is a file"):
        glob(ctx, "*", path="a.py")
    with pytest.raises(ToolError, match="outside the workspace"):
        glob(ctx, "*", path="..")


def test_many_results_are_truncated(ctx, ws):
    for i in range(3000):
        (ws / "src" / f"gen_{i:04d}.py").write_text("")
    ctx.max_output_chars = 2000
    out, _ = glob(ctx, "src/*.py")
    assert out.truncated and out.saved_path
    assert out.text.endswith("[3001 paths, newest first]")


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/a.py", False),
        ("**/*.py", "a.py", True),
        ("**/*.py", "src/x/a.py", True),
        ("src/**", "src/x/a.py", True),
        ("src/**/test_*.py", "src/test_a.py", True),
        ("src/**/test_*.py", "src/x/y/test_a.py", True),
        ("?.py", "ab.py", False),
        ("[ab].py", "b.py", True),
        ("[!ab].py", "b.py", False),
        ("*.{js,ts}", "x.ts", True),
        ("a+b(c).txt", "a+b(c).txt", True),
    ],
)
def test_glob_to_regex(pattern, path, hit):
    assert bool(re.fullmatch(glob_to_regex(pattern), path, re.DOTALL)) is hit


def test_non_utf8_file_name_is_listed_as_text(ctx, ws):
    fd = os.open(os.fsencode(ws) + b"/caf\xe9.py", os.O_CREAT | os.O_WRONLY)
    os.close(fd)
    out, paths = glob(ctx, "*.py")
    assert "binary" not in out.text
    assert "caf\\xe9.py" in paths  # the byte that is not UTF-8 is shown as \xNN
    out.text.encode("utf-8")
