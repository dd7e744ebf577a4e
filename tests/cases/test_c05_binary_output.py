"""C05: binary output through the bash tool (SWE-agent #697).

No exception escapes, the text is JSON-serialisable without NUL or lone surrogates, it says the
output was binary instead of showing mojibake, and the saved file has the original bytes.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from agent.messages import ToolCall
from agent.tools.base import ToolContext
from agent.tools.registry import ToolRegistry, default_tools


def run_bash(tmp_path: Path, command: str, call_id: str):
    ctx = ToolContext(workspace=tmp_path, output_dir=tmp_path / ".opencli" / "tmp" / "s")
    registry = ToolRegistry(default_tools(include_think=False))
    call = ToolCall(id=call_id, name="bash", arguments=json.dumps({"command": command}))
    return registry.execute(call, ctx)  # never raises


def check(t: str) -> None:
    assert json.dumps({"content": t}) and t.encode("utf-8")
    assert "\x00" not in t
    assert len(t) <= 20000 + 400


def test_c05_all_byte_values(tmp_path: Path):
    script = "import sys; sys.stdout.buffer.write(bytes(range(256)) * 200)"
    out = run_bash(tmp_path, f"{shlex.quote(sys.executable)} -c {shlex.quote(script)}", "c05a")
    check(out.text)
    assert "binary output, 51200 bytes" in out.text
    assert out.exit_code == 0
    assert Path(out.saved_path).read_bytes() == bytes(range(256)) * 200


@pytest.mark.skipif(shutil.which("ls") is None or shutil.which("head") is None, reason="needs ls and head")
def test_c05_real_binary(tmp_path: Path):
    out = run_bash(tmp_path, 'head -c 4096 "$(command -v ls)"', "c05b")
    check(out.text)
    assert "binary output, 4096 bytes" in out.text
    ls_bytes = Path(shutil.which("ls")).read_bytes()[:4096]
    assert Path(out.saved_path).read_bytes() == ls_bytes
