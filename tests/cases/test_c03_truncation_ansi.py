"""C03: truncation never leaves a partial ANSI escape sequence (Cline #13346).

SGR codes are stripped before measuring, so no fragment such as '[3' or '32m' can survive, and the
budget is spent on text.
"""

from __future__ import annotations

import re
from pathlib import Path

from agent.context.truncation.bounded import BoundedOutput
from agent.context.truncation.truncate import split_truncated, truncate_text

LINES = "".join(
    f"\x1b[1m\x1b[31mFAIL\x1b[39m\x1b[22m tests/test_mod_{i:05d}.py::test_case \x1b[2m(12ms)\x1b[22m\n"
    for i in range(2000)
)
S = "x" * 5997 + "\x1b[31mRED\x1b[0m\n" + LINES + "\x1b[32m" + "z" * 13997
CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")


def check(t: str) -> None:
    head, tail = split_truncated(t)
    assert "\x1b" not in CSI.sub("", t)  # no partial or dangling escape sequence anywhere
    assert not re.match(r"[0-9;]+m", tail)  # tail does not begin with orphaned SGR parameters
    assert not re.search(r"\x1b(\[[0-9;]*)?$", head)  # head does not end inside a sequence
    assert "\x1b" not in t  # recommended: SGR codes stripped before measuring
    assert len(head) + len(tail) <= 20000


def test_c03_input_is_as_described():
    assert len(S) == 170012
    assert S[:6000].endswith("\x1b[3") and S[-14000:].startswith("32m")


def test_c03_str_form():
    result = truncate_text(S, 20000)
    assert result.truncated
    check(result.text)
    assert result.tail.endswith("z" * 13997)  # the final plain text survives whole


def test_c03_streamed_bytes_form(tmp_path: Path):
    raw = S.encode()
    out = BoundedOutput(20000, tmp_path, "c03")
    for i in range(0, len(raw), 6000):  # chunk edges fall inside escape sequences too
        out.feed(raw[i : i + 6000])
    result = out.finish()
    check(result.text)
    assert Path(result.saved_path).read_bytes() == raw
