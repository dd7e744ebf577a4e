"""The real provider: litellm streaming, normalised to ``StreamDelta`` items.

litellm is the only path to models (``openai/...``, ``anthropic/...``, ``gemini/...``,
``ollama/...``, any OpenAI-compatible ``api_base``, and our ``embedded/...`` custom provider).
Its exceptions are mapped to ``ProviderError`` kinds so the loop knows what to retry.
"""

from __future__ import annotations

import re
import os
import threading
from dataclasses import replace
from typing import Any, Iterator

from .base import ModelRequest, ProviderError, StreamDelta, detached_messages
from .litellm_loader import load_litellm
from .prompt_cache import takes_cache_control, with_cache_breakpoints
from .retry_after import retry_after_of
from .stream_watch import StreamLimits, Waiting, watch_stream


_MISSING_KEY = re.compile(r"missing (credentials|[\w ]*api[ _]key)|api_key client option must be set|no api key",
                          re.IGNORECASE)


#: What a connection that never reached a server says (refused, no route, unknown host).
_UNREACHABLE = re.compile(r"Connection error|Connection refused|Errno 111|Errno 113|Name or service not known|"
                          r"nodename nor servname|No route to host|getaddrinfo failed", re.IGNORECASE)


def _served_models_hint(api_base: str, model: str) -> str:
    """For a model the server at ``api_base`` does not know: the ids it lists, as the ``--model``
    values to use (litellm's ``openai/`` prefix comes first: through a LiteLLM proxy the id
    ``openai/NAME`` is typed ``openai/openai/NAME``)."""
    from .server_probe import server_models

    ids = server_models(api_base)
    if not ids:
        return ""
    shown = ", ".join(f"openai/{i}" for i in ids[:8]) + (" ..." if len(ids) > 8 else "")
    return f"; the server at {api_base} lists: {shown} (use one with --model; {model!r} is not among them)"


def classify_exception(exc: BaseException) -> ProviderError:
    """Map a litellm (or OpenAI-SDK style) exception to a ``ProviderError`` with one clear line,
    carrying the wait the response asked for (``retry_after_s``, seconds) when it named one."""
    error = _classify(exc)
    error.retry_after_s = retry_after_of(exc)
    return error


def _classify(exc: BaseException) -> ProviderError:
    litellm = load_litellm()
    ex = litellm.exceptions
    text = " ".join(str(exc).split())
    # litellm prefixes messages with its class names ("litellm.NotFoundError: NotFoundError: ...").
    text = re.sub(r"^(?:litellm\.\w+:\s*)+(?:\w+Error:\s*)?", "", text)
    text = text.split(" Traceback (most recent call last)")[0]
    # A mid-stream failure repeats its cause after " Original exception:": once is enough.
    text = text.split(" Original exception: ")[0]
    server = _server_message(exc)
    if server and server not in text:
        text = f"{text.removesuffix(_GENERIC_STREAM_ERROR).rstrip(' -:')} - {server}" if text.endswith(
            _GENERIC_STREAM_ERROR) else f"{text}: {server}"
    if len(text) > 300:
        text = text[:300] + "..."
    if _UNREACHABLE.search(text):  # the OpenAI SDK reports a refused connection as a 500-like error
        return ProviderError("network", f"could not reach the provider: {text}")
    if _MISSING_KEY.search(text):
        # SDKs report a missing key in different classes (500, connection error): it is never transient.
        return ProviderError("auth", f"no API key for this provider: {text}")
    table: list[tuple[str, str, str]] = [
        ("ContextWindowExceededError", "context_window", "the request exceeds the model's context window"),
        ("AuthenticationError", "auth", "authentication failed (check the API key)"),
        ("PermissionDeniedError", "auth", "permission denied by the provider"),
        ("NotFoundError", "not_found", "model not found"),
        ("RateLimitError", "rate_limit", "rate limited by the provider"),
        ("Timeout", "timeout", "the provider did not answer in time"),
        ("APIConnectionError", "network", "could not reach the provider"),
        ("ServiceUnavailableError", "server", "the provider is unavailable"),
        ("InternalServerError", "server", "the provider returned a server error"),
        ("BadGatewayError", "server", "the provider returned a server error"),
        ("BadRequestError", "bad_request", "the provider rejected the request"),
    ]
    for name, kind, label in table:
        cls = getattr(ex, name, None)
        if cls is not None and isinstance(exc, cls):
            if kind == "bad_request" and "LLM Provider NOT provided" in text:
                return ProviderError("not_found", "unknown model or provider: use a litellm model name "
                                                  "such as openai/gpt-4.1 or anthropic/claude-sonnet-4-5")
            return ProviderError(kind, f"{label}: {text}")  # type: ignore[arg-type]
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and status >= 500:
        return ProviderError("server", f"the provider returned a server error: {text}")
    return ProviderError("unknown", f"{type(exc).__name__}: {text}")


