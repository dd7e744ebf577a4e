"""The request checks the scripted provider runs on every request (agent.providers.request_check)."""

from __future__ import annotations

import threading

import pytest

from agent.providers import request_check
from agent.providers.base import ModelRequest
from agent.providers.request_check import InvalidRequest, request_problems
from agent.providers.scripted import ScriptedProvider

SYSTEM = {"role": "system", "content": "rules"}
USER = {"role": "user", "content": "do it"}


def call(id_: str) -> dict:
    return {"id": id_, "type": "function", "function": {"name": "read", "arguments": "{}"}}


def answered(*ids: str) -> list[dict]:
    return [{"role": "assistant", "content": "", "tool_calls": [call(i) for i in ids]},
            *({"role": "tool", "tool_call_id": i, "content": "ok"} for i in ids)]


def test_a_paired_request_passes_and_reused_ids_pair_by_position():
    assert request_problems([SYSTEM, USER, *answered("a", "b"), *answered("a"),
                             {"role": "assistant", "content": "done"}]) == []


@pytest.mark.parametrize("messages,problem", [
    ([SYSTEM, USER, *answered("a", "b")[:2]], "call 1 (id 'b') has no result"),
    ([SYSTEM, USER, *answered("a")[:1], {"role": "user", "content": "next"}], "call 0 (id 'a') has no result"),
    ([SYSTEM, USER, {"role": "tool", "tool_call_id": "x", "content": "ok"}], "orphan tool result at message 2"),
    ([SYSTEM, USER, *answered("a"), {"role": "tool", "tool_call_id": "a", "content": "again"}], "orphan"),
    ([SYSTEM, USER, answered("a", "b")[0], answered("a", "b")[2], answered("a", "b")[1]], "answered by"),
    ([SYSTEM, USER, {"role": "assistant", "content": "  "}], "message 2 (assistant) is empty"),
    ([SYSTEM, {"role": "user", "content": [{"type": "text", "text": ""}]}], "message 1 (user) is empty"),
    ([SYSTEM, {"role": "assistant", "content": "hi"}, USER], "starts with a assistant message"),
    ([SYSTEM, *answered("a"), USER], "starts with a assistant message"),
])
def test_problems_are_named(messages, problem):
    assert any(problem in p for p in request_problems(messages)), request_problems(messages)


def test_the_scripted_provider_refuses_an_invalid_request():
    provider = ScriptedProvider([{"content": "hi"}])
    request = ModelRequest(model="m", messages=[SYSTEM, USER, answered("a")[0]])
    with pytest.raises(InvalidRequest, match="invalid main request.*has no result"):
        list(provider.stream(request, threading.Event()))
    assert request_check.VIOLATIONS  # the suite's fixture fails a test that leaves one
    request_check.VIOLATIONS.clear()
    assert provider.requests == [request]


def test_a_growing_conversation_is_checked_from_where_the_last_request_ended():
    """RequestChecker (the scripted provider's): a request that repeats the last one's dicts is
    checked only after them, with the same verdict and message numbers a full check gives."""
    checker = request_check.RequestChecker()
    history = [USER, *answered("a")]
    assert checker.check([dict(SYSTEM), *history]) == 0
    history += [{"role": "assistant", "content": "done"}, {"role": "user", "content": "more"}]
    assert checker.check([dict(SYSTEM), *history]) == 4  # the system message is rebuilt per request
    bad = [dict(SYSTEM), *history, {"role": "assistant", "content": "  "}]
    with pytest.raises(InvalidRequest) as info:
        checker.check(bad)
    assert str(info.value).endswith("message 6 (assistant) is empty") and request_problems(bad) == [
        "message 6 (assistant) is empty"]
    # The bad request did not pass, so it is not a base: the next one is checked from the last good one.
    assert checker.check([dict(SYSTEM), *history, {"role": "assistant", "content": "ok"}]) == 6
    request_check.VIOLATIONS.clear()  # raised on purpose above


@pytest.mark.parametrize("tail", [
    [{"role": "tool", "tool_call_id": "a", "content": "late"}],  # a result after a passed request: orphan
    [{"role": "assistant", "content": "", "tool_calls": [call("z")]}],  # a call with no result
])
def test_what_follows_a_passed_request_is_still_caught(tail):
    checker = request_check.RequestChecker()
    history = [dict(SYSTEM), USER, *answered("a")]
    checker.check(history)
    with pytest.raises(InvalidRequest):
        checker.check([*history, *tail])
    request_check.VIOLATIONS.clear()  # raised on purpose


def test_changed_dicts_or_another_purpose_are_checked_whole():
    checker = request_check.RequestChecker()
    history = [dict(SYSTEM), USER, *answered("a")]
    checker.check(history)
    copied = [dict(m) for m in history] + [{"role": "user", "content": "next"}]
    assert checker.check(copied) == 0
    assert checker.check(history + [{"role": "user", "content": "x"}], purpose="summary") == 0
    with pytest.raises(InvalidRequest):  # a different first message (assistant) is caught
        checker.check([dict(SYSTEM), {"role": "assistant", "content": "hi"}, USER])
    request_check.VIOLATIONS.clear()  # raised on purpose
