"""C19: <think> inside inline code and fenced code blocks is text; only the genuine leading
reasoning block is removed (openclaw-lark #488)."""

from __future__ import annotations

import json
from pathlib import Path

from agent.context.pruning import prune_reasoning

# A copy of the inputs from shared/cases/cases.json, so the tests run wherever the repo is cloned.
CASES = Path(__file__).resolve().parent / "data" / "cases.json"


def test_c19_expected_block():
    case = next(c for c in json.loads(CASES.read_text(encoding="utf-8")) if c["id"] == "C19")
    msgs = case["input"]["value"]["messages"]
    out = prune_reasoning(msgs, keep_last_turns=case["input"]["value"]["prune_older_than_turns"])[0]
    assert out[1]["content"] == case["expected_output"]
    assert out[1]["content"].count("`<think>`") == 2 and "```python" in out[1]["content"]
    assert out[3] == msgs[3] and out[0] == msgs[0] and out[2] == msgs[2]
