"""``--sandbox`` on the command line (headless ``run``): read-only keeps the workspace unchanged
and the result tells the model which sandbox refused; workspace-write writes in the workspace
but not beside it, and names the flag that would run it unsandboxed; off runs as before."""

from __future__ import annotations

import json

import pytest

from tui.cli import main

from .conftest import needs_sandbox

pytestmark = needs_sandbox


def _run(tmp_path, capsys, command: str, *flags: str) -> dict:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    rp = tmp_path / "replay.json"
    rp.write_text(json.dumps([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
                              {"content": "done"}]))
    code = main(["run", "task", "--output-format", "json", "--replay", str(rp), "-C", str(ws),
                 "--model", "openai/gpt-4.1", "--permission-mode", "full-auto", *flags])
    assert code == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    (finished,) = [e for e in events if e["type"] == "tool_call_finished"]
    return finished


@pytest.mark.parametrize("mode,inside,outside", [
    ("read-only", False, False), ("workspace-write", True, False), ("auto", True, False), ("off", True, True)])
def test_sandbox_flag_of_run(tmp_path, capsys, mode, inside, outside):
    beside = tmp_path / "beside.txt"
    finished = _run(tmp_path, capsys, f"echo in > inside.txt; echo out > {beside}", "--sandbox", mode)
    assert (tmp_path / "ws" / "inside.txt").exists() == inside
    assert beside.exists() == outside
    if mode == "off":
        assert "[sandbox:" not in finished["output"]
    else:
        label = "read-only" if mode == "read-only" else "workspace-write"
        assert f"[sandbox: the {label} sandbox refused writes outside" in finished["output"]
    if mode in ("workspace-write", "auto"):
        assert "Running it unsandboxed needs `--sandbox off`." in finished["output"]
