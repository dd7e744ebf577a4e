"""Reasoning goes back to the provider by capability (model info, reasoning seen in a reply,
or config), not by the ``deepseek/`` prefix of the model name."""

from __future__ import annotations

import threading

import pytest

from tests.helpers import Recorder, make_session

READ_WITH_REASONING = {"reasoning_content": "I should read a.py first.",
                       "tool_calls": [{"name": "read", "arguments": {"path": "a.py"}, "id": "c1"}]}


def _assistant_sent(provider, request_index: int) -> dict:
    return next(m for m in provider.requests[request_index].messages if m["role"] == "assistant")


@pytest.mark.parametrize("model", ["openai/deepseek-reasoner", "openai/local-thinker"])
def test_reasoning_is_sent_back_once_an_openai_compatible_model_streams_it(tmp_path, model):
    session, provider = make_session(tmp_path, [READ_WITH_REASONING, {"content": "x is 1"}],
                                     files={"a.py": "x = 1\n"}, model=model)
    result = session.run_turn("look", Recorder(), threading.Event())
    assert result.stop_reason == "done"
    assert _assistant_sent(provider, 1)["reasoning_content"] == "I should read a.py first."
    assert session.agent.budget.include_reasoning  # counted as sent


def test_reasoning_is_not_sent_back_when_configured_off(tmp_path):
    session, provider = make_session(tmp_path, [READ_WITH_REASONING, {"content": "x is 1"}],
                                     files={"a.py": "x = 1\n"}, model="openai/deepseek-reasoner",
                                     send_reasoning="off")
    session.run_turn("look", Recorder(), threading.Event())
    assert "reasoning_content" not in _assistant_sent(provider, 1)


@pytest.mark.parametrize("model,setting,expected", [
    ("deepseek/deepseek-reasoner", "auto", True),   # litellm: supports_reasoning
    ("openai/o3", "auto", True),                    # litellm: supports_reasoning
    ("anthropic/claude-sonnet-4-5", "auto", False), # reasons, in Anthropic's own thinking format
    ("openai/gpt-4.1", "auto", False),
    ("openai/deepseek-reasoner", "auto", True),     # unknown to litellm: the name says it reasons
    ("openai/local-thinker", "auto", False),        # nothing known: learnt from its replies
    ("openai/gpt-4.1", "on", True),
    ("deepseek/deepseek-reasoner", "off", False),
])
def test_reasoning_back_is_decided_by_model_info_or_config(tmp_path, model, setting, expected):
    session, _ = make_session(tmp_path, [], model=model, send_reasoning=setting, prepare=True)
    assert session.agent.config.send_reasoning_back is expected
    assert session.agent.config.learn_reasoning_back is (setting == "auto")
