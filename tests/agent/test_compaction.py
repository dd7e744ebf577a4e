"""Compaction on records: split point, pinned parts, failure paths, recompaction."""

from __future__ import annotations

import json

import pytest

from agent.context.compaction.summary import MODEL_SUMMARY_HEADING, SUMMARY_HEADER, summary_request
from agent.context.truncation.truncate import cap_middle
from agent.context.compaction.rewrite import compact
from agent.context.records import to_dicts
from agent.context.repair import pairing_ok
from agent.messages import AssistantMessage, SystemMessage, ToolCall, ToolResultMessage, UserMessage

BIG = "x = 1\n" * 400


def read_step(i, content=BIG, name="read", is_error=False, args=None):
    return [AssistantMessage(tool_calls=[ToolCall(id=f"c{i}", name=name,
                                                  arguments=json.dumps(args or {"path": f"m{i}.py"}))]),
            ToolResultMessage(tool_call_id=f"c{i}", name=name, content=content, is_error=is_error)]


def history(n=20):
    msgs = [UserMessage(content="TASK: port the loader to TOML")]
    for i in range(n):
        msgs += read_step(i)
    return msgs


def ok_summary(_req):
    return "## Task\nport\n## Progress\nread files\n## Decisions\n-\n## Errors\n-\n## Files\n-\n## State\nreading"


def check_view(view):
    dicts = to_dicts(view)
    assert pairing_ok(dicts)
    body = [m for m in view if not isinstance(m, SystemMessage)]
    assert body and isinstance(body[0], UserMessage)


def test_keeps_last_messages_whole_pairs_and_task():
    msgs = history()
    r = compact(msgs, summarize=ok_summary, keep_last=5)
    assert r.ok, r.notice
    check_view(r.view)
    assert r.view[0] is r.summary_message
    assert r.view[1:] == msgs[-6:]  # split moved back to the assistant of the pair: 6, not 5
    text = r.summary_message.content
    assert text.startswith(SUMMARY_HEADER) and "TASK: port the loader to TOML" in text
    assert MODEL_SUMMARY_HEADING in text and "## State" in text
    assert r.summarized_ids == [m.id for m in msgs[:-6]]
    assert r.tokens_after < r.tokens_before


def test_system_message_stays_first_and_kept_user_is_pinned():
    msgs = [SystemMessage(content="sys")] + history(10) + [UserMessage(content="CONSTRAINT: keep .yml")] + read_step(99)
    r = compact(msgs, summarize=ok_summary, keep_last=3)
    assert r.ok
    assert r.view[0] is msgs[0] and isinstance(r.view[1], UserMessage)
    assert "CONSTRAINT: keep .yml" in r.view[1].content  # the user message that opened the kept part
    assert isinstance(r.view[2], AssistantMessage)  # no two user messages adjacent
    check_view(r.view)


@pytest.mark.parametrize("summarizer, word", [
    (lambda req: (_ for _ in ()).throw(RuntimeError("boom")), "failed"),
    (lambda req: "   ", "empty"),
])
def test_failed_summary_leaves_context_unchanged(summarizer, word):
    msgs = history()
    r = compact(msgs, summarize=summarizer, keep_last=5)
    assert not r.ok and r.view == msgs and word in r.notice and "unchanged" in r.notice


def test_useless_summary_leaves_context_unchanged():
    msgs = [UserMessage(content="t")] + read_step(1, content="short") + read_step(2, content="short")
    r = compact(msgs, summarize=lambda req: "a very long summary " * 50, keep_last=2)
    assert not r.ok and r.view == msgs and "unchanged" in r.notice


def test_nothing_to_compact():
    msgs = history(2)
    r = compact(msgs, summarize=ok_summary, keep_last=10)
    assert not r.ok and "Nothing to compact" in r.notice


