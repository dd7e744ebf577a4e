"""Anthropic prompt-cache breakpoints and cache usage figures, offline: the marks we add, what
litellm's own Anthropic transformation makes of them, and the usage litellm reports."""

from __future__ import annotations

import copy
import threading
from types import SimpleNamespace

import pytest

from agent.providers.base import ModelRequest
from agent.providers.litellm_loader import load_litellm
from agent.providers.litellm_provider import LiteLLMProvider, _chunk_deltas, cache_figures
from agent.providers.prompt_cache import (
    EPHEMERAL, MAX_BREAKPOINTS, breakpoint_indexes, takes_cache_control, with_cache_breakpoints,
)
from agent.loop.reply import ReplyAssembler

CALL = {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"path": "a.py"}'}}
CONVERSATION = [
    {"role": "system", "content": "You are opencli-tui."},
    {"role": "user", "content": "read a.py"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "x = 1"},
    {"role": "assistant", "content": "It sets x."},
    {"role": "user", "content": "and then?"},
]


def marks(messages) -> list[int]:
    """Indexes of the messages carrying a cache_control mark (on a part or a tool call)."""
    out = []
    for index, message in enumerate(messages):
        parts = message.get("content") if isinstance(message.get("content"), list) else []
        if "cache_control" in message or any("cache_control" in p for p in parts) \
                or any("cache_control" in c for c in message.get("tool_calls") or []):
            out.append(index)
    return out


@pytest.mark.parametrize("model,expected", [
    ("anthropic/claude-sonnet-4-5", True), ("claude-3-5-haiku-20241022", True),
    ("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", True), ("vertex_ai/claude-sonnet-4@20250514", True),
    ("openai/gpt-4.1", False), ("bedrock/amazon.nova-pro-v1:0", False), ("gemini/gemini-2.5-pro", False),
    ("deepseek/deepseek-chat", False),
])
def test_which_models_get_marks(model, expected):
    assert takes_cache_control(model) is expected


def test_marks_go_on_the_system_prompt_the_end_of_the_previous_request_and_the_last_message():
    assert breakpoint_indexes(CONVERSATION) == [0, 3, 5]  # 3: the tool result before the last reply
    original = copy.deepcopy(CONVERSATION)
    marked = with_cache_breakpoints(CONVERSATION)
    assert CONVERSATION == original  # the request as built (and logged) is untouched
    assert marks(marked) == [0, 3, 5]
    assert marked[0]["content"] == [{"type": "text", "text": "You are opencli-tui.", "cache_control": EPHEMERAL}]
    assert marked[3] == {"role": "tool", "tool_call_id": "c1", "content": "x = 1", "cache_control": EPHEMERAL}
    assert marked[1] == CONVERSATION[1] and marked[2] == CONVERSATION[2]


def test_a_step_ending_in_tool_calls_marks_the_last_call_and_never_more_than_four():
    step = CONVERSATION[:3]  # system, user, assistant tool call: the end is the call
    marked = with_cache_breakpoints(step)
    assert marks(marked) == [0, 1, 2] and marked[2]["tool_calls"][0]["cache_control"] == EPHEMERAL
    assert len(breakpoint_indexes(CONVERSATION * 5)) <= MAX_BREAKPOINTS
    assert with_cache_breakpoints([]) == [] and marks(with_cache_breakpoints(CONVERSATION[:2])) == [0, 1]


def test_litellm_turns_the_marks_into_anthropic_cache_control_blocks():
    from litellm.llms.anthropic.chat.transformation import AnthropicConfig

    body = AnthropicConfig().transform_request(
        model="claude-sonnet-4-5", messages=with_cache_breakpoints(copy.deepcopy(CONVERSATION)),
        optional_params={"max_tokens": 100}, litellm_params={}, headers={})
    assert body["system"][0]["cache_control"] == EPHEMERAL
    blocks = [block for message in body["messages"] for block in message["content"]]
    cached = [block for block in blocks if "cache_control" in block]
    assert [(b["type"], b.get("text") or b.get("content")) for b in cached][-1] == ("text", "and then?")
    assert any(b["type"] == "tool_result" and b["tool_use_id"] == "c1" for b in cached)
    assert sum("cache_control" in b for b in blocks) + 1 <= MAX_BREAKPOINTS


def test_the_provider_sends_marks_to_claude_only(monkeypatch):
    litellm = load_litellm()
    sent = []

    def fake_completion(**kwargs):
        sent.append(kwargs)
        return iter([])

    monkeypatch.setattr(litellm, "completion", fake_completion)
    provider = LiteLLMProvider()
    for model in ("anthropic/claude-sonnet-4-5", "openai/gpt-4.1"):
        request = ModelRequest(model=model, messages=copy.deepcopy(CONVERSATION))
        list(provider.stream(request, threading.Event()))
        assert request.messages == CONVERSATION
    assert marks(sent[0]["messages"]) == [0, 3, 5] and marks(sent[1]["messages"]) == []
    assert sent[1]["messages"] == CONVERSATION


def test_cache_usage_from_litellm_usage_objects():
    litellm = load_litellm()
    anthropic = litellm.Usage(prompt_tokens=5000, completion_tokens=20, cache_read_input_tokens=4000,
                              cache_creation_input_tokens=600)
    assert cache_figures(anthropic) == (4000, 600)
    openai = litellm.Usage(prompt_tokens=3000, completion_tokens=5, prompt_tokens_details={"cached_tokens": 2048})
    assert cache_figures(openai) == (2048, None)
    assert cache_figures(litellm.Usage(prompt_tokens=10, completion_tokens=1)) == (None, None)
    chunk = SimpleNamespace(choices=[], usage=anthropic)
    assembler = ReplyAssembler()
    for delta in _chunk_deltas(chunk):
        assembler.add(delta)
    usage = assembler.build("anthropic/claude-sonnet-4-5").usage
    assert (usage.prompt_tokens, usage.cached_prompt_tokens, usage.cache_creation_tokens) == (5000, 4000, 600)
    assert usage.cache_hit_rate == 0.8


def test_mock_response_usage_has_no_cache_figures():
    provider = LiteLLMProvider(completion_kwargs={"mock_response": "Hello"})
    assembler = ReplyAssembler()
    for delta in provider.stream(ModelRequest(model="openai/gpt-4.1", messages=[{"role": "user", "content": "hi"}]),
                                 threading.Event()):
        assembler.add(delta)
    usage = assembler.build("openai/gpt-4.1").usage
    assert usage.prompt_tokens > 0 and usage.cached_prompt_tokens is None and usage.cache_hit_rate is None


def test_litellm_turns_the_marks_into_bedrock_cache_points():
    from litellm.llms.bedrock.chat.converse_transformation import AmazonConverseConfig

    tools = [{"type": "function", "function": {"name": "read", "description": "Read a file.",
                                               "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]
    body = AmazonConverseConfig().transform_request(
        model="anthropic.claude-3-7-sonnet-20250219-v1:0", messages=with_cache_breakpoints(copy.deepcopy(CONVERSATION)),
        optional_params={"tools": tools}, litellm_params={}, headers={})
    assert body["system"][-1] == {"cachePoint": {"type": "default"}}
    kinds = [[next(iter(block)) for block in message["content"]] for message in body["messages"]]
    assert kinds == [["text"], ["toolUse"], ["toolResult", "cachePoint"], ["text"], ["text", "cachePoint"]]
