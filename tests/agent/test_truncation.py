"""Middle truncation of tool output (agent/context/truncation.py): DESIGN.md 4 and issue 3."""

from __future__ import annotations

import errno
import gc
import os
import stat
import threading
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.context.truncation import bounded as truncation_module
from agent.context.truncation import writer as writer_module
from agent.context.truncation.truncate import MARKER_RE, split_truncated, truncate_text
from agent.context.truncation.bounded import BoundedOutput
from agent.context.truncation.normalise import looks_binary_output, normalize_output


def numbered_lines(count: int, width: int = 40) -> str:
    return "".join(f"line {i:06d} ".ljust(width, "x") + "\n" for i in range(1, count + 1))


# -- normalisation ---------------------------------------------------------------------------


def test_normalize_crlf_and_progress_frames():
    text = "a\r\nb\r\n\r10%\r50%\r100%\nend"
    assert normalize_output(text) == "a\nb\n100%\nend"


def test_normalize_keeps_last_non_empty_frame():
    assert normalize_output("done 100%\r\nnext\rshown\r") == "done 100%\nshown"


def test_normalize_strips_ansi_osc_and_controls():
    text = "\x1b[1;31mred\x1b[0m \x1b]0;title\x07plain \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ bell\x07 nul\x00!"
    out = normalize_output(text)
    assert out == "red plain link bell nul\u2400!"


def test_normalize_resolves_overstrike_and_unfinished_escape():
    assert normalize_output("N\x08NA\x08AME") == "NAME"
    assert normalize_output("text\x1b[3") == "text"
    assert normalize_output("text\x1b") == "text"


def test_normalize_replaces_lone_surrogates():
    out = normalize_output("a\udc80b\ud800c")
    out.encode("utf-8")
    # a surrogate-escaped byte is shown as \xNN; any other lone surrogate as U+FFFD
    assert out == "a\\x80b\ufffdc"


def test_normalize_preserves_line_count():
    text = "one\r\ntwo\rTWO\n\x1b[32mthree\x1b[0m\n"
    assert normalize_output(text).count("\n") == text.count("\n")


# -- truncate_text ---------------------------------------------------------------------------


def test_short_text_is_not_truncated():
    result = truncate_text("hello\n", 100)
    assert not result.truncated
    assert result.text == "hello\n"
    assert MARKER_RE.search(result.text) is None


def test_zero_means_no_truncation():
    text = "x" * 100_000
    result = truncate_text(text, 0)
    assert not result.truncated and result.text == text


def test_negative_budget_is_rejected():
    with pytest.raises(ValueError):
        truncate_text("abc", -1)


def test_head_30_tail_70_without_newlines():
    text = "".join(chr(ord("a") + i % 26) for i in range(50_000))
    result = truncate_text(text, 1000)
    assert result.truncated
    assert result.head == text[:300]
    assert result.tail == text[-700:]
    assert result.omitted_chars == 50_000 - 1000
    assert result.text == f"{result.head}\n{MARKER_RE.search(result.text).group()[1:-1]}\n{result.tail}"


def test_cuts_snap_to_nearby_line_boundaries():
    text = numbered_lines(5000, width=49)  # 50 chars per line with the newline
    result = truncate_text(text, 20000)
    assert result.head.endswith("\n") and text.startswith(result.head)
    assert text.endswith(result.tail)
    assert result.tail.startswith("line ")
    assert len(result.head) + len(result.tail) <= 20000
    assert len(result.head) >= 6000 * 0.9 and len(result.tail) >= 14000 * 0.9


def test_marker_states_count_line_and_path():
    text = numbered_lines(1000)
    result = truncate_text(text, 2000, saved_path="/tmp/out/tool-output-c1.txt")
    match = MARKER_RE.search(result.text)
    assert match is not None
    assert int(match.group("chars")) == result.omitted_chars == len(text) - len(result.head) - len(result.tail)
    assert int(match.group("line")) == result.first_line == result.head.count("\n") + 1
    assert "/tmp/out/tool-output-c1.txt" in match.group()
    assert f"to line {result.last_line}" in match.group()
    # The line numbers point into the full text: the first omitted line is the next one.
    assert text.split("\n")[result.first_line - 1].startswith(f"line {result.first_line:06d}")
    assert split_truncated(result.text) == (result.head, result.tail)


def test_marker_reports_failed_save():
    result = truncate_text("x\n" * 10000, 100, save_error="Permission denied")
    assert "could not be saved (Permission denied)" in result.text


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.text(max_size=30) | st.sampled_from(["\n", "\r\n", "\x1b[31m", "\r", "\x00", "\udc80", "\u20ac"]),
        max_size=200,
    ).map("".join),
    st.integers(min_value=1, max_value=400),
)
def test_truncation_invariants(text, max_chars):
    result = truncate_text(text, max_chars)
    norm = normalize_output(text)
    result.text.encode("utf-8")
    assert "\x00" not in result.text and "\r" not in result.text and "\x1b" not in result.text
    if result.truncated:
        assert len(result.head) + len(result.tail) <= max_chars
        assert norm.startswith(result.head) and norm.endswith(result.tail)
        assert split_truncated(result.text) == (result.head, result.tail)
    else:
        assert result.text == norm and len(norm) <= max_chars