def test_plan_and_unresolved_errors_pinned_resolved_dropped():
    msgs = history(3)
    msgs += read_step(10, content="Traceback (most recent call last):\nValueError: early", name="bash",
                      is_error=True, args={"command": "python x.py"})
    msgs += read_step(11, content="FAILED t::a\n1 failed", name="bash", is_error=True, args={"command": "pytest -q"})
    msgs += read_step(12, content="3 passed", name="bash", args={"command": "pytest -q"})
    msgs += read_step(13, content="Error: no such file late.py", name="bash", is_error=True,
                      args={"command": "python late.py"})
    msgs += read_step(14, content="Error: invalid arguments for read", name="read", is_error=True)
    msgs += history(6)[1:]
    r = compact(msgs, summarize=ok_summary, keep_last=4, plan_markdown="1. [ ] step one (a.py)")
    assert r.ok
    text = r.summary_message.content
    assert "1. [ ] step one (a.py)" in text
    assert "no such file late.py" in text  # after the last passing test: unresolved, verbatim
    assert "invalid arguments for read" not in text  # a refused or malformed call is no state of the code
    assert "ValueError: early" not in text  # resolved by the later passing run
    assert "widest run, latest: `pytest -q` -> passing (3 passed)" in text


def test_error_outputs_capped():
    long_err = "Error: " + "e" * 10000
    msgs = history(3) + read_step(10, content=long_err, name="bash", is_error=True, args={"command": "make"}) \
        + history(6)[1:]
    r = compact(msgs, summarize=ok_summary, keep_last=4, error_output_cap_chars=500)
    assert r.ok and "characters left out" in r.summary_message.content
    assert len(r.summary_message.content) < 2000


def test_recompaction_carries_pinned_user_messages_without_nesting():
    msgs = history(10) + [UserMessage(content="LATER: also support json")] + history(10)[1:]
    first = compact(msgs, summarize=ok_summary, keep_last=4)
    assert first.ok
    grown = first.view + [UserMessage(content="THIRD: add docs")] + history(10)[1:]
    second = compact(grown, summarize=ok_summary, keep_last=4)
    assert second.ok
    text = second.summary_message.content
    for needle in ("TASK: port the loader to TOML", "LATER: also support json", "THIRD: add docs"):
        assert text.count(needle) == 1
    assert text.count(SUMMARY_HEADER) == 1
    check_view(second.view)


def test_summary_request_shape_and_focus():
    req = summary_request(history(2)[:3], focus="the TOML parser")
    assert [m["role"] for m in req] == ["system", "user"]
    for section in ("## Task", "## Progress", "## Decisions", "## Errors", "## Files", "## State"):
        assert section in req[0]["content"]
    assert "the TOML parser" in req[0]["content"] and "read(" in req[1]["content"]


def test_cap_middle():
    text = "\n".join(f"line {i}" for i in range(1000))
    out = cap_middle(text, 300)
    assert len(out) < 400 and out.startswith("line 0") and out.endswith("line 999")
    assert cap_middle("short", 300) == "short" and cap_middle(text, 0) == text


def test_pruning_and_aggregation_run_in_the_same_pass():
    msgs = [UserMessage(content="u1"), AssistantMessage(content="<think>r</think>" + "hi " * 1000), UserMessage(content="u2"),
            AssistantMessage(content="<think>r2</think>ok"), UserMessage(content="u3"),
            AssistantMessage(content="<think>r3</think>fine"), UserMessage(content="u4"),
            AssistantMessage(content="<think>r4</think>sure"), UserMessage(content="u5")]
    for i in range(6):
        msgs += read_step(i, content="ok", name="edit", args={"path": "a.py"})
    r = compact(msgs, summarize=ok_summary, keep_last=100, strip_reasoning_after_turns=1, min_saving=0.0)
    # nothing older than the kept part to summarise: the pruned and aggregated view is the result
    assert r.ok and r.summary_message is None and len(r.aggregated_ids) == 8 and r.summarized_ids == []
    assert compact(msgs, summarize=ok_summary, keep_last=100, strip_reasoning_after_turns=1, min_saving=0.5).ok is False
    # After aggregation 13 messages remain; keep 11 -> u1, a1 and u2 (pinned) are summarised.
    r = compact(msgs, summarize=ok_summary, keep_last=11, strip_reasoning_after_turns=1, min_saving=0.0)
    assert r.ok and len(r.aggregated_ids) == 8
    assert r.pruned_ids == [msgs[3].id, msgs[5].id, msgs[7].id]
    assert r.view[1].content == "ok" and r.view[1].id == msgs[3].id
    check_view(r.view)


def test_adjacent_user_messages_at_the_split_are_both_pinned():
    msgs = history(10) + [UserMessage(content="U1"), UserMessage(content="U2")] + read_step(99)
    r = compact(msgs, summarize=ok_summary, keep_last=4)
    assert r.ok
    assert isinstance(r.view[1], AssistantMessage)
    assert "U1" in r.view[0].content and "U2" in r.view[0].content
