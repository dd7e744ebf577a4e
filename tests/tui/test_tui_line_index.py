"""Unit tests for the output viewer's file layer (``tui.line_index``) and its text cleaning:
the sparse line index is checked against a plain ``split`` on many generated files, with chunk
and block sizes shrunk so every boundary case (lines across chunks, huge lines, no final
newline, empty files) is hit."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest

import tui.line_index as line_index
from tui.line_index import LineIndex, count_lines, format_count, format_size
from tui.widgets.file_view import display_text


def _expected_lines(data: bytes) -> list[bytes]:
    if not data:
        return []
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    return lines


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch):
    """Shrink the chunk sizes so a few hundred bytes cross many chunk boundaries."""

    def apply(first: int, chunk: int, block: int) -> None:
        monkeypatch.setattr(line_index, "FIRST_CHUNK", first)
        monkeypatch.setattr(line_index, "CHUNK", chunk)
        monkeypatch.setattr(line_index, "READ_BLOCK", block)

    return apply


class TestLineIndex:
    def test_matches_a_plain_split_on_generated_files(self, tmp_path: Path, small_chunks) -> None:
        rng = random.Random(7)
        for trial in range(120):
            lines = [bytes(rng.choice(b"ab \t\x1b\xff") for _ in range(rng.choice([0, 1, 5, 40, 300])))
                     for _ in range(rng.randint(0, 120))]
            data = b"\n".join(lines) + (b"\n" if lines and rng.random() < 0.5 else b"")
            path = tmp_path / f"f{trial}.txt"
            path.write_bytes(data)
            small_chunks(rng.choice([3, 64, 1 << 20]), rng.choice([7, 500, 8 << 20]), rng.choice([4, 64, 65536]))
            cap = rng.choice([4, 100, 8192])
            index = LineIndex(path, stride=rng.choice([1, 3, 32]), max_line_bytes=cap)
            index.build()
            expected = _expected_lines(data)
            assert index.done.is_set() and index.error is None
            assert index.line_count == len(expected)
            assert count_lines(path) == (len(data), len(expected))
            for _ in range(10):
                start, count = rng.randint(0, len(expected) + 1), rng.randint(1, 8)
                got = index.read_lines(start, count)
                want = expected[start:start + count]
                assert [(g.data, g.cut) for g in got] == [(w[:cap], len(w) > cap) for w in want]
            offset = 0
            for number, line in enumerate(expected):
                assert index.offset_of_line(number) == offset
                assert index.line_of_offset(offset) == number
                offset += len(line) + 1
            index.close()

    def test_search_forward_backward_and_ignoring_case(self, tmp_path: Path, small_chunks) -> None:
        small_chunks(16, 16, 8)  # matches straddle chunk boundaries
        data = b"alpha\nBeta needle\ngamma\nneedle again\nNEEDLE upper\n"
        path = tmp_path / "s.txt"
        path.write_bytes(data)
        index = LineIndex(path)
        index.build()
        first = data.index(b"needle")
        assert index.search(b"needle", 0) == first
        assert index.line_of_offset(first) == 1
        assert index.search(b"needle", first + 1) == data.index(b"needle again")
        assert index.search(b"needle", data.index(b"NEEDLE") + 1) is None
        assert index.search(b"needle", data.index(b"NEEDLE"), ignore_case=True) == data.index(b"NEEDLE")
        assert index.search(b"needle", len(data), backward=True) == data.index(b"needle again")
        assert index.search(b"needle", first, backward=True) is None
        assert index.search(b"", 0) is None
        cancel = threading.Event()
        cancel.set()
        assert index.search(b"needle", 0, cancel=cancel) is None

    def test_progress_is_reported_while_building(self, tmp_path: Path, small_chunks) -> None:
        small_chunks(1000, 4000, 65536)
        path = tmp_path / "p.txt"
        path.write_bytes(b"".join(b"line %05d\n" % i for i in range(3000)))
        seen: list[tuple[int, bool]] = []
        index = LineIndex(path)
        index.build(lambda lines, done: seen.append((lines, done)))
        assert seen[-1] == (3000, True)
        partial = [lines for lines, done in seen if not done]
        assert len(partial) >= 5 and partial == sorted(partial) and partial[0] < 3000
        assert index.index_bytes <= 8 * (3000 // line_index.STRIDE + 2), "a sparse index"

    def test_a_missing_file_is_an_error_not_a_crash(self, tmp_path: Path) -> None:
        index = LineIndex(tmp_path / "gone.txt")
        done: list[bool] = []
        index.build(lambda lines, finished: done.append(finished))
        assert done == [True] and index.error and index.line_count == 0
        with pytest.raises(OSError):
            count_lines(tmp_path / "gone.txt")


class TestFormatting:
    @pytest.mark.parametrize("size, text", [(0, "0 bytes"), (1, "1 byte"), (1023, "1023 bytes"),
                                            (1536, "1.5 KB"), (5_500_000, "5.2 MB"), (3 << 30, "3.0 GB")])
    def test_format_size(self, size: int, text: str) -> None:
        assert format_size(size) == text

    def test_format_count(self) -> None:
        assert format_count(48213) == "48 213" and format_count(7) == "7" and format_count(1_000_000) == "1 000 000"


class TestDisplayText:
    def test_escapes_and_controls_are_removed(self) -> None:
        assert display_text(b"\x1b[31mred\x1b[0m \x1b]0;title\x07ok") == "red ok"
        assert display_text(b"50%\r100%\r") == "100%"
        assert display_text(b"a\tb") == "a       b"
        assert display_text(b"nul\x00bell\x07") == "nul\u2400bell"
        assert display_text(b"bad \xff\xfe utf8") == "bad \ufffd\ufffd utf8"
        assert display_text(b"[bold]literal[/]") == "[bold]literal[/]"
        assert display_text("caf\u00e9 \u65e5\u672c".encode()) == "caf\u00e9 \u65e5\u672c"
