"""Path resolution inside the workspace (agent/tools/paths.py, DESIGN.md 6)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent.tools.base import ToolContext, ToolError
from agent.tools.paths import display_path, resolve_in_workspace


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    return root.resolve()


@pytest.fixture
def ctx(ws: Path) -> ToolContext:
    return ToolContext(workspace=ws, output_dir=ws / ".opencli" / "tmp" / "s1")


def test_relative_path_resolves_in_workspace(ctx, ws):
    assert resolve_in_workspace("src/a.py", ctx) == ws / "src" / "a.py"
    assert resolve_in_workspace("./src/../src/a.py", ctx) == ws / "src" / "a.py"
    assert resolve_in_workspace("new/file.txt", ctx) == ws / "new" / "file.txt"  # need not exist


def test_dotdot_escape_is_refused(ctx):
    with pytest.raises(ToolError) as err:
        resolve_in_workspace("../outside.txt", ctx)
    assert "../outside.txt" in str(err.value) and "outside the workspace" in str(err.value)


def test_absolute_path_outside_is_refused(ctx, tmp_path):
    target = tmp_path / "secret.txt"
    target.write_text("s")
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(str(target), ctx)


def test_absolute_path_inside_is_fine(ctx, ws):
    assert resolve_in_workspace(str(ws / "src" / "a.py"), ctx) == ws / "src" / "a.py"


def test_symlink_pointing_out_is_refused(ctx, ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    os.symlink(outside, ws / "link")
    os.symlink(outside / "secret.txt", ws / "file-link")
    for given in ("link/secret.txt", "file-link"):
        with pytest.raises(ToolError) as err:
            resolve_in_workspace(given, ctx)
        assert "outside the workspace" in str(err.value) and "symlink" in str(err.value)


def test_symlink_inside_workspace_is_fine(ctx, ws):
    os.symlink(ws / "src", ws / "alias")
    assert resolve_in_workspace("alias/a.py", ctx) == ws / "src" / "a.py"


def test_allowed_outside_root(ws, tmp_path):
    extra = (tmp_path / "shared").resolve()
    extra.mkdir()
    ctx = ToolContext(workspace=ws, output_dir=ws / ".opencli", allowed_outside=(extra,))
    assert resolve_in_workspace(str(extra / "x.txt"), ctx) == extra / "x.txt"
    with pytest.raises(ToolError):
        resolve_in_workspace(str(tmp_path / "other.txt"), ctx)


def test_saved_outputs_are_readable(ctx, ws):
    saved = ws / ".opencli" / "tmp" / "s1" / "tool-output-c1.txt"
    assert resolve_in_workspace(str(saved), ctx) == saved


def test_empty_and_nul_paths_are_refused(ctx):
    for bad in ("", "   ", "a\x00b"):
        with pytest.raises(ToolError):
            resolve_in_workspace(bad, ctx)


def test_symlink_loop_is_an_error_not_a_crash(ctx, ws):
    os.symlink(ws / "loop1", ws / "loop2")
    os.symlink(ws / "loop2", ws / "loop1")
    try:
        result = resolve_in_workspace("loop1/x", ctx)
    except ToolError:
        return
    assert ws in result.parents or result == ws  # some Pythons resolve loops lexically


def test_display_path(ctx, ws, tmp_path):
    assert display_path(ws / "src" / "a.py", ctx) == "src/a.py"
    assert display_path(ws, ctx) == "."
    assert display_path(tmp_path / "x", ctx) == str(tmp_path / "x")
