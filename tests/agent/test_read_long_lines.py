"""``read`` pages along a very long line: the note on a cut line names the exact call that shows
the next part (``column``), and following those notes gives back the whole line."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

from agent.tools.base import ToolContext, ToolError
from agent.tools.read import MAX_LINE_CHARS, ReadArgs, ReadTool

CALL_RE = re.compile(r"read\([^()]*\)")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path.resolve(), output_dir=tmp_path / "saved")


def read(ctx, **kw):
    return ReadTool().run(ReadArgs(**kw), ctx)


def call_in(text: str) -> dict | None:
    """The keyword arguments of the last ``read(...)`` call a note names (None when none)."""
    calls = CALL_RE.findall(text)
    if not calls:
        return None
    node = ast.parse(calls[-1], mode="eval").body
    assert isinstance(node, ast.Call) and not node.args
    return {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords}


def follow_line(ctx, path: str, max_calls: int = 200) -> tuple[str, int]:
    """Read line 1 of ``path`` by following the cut notes; return (the line as shown, calls made)."""
    args: dict = {"path": path}
    parts = []
    for calls in range(1, max_calls + 1):
        out = read(ctx, **args).text
        row = out.split("\n")[0]
        assert row.startswith("     1\t")
        body = row[len("     1\t"):]
        note = re.search(r" \[(\.\.\. line cut|\.\.\. characters|characters) [^\]]*\]$", body)
        parts.append(body[: note.start()] if note else body)
        nxt = call_in(row)
        if nxt is None:
            return "".join(parts), calls
        assert nxt["path"] == path and nxt["offset"] == 1
        args = nxt
    raise AssertionError("the notes never reached the end of the line")


def test_a_50000_character_line_is_read_completely_by_following_the_notices(ctx, tmp_path):
    line = "".join(f"{i:05d}," for i in range(50_000 // 6 + 1))[:50_000]
    (tmp_path / "one.txt").write_text(line)
    first = read(ctx, path="one.txt").text.split("\n")[0]
    assert first.startswith("     1\t" + line[:MAX_LINE_CHARS] + " [... line cut at 2000 of 50000 chars")
    assert "read(path='one.txt', offset=1, limit=1, column=2001)" in first
    shown, calls = follow_line(ctx, "one.txt")
    assert shown == line and calls == 25


def test_a_long_line_with_multibyte_characters_and_crlf_pages_exactly(ctx, tmp_path):
    line = ("é€𝄞x" * 3000)[:11_111]
    (tmp_path / "multi.txt").write_bytes((line + "\r\nnext\r\n").encode("utf-8"))
    shown, _ = follow_line(ctx, "multi.txt")
    assert shown == line


def test_a_legacy_encoded_line_pages_with_the_same_decoding(ctx, tmp_path):
    line = "caf\u00e9 " * 700  # 3500 characters, cp1252 bytes: decoded as a whole line
    (tmp_path / "legacy.txt").write_bytes(line.encode("cp1252") + b"\n")
    shown, calls = follow_line(ctx, "legacy.txt")
    assert shown == line and calls == 2


def test_a_long_line_in_a_utf16_file_pages_too(ctx, tmp_path):
    line = "ab" * 2600
    (tmp_path / "wide.txt").write_bytes(line.encode("utf-16"))
    shown, _ = follow_line(ctx, "wide.txt")
    assert shown == line


def test_the_last_part_of_a_line_says_it_is_the_end_and_later_lines_follow(ctx, tmp_path):
    (tmp_path / "f.txt").write_text("x" * 2500 + "\nsecond\nthird\n")
    out = read(ctx, path="f.txt", offset=1, column=2001, limit=3).text.split("\n")
    assert out[0] == "     1\t" + "x" * 500 + " [characters 2001-2500 of 2500: end of line 1]"
    assert out[1:3] == ["     2\tsecond", "     3\tthird"]
    assert out[3] == "[end of file: 3 lines in total]"


def test_a_column_past_the_end_of_the_line_is_an_error(ctx, tmp_path):
    (tmp_path / "f.txt").write_text("short\n")
    with pytest.raises(ToolError, match=r"column 7 is past the end of line 1 .* 5 characters"):
        read(ctx, path="f.txt", column=7)
    assert read(ctx, path="f.txt", column=5).text.startswith("     1\tt [characters 5-5 of 5")


def test_reading_a_file_that_cannot_be_opened_is_a_clear_error(ctx, tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root can open any file")
    path = tmp_path / "secret.txt"
    path.write_text("x\n")
    path.chmod(0)
    with pytest.raises(ToolError, match="cannot read secret.txt"):
        read(ctx, path="secret.txt")


def test_a_binary_file_is_refused_with_its_size(ctx, tmp_path):
    (tmp_path / "blob.bin").write_bytes(b"\x7fELF" + bytes(5000))
    with pytest.raises(ToolError, match=r"blob.bin is a binary file \(5004 bytes"):
        read(ctx, path="blob.bin")


@pytest.mark.parametrize("data", [b"", b"a", b"a\n", b"a\nb", b"a\nb\n", b"\n\n\n", b"x\r\ny\r\n" * 5,
                                  "\ufeffbom\nline\n".encode("utf-8"), "w\nide\nfile".encode("utf-16")])
def test_paging_counts_and_shows_the_same_lines_as_splitting_the_file(ctx, tmp_path, data):
    (tmp_path / "f.txt").write_bytes(data)
    encoding = "utf-16" if data.startswith(b"\xff\xfe") else "utf-8-sig"
    text = data.decode(encoding)
    expected = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n") if text else []
    expected = [line.rstrip("\r") for line in expected]
    if not expected:
        assert read(ctx, path="f.txt", offset=2).text.startswith("(empty file")
        return
    for offset in range(1, len(expected) + 3):
        for limit in (1, 2, 5):
            if offset > len(expected):
                with pytest.raises(ToolError, match="past the end"):
                    read(ctx, path="f.txt", offset=offset, limit=limit)
                continue
            out = read(ctx, path="f.txt", offset=offset, limit=limit)
            assert out.metadata["total_lines"] == len(expected)
            rows = [row.split("\t", 1)[1] for row in out.text.split("\n")[:-1]]
            assert rows == expected[offset - 1: offset - 1 + limit]


def test_a_page_cut_by_the_output_size_limit_continues_where_it_stopped(ctx, tmp_path):
    lines = [f"{i:04d}" + "y" * 1990 for i in range(400)]  # 400 lines of 1994 characters: ~800,000
    (tmp_path / "wide.txt").write_text("\n".join(lines) + "\n")
    seen, args = [], {"path": "wide.txt"}
    for _ in range(20):
        out = read(ctx, **args).text
        seen += [row.split("\t", 1)[1] for row in out.split("\n")[:-1]]
        assert "of 400" in out.split("\n")[-1] or "400 lines in total" in out
        nxt = call_in(out.split("\n")[-1])
        if nxt is None:
            break
        args = nxt
    assert seen == lines
