"""C20: collapsing an edit/test loop keeps the final outcome ('4 passed'), never an intermediate
failure (opencode #50816)."""

from __future__ import annotations

import json
from pathlib import Path

from agent.context.aggregation import aggregate_developer_loops
from agent.context.compaction.rewrite import compact
from agent.context.repair import pairing_ok

# A copy of the inputs from shared/cases/cases.json, so the tests run wherever the repo is cloned.
CASES = Path(__file__).resolve().parent / "data" / "cases.json"


def _msgs():
    case = next(c for c in json.loads(CASES.read_text(encoding="utf-8")) if c["id"] == "C20")
    return case["input"]["value"]["messages"]


def _agg_text(out, msgs):
    """Contents of the messages that are not in the input unchanged (what replaced the run)."""
    return "\n".join(m.get("content") or "" for m in out if m not in msgs)


def test_c20_expected_block():
    msgs = _msgs()
    out, removed = aggregate_developer_loops(msgs)
    assert len(out) < len(msgs) and pairing_ok(out)
    agg_text = _agg_text(out, msgs)
    assert agg_text
    assert "tests/test_dates.py" in agg_text
    assert "4 passed" in agg_text
    assert not agg_text.rstrip().endswith(("failed", "FAILED"))
    git_call = next(i for i, m in enumerate(msgs) if any(tc["id"] == "git_1" for tc in m.get("tool_calls") or []))
    assert msgs[git_call] in out and msgs[git_call + 1] in out
    assert out[-2:] == msgs[-2:]
    assert removed  # the elided messages are reported by id


def test_c20_outcome_survives_a_misleading_summariser():
    """Compaction aggregates before summarising; a stub that reports only the first failure
    cannot change the deterministic outcome line."""
    msgs = _msgs()

    def stub(_request):
        return "## State\nFAILED tests/test_dates.py::test_iso - ValueError: month must be in 1..12"

    result = compact(msgs, summarize=stub, keep_last=4, min_saving=0.0)
    assert result.ok and pairing_ok(result.view)
    text = "\n".join(m.get("content") or "" for m in result.view)
    # the outcome computed by code is in the view whatever the summariser says: in the kept
    # aggregation notice, or pinned as the test state when that step was summarised
    assert ("Final outcome (current state, succeeded): `pytest -q tests/test_dates.py` -> passing (4 passed" in text
            or "widest run, latest: `pytest -q tests/test_dates.py` -> passing (4 passed" in text)
    assert result.view[-2:] == msgs[-2:]
