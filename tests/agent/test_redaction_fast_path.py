"""The fast paths of the on-disk redaction (agent/secrets): the RE2 needle set, ``Redactor.clean``
and the stream redactor's clean-chunk path must give exactly what the per-needle scans and the
general stream path give, and the saved output of the bash tool must stay byte-for-byte."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.context.truncation.bounded import STREAM_SLOT_BYTES, BoundedOutput
from agent.secrets import stream as stream_module
from agent.secrets.patterns import all_needles
from agent.secrets.redact import Redactor, _compiled_patterns
from agent.secrets.scan import NeedleSet
from agent.secrets.stream import StreamRedactor
from agent.tools.base import ToolContext
from agent.tools.bash import BashArgs, BashTool

SK = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
AWS = "AKIAIOSFODNN7EXAMPLE"
GH = "ghp_" + "a1B2" * 9
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7\nQWERTYqwerty123\n-----END RSA PRIVATE KEY-----"
VALUE = "tok-value-123456"

#: Pieces of text: secrets, needles in odd cases, near-misses, non-ASCII and Latin-1 bytes.
FRAGMENTS = [
    SK, AWS, GH, PEM, VALUE, "postgres://app:hunter2pass@db/x", "API_TOKEN=abcdef123", 'password = "s3cr3tval"',
    "password =\n  'spans1line'", "KEY", "Key", "kEy", "token", "TOKEN=", "Secret", "PRIVATE KEY", "private key",
    "-----BEGIN OPENSSH PRIVATE KEY-----", "-----END OPENSSH PRIVATE KEY-----", "eyJhbGciOi", "xoxb-", "AC", "SK",
    ".", '"', "'", "://", "sk-", "\u212a", "\u017f", "\u00c9t\u00e9", "\u03bbx", "data", "abcdefghij", "000123",
    " ", "\n", "\n", "\n", "\r\n", "\t",
]
text_strategy = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join)
raw_strategy = st.one_of(
    text_strategy.map(lambda t: t.encode("utf-8")),
    st.binary(max_size=200),
    st.tuples(text_strategy, st.binary(max_size=20), text_strategy).map(
        lambda t: t[0].encode() + t[1] + t[2].encode()),
)


def _slow(redactor: Redactor) -> Redactor:
    """The same redactor without its RE2 needle set: one ``in`` scan per needle, as before."""
    redactor._needles = None
    return redactor


def _general_only(stream: StreamRedactor) -> StreamRedactor:
    """A stream redactor that always takes the general path (no clean-chunk shortcut)."""
    stream._feed_clean = lambda chunk: None  # type: ignore[method-assign]
    return stream


# -- the needle set -------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(raw_strategy)
def test_needle_set_finds_what_in_finds(data):
    needles = list(dict.fromkeys(all_needles() + [("PRIVATE KEY", True), (VALUE.encode(), True), (b"\xc9t", True)]))
    found = NeedleSet(needles).present(data)
    lowered = data.lower()
    expected = set()
    for needle, exact in needles:
        raw = needle.encode() if isinstance(needle, str) else needle
        if (raw in data) if exact else (raw in lowered):
            expected.add((needle, exact))
    assert found == expected


def test_needle_set_takes_views_and_rejects_unusable_needles():
    finder = NeedleSet([("key", False), ("AC", True)])
    buf = bytearray(b"xx KEY yy ac")
    assert finder.present(memoryview(buf)[3:]) == {("key", False)}
    assert finder.present(b"") == set()
    with pytest.raises(ValueError):
        NeedleSet([("Key", False)])  # a case-insensitive needle must be lower-case
    with pytest.raises(ValueError):
        NeedleSet([("", True)])


def test_all_needles_cover_every_compiled_pattern():
    known = set(all_needles())
    for pattern, _, _ in _compiled_patterns():
        assert pattern.needles or pattern.requires
        assert {(n, pattern.exact_needles) for n in pattern.needles} <= known
        assert {(n, False) for n in pattern.requires} <= known


# -- Redactor.data / clean ------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw_strategy)
def test_redactor_data_matches_the_per_needle_scan(data):
    env = {"MY_SERVICE_TOKEN": VALUE}
    fast, slow = Redactor(environ=env), _slow(Redactor(environ=env))
    assert bytes(fast.data(data)) == bytes(slow.data(data))
    assert bytes(fast.data(memoryview(bytearray(data)))) == bytes(slow.data(data))
    if fast.clean(data):
        assert slow.data(data) == data


def test_clean_data_is_returned_without_a_copy_and_secrets_are_not_clean():
    redactor = Redactor(environ={"MY_SERVICE_TOKEN": VALUE})
    plain = b"000123 data abcdefghij \xce\xbbx\n" * 1000
    assert redactor.clean(plain) and redactor.data(plain) is plain
    view = memoryview(bytearray(plain))
    assert redactor.data(view) is view
    for dirty in (SK, AWS, GH, VALUE, "PRIVATE KEY", "a key", "x.y", "it's"):
        assert not redactor.clean(plain + dirty.encode())
    assert redactor.data(plain + VALUE.encode()).endswith(b"[redacted MY_SERVICE_TOKEN]")


# -- the stream redactor --------------------------------------------------------------------


def _feed_like_the_writer(stream: StreamRedactor, data: bytes, sizes: list[int]) -> bytes:
    """Feed ``data`` as the saved-output writer does: views of one reused buffer, each piece
    written (copied out) before the buffer is refilled."""
    slot = bytearray(max(sizes) + 1)
    out = bytearray()
    i = n = 0
    while i < len(data):
        size = sizes[n % len(sizes)]
        piece = data[i:i + size]
        slot[:len(piece)] = piece
        view = memoryview(slot)[:len(piece)] if len(piece) < len(slot) else memoryview(slot)
        for part in stream.feed_parts(view):
            out += part
        slot[:len(piece)] = b"\x00" * len(piece)  # a view kept past its write would show this
        i += size
        n += 1
    return bytes(out + stream.flush())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(text_strategy, min_size=1, max_size=30).map(lambda ts: "".join(ts).encode()),
       st.lists(st.integers(min_value=1, max_value=300), min_size=1, max_size=6))
def test_stream_clean_path_matches_the_general_path(data, sizes):
    env = {"MY_SERVICE_TOKEN": VALUE}
    fast = _feed_like_the_writer(StreamRedactor(Redactor(environ=env)), data, sizes)
    general = _feed_like_the_writer(_general_only(StreamRedactor(_slow(Redactor(environ=env)))), data, sizes)
    assert fast == general
    # A key block's body never gets through, however the chunks cut it.
    assert b"QWERTYqwerty123" not in fast


def test_stream_clean_chunks_are_passed_on_as_views_and_a_secret_on_the_held_line_is_found():
    stream = StreamRedactor(Redactor(environ={}))
    head = b"x" * 100 + b"\n" + b"plain line\n" * 50 + b"the key is sk-proj-A1b2C3"
    parts = stream.feed_parts(head)
    assert b"".join(bytes(p) for p in parts) == head[:head.rfind(b"\n") + 1]
    # The secret is cut by the chunk edge: the next (clean) chunk's first line completes it.
    rest = b"d4E5f6G7h8I9j0K1l2M3n4 end\n" + b"more plain text\n" * 100
    slot = bytearray(rest)
    parts = stream.feed_parts(memoryview(slot))
    assert any(isinstance(p, memoryview) and p.obj is slot for p in parts)  # the clean lines: not copied
    out = b"".join(bytes(p) for p in parts) + stream.flush()
    assert out.startswith(b"the key is [redacted API key] end\n") and b"sk-proj" not in out


def test_stream_key_block_whose_begin_line_is_cut_by_the_chunk_edge_is_held():
    # "PRIVATE KE" ends the first chunk: neither the held bytes nor the next chunk (clean on its
    # own) hold PRIVATE KEY, but together they open a key block.
    data = f"{PEM}\nafter\n".encode()
    for cut in range(1, len(data)):
        stream = StreamRedactor(Redactor(environ={}))
        out = stream.feed(data[:cut]) + stream.feed(data[cut:]) + stream.flush()
        assert out == b"[redacted private key]\nafter\n", cut


def test_stream_key_blocks_are_redacted_wherever_the_chunks_end():
    # Ending a chunk on a block's END line (before its newline) used to split the block at the
    # last newline, and its body was written as it was.
    second = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----"
    data = f"{PEM}{second}\nafter\n".encode()
    for size in range(1, len(data) + 1):
        stream = StreamRedactor(Redactor(environ={}))
        out = b"".join(stream.feed(data[i:i + size]) for i in range(0, len(data), size)) + stream.flush()
        assert b"QWERTY" not in out and b"b3BlbnNzaC1" not in out, size
        assert out.endswith(b"[redacted private key]\nafter\n"), size


def test_stream_secret_value_spanning_lines_takes_the_general_path():
    value = "first-half-of-it\nsecond-half-xyz"
    stream = StreamRedactor(Redactor(environ={"MULTI_TOKEN": value}))
    assert not stream._redactor.line_local
    # The second chunk does not hold the whole value, so it looks clean; the value spans its
    # first newline, which the clean path would cut at.
    out = stream.feed(b"a\nfirst") + stream.feed(b"-half-of-it\nsecond-half-xyz\nb\n") + stream.flush()
    assert out == b"a\n[redacted MULTI_TOKEN]\nb\n"


def test_stream_overlong_clean_line_is_written_as_the_general_path_writes_it():
    data = b"start\n" + b"z" * (stream_module.MAX_HELD_BYTES + 5000) + b"\nend\n"
    fast = _feed_like_the_writer(StreamRedactor(Redactor(environ={})), data, [70000])
    general = _feed_like_the_writer(_general_only(StreamRedactor(Redactor(environ={}))), data, [70000])
    assert fast == general == data


# -- the saved output, end to end -----------------------------------------------------------


def _saved_output(tmp_path: Path, raw: bytes, chunk: int) -> tuple[bytes, object]:
    out = BoundedOutput(20000, tmp_path, "fast")
    for i in range(0, len(raw), chunk):
        out.feed(raw[i:i + chunk])
    result = out.finish()
    return Path(result.saved_path).read_bytes(), result


def test_spilled_output_is_saved_byte_for_byte_with_utf8_cut_at_every_block_edge(tmp_path: Path):
    line = "\u20ac\u00e9 \U0001f600 data abcdefghij \u03bbx ".encode() * 3 + b"\n"
    raw = line * ((5 * STREAM_SLOT_BYTES) // len(line)) + b"\xf0\x9f\x98"  # ends inside a character
    saved, result = _saved_output(tmp_path, raw, 4099)  # block edges fall inside characters
    assert saved == raw
    assert result.truncated and result.total_bytes == len(raw) and result.total_lines == raw.count(b"\n") + 1
    assert "\ufffd" not in result.head and "\ufffd" not in result.tail[:-8]
    assert result.head.startswith("\u20ac\u00e9 \U0001f600")


def test_spilled_output_with_secrets_is_redacted_and_the_rest_kept(tmp_path: Path):
    clean = b"000123 data abcdefghij\n" * 100000  # 2.3 MB
    raw = clean + f"leak {SK}\n".encode() + clean + f"{PEM}\n".encode() + clean
    saved, _ = _saved_output(tmp_path, raw, 65536)
    assert SK.encode() not in saved and b"QWERTYqwerty123" not in saved
    assert saved == clean + b"leak [redacted API key]\n" + clean + b"[redacted private key]\n" + clean


def test_binary_spilled_output_is_a_note_and_saved_whole(tmp_path: Path):
    raw = bytes(range(256)) * 20000  # 5 MB with NULs
    saved, result = _saved_output(tmp_path, raw, 1 << 20)
    assert result.binary and saved == raw and "binary output" in result.text


def test_bash_saves_large_text_output_byte_for_byte(tmp_path: Path):
    ctx = ToolContext(workspace=tmp_path.resolve(), output_dir=tmp_path / "out", call_id="big",
                      cancel=threading.Event())
    script = ("import sys\nw = sys.stdout.buffer.write\n"
              "for i in range(120000): w(('%06d data \\u03bbx \\u20ac ' % i).encode() + b'abcdefghij' * (i % 9) + b'\\n')\n")
    (tmp_path / "gen.py").write_text(script)
    out = BashTool().run(BashArgs(command=f"{sys.executable} gen.py"), ctx)
    expected = b"".join(("%06d data \u03bbx \u20ac " % i).encode() + b"abcdefghij" * (i % 9) + b"\n"
                        for i in range(120000))
    assert out.exit_code == 0 and out.truncated and out.output_lines == 120000
    assert Path(out.saved_path).read_bytes() == expected
    assert out.text.endswith("abcdefghij" * (119999 % 9) + "\n[exit code: 0]")
