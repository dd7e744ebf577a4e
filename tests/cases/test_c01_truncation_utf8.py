"""C01: tool-output truncation never cuts inside a multi-byte UTF-8 character (LibreFang #3086).

The str form goes to the truncator directly; the bytes form is the stdout of a bash tool call, so
byte-level reading, the streaming buffer and the saved file are all exercised.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from agent.context.truncation.truncate import MARKER_RE, split_truncated, truncate_text
from agent.tools.bash import BashArgs, BashTool
from agent.tools.base import ToolContext

S = "a" * 5999 + "\u20ac" * 50000
RAW = S.encode("utf-8")


def check(t: str, head: str, tail: str) -> None:
    assert t.encode("utf-8")  # no lone surrogates
    assert "\ufffd" not in t  # no replacement characters created by the cut
    assert S.startswith(head) and S.endswith(tail)  # cuts on code-point boundaries of the original
    assert len(head) + len(tail) <= 20000


def test_c01_str_form():
    result = truncate_text(S, 20000)
    assert result.truncated
    head, tail = split_truncated(result.text)
    assert (head, tail) == (result.head, result.tail)
    check(result.text, head, tail)
    assert int(MARKER_RE.search(result.text).group("chars")) == len(S) - len(head) - len(tail)


def test_c01_bash_bytes_form(tmp_path: Path):
    ctx = ToolContext(workspace=tmp_path, output_dir=tmp_path / ".opencli" / "tmp" / "s", call_id="c01")
    script = "import sys; sys.stdout.buffer.write(('a'*5999 + '\\u20ac'*50000).encode())"
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(script)}"
    out = BashTool().run(BashArgs(command=command), ctx)
    assert out.exit_code == 0 and out.truncated
    t = out.text
    assert t.endswith("\n[exit code: 0]")
    body = t[: -len("\n[exit code: 0]")]
    head, tail = split_truncated(body)
    check(t, head, tail)
    assert Path(out.saved_path).read_bytes() == RAW  # the saved file holds the untruncated output
    assert out.saved_path in t
