"""Reasoning pruning: tags, code spans, turn counting, reasoning_content, provider opt-out."""

from __future__ import annotations

import pytest

from agent.context.pruning import REASONING_PLACEHOLDER, code_spans, prune_reasoning, strip_think_tags
from agent.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage


@pytest.mark.parametrize("text, expected", [
    ("<think>a</think>answer", "answer"),
    ("<think>a</think>\n\nanswer", "answer"),
    ("x <think>a</think>y <think>b</think>z", "x y z"),
    ("<think>unclosed answer", "unclosed answer"),
    ("<THINKING>a</THINKING>B", "B"),
    ("reasoning here</think>the answer", "the answer"),
    ("<think>a</think>b </think> c", "b  c"),
    ("no tags at all", "no tags at all"),
    ("use `<think>` tags", "use `<think>` tags"),
    ("```\n<think>\n```\nafter", "```\n<think>\n```\nafter"),
    ("~~~xml\n<think>x\n~~~\n<think>r</think>ok", "~~~xml\n<think>x\n~~~\nok"),
    ("``a `<think>` b`` end", "``a `<think>` b`` end"),
    ("`unpaired <think>x</think>y", "`unpaired y"),
    ("```\nunclosed fence <think>", "```\nunclosed fence <think>"),
])
def test_strip_think_tags(text, expected):
    assert strip_think_tags(text) == expected


def test_code_spans_cover_inline_and_fenced():
    text = "a `b` c\n```\nd\n```\ne"
    spans = code_spans(text)
    assert [text[a:b] for a, b in spans] == ["`b`", "```\nd\n```"]


def _conv():
    return [
        UserMessage(content="u1"),
        AssistantMessage(content="<think>r1</think>a1", reasoning_content="deep r1"),
        UserMessage(content="u2"),
        AssistantMessage(content="<think>only reasoning</think>"),
        AssistantMessage(content="<think>plan</think>", tool_calls=[ToolCall(id="c1", name="read", arguments="{}")],
                         reasoning_content="rc"),
        ToolResultMessage(tool_call_id="c1", name="read", content="<think>tool text stays</think>"),
        UserMessage(content="u3"),
        AssistantMessage(content="<think>current</think>now", reasoning_content="current rc"),
    ]


def test_prunes_older_turns_only_and_keeps_ids():
    conv = _conv()
    out, ids = prune_reasoning(conv, 1)
    assert ids == [conv[1].id, conv[3].id, conv[4].id]
    assert out[1].content == "a1" and out[1].reasoning_content is None and out[1].id == conv[1].id
    assert out[3].content == REASONING_PLACEHOLDER  # never an empty text message
    assert out[4].content is None and out[4].tool_calls == conv[4].tool_calls  # tool-call message may be empty
    assert out[5] is conv[5]  # tool results are not touched
    assert out[7] is conv[7]  # the current turn is never touched
    assert conv[1].content.startswith("<think>")  # input unchanged


def test_keep_two_turns():
    conv = _conv()
    out, ids = prune_reasoning(conv, 2)
    assert ids == [conv[1].id]


def test_off_and_provider_requires_reasoning():
    conv = _conv()
    assert prune_reasoning(conv, 0) == (conv, [])
    assert prune_reasoning(conv, 1, provider_requires_reasoning=True) == (conv, [])


def test_fewer_turns_than_kept_changes_nothing():
    conv = _conv()
    assert prune_reasoning(conv, 10)[1] == []


def test_dicts_reasoning_content_removed():
    msgs = [{"role": "user", "content": "q"},
            {"role": "assistant", "content": "a", "reasoning_content": "r"},
            {"role": "user", "content": "q2"}]
    out, ids = prune_reasoning(msgs, 1)
    assert out[1] == {"role": "assistant", "content": "a"} and ids == ["#1"]
    assert msgs[1]["reasoning_content"] == "r"


def test_pruning_by_steps_reaches_into_one_long_turn_and_spares_current_signed_thinking():
    """One user turn, six assistant steps: counting steps prunes all but the last three (counting
    turns would prune nothing); dicts of the current turn that carry Anthropic thinking blocks
    keep them."""
    from agent.context.pruning import prune_reasoning as prune
    from agent.messages import AssistantMessage as A, UserMessage as U

    msgs = [U(content="one long task")] + [A(content=f"<think>r{i}</think>step {i}", reasoning_content=f"rc{i}")
                                            for i in range(6)]
    out, ids = prune(msgs, keep_last_steps=3)
    assert ids == [m.id for m in msgs[1:4]]
    assert [m.content for m in out[1:4]] == ["step 0", "step 1", "step 2"] and out[1].reasoning_content is None
    assert out[4:] == msgs[4:]
    assert prune(msgs, 3)[1] == []  # by turns: the only turn is the current one
    signed = [{"role": "user", "content": "task"}] + [
        {"role": "assistant", "content": f"a{i}", "thinking_blocks": [{"type": "thinking", "signature": "s"}]}
        for i in range(5)]
    assert prune(signed, keep_last_steps=1)[1] == []
