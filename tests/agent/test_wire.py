"""Records repaired and converted to request dicts once each (issue 18: a request's cost must not
grow with the conversation), the same dicts a full repair gives, and providers that edit what
they send work on copies."""

from __future__ import annotations

import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.context.repair import repair_history
from agent.loop.wire import RequestHistory
from agent.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from agent.providers.base import ModelRequest, ProviderError, detached_messages
from agent.providers.litellm_loader import load_litellm
from agent.providers.litellm_provider import LiteLLMProvider
from tests.history_strategies import build, events


def history(pairs: int) -> list:
    records = []
    for i in range(pairs):
        records.append(UserMessage(content=f"question {i}"))
        call = ToolCall(id=f"call_{i}", name="read", arguments=f'{{"path": "f{i}.py"}}')
        records.append(AssistantMessage(content=None, reasoning_content=f"thinking {i}", tool_calls=[call]))
        records.append(ToolResultMessage(tool_call_id=f"call_{i}", name="read", content=f"text of f{i}.py"))
        records.append(AssistantMessage(content=f"answer {i}", reasoning_content="done"))
    return records


def direct(records, include_reasoning):
    return [r.to_openai(include_reasoning=include_reasoning) if isinstance(r, AssistantMessage) else r.to_openai()
            for r in records]


@pytest.mark.parametrize("include_reasoning", [False, True])
def test_the_dicts_are_what_to_openai_returns_and_are_reused(include_reasoning) -> None:
    records = history(30)
    cache = RequestHistory()
    first = cache.messages(records, include_reasoning)
    assert first == direct(records, include_reasoning)
    records.append(UserMessage(content="one more"))
    second = cache.messages(records, include_reasoning)
    assert second == direct(records, include_reasoning)
    assert all(a is b for a, b in zip(first, second))  # converted once, not per request


def test_a_replaced_record_and_a_changed_flag_are_converted_again() -> None:
    records = history(3)
    cache = RequestHistory()
    before = cache.messages(records, False)
    assert "reasoning_content" not in before[1]
    replaced = records[3].model_copy(update={"content": "a rewritten answer"})  # same id
    records[3] = replaced
    after = cache.messages(records, False)
    assert after[3]["content"] == "a rewritten answer"
    with_reasoning = cache.messages(records, True)
    assert with_reasoning[1]["reasoning_content"] == "thinking 0"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(evs=events, cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=8), data=st.data())
def test_a_growing_view_gives_what_a_full_repair_gives(evs, cuts, data) -> None:
    """Views that grow (from random histories, valid or not, cut anywhere, even after a tool
    call or between its results), a view replaced by a shorter one, a record replaced in place,
    the reasoning flag switched: always the dicts of repairing the whole view."""
    records = build(evs)
    builder = RequestHistory()
    reasoning = False
    for cut in sorted(cuts) + [len(records)]:
        if data.draw(st.booleans()) and records:  # now and then: a record replaced, or a shorter view
            if data.draw(st.booleans()):
                at = data.draw(st.integers(min_value=0, max_value=len(records) - 1))
                records[at] = records[at].model_copy()
            else:
                cut = data.draw(st.integers(min_value=0, max_value=cut))
        if data.draw(st.integers(min_value=0, max_value=5)) == 0:
            reasoning = not reasoning
        view = records[:cut]
        assert builder.messages(view, reasoning) == direct(repair_history(view), reasoning)


def test_appended_records_are_repaired_alone() -> None:
    """The second request repairs only what was appended: a history whose first part is
    already repaired is not walked again (the records' dicts are the same objects)."""
    records = history(200)
    builder = RequestHistory()
    first = builder.messages(records, False)
    records += [UserMessage(content="next")]
    second = builder.messages(records, False)
    assert len(second) == len(first) + 1 and all(a is b for a, b in zip(first, second))
    assert second[-1] == {"role": "user", "content": "next"}


def test_detached_copies_can_be_edited_without_touching_the_originals() -> None:
    records = history(2)
    originals = direct(records, False) + [{"role": "user", "content": [{"type": "text", "text": "parts"}]}]
    snapshot = [dict(m) for m in originals]
    copies = detached_messages(originals)
    assert copies == originals
    copies[1]["tool_calls"][0]["function"]["arguments"] = "{}"
    copies[1]["tool_calls"].append({"id": "x"})
    copies[0]["content"] = "changed"
    copies[-1]["content"][0]["text"] = "changed"
    assert originals[0]["content"] == "question 0"
    assert originals[1]["tool_calls"] == [{"id": "call_0", "type": "function",
                                          "function": {"name": "read", "arguments": '{"path": "f0.py"}'}}]
    assert originals[-1]["content"][0]["text"] == "parts"
    assert [m.keys() for m in originals] == [m.keys() for m in snapshot]


def test_litellm_editing_the_messages_it_is_given_does_not_change_the_request(monkeypatch) -> None:
    """litellm changes some message dicts in place (validate_and_fix_openai_messages); the next
    request reuses the same dicts, so the provider must hand it copies."""
    litellm = load_litellm()

    def editing_completion(**kwargs):
        for message in kwargs["messages"]:
            message["content"] = "edited by the library"
            for call in message.get("tool_calls") or []:
                call["function"]["arguments"] = "{}"
        raise litellm.RateLimitError("slow down", llm_provider="openai", model="gpt-4.1")

    monkeypatch.setattr(litellm, "completion", editing_completion)
    messages = direct(history(2), False)
    expected = [dict(m, tool_calls=[dict(c, function=dict(c["function"])) for c in m["tool_calls"]])
                if "tool_calls" in m else dict(m) for m in messages]
    request = ModelRequest(model="openai/gpt-4.1", messages=messages)
    with pytest.raises(ProviderError):
        list(LiteLLMProvider().stream(request, threading.Event()))
    assert request.messages == expected
