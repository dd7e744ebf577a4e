"""The write tool (agent/tools/write.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agent.tools.base import Capability, ToolContext, ToolError
from agent.tools.write import WriteArgs, WriteTool, atomic_write


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path.resolve(), output_dir=tmp_path / ".opencli" / "tmp")


def write(ctx, path, content):
    return WriteTool().run(WriteArgs(path=path, content=content), ctx)


def test_creates_file_and_parents(ctx, tmp_path):
    out = write(ctx, "pkg/sub/mod.py", "a = 1\nb = 2\n")
    assert (tmp_path / "pkg" / "sub" / "mod.py").read_text() == "a = 1\nb = 2\n"
    assert out.text.startswith("Created pkg/sub/mod.py (2 lines)")
    assert out.diff.startswith("--- /dev/null\n+++ b/pkg/sub/mod.py")
    assert "+a = 1" in out.diff
    assert out.metadata["created"] is True and out.metadata["added"] == 2
    assert WriteTool.capability is Capability.MUTATING


def test_overwrite_reports_and_diffs(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("old\nsame\n")
    out = write(ctx, "a.txt", "new\nsame\n")
    assert out.text.startswith("Overwrote a.txt (2 lines, was 2)")
    assert "-old" in out.diff and "+new" in out.diff and " same" in out.diff
    assert (tmp_path / "a.txt").read_text() == "new\nsame\n"


def test_identical_content_is_a_no_op(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("same\n")
    assert "unchanged" in write(ctx, "a.txt", "same\n").text


def test_keeps_mode_and_crlf(ctx, tmp_path):
    target = tmp_path / "run.sh"
    target.write_bytes(b"echo 1\r\necho 2\r\n")
    os.chmod(target, 0o755)
    out = write(ctx, "run.sh", "echo 3\necho 4\n")
    assert target.read_bytes() == b"echo 3\r\necho 4\r\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert "CRLF" in out.text


def test_keeps_legacy_encoding_when_possible(ctx, tmp_path):
    target = tmp_path / "l1.txt"
    target.write_bytes("caf\u00e9\n".encode("cp1252"))
    write(ctx, "l1.txt", "th\u00e9\n")
    assert target.read_bytes() == "th\u00e9\n".encode("cp1252")


def test_no_temp_files_left(ctx, tmp_path):
    write(ctx, "a.txt", "x\n")
    write(ctx, "a.txt", "y\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_failed_atomic_write_leaves_target_and_no_temp(tmp_path):
    target = tmp_path / "a.txt"
    target.write_text("original")

    class Boom(Exception):
        pass

    real_replace = os.replace

    def failing_replace(src, dst):
        raise Boom()

    os.replace = failing_replace
    try:
        with pytest.raises(Boom):
            atomic_write(target, b"new")
    finally:
        os.replace = real_replace
    assert target.read_text() == "original"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_directory_and_escape_are_refused(ctx, tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError, match="directory"):
        write(ctx, "d", "x")
    with pytest.raises(ToolError, match="outside the workspace"):
        write(ctx, "../evil.txt", "x")
    assert not (tmp_path.parent / "evil.txt").exists()


def test_write_through_symlink_out_is_refused(ctx, tmp_path):
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    os.symlink(outside, tmp_path / "out")
    with pytest.raises(ToolError, match="outside the workspace"):
        write(ctx, "out/x.txt", "x")
    assert not (outside / "x.txt").exists()