#: What the OpenAI SDK says when a stream carries an error event whose text it cannot read.
_GENERIC_STREAM_ERROR = "An error occurred during streaming"


def _server_message(exc: BaseException) -> str | None:
    """The server's own words behind ``exc``: the ``body`` of an SDK error that litellm wraps
    (a string, or ``{"message": ...}`` / ``{"error": {"message": ...}}``), at most 300
    characters on one line; ``None`` when none is found. Raises nothing."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < 8:
        seen.add(id(current))
        body = getattr(current, "body", None)
        if isinstance(body, dict):
            inner = body.get("error", body)
            body = inner.get("message") if isinstance(inner, dict) else inner
        if isinstance(body, str) and body.strip():
            return " ".join(body.split())[:300]
        current = getattr(current, "original_exception", None) or current.__cause__ or current.__context__
    return None


class LiteLLMProvider:
    """Streams a ``ModelRequest`` through ``litellm.completion(stream=True)``.

    ``timeout_s`` bounds one call (seconds); ``first_token_timeout_s`` bounds the wait for its first
    chunk and ``idle_timeout_s`` the silence between two chunks (seconds; ``stream_watch``): past
    one of them the call fails as a retryable ``timeout`` (not for ``embedded/`` models). After ``wait_notice_after_s`` seconds of
    silence the stream yields ``waiting`` deltas (one every 5 s). Usage is requested with
    ``stream_options={"include_usage": True}`` and reported when the provider sends it, with the
    prompt-cache figures litellm normalises (``prompt_tokens_details.cached_tokens``; Anthropic's
    ``cache_read_input_tokens`` / ``cache_creation_input_tokens``). For Claude models
    (``prompt_cache.takes_cache_control``) the messages sent carry ``cache_control`` breakpoints
    on the stable prefix (``prompt_cache.with_cache_breakpoints``); ``request`` is not changed.
    """

    instant_retries = False

    def __init__(self, *, timeout_s: float = 600.0, first_token_timeout_s: float = 60.0,
                 idle_timeout_s: float = 60.0, wait_notice_after_s: float = 10.0,
                 completion_kwargs: dict[str, Any] | None = None) -> None:
        self.timeout_s = timeout_s
        self.limits = StreamLimits(first_token_s=first_token_timeout_s, idle_s=idle_timeout_s,
                                   total_s=timeout_s, notice_after_s=wait_notice_after_s)
        #: Extra keyword arguments for ``litellm.completion`` (tests pass ``mock_response``).
        self.completion_kwargs = dict(completion_kwargs or {})

    def stream(self, request: ModelRequest, cancel: threading.Event) -> Iterator[StreamDelta]:
        """Yield the reply's deltas; raises ``ProviderError`` on failure."""
        litellm = load_litellm()
        # Copies: litellm edits some message dicts in place, and the request's dicts are shared
        # with later requests (``loop.wire``).
        messages = detached_messages(request.messages)
        if takes_cache_control(request.model):
            messages = with_cache_breakpoints(messages)
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": messages,
            "stream": True,
            "timeout": self.timeout_s,
            "num_retries": 0,
        }
        kwargs["stream_options"] = {"include_usage": True}
        if request.tools:
            kwargs["tools"] = request.tools
            # The OpenAI default, said explicitly: llama.cpp's server ignores `tools` without it.
            kwargs["tool_choice"] = "auto"
        if request.api_base:
            kwargs["api_base"] = request.api_base
            if request.model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
                # A local OpenAI-compatible server (llama.cpp, vLLM...) takes any key, but the
                # OpenAI client refuses to send a request without one.
                kwargs["api_key"] = "sk-no-key-needed"
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        if request.reasoning_effort is not None:  # the pipeline sends it only to models that take it
            kwargs["reasoning_effort"] = request.reasoning_effort
        kwargs.update(self.completion_kwargs)
        try:
            for item in watch_stream(lambda: litellm.completion(**kwargs), self._limits_for(request.model), cancel):
                if isinstance(item, Waiting):
                    yield StreamDelta(kind="waiting", waited_s=item.seconds, phase=item.phase)
                    continue
                yield from _chunk_deltas(item)
        except ProviderError:
            raise
        except Exception as exc:  # litellm wraps provider SDK errors in its own classes
            error = classify_exception(exc)
            if error.kind == "network" and request.api_base:
                error.message += f" (at {request.api_base})"
            elif error.kind == "not_found" and request.api_base:
                error.message += _served_models_hint(request.api_base, request.model)
            raise error from exc


    def _limits_for(self, model: str) -> StreamLimits:
        """The stream limits of a call to ``model``: the embedded local model has only the total
        limit (its first reply includes loading it, and it cannot hang like a server)."""
        if model.startswith("embedded/"):
            return replace(self.limits, first_token_s=self.limits.total_s, idle_s=self.limits.total_s)
        return self.limits


