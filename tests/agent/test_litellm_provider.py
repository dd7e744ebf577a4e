"""The litellm provider, offline: litellm's own mock responses and exception classes."""

from __future__ import annotations

import threading

import pytest

from agent.providers.base import ModelRequest, ProviderError
from agent.providers.litellm_loader import load_litellm
from agent.providers.litellm_provider import LiteLLMProvider, _chunk_deltas, classify_exception
from agent.loop.reply import ReplyAssembler


def request(model="openai/gpt-4.1"):
    return ModelRequest(model=model, messages=[{"role": "user", "content": "hi"}])


def test_streams_text_and_usage_from_mock_response():
    provider = LiteLLMProvider(completion_kwargs={"mock_response": "Hello world"})
    assembler = ReplyAssembler()
    for delta in provider.stream(request(), threading.Event()):
        assembler.add(delta)
    message = assembler.build("openai/gpt-4.1")
    assert message.content == "Hello world"
    assert message.usage is not None and message.usage.prompt_tokens > 0


def test_cancel_stops_the_stream():
    provider = LiteLLMProvider(completion_kwargs={"mock_response": "x" * 200})
    cancel = threading.Event()
    pieces = []
    for delta in provider.stream(request(), cancel):
        pieces.append(delta)
        cancel.set()
    assert len(pieces) == 1


def test_rate_limit_is_retryable():
    provider = LiteLLMProvider(completion_kwargs={"mock_response": "litellm.RateLimitError"})
    with pytest.raises(ProviderError) as info:
        list(provider.stream(request(), threading.Event()))
    assert info.value.kind == "rate_limit" and info.value.retryable


def test_unknown_provider_is_one_clear_line():
    provider = LiteLLMProvider()
    with pytest.raises(ProviderError) as info:
        list(provider.stream(request("no-such-provider-model-xyz"), threading.Event()))
    assert info.value.kind == "not_found" and not info.value.retryable
    assert "\n" not in info.value.message


@pytest.mark.parametrize("name,kind,retryable", [
    ("AuthenticationError", "auth", False),
    ("NotFoundError", "not_found", False),
    ("ContextWindowExceededError", "context_window", False),
    ("APIConnectionError", "network", True),
    ("InternalServerError", "server", True),
    ("Timeout", "timeout", True),
])
def test_exception_classification(name, kind, retryable):
    litellm = load_litellm()
    cls = getattr(litellm.exceptions, name)
    exc = cls(message="boom\nsecond line", model="openai/gpt-4.1", llm_provider="openai")
    err = classify_exception(exc)
    assert err.kind == kind and err.retryable == retryable and "\n" not in err.message


def test_tool_call_chunks_are_normalised():
    litellm = load_litellm()
    from litellm.types.utils import ChatCompletionDeltaToolCall, Delta, Function, ModelResponseStream, StreamingChoices

    def chunk(**delta):
        return ModelResponseStream(choices=[StreamingChoices(index=0, delta=Delta(**delta))])

    chunks = [
        chunk(tool_calls=[ChatCompletionDeltaToolCall(index=0, id="c1", type="function",
                                                      function=Function(name="read", arguments='{"pa'))]),
        chunk(tool_calls=[ChatCompletionDeltaToolCall(index=0, function=Function(arguments='th": "a.py"}'))]),
        chunk(reasoning_content="thinking"),
    ]
    assembler = ReplyAssembler()
    for c in chunks:
        for d in _chunk_deltas(c):
            assembler.add(d)
    message = assembler.build("m")
    assert message.tool_calls[0].id == "c1" and message.tool_calls[0].name == "read"
    assert message.tool_calls[0].parsed_arguments() == {"path": "a.py"}
    assert message.reasoning_content == "thinking"
    assert litellm.suppress_debug_info is True


def test_missing_api_key_is_a_fatal_auth_error(monkeypatch):
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    for model in ("openai/gpt-4.1", "anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-flash"):
        with pytest.raises(ProviderError) as info:
            list(LiteLLMProvider().stream(request(model), threading.Event()))
        assert info.value.kind == "auth", (model, info.value.message)
        assert not info.value.retryable and "Traceback" not in info.value.message


