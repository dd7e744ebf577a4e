"""End to end (headless ``run``, scripted model): a command plants a ``core.fsmonitor`` trap in
workspace-write mode; the next session's git snapshot (and pipeline change detection) runs git
itself: the trap never fires, whether the plant was refused (the sandbox keeps .git/config
read-only) or had succeeded earlier (the app's git calls neutralise it)."""

from __future__ import annotations

import json
import subprocess

from tui.cli import main

from .conftest import needs_sandbox

pytestmark = needs_sandbox


def _session(ws, tmp_path, capsys, command: str) -> list[dict]:
    rp = tmp_path / "replay.json"
    rp.write_text(json.dumps([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
                              {"content": "done"}]))
    code = main(["run", "task", "--output-format", "json", "--replay", str(rp), "-C", str(ws),
                 "--model", "openai/gpt-4.1", "--permission-mode", "full-auto", "--sandbox", "workspace-write"])
    assert code == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]


def test_a_planted_fsmonitor_trap_never_fires(tmp_path, capsys, monkeypatch):
    ws, sentinel = tmp_path / "ws", tmp_path / "pwned"
    ws.mkdir()
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    for args in (["init", "-q", "-b", "main"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                                                 "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True)
    (ws / "file.txt").write_text("changed\n")
    trap = f"touch {sentinel}"
    events = _session(ws, tmp_path, capsys, f"git config core.fsmonitor '{trap}'; "
                                            f"printf '[core]\\n\\tfsmonitor = {trap}\\n' >> .git/config")
    (finished,) = [e for e in events if e["type"] == "tool_call_finished"]
    assert "fsmonitor" not in (ws / ".git" / "config").read_text()
    assert "[sandbox: the workspace-write sandbox refused" in finished["output"]
    _session(ws, tmp_path, capsys, "git status --short >/dev/null; echo next")
    assert not sentinel.exists()
    # As if the plant had worked (say, with the sandbox off once): the app's own git still runs nothing.
    subprocess.run(["git", "config", "core.fsmonitor", trap], cwd=ws, check=True)
    _session(ws, tmp_path, capsys, "echo third")
    assert not sentinel.exists()
