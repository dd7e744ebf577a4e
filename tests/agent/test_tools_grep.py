"""The grep tool (agent/tools/grep.py): the pure-Python fallback, forced, and rg when installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.tools.base import Capability, ToolContext, ToolError
from agent.tools.grep import GrepArgs, GrepTool, find_ripgrep


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path.resolve()
    files = {
        "src/app.py": "import os\n\ndef main():\n    return os.getcwd()\n",
        "src/util.py": "def helper():\n    pass  # TODO tidy\n",
        "src/pkg/deep.py": "def main_deep():\n    pass\n",
        "README.md": "# Project\nRun main() to start. TODO docs\n",
        "build/out.py": "def main(): generated\n",
        "logs/keep.log": "main log\n",
        "logs/drop.log": "main log\n",
        "node_modules/lib/index.js": "function main() {}\n",
        ".git/config": "main = yes\n",
        ".opencli/tmp/s/tool-output-1.txt": "def main(): saved\n",
        ".github/workflows/ci.yml": "run: main\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "data.bin").write_bytes(b"main\x00\x01\x02binary")
    (root / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (root / "src" / "pkg" / ".gitignore").write_text("deep.py\n")
    return root


@pytest.fixture
def ctx(ws: Path) -> ToolContext:
    return ToolContext(workspace=ws, output_dir=ws / ".opencli" / "tmp" / "s", call_id="g1")


def grep(ctx, pattern, use_ripgrep=False, **kw):
    return GrepTool(use_ripgrep=use_ripgrep).run(GrepArgs(pattern=pattern, **kw), ctx)


def test_matches_as_path_line_text_sorted(ctx):
    out = grep(ctx, r"def main")
    assert out.text.splitlines() == ["src/app.py:3:def main():"]
    assert out.metadata == {"matches": 1, "engine": "python"}
    assert GrepTool.capability is Capability.READ and GrepTool.truncates_output


def test_skips_git_app_folder_dependencies_binaries_and_gitignored(ctx):
    lines = grep(ctx, "main").text.splitlines()
    files = [line.split(":", 1)[0] for line in lines]
    assert files == [".github/workflows/ci.yml", "README.md", "logs/keep.log", "src/app.py"]


def test_path_folder_and_single_file(ctx):
    assert grep(ctx, "def", path="src").text.splitlines() == [
        "src/app.py:3:def main():",
        "src/util.py:1:def helper():",
    ]
    assert grep(ctx, "TODO", path="README.md").text == "README.md:2:Run main() to start. TODO docs"


def test_glob_filters(ctx):
    assert [l.split(":")[0] for l in grep(ctx, "TODO", glob="*.py").text.splitlines()] == ["src/util.py"]
    assert [l.split(":")[0] for l in grep(ctx, "TODO", glob="!*.py").text.splitlines()] == ["README.md"]
    assert [l.split(":")[0] for l in grep(ctx, "def", glob="src/*.py").text.splitlines()] == [
        "src/app.py",
        "src/util.py",
    ]


def test_no_matches_is_not_an_error(ctx):
    out = grep(ctx, "zzz_not_there")
    assert not out.is_error and out.text.startswith("No matches")


def test_invalid_regex_is_a_clear_error(ctx):
    with pytest.raises(ToolError) as err:
        grep(ctx, "def (")
    assert "invalid regular expression" in str(err.value) and "def (" in str(err.value)


def test_outside_and_missing_paths(ctx):
    with pytest.raises(ToolError, match="outside the workspace"):
        grep(ctx, "x", path="..")
    with pytest.raises(ToolError, match="not found"):
        grep(ctx, "x", path="nope")


def test_many_matches_are_truncated_and_saved(ctx, ws):
    (ws / "big.txt").write_text("".join(f"needle {i}\n" for i in range(20000)))
    ctx.max_output_chars = 2000
    out = grep(ctx, "needle")
    assert out.truncated and out.saved_path
    assert out.text.startswith("big.txt:1:needle 0\n")
    assert out.text.endswith("big.txt:20000:needle 19999")
    assert Path(out.saved_path).read_text().count("\n") == 20000


@pytest.mark.skipif(find_ripgrep() is None, reason="ripgrep not installed")
def test_ripgrep_engine_agrees(ctx):
    out = grep(ctx, r"def main", use_ripgrep=None)
    assert out.metadata["engine"] == "rg"
    assert out.text.splitlines() == ["src/app.py:3:def main():"]
    with pytest.raises(ToolError, match="regular expression"):
        grep(ctx, "def (", use_ripgrep=None)


def test_gitignore_escapes_follow_git(tmp_path):
    """``\\#name`` ignores a file whose name starts with ``#``; ``\\ `` keeps a trailing space."""
    (tmp_path / ".gitignore").write_text("\\#notes.txt\ntrail\\ \n")
    for name in ("#notes.txt", "trail ", "kept.txt"):
        (tmp_path / name).write_text("needle\n")
    ctx = ToolContext(workspace=tmp_path, output_dir=tmp_path / ".opencli" / "tmp" / "s", call_id="g2")
    assert [l.split(":")[0] for l in grep(ctx, "needle").text.splitlines()] == ["kept.txt"]
