"""The litellm custom provider named ``embedded``: ``register_embedded_provider()`` makes
``litellm.completion(model="embedded/smollm2-135m", ..., stream=True)`` answer through the
process-wide ``EmbeddedRuntime``, streaming OpenAI-format chunks (tool calls as
``delta.tool_calls``, text as ``delta.content``).
"""

from __future__ import annotations

import threading
import uuid
from typing import Any, Iterator

from .model import PROVIDER_NAME, EmbeddedModelMissing
from .runtime import ContextTooLong, configure, get_runtime

# --------------------------------------------------------------------------- litellm glue


def _litellm_error(exc: BaseException, model: str) -> Exception:
    """Map our failures to litellm exceptions, which litellm passes through unchanged (a plain
    exception raised from a custom provider surfaces as a retryable connection error)."""
    import litellm

    if isinstance(exc, EmbeddedModelMissing):
        return litellm.NotFoundError(message=str(exc), model=model, llm_provider=PROVIDER_NAME)
    if isinstance(exc, ContextTooLong):
        return litellm.ContextWindowExceededError(message=str(exc), model=model,
                                                  llm_provider=PROVIDER_NAME)
    return litellm.BadRequestError(message=f"embedded model failed: {exc}", model=model,
                                   llm_provider=PROVIDER_NAME)


def _chunks(events: Iterator[dict[str, Any]], model: str) -> Iterator[dict[str, Any]]:
    """Turn ``EmbeddedRuntime.reply`` events into litellm ``GenericStreamingChunk`` dicts."""
    try:
        for event in events:
            if event["type"] == "text":
                yield {"text": event["text"], "tool_use": None, "is_finished": False,
                       "finish_reason": "", "usage": None, "index": 0}
            elif event["type"] == "tool_call":
                yield {
                    "text": "",
                    "tool_use": {
                        "id": "call_" + uuid.uuid4().hex[:24],
                        "type": "function",
                        "function": {"name": event["name"], "arguments": event["arguments"]},
                        "index": 0,
                    },
                    "is_finished": False, "finish_reason": "", "usage": None, "index": 0,
                }
            else:
                prompt, completion = event["prompt_tokens"], event["completion_tokens"]
                yield {"text": "", "tool_use": None, "is_finished": True,
                       "finish_reason": event["finish_reason"],
                       "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                 "total_tokens": prompt + completion},
                       "index": 0}
    except Exception as exc:
        if type(exc).__module__.startswith("litellm"):
            raise
        raise _litellm_error(exc, model) from exc


def _request_events(messages: list, optional_params: dict) -> Iterator[dict[str, Any]]:
    runtime = get_runtime()
    runtime.model()  # load now so a missing model fails at call time, not mid-stream
    return runtime.reply(
        messages,
        optional_params.get("tools"),
        max_tokens=optional_params.get("max_tokens") or optional_params.get("max_completion_tokens"),
        temperature=optional_params.get("temperature"),
    )


def _make_handler() -> Any:
    """Build the ``litellm.CustomLLM`` instance (the class needs litellm, imported lazily)."""
    import litellm

    class EmbeddedLLM(litellm.CustomLLM):
        """litellm custom provider ``embedded``: runs the request on the local SmolLM2 model."""

        def streaming(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:  # type: ignore[override]
            """Return an iterator of ``GenericStreamingChunk`` dicts for one request."""
            optional_params = kwargs.get("optional_params") or {}
            try:
                events = _request_events(messages, optional_params)
            except Exception as exc:
                raise _litellm_error(exc, model) from exc
            return _chunks(events, model)

        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            """Run one request to the end and return a ``litellm.ModelResponse``."""
            optional_params = kwargs.get("optional_params") or {}
            text, calls, finish, usage = "", [], "stop", {}
            try:
                for event in _request_events(messages, optional_params):
                    if event["type"] == "text":
                        text += event["text"]
                    elif event["type"] == "tool_call":
                        calls.append({"id": "call_" + uuid.uuid4().hex[:24], "type": "function",
                                      "function": {"name": event["name"],
                                                   "arguments": event["arguments"]}})
                    else:
                        finish = event["finish_reason"]
                        usage = {"prompt_tokens": event["prompt_tokens"],
                                 "completion_tokens": event["completion_tokens"],
                                 "total_tokens": event["prompt_tokens"] + event["completion_tokens"]}
            except Exception as exc:
                raise _litellm_error(exc, model) from exc
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = calls
            return litellm.ModelResponse(
                model=model,
                choices=[{"index": 0, "message": message, "finish_reason": finish}],
                usage=litellm.Usage(**usage) if usage else None,
            )

        async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            """Async variant of ``completion`` (runs it in a worker thread)."""
            import asyncio

            return await asyncio.to_thread(self.completion, model, messages, *args, **kwargs)

        async def astreaming(self, model: str, messages: list, *args: Any, **kwargs: Any):  # type: ignore[override]
            """Async variant of ``streaming`` (each chunk is produced in a worker thread)."""
            import asyncio

            iterator = await asyncio.to_thread(self.streaming, model, messages, *args, **kwargs)
            done = object()
            while True:
                chunk = await asyncio.to_thread(next, iterator, done)
                if chunk is done:
                    return
                yield chunk

    return EmbeddedLLM()


_register_lock = threading.Lock()
_handler: Any = None


def register_embedded_provider(**config: Any) -> None:
    """Register the ``embedded`` custom provider with litellm (idempotent).

    Call it after litellm is imported (the lead's litellm wrapper does). Keyword arguments, all
    optional, update the runtime's ``EmbeddedConfig`` (``context_tokens``, ``max_reply_tokens``,
    ``prompt_budget_tokens``, ``max_tool_steps``, ``n_threads``, ``temperature``). The model is
    not loaded here; the first request loads it (about 0.3 s, 98 MB).
    """
    global _handler
    import litellm

    if config:
        configure(**config)
    with _register_lock:
        if _handler is None:
            _handler = _make_handler()
        entries = [e for e in (litellm.custom_provider_map or [])
                   if not (isinstance(e, dict) and e.get("provider") == PROVIDER_NAME)]
        entries.append({"provider": PROVIDER_NAME, "custom_handler": _handler})
        litellm.custom_provider_map = entries
        # litellm adds custom_provider_map entries to its provider lists in custom_llm_setup()
        # (it also runs it on every call); run it now so model lookups work before the first call.
        setup = getattr(litellm.utils, "custom_llm_setup", None)
        if callable(setup):
            setup()
        elif PROVIDER_NAME not in litellm._custom_providers:
            litellm._custom_providers.append(PROVIDER_NAME)