def test_model_names_litellm_cannot_route_are_named(tmp_path):
    from agent.config.settings import Settings
    from agent.providers.model_info import model_name_problem
    from agent.runtime.build import build_session

    for good in ("openai/gpt-4.1", "anthropic/claude-sonnet-4-5", "ollama/qwen3", "openai/my-local-model",
                 "embedded/smollm2-135m"):
        assert model_name_problem(good) is None, good
    problem = model_name_problem("gtp-5")
    assert problem is not None and "gtp-5" in problem and "provider/model" in problem and "\n" not in problem
    assert model_name_problem("  ") == "the model name is empty"

    session = build_session(tmp_path, Settings(model="openai/gpt-4.1"), interactive=False)
    try:
        session.prepare()
        with pytest.raises(ValueError, match="gtp-5"):
            session.set_model("gtp-5")
        assert session.model == "openai/gpt-4.1" and session.agent is not None
        session.set_model("anthropic/claude-sonnet-4-5")
        assert session.agent.model == "anthropic/claude-sonnet-4-5"
    finally:
        session.close()


def test_tools_are_offered_with_tool_choice_auto(monkeypatch):
    """llama.cpp's server ignores ``tools`` unless ``tool_choice`` is given: it is sent as
    ``"auto"`` (the OpenAI default) whenever tools are offered, and not without tools."""
    litellm = load_litellm()
    seen: list[dict] = []
    real = litellm.completion

    def spy(**kwargs):
        seen.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(litellm, "completion", spy)
    provider = LiteLLMProvider(completion_kwargs={"mock_response": "ok"})
    tools = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object", "properties": {}}}}]
    for req in (ModelRequest(model="openai/gpt-4.1", messages=[{"role": "user", "content": "hi"}], tools=tools),
                request()):
        list(provider.stream(req, threading.Event()))
    assert seen[0]["tool_choice"] == "auto" and "tool_choice" not in seen[1]


def test_a_refused_connection_is_a_network_error_that_names_the_server():
    """The OpenAI SDK reports a refused connection as an internal server error: it is a
    network error, and the message names the --api-base it could not reach."""
    litellm = load_litellm()
    exc = litellm.exceptions.InternalServerError(message="OpenAIException - Connection error.",
                                                 model="openai/x", llm_provider="openai")
    assert classify_exception(exc).kind == "network"
    provider = LiteLLMProvider(timeout_s=5)
    req = ModelRequest(model="openai/x", messages=[{"role": "user", "content": "hi"}],
                       api_base="http://127.0.0.1:9/v1")
    with pytest.raises(ProviderError) as info:
        list(provider.stream(req, threading.Event()))
    assert info.value.kind == "network" and "http://127.0.0.1:9/v1" in info.value.message


def test_a_stream_is_not_logged_per_chunk_nor_priced_as_it_starts(monkeypatch):
    """Issue 18: litellm's per-chunk success logging is off, and a stream is not priced when it
    starts (that counted the whole request with litellm's tokenizer); the text and the provider's
    usage still arrive, and the end of the stream is priced from the usage as before."""
    litellm = load_litellm()
    assert litellm.disable_streaming_logging is True
    import litellm.cost_calculator as cost_calculator

    priced: list[object] = []
    original = cost_calculator.completion_cost

    def spy(*args, **kwargs):
        priced.append(kwargs.get("completion_response"))
        return original(*args, **kwargs)

    monkeypatch.setattr(cost_calculator, "completion_cost", spy)
    from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper

    provider = LiteLLMProvider(completion_kwargs={"mock_response": "Hello world"})
    assembler = ReplyAssembler()
    for delta in provider.stream(request(), threading.Event()):
        assembler.add(delta)
    assert assembler.build("openai/gpt-4.1").content == "Hello world"
    assert not any(isinstance(response, CustomStreamWrapper) for response in priced)
    assert len(priced) <= 1  # at most the assembled reply, at the end


def test_background_import_loads_litellm_once():
    from agent.providers import litellm_loader

    thread = litellm_loader.start_background_import()
    thread.join(60)
    assert litellm_loader.is_loaded() and load_litellm() is litellm_loader.load_litellm()
