"""Property tests (hypothesis) over random histories: repair_history's invariants, and that
pruning, aggregation and compaction outputs keep them (pairing_ok, never an assistant or tool
message first, no user messages made adjacent, user text kept verbatim by compaction)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.context.aggregation import aggregate_developer_loops
from agent.context.compaction.rewrite import compact
from agent.context.pruning import prune_reasoning
from agent.context.records import to_dicts
from agent.context.repair import MISSING_RESULT_TEXT, pairing_ok, repair_history
from agent.messages import AssistantMessage, ToolResultMessage, UserMessage
from tests.history_strategies import build, events

def assert_invariants(view):
    dicts = to_dicts(view)
    assert pairing_ok(dicts), dicts
    if view:
        assert isinstance(view[0], UserMessage)
    # tool results sit right after their assistant message, in the order of its calls
    i = 0
    while i < len(view):
        m = view[i]
        if isinstance(m, AssistantMessage) and m.tool_calls:
            results = view[i + 1:i + 1 + len(m.tool_calls)]
            assert [r.tool_call_id for r in results] == [c.id for c in m.tool_calls]
            i += 1 + len(m.tool_calls)
        else:
            assert not isinstance(m, ToolResultMessage)
            i += 1


def adjacent_user_pairs(view):
    return {(a.id, b.id) for a, b in zip(view, view[1:]) if isinstance(a, UserMessage) and isinstance(b, UserMessage)}


SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(events)
def test_repair_history_invariants(evs):
    msgs = build(evs)
    out = repair_history(msgs)
    assert_invariants(out)
    # nothing invented but synthetic error results; idempotent
    ids = {m.id for m in msgs}
    for m in out:
        assert m.id in ids or (isinstance(m, ToolResultMessage) and m.content == MISSING_RESULT_TEXT and m.is_error)
    assert [m.id for m in repair_history(out)] == [m.id for m in out]
    # every user message survives repair
    assert [m.id for m in msgs if isinstance(m, UserMessage)] == [m.id for m in out if isinstance(m, UserMessage)]


@SETTINGS
@given(events, st.integers(min_value=0, max_value=4))
def test_pruning_keeps_invariants(evs, keep):
    view = repair_history(build(evs))
    out, pruned = prune_reasoning(view, keep)
    assert_invariants(out)
    assert len(out) == len(view) and [m.id for m in out] == [m.id for m in view]
    for before, after in zip(view, out):
        if isinstance(after, AssistantMessage) and not after.tool_calls and before.content:
            assert after.content and after.content.strip()  # never an empty text message
    assert set(pruned) <= {m.id for m in view if isinstance(m, AssistantMessage)}


@SETTINGS
@given(events, st.integers(min_value=2, max_value=6))
def test_aggregation_keeps_invariants(evs, min_steps):
    view = repair_history(build(evs))
    out, removed = aggregate_developer_loops(view, min_steps=min_steps)
    assert_invariants(out)
    assert adjacent_user_pairs(out) <= adjacent_user_pairs(view)
    assert len(out) == len(view) - len(removed)
    assert not set(removed) & {m.id for m in out}


@SETTINGS
@given(events, st.integers(min_value=0, max_value=12), st.sampled_from(["sum", "", "boom"]))
def test_compaction_keeps_invariants_and_user_text(evs, keep_last, mode):
    view = repair_history(build(evs))

    def summarize(_req):
        if mode == "boom":
            raise RuntimeError("no")
        return mode

    r = compact(view, summarize=summarize, keep_last=keep_last, min_saving=0.0 if keep_last % 2 else 0.05)
    if not r.ok:
        assert r.view == view and r.notice
        return
    assert_invariants(r.view)
    assert adjacent_user_pairs(r.view) <= adjacent_user_pairs(view)
    text = "\n".join(m.content or "" for m in r.view if isinstance(m, (UserMessage, AssistantMessage, ToolResultMessage)))
    for m in view:
        if isinstance(m, UserMessage):
            assert m.content in text  # every user message kept verbatim, by code
    if view and isinstance(view[-1], (ToolResultMessage, UserMessage)):
        assert isinstance(r.view[-1], (ToolResultMessage, UserMessage))  # resumes with a model call
