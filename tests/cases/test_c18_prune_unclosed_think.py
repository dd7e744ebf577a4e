"""C18: pruning an unclosed <think> tag keeps the answer, never leaves an empty message
(OpenClaw #37696)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from agent.context.pruning import prune_reasoning
from agent.messages import AssistantMessage, UserMessage

# A copy of the inputs from shared/cases/cases.json, so the tests run wherever the repo is cloned.
CASES = Path(__file__).resolve().parent / "data" / "cases.json"


def _case():
    return next(c for c in json.loads(CASES.read_text(encoding="utf-8")) if c["id"] == "C18")["input"]["value"]


def prune_cot(msgs, keep_last_turns):
    return prune_reasoning(msgs, keep_last_turns)[0]


def test_c18_expected_block():
    value = _case()
    msgs = value["messages"]
    original = copy.deepcopy(msgs)
    out = prune_cot(msgs, keep_last_turns=value["prune_older_than_turns"])
    assert out[1]["content"].strip() != ""
    assert "Hello! How are you today?" in out[1]["content"] and "<think>" not in out[1]["content"]
    assert out[3]["content"] == "Here they are: app.py, util.py"
    assert out[5] == msgs[5]
    assert all(m.get("content") for m in out)
    assert msgs == original  # the input is not mutated


def test_c18_on_records_keeps_ids_and_current_turn():
    value = _case()
    recs = [UserMessage(content=m["content"]) if m["role"] == "user" else AssistantMessage(content=m["content"])
            for m in value["messages"]]
    out, ids = prune_reasoning(recs, 1)
    assert [m.id for m in out] == [m.id for m in recs]
    assert ids == [recs[1].id, recs[3].id]
    assert out[5] is recs[5]
    assert out[1].content == "Hello! How are you today? I can help with this repository."