# -- binary detection --------------------------------------------------------------------------


def test_binary_detection():
    assert looks_binary_output(bytes(range(256)) * 4)
    assert looks_binary_output(b"\x7fELF\x02\x01\x01" + b"\x00" * 100)
    assert not looks_binary_output("plain text, caf\u00e9\n".encode() * 100)
    assert not looks_binary_output(b"".join(b"./src/pkg/module_%d.py\x00" % i for i in range(50)))  # find -print0
    assert not looks_binary_output(b"")


# -- BoundedOutput -----------------------------------------------------------------------------


def feed_in_chunks(out: BoundedOutput, data: bytes, size: int = 4097) -> None:
    for i in range(0, len(data), size):
        out.feed(data[i : i + size])


def test_small_output_saves_nothing(tmp_path: Path):
    out = BoundedOutput(20000, tmp_path / "tmp", "call1")
    out.feed(b"hello\r\nworld\n")
    result = out.finish()
    assert result.text == "hello\nworld\n"
    assert not result.truncated and result.saved_path is None
    assert not (tmp_path / "tmp").exists()


def test_truncated_output_is_saved_raw_with_mode_0600(tmp_path: Path):
    raw = ("\x1b[32mok\x1b[0m line\r\n" * 5000).encode()
    out = BoundedOutput(2000, tmp_path / "tmp", "call-7")
    feed_in_chunks(out, raw)
    result = out.finish()
    assert result.truncated
    saved = Path(result.saved_path)
    assert saved == tmp_path / "tmp" / "tool-output-call-7.txt"
    assert saved.read_bytes() == raw
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert str(saved) in result.text
    assert "\x1b" not in result.text and "\r" not in result.text


def test_reused_call_id_does_not_overwrite_earlier_output(tmp_path: Path):
    paths = []
    for payload in (b"first\n", b"second\n"):
        out = BoundedOutput(10, tmp_path, "same")
        out.feed(payload * 100)
        paths.append(out.finish().saved_path)
    assert paths[0] != paths[1]
    assert Path(paths[0]).read_bytes() == b"first\n" * 100
    assert Path(paths[1]).read_bytes() == b"second\n" * 100


