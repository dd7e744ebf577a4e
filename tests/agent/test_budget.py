"""The context budget (agent/context/budget.py): characters/4 estimates, per-message caching, the
non-OpenAI safety margin and reconciliation with reported usage (case C22)."""

from __future__ import annotations

import math

import pytest

from agent.context import budget as budget_mod
from agent.context.budget import (
    MESSAGE_OVERHEAD_TOKENS,
    NON_OPENAI_MARGIN,
    BudgetEstimate,
    ContextBudget,
    chars_to_tokens,
    is_openai_model,
    message_chars,
    message_tokens,
)
from agent.messages import AssistantMessage, ToolCall, ToolResultMessage, Usage, UserMessage

TOOLS = [{"type": "function", "function": {"name": "read", "description": "Read a file.",
                                           "parameters": {"type": "object", "properties": {}}}}]
SYSTEM = "You are a coding agent." * 10


def history(steps: int = 5) -> list:
    out: list = [UserMessage(content="fix the failing test in src/app.py")]
    for i in range(steps):
        call = ToolCall(id=f"call_{i}", name="bash", arguments=f'{{"command": "pytest -q -k t{i}"}}')
        out.append(AssistantMessage(content=f"step {i}", tool_calls=[call]))
        out.append(ToolResultMessage(tool_call_id=call.id, name="bash", content="x" * (100 * i + 7)))
    return out


def fixed_tokens(system: str = SYSTEM, tools=TOOLS) -> int:
    import json

    tools_json = json.dumps(tools, separators=(",", ":"), ensure_ascii=False)
    return chars_to_tokens(len(system)) + MESSAGE_OVERHEAD_TOKENS + chars_to_tokens(len(tools_json))


# -- units -------------------------------------------------------------------------------------


def test_chars_to_tokens_rounds_up():
    assert [chars_to_tokens(n) for n in (0, 1, 3, 4, 5, 8, 9)] == [0, 1, 1, 1, 2, 2, 3]
    assert chars_to_tokens(-3) == 0


def test_message_chars_counts_what_is_sent():
    call = ToolCall(id="c1", name="read", arguments='{"path": "a.py"}')
    assistant = AssistantMessage(content="hi", reasoning_content="thinking...", tool_calls=[call])
    assert message_chars(assistant) == 2 + len("c1") + len("read") + len('{"path": "a.py"}')
    assert message_chars(assistant, include_reasoning=True) == message_chars(assistant) + len("thinking...")
    assert message_chars(ToolResultMessage(tool_call_id="c1", name="read", content="abc")) == 3 + 2
    assert message_chars(UserMessage(content="héllo")) == 5  # characters, not bytes
    assert message_tokens(UserMessage(content="héllo")) == 2 + MESSAGE_OVERHEAD_TOKENS
    with pytest.raises(TypeError):
        message_chars(object())  # type: ignore[arg-type]


@pytest.mark.parametrize("model, expected", [
    ("openai/gpt-4.1", True), ("gpt-4o", True), ("o3-mini", True), ("azure/my-deployment", True),
    ("openrouter/openai/gpt-4o", True), ("anthropic/claude-sonnet-4", False),
    ("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", False), ("gemini/gemini-2.0-flash", False),
    ("ollama/llama3", False), ("embedded/smollm2", False), ("deepseek/deepseek-chat", False), (None, False),
])
def test_is_openai_model(model, expected):
    assert is_openai_model(model) is expected


def test_margin_follows_the_model_and_can_be_overridden():
    assert ContextBudget("openai/gpt-4.1").margin == 1.0
    assert ContextBudget("anthropic/claude-sonnet-4").margin == NON_OPENAI_MARGIN == 1.15
    assert ContextBudget(None).margin == NON_OPENAI_MARGIN
    assert ContextBudget("openai/gpt-4.1", margin=1.3).margin == 1.3
    with pytest.raises(ValueError):
        ContextBudget(margin=0.9)


# -- estimates ---------------------------------------------------------------------------------


def test_estimate_is_chars_over_four_per_part_and_approximate():
    msgs = history()
    est = ContextBudget("openai/gpt-4.1").estimate(SYSTEM, msgs, TOOLS)
    expected = fixed_tokens() + sum(chars_to_tokens(message_chars(m)) + MESSAGE_OVERHEAD_TOKENS for m in msgs)
    assert isinstance(est, BudgetEstimate)
    assert est.tokens == expected == est.estimated_tokens
    assert est.approximate and est.reported_tokens is None and est.margin == 1.0


