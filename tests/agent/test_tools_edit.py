"""The edit tool (agent/tools/edit.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.tools.base import Capability, ToolContext, ToolError
from agent.tools.edit import EditArgs, EditTool


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path.resolve(), output_dir=tmp_path / ".opencli" / "tmp")


def edit(ctx, path, old, new, **kw):
    return EditTool().run(EditArgs(path=path, old_string=old, new_string=new, **kw), ctx)


SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 1\n"


def test_unique_replacement_with_diff(ctx, tmp_path):
    (tmp_path / "m.py").write_text(SOURCE)
    out = edit(ctx, "m.py", "def f():\n    return 1", "def f():\n    return 2")
    assert (tmp_path / "m.py").read_text() == SOURCE.replace("return 1", "return 2", 1)
    assert "replaced 1 occurrence (line 1)" in out.text
    assert "     2\t    return 2" in out.text  # the changed lines, numbered
    assert "-    return 1" in out.diff and "+    return 2" in out.diff
    assert out.metadata == {"path": "m.py", "created": False, "added": 1, "removed": 1}
    assert EditTool.capability is Capability.MUTATING


def test_zero_matches_says_not_found_with_hint(ctx, tmp_path):
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError) as err:
        edit(ctx, "m.py", "def h():", "def k():")
    message = str(err.value)
    assert "not found" in message and "closest line" in message
    assert (tmp_path / "m.py").read_text() == SOURCE


def test_whitespace_mismatch_hint(ctx, tmp_path):
    (tmp_path / "t.py").write_text("if x:\n\treturn 1\n")
    with pytest.raises(ToolError) as err:
        edit(ctx, "t.py", "if x:\n    return 1", "if x:\n    return 2")
    message = str(err.value)
    assert "whitespace" in message and "line 2" in message and "'\\treturn 1'" in message


def test_line_number_prefix_hint(ctx, tmp_path):
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError, match="line-number prefixes"):
        edit(ctx, "m.py", "     2\t    return 1", "x")


def test_two_matches_is_an_error_naming_lines(ctx, tmp_path):
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError) as err:
        edit(ctx, "m.py", "return 1", "return 3")
    message = str(err.value)
    assert "2 times" in message and "lines 2, 6" in message and "replace_all" in message
    assert (tmp_path / "m.py").read_text() == SOURCE


def test_replace_all(ctx, tmp_path):
    (tmp_path / "m.py").write_text(SOURCE)
    out = edit(ctx, "m.py", "return 1", "return 3", replace_all=True)
    assert (tmp_path / "m.py").read_text() == SOURCE.replace("return 1", "return 3")
    assert "replaced 2 occurrences (line 2, 6)" in out.text


def test_crlf_file_keeps_crlf_when_old_string_uses_lf(ctx, tmp_path):
    raw = b"one\r\ntwo\r\nthree\r\n"
    (tmp_path / "w.txt").write_bytes(raw)
    edit(ctx, "w.txt", "two\nthree", "TWO\nthree\nfour")
    assert (tmp_path / "w.txt").read_bytes() == b"one\r\nTWO\r\nthree\r\nfour\r\n"


def test_lf_file_accepts_crlf_old_string(ctx, tmp_path):
    (tmp_path / "u.txt").write_bytes(b"a\nb\nc\n")
    edit(ctx, "u.txt", "a\r\nb", "A\r\nB")
    assert (tmp_path / "u.txt").read_bytes() == b"A\nB\nc\n"


def test_latin1_file_keeps_other_bytes(ctx, tmp_path):
    raw = "# caf\u00e9 \u00e0 la cr\u00e8me\nname = 'x'\n# \u00fcber \xff\n".encode("latin-1")
    (tmp_path / "l.py").write_bytes(raw)
    edit(ctx, "l.py", "name = 'x'", "name = 'y'")
    assert (tmp_path / "l.py").read_bytes() == raw.replace(b"name = 'x'", b"name = 'y'")


def test_unencodable_new_text_is_refused(ctx, tmp_path):
    raw = "caf\u00e9\n".encode("latin-1")
    (tmp_path / "l.txt").write_bytes(raw)
    with pytest.raises(ToolError, match="encoding"):
        edit(ctx, "l.txt", "caf", "\u4e2d\u6587")
    assert (tmp_path / "l.txt").read_bytes() == raw


def test_utf8_bom_is_kept(ctx, tmp_path):
    (tmp_path / "b.txt").write_bytes(b"\xef\xbb\xbfhello\n")
    edit(ctx, "b.txt", "hello", "bye")
    assert (tmp_path / "b.txt").read_bytes() == b"\xef\xbb\xbfbye\n"


def test_missing_file(ctx, tmp_path):
    with pytest.raises(ToolError, match="not found"):
        edit(ctx, "nope.py", "a", "b")


def test_empty_old_string_creates_missing_file(ctx, tmp_path):
    out = edit(ctx, "new/file.txt", "", "hello\n")
    assert (tmp_path / "new" / "file.txt").read_text() == "hello\n"
    assert out.metadata["created"] is True and out.diff.startswith("--- /dev/null")


def test_empty_old_string_on_non_empty_file_is_refused(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("content\n")
    with pytest.raises(ToolError, match="empty"):
        edit(ctx, "a.txt", "", "x")


def test_identical_strings_and_binary_are_refused(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("abc\n")
    with pytest.raises(ToolError, match="identical"):
        edit(ctx, "a.txt", "abc", "abc")
    (tmp_path / "b.bin").write_bytes(b"ab\x00cd")
    with pytest.raises(ToolError, match="binary"):
        edit(ctx, "b.bin", "ab", "xy")


def test_edit_outside_workspace_is_refused(ctx, tmp_path):
    with pytest.raises(ToolError, match="outside the workspace"):
        edit(ctx, "/etc/hostname", "a", "b")
