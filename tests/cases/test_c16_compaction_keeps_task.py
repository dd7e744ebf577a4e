"""C16: compaction keeps the original task and later user constraints verbatim, by code, even
with a summariser that forgets them; the view stays valid and resumes with a model call
(opencode #41358)."""

from __future__ import annotations

import json
from pathlib import Path

from agent.context.compaction.rewrite import compact
from agent.context.repair import pairing_ok

# A copy of the inputs from shared/cases/cases.json, so the tests run wherever the repo is cloned.
CASES = Path(__file__).resolve().parent / "data" / "cases.json"


def adversarial_stub(_messages):
    return "The assistant explored the repository and read many modules."


def test_c16_expected_block():
    case = next(c for c in json.loads(CASES.read_text(encoding="utf-8")) if c["id"] == "C16")
    msgs = case["input"]["value"]["messages"]
    assert len(msgs) == 65
    result = compact(msgs, summarize=adversarial_stub)
    out = result.view
    assert result.ok, result.notice
    text = "\n".join(m.get("content") or "" for m in out)
    assert "migrate the config loader in src/config.py from YAML to TOML" in text
    assert ".yml files must still load" in text
    assert pairing_ok(out)
    assert out[-1]["role"] in ("tool", "user")
    # Structure: system prompt, then the summary as a user message, never an assistant/tool first.
    assert out[0] == msgs[0] and out[1]["role"] == "user"
    assert result.tokens_after < result.tokens_before
    assert msgs[-1] in out and msgs[-3] in out  # the latest messages are verbatim