def test_non_openai_estimate_carries_the_margin():
    msgs = history()
    raw = ContextBudget("openai/gpt-4.1").estimate(SYSTEM, msgs, TOOLS).tokens
    est = ContextBudget("anthropic/claude-sonnet-4").estimate(SYSTEM, msgs, TOOLS)
    assert est.tokens == math.ceil(raw * 1.15)
    assert est.approximate and est.margin == 1.15


def test_each_message_is_measured_once(monkeypatch):
    measured = []
    real = budget_mod.message_tokens

    def counting(message, **kw):
        measured.append(message.id)
        return real(message, **kw)

    monkeypatch.setattr(budget_mod, "message_tokens", counting)
    meter = ContextBudget("openai/gpt-4.1")
    msgs = history(20)
    first = meter.estimate(SYSTEM, msgs, TOOLS)
    assert sorted(measured) == sorted(m.id for m in msgs)
    measured.clear()
    assert meter.estimate(SYSTEM, msgs, TOOLS) == first
    assert measured == []
    msgs.append(UserMessage(content="and now the docs"))
    meter.estimate(SYSTEM, msgs, TOOLS)
    assert measured == [msgs[-1].id]
    # Every message counted once in the total: equal to a fresh meter's figure.
    assert meter.estimate(SYSTEM, msgs, TOOLS) == ContextBudget("openai/gpt-4.1").estimate(SYSTEM, msgs, TOOLS)


def test_rewritten_history_is_not_served_from_a_stale_sum():
    meter = ContextBudget("openai/gpt-4.1")
    msgs = history(10)
    meter.estimate(SYSTEM, msgs, TOOLS)
    rewritten = [UserMessage(content="summary of earlier work")] + msgs[-4:]  # as after a compaction
    assert meter.estimate(SYSTEM, rewritten, TOOLS) == ContextBudget("openai/gpt-4.1").estimate(SYSTEM, rewritten, TOOLS)
    # A record replaced in place by a copy with the same id but other content is measured again.
    copy = msgs[3].model_copy(update={"content": "y" * 5000})
    changed = msgs[:3] + [copy] + msgs[4:]
    assert copy.id == msgs[3].id
    assert meter.estimate(SYSTEM, changed, TOOLS) == ContextBudget("openai/gpt-4.1").estimate(SYSTEM, changed, TOOLS)


def test_system_prompt_and_tools_count():
    meter = ContextBudget("openai/gpt-4.1")
    base = meter.estimate("", [], None).tokens
    assert base == MESSAGE_OVERHEAD_TOKENS + chars_to_tokens(2)  # empty prompt, "[]" tools
    assert meter.estimate("x" * 400, [], None).tokens == base + 100
    assert meter.estimate("", [], TOOLS).tokens > base


# -- reconciliation ----------------------------------------------------------------------------


def test_reconciled_figure_replaces_the_local_estimate():
    meter = ContextBudget("openai/gpt-4.1")
    msgs = history(3)
    local = meter.estimate(SYSTEM, msgs, TOOLS)
    meter.reconcile(local.tokens + 123, len(msgs))
    assert meter.used_prompt_tokens == local.tokens + 123
    again = meter.estimate(SYSTEM, msgs, TOOLS)
    assert again.tokens == local.tokens + 123
    assert not again.approximate and again.reported_tokens == local.tokens + 123 and again.estimated_tokens == 0
    new = [AssistantMessage(content="done"), UserMessage(content="thanks, one more thing")]
    msgs += new
    later = meter.estimate(SYSTEM, msgs, TOOLS)
    assert later.tokens == local.tokens + 123 + sum(message_tokens(m) for m in new)
    assert later.approximate


def test_reconcile_is_dropped_when_the_prefix_or_prompt_changes():
    meter = ContextBudget("openai/gpt-4.1")
    msgs = history(3)
    meter.estimate(SYSTEM, msgs, TOOLS)
    meter.reconcile(99_999, len(msgs))
    fresh = ContextBudget("openai/gpt-4.1")
    compacted = [UserMessage(content="summary")] + msgs[-2:]
    assert meter.estimate(SYSTEM, compacted, TOOLS) == fresh.estimate(SYSTEM, compacted, TOOLS)
    assert meter.estimate(SYSTEM + " changed", msgs, TOOLS).tokens != 99_999
    assert meter.estimate(SYSTEM, msgs, TOOLS).tokens == 99_999
    meter.reset()
    assert meter.used_prompt_tokens is None
    assert meter.estimate(SYSTEM, msgs, TOOLS).approximate


