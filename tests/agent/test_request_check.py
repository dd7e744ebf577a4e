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
