"""The read tool (agent/tools/read.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.tools.base import Capability, ToolContext, ToolError
from agent.tools.read import DEFAULT_LIMIT, MAX_LINE_CHARS, ReadArgs, ReadTool


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path.resolve(), output_dir=tmp_path / ".opencli" / "tmp" / "s")


def read(ctx, path, **kw):
    return ReadTool().run(ReadArgs(path=path, **kw), ctx)


def test_numbered_like_cat_n(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\nbeta\n\tgamma\n")
    out = read(ctx, "a.txt")
    lines = out.text.split("\n")
    assert lines[:3] == ["     1\talpha", "     2\tbeta", "     3\t\tgamma"]
    assert "3 lines" in lines[-1]
    assert out.metadata["total_lines"] == 3
    assert ReadTool.capability is Capability.READ and ReadTool.truncates_output is False


def test_offset_limit_and_paging_hint(ctx, tmp_path):
    (tmp_path / "big.txt").write_text("".join(f"row {i}\n" for i in range(1, 5001)))
    first = read(ctx, "big.txt")
    assert first.text.count("\n") == DEFAULT_LIMIT  # 2000 rows + footer
    assert "of 5000" in first.text and "offset=2001" in first.text
    page = read(ctx, "big.txt", offset=4999, limit=10)
    assert page.text.split("\n")[:2] == ["  4999\trow 4999", "  5000\trow 5000"]
    assert "end of file: 5000 lines" in page.text


def test_offset_past_end_is_an_error(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    with pytest.raises(ToolError, match="past the end"):
        read(ctx, "a.txt", offset=5)


def test_long_lines_are_cut_with_a_note(ctx, tmp_path):
    (tmp_path / "min.js").write_text("x" * 5000 + "\nshort\n")
    out = read(ctx, "min.js")
    first = out.text.split("\n")[0]
    assert first.startswith("     1\t" + "x" * MAX_LINE_CHARS + " [")
    assert "5000 chars" in first
    assert "     2\tshort" in out.text


def test_crlf_lines_show_without_cr(ctx, tmp_path):
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    assert read(ctx, "w.txt").text.startswith("     1\tone\n     2\ttwo\n")


def test_missing_file_suggests_close_names(ctx, tmp_path):
    (tmp_path / "main.py").write_text("")
    with pytest.raises(ToolError) as err:
        read(ctx, "mian.py")
    assert "not found" in str(err.value) and "main.py" in str(err.value)


def test_directory_is_refused(ctx, tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError, match="directory"):
        read(ctx, "d")


def test_binary_file_is_refused(ctx, tmp_path):
    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200))
    with pytest.raises(ToolError, match="binary"):
        read(ctx, "img.png")


def test_non_utf8_file_is_decoded_not_crashing(ctx, tmp_path):
    (tmp_path / "latin.txt").write_bytes("caf\u00e9 na\u00efve\n".encode("latin-1"))
    out = read(ctx, "latin.txt")
    assert "caf\u00e9 na\u00efve" in out.text


def test_utf16_with_bom(ctx, tmp_path):
    (tmp_path / "u16.txt").write_bytes("\ufeffhello\nw\u00f6rld\n".encode("utf-16-le"))
    out = read(ctx, "u16.txt")
    assert "     1\thello" in out.text and "     2\tw\u00f6rld" in out.text


def test_empty_file(ctx, tmp_path):
    (tmp_path / "e.txt").write_text("")
    assert "empty" in read(ctx, "e.txt").text


def test_reads_saved_tool_output(ctx):
    saved = ctx.output_dir / "tool-output-c1.txt"
    saved.parent.mkdir(parents=True)
    saved.write_text("full\noutput\n")
    assert "     2\toutput" in read(ctx, str(saved)).text


def test_path_escape_is_refused(ctx):
    with pytest.raises(ToolError, match="outside the workspace"):
        read(ctx, "../../etc/passwd")


def test_null_offset_means_default():
    args = ReadArgs.model_validate({"path": "a", "offset": None, "limit": None})
    assert (args.offset, args.limit) == (1, DEFAULT_LIMIT)