def test_reconcile_with_explicit_messages_and_bad_input():
    meter = ContextBudget("openai/gpt-4.1")
    msgs = history(2)
    meter.estimate(SYSTEM, msgs, TOOLS)
    meter.reconcile(500, 2, messages=msgs)  # the call covered only the first two messages
    est = meter.estimate(SYSTEM, msgs, TOOLS)
    assert est.tokens == 500 + sum(message_tokens(m) for m in msgs[2:])
    with pytest.raises(ValueError):
        meter.reconcile(-1, 0)
    with pytest.raises(ValueError):
        meter.reconcile(10, len(msgs) + 1)


def test_large_history_sum_stays_exact_across_turns():
    meter = ContextBudget("anthropic/claude-sonnet-4")
    msgs = history(400)  # 1201 messages
    for turn in range(5):
        msgs += history(1)[1:]
        est = meter.estimate(SYSTEM, msgs, TOOLS)
        raw = fixed_tokens() + sum(message_tokens(m) for m in msgs)
        assert est.tokens == math.ceil(raw * 1.15)


# -- case C22 ----------------------------------------------------------------------------------


def test_c22_non_openai_estimate_is_approximate_then_reconciled_with_reported_usage():
    """C22 (litellm issue 8140): a local count for a Bedrock Claude model differs from what the
    provider reports. Before the call the estimate is flagged approximate and carries the margin;
    after the (mocked) usage the used figure is exactly the reported prompt tokens, and the figure
    a compaction trigger reads is the reported number plus estimates of newer messages."""
    model = "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0"
    messages = [UserMessage(content="happiness")]
    meter = ContextBudget(model)

    before = meter.estimate("", messages, [])
    unmargined = ContextBudget(model, margin=1.0).estimate("", messages, []).tokens
    assert before.approximate
    assert before.margin == 1.15 and before.tokens == math.ceil(unmargined * 1.15)
    assert meter.used_prompt_tokens is None

    local = unmargined  # what a generic (OpenAI-style) counter would say
    mock_usage = Usage(prompt_tokens=local + 7, completion_tokens=5)  # any value != local
    meter.reconcile(mock_usage.prompt_tokens, len(messages))
    assert meter.used_prompt_tokens == mock_usage.prompt_tokens

    after = meter.estimate("", messages, [])
    assert after.tokens == mock_usage.prompt_tokens and not after.approximate  # not the stale local count

    reply = AssistantMessage(content="Happiness is a state of well-being.", usage=mock_usage)
    follow_up = UserMessage(content="and in French?")
    messages += [reply, follow_up]
    trigger_input = meter.estimate("", messages, [])
    new_part = math.ceil((message_tokens(reply) + message_tokens(follow_up)) * 1.15)
    assert trigger_input.tokens == mock_usage.prompt_tokens + new_part
    assert trigger_input.reported_tokens == mock_usage.prompt_tokens
    assert trigger_input.approximate  # the new messages are still local estimates
    # A threshold check on this figure sees more than the stale local count would have.
    stale_local = ContextBudget(model).estimate("", messages, []).tokens
    assert stale_local < trigger_input.tokens


def test_litellm_token_counter_plugs_in_offline():
    """With litellm's tokenizer plugged in, counts follow it (no network: offline switches set)."""
    from agent.context.budget import ContextBudget
    from agent.messages import UserMessage
    from agent.providers.model_info import token_counter_for

    count = token_counter_for("openai/gpt-4.1")
    text = "hello world " * 100
    assert count(text) == 200 or 190 <= count(text) <= 210
    budget = ContextBudget("openai/gpt-4.1", text_counter=count)
    msg = UserMessage(content=text)
    assert budget.message_tokens(msg) == count(text) + 4
    est = budget.estimate("system", [msg], [])
    assert est.approximate and est.tokens >= count(text)


def test_a_failing_counter_falls_back_to_characters():
    from agent.context.budget import ContextBudget
    from agent.messages import UserMessage

    def broken(text):
        raise RuntimeError("tokenizer unavailable")

    budget = ContextBudget("openai/gpt-4.1", text_counter=broken)
    assert budget.message_tokens(UserMessage(content="x" * 400)) == 100 + 4


def test_the_loop_counts_reasoning_when_it_is_sent_back(tmp_path):
    """DeepSeek gets its reasoning back in every request: the budget must count it too."""
    from agent.config import Settings
    from agent.providers.scripted import ScriptedProvider
    from agent.runtime import build_session

    for model, counted in (("deepseek/deepseek-reasoner", True), ("openai/gpt-4.1", False)):
        session = build_session(tmp_path, Settings(model=model), provider=ScriptedProvider([]), interactive=False)
        session.prepare()
        assert session.agent.budget.include_reasoning is counted
        session.close()