def test_failed_save_is_reported_not_raised(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    out = BoundedOutput(100, blocker / "sub", "c")
    out.feed(b"y\n" * 10000)
    result = out.finish()
    assert result.truncated and result.saved_path is None
    assert result.save_error
    assert "could not be saved" in result.text


def test_no_output_dir_is_reported(tmp_path: Path):
    out = BoundedOutput(100, None, "c")
    out.feed(b"z\n" * 10000)
    assert "could not be saved" in out.finish().text


def test_binary_output_becomes_a_note(tmp_path: Path):
    raw = bytes(range(256)) * 200
    out = BoundedOutput(20000, tmp_path, "bin")
    feed_in_chunks(out, raw)
    result = out.finish()
    assert result.binary
    assert result.text.startswith("[binary output, 51200 bytes")
    assert Path(result.saved_path).read_bytes() == raw


def test_feed_after_finish_raises(tmp_path: Path):
    out = BoundedOutput(100, tmp_path, "c")
    out.finish()
    with pytest.raises(RuntimeError):
        out.feed(b"x")


def test_streaming_path_matches_exact_path(tmp_path: Path):
    raw = numbered_lines(40000).encode()  # 1.6 MB: over the in-memory limit
    spilled = BoundedOutput(20000, tmp_path / "a", "s")
    feed_in_chunks(spilled, raw, 65536)
    exact = BoundedOutput(20000, tmp_path / "b", "e", memory_bytes=1 << 24)
    feed_in_chunks(exact, raw, 65536)
    r1, r2 = spilled.finish(), exact.finish()
    assert r1.approximate and not r2.approximate
    assert (r1.head, r1.tail, r1.first_line, r1.last_line) == (r2.head, r2.tail, r2.first_line, r2.last_line)
    assert r1.omitted_chars == r2.omitted_chars
    assert Path(r1.saved_path).read_bytes() == raw
    assert r1.total_lines == 40000 and r1.total_bytes == len(raw)


def test_streaming_cut_inside_multibyte_and_escape(tmp_path: Path):
    raw = ("\x1b[31m\u20ac\u00e9\U0001f600\x1b[0m" * 200_000).encode()  # one long line, 4.6 MB
    out = BoundedOutput(20000, tmp_path, "u")
    feed_in_chunks(out, raw, 4099)
    result = out.finish()
    assert result.truncated
    assert "\ufffd" not in result.text and "\x1b" not in result.text
    assert not result.tail.startswith(("[", "31m", "0m"))
    assert len(result.head) + len(result.tail) <= 20000


def test_memory_stays_flat(tmp_path: Path):
    chunk = numbered_lines(1600).encode()  # 64 KB
    peaks = []
    for megabytes in (8, 32):
        out = BoundedOutput(20000, tmp_path / str(megabytes), "m")
        tracemalloc.start()
        for _ in range(megabytes * 16):
            out.feed(chunk)
        out.finish()
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert os.path.getsize(out.finish().saved_path) == megabytes * 16 * len(chunk)
    assert peaks[1] < 8 * 1024 * 1024
    assert peaks[1] < peaks[0] * 1.5


def test_single_odd_byte_is_not_binary():
    assert not looks_binary_output(b"caf\xe9.py\n")
    assert not looks_binary_output(("\u20ac" * 100).encode()[:-1])  # a sequence cut at the end
    assert looks_binary_output(b"\xff" * 4)


# -- streaming from a pipe (read_from) ---------------------------------------------------------


def mixed_output() -> bytes:
    """About 5 MB mixing long lines, very short lines (``seq``-like) and a stretch with none."""
    long_lines = numbered_lines(30000, width=90).encode()
    short_lines = b"".join(b"%d\n" % i for i in range(300000))
    no_newline = b"z" * (700 * 1024)
    return long_lines[:1500000] + short_lines + no_newline + long_lines[1500000:] + b"last line without newline"


def pump(data: bytes, sizes=(65536, 1, 200000, 4096, 1 << 20)) -> int:
    """Write ``data`` into a new pipe from a thread in varied chunk sizes; return the read end."""
    r, w = os.pipe()

    def writer():
        i = n = 0
        with os.fdopen(w, "wb", buffering=0) as pipe:
            while i < len(data):
                size = sizes[n % len(sizes)]
                pipe.write(data[i : i + size])
                i += size
                n += 1

    threading.Thread(target=writer, daemon=True).start()
    return r


def read_all(out: BoundedOutput, fd: int) -> None:
    try:
        while out.read_from(fd):
            pass
    finally:
        os.close(fd)


def test_read_from_pipe_matches_the_exact_path(tmp_path: Path):
    raw = mixed_output()
    streamed = BoundedOutput(20000, tmp_path / "a", "pipe")
    read_all(streamed, pump(raw))
    exact = BoundedOutput(20000, tmp_path / "b", "exact", memory_bytes=1 << 24)
    exact.feed(raw)
    r1, r2 = streamed.finish(), exact.finish()
    assert r1.approximate and r1.truncated
    assert (r1.head, r1.tail, r1.first_line, r1.last_line) == (r2.head, r2.tail, r2.first_line, r2.last_line)
    assert r1.total_lines == r2.total_lines == raw.count(b"\n") + 1
    assert r1.total_bytes == len(raw)
    assert Path(r1.saved_path).read_bytes() == raw
    assert r1.tail.endswith("last line without newline")


def test_feed_and_read_from_agree_on_counts(tmp_path: Path):
    raw = mixed_output()
    fed = BoundedOutput(5000, None, "f")
    feed_in_chunks(fed, raw, 70001)
    piped = BoundedOutput(5000, None, "p")
    read_all(piped, pump(raw))
    r1, r2 = fed.finish(), piped.finish()
    assert r1.total_lines == r2.total_lines == raw.count(b"\n") + 1
    assert (r1.head, r1.tail, r1.last_line) == (r2.head, r2.tail, r2.last_line)
    assert "could not be saved" in r1.text


def test_failed_write_while_streaming_is_reported(tmp_path: Path, monkeypatch):
    calls = []
    real = truncation_module._write_all

    def failing(fd, data):
        calls.append(len(data))
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd, data)

    monkeypatch.setattr(truncation_module, "_write_all", failing)
    raw = numbered_lines(150000).encode()  # 6 MB
    out = BoundedOutput(2000, tmp_path / "tmp", "full")
    read_all(out, pump(raw))
    result = out.finish()
    assert result.truncated and result.saved_path is None
    assert "No space left" in (result.save_error or "")
    assert "could not be saved" in result.text
    assert not list((tmp_path / "tmp").iterdir())  # the partial file was removed
    assert result.total_lines == 150000 and result.total_bytes == len(raw)


def test_abandoned_output_closes_its_file(tmp_path: Path):
    out = BoundedOutput(100, tmp_path, "gone")
    feed_in_chunks(out, numbered_lines(100000).encode(), 1 << 20)
    fd = out._fd
    assert fd is not None
    inode = os.fstat(fd).st_ino
    del out
    writer_module.output_writer().submit(lambda: None).result()  # pending writes done
    gc.collect()
    try:
        reused = os.fstat(fd).st_ino  # the number may have been reused by another file since
    except OSError:
        reused = None
    assert reused != inode