def _chunk_deltas(chunk: Any) -> Iterator[StreamDelta]:
    usage = getattr(chunk, "usage", None)
    for choice in getattr(chunk, "choices", None) or []:
        delta = getattr(choice, "delta", None)
        if delta is not None:
            reasoning = getattr(delta, "reasoning_content", None)
            if reasoning:
                yield StreamDelta(kind="reasoning", text=reasoning)
            content = getattr(delta, "content", None)
            if content:
                yield StreamDelta(kind="text", text=content)
            for tc in getattr(delta, "tool_calls", None) or []:
                fn = getattr(tc, "function", None)
                yield StreamDelta(
                    kind="tool_call",
                    index=getattr(tc, "index", 0) or 0,
                    id=getattr(tc, "id", None) or None,
                    name=(getattr(fn, "name", None) or None) if fn is not None else None,
                    arguments=(getattr(fn, "arguments", None) or "") if fn is not None else "",
                )
        finish = getattr(choice, "finish_reason", None)
        if finish:
            yield StreamDelta(kind="finish", finish_reason=finish)
    if usage is not None and (getattr(usage, "prompt_tokens", 0) or getattr(usage, "completion_tokens", 0)):
        cached, created = cache_figures(usage)
        yield StreamDelta(kind="usage", prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                          completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
                          cached_prompt_tokens=cached, cache_creation_tokens=created)


def cache_figures(usage: Any) -> tuple[int | None, int | None]:
    """Return ``(cache read tokens, cache write tokens)`` from a litellm usage object (or a dict),
    each ``None`` when the provider did not report it.

    Reads: OpenAI's ``prompt_tokens_details.cached_tokens`` (litellm also maps Anthropic's
    ``cache_read_input_tokens`` and DeepSeek's ``prompt_cache_hit_tokens`` there), else a top-level
    ``cache_read_input_tokens``. Writes: Anthropic's ``cache_creation_input_tokens``, else
    ``prompt_tokens_details.cache_write_tokens``. litellm's ``prompt_tokens`` already includes
    both, so the hit rate is reads / ``prompt_tokens``. Raises nothing."""
    details = _field(usage, "prompt_tokens_details")
    cached = _int_or_none(_field(details, "cached_tokens"))
    if cached is None:
        cached = _int_or_none(_field(usage, "cache_read_input_tokens"))
    created = _int_or_none(_field(usage, "cache_creation_input_tokens"))
    if created is None:
        created = _int_or_none(_field(details, "cache_write_tokens"))
    return cached, created


def _field(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    try:
        return getattr(obj, name, None)
    except Exception:  # a pydantic model may raise for a private or deleted field
        return None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
