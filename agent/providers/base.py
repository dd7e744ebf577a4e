"""The provider contract: one streamed model call.

A provider turns a ``ModelRequest`` into a stream of ``StreamDelta`` items and raises
``ProviderError`` for failures, classified by ``kind`` so the loop knows what to retry.
"""

from __future__ import annotations

import threading
from typing import Any, Iterator, Literal, Protocol

from pydantic import BaseModel, Field, SkipValidation

ErrorKind = Literal[
    "rate_limit", "server", "auth", "not_found", "network", "timeout", "context_window", "empty",
    "bad_request", "unknown",
]

#: Error kinds worth retrying with backoff (the rest are reported at once).
RETRYABLE_KINDS: frozenset[str] = frozenset({"rate_limit", "server", "network", "timeout", "empty"})


class ProviderError(Exception):
    """A failed model call. ``kind`` classifies it; ``message`` is one line for the user;
    ``retry_after_s`` is the wait the provider asked for before a retry (seconds, from its
    ``Retry-After`` / ``retry-after-ms`` header), ``None`` when it named none."""

    def __init__(self, kind: ErrorKind, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.retry_after_s = retry_after_s

    @property
    def retryable(self) -> bool:
        """True for transient failures (rate limit, 5xx, network, timeout, empty reply)."""
        return self.kind in RETRYABLE_KINDS


class ModelRequest(BaseModel):
    """One model call exactly as sent: litellm model name, OpenAI-format messages and tools.

    ``purpose`` is ``"main"`` for the ReAct loop, ``"summary"`` for compaction calls, ``"refine"`` and
    ``"reflexion"`` for the quality pipeline's review and lesson calls (``agent.pipeline``) and
    ``"subagent"`` for a sub-agent's loop; ``task_index`` is then the sub-agent's 1-based order
    among those the parent asked for (``SubagentStarted.index``), else None.
    ``reasoning_effort``: the effort hint to send (``low``, ``medium``, ``high``), or None for none.
    """

    model: str
    #: Not validated: built by our code, and validating copied every message dict of a long history
    #: on each request (issue 18).
    messages: SkipValidation[list[dict[str, Any]]]  # shared between requests: see detached_messages
    tools: list[dict[str, Any]] = Field(default_factory=list)
    purpose: Literal["main", "summary", "refine", "reflexion", "subagent"] = "main"
    api_base: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    task_index: int | None = None


class StreamDelta(BaseModel):
    """One normalised streaming item.

    - ``kind="text"`` / ``"reasoning"``: ``text`` holds the piece.
    - ``kind="tool_call"``: a fragment of tool call number ``index``; ``id`` and ``name`` appear in
      some fragment (usually the first), ``arguments`` fragments are concatenated in order.
    - ``kind="usage"``: ``prompt_tokens`` / ``completion_tokens`` as reported by the provider, and
      ``cached_prompt_tokens`` (read from the prompt cache, part of ``prompt_tokens``) /
      ``cache_creation_tokens`` (written to it) when the provider reports them (``None`` if not).
    - ``kind="finish"``: ``finish_reason`` (``stop``, ``tool_calls``, ``length``...).
    - ``kind="waiting"``: nothing has arrived for ``waited_s`` seconds; ``phase`` is
      ``first_token`` (no chunk yet since the request was sent) or ``next_chunk`` (the stream
      went quiet). Not part of the reply: the loop shows it as a notice.
    """

    kind: Literal["text", "reasoning", "tool_call", "usage", "finish", "waiting"]
    text: str = ""
    index: int = 0
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int | None = None
    cache_creation_tokens: int | None = None
    finish_reason: str | None = None
    waited_s: float = 0.0
    phase: Literal["", "first_token", "next_chunk"] = ""


class Provider(Protocol):
    """Anything that can stream a model call."""

    #: True for the scripted provider in replay mode: retries do not sleep.
    instant_retries: bool

    def stream(self, request: ModelRequest, cancel: threading.Event) -> Iterator[StreamDelta]:
        """Yield the reply's deltas; stop early when ``cancel`` is set.

        Raises ``ProviderError`` (before or during the stream) on failure.
        """
        ...


def detached_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``messages`` (OpenAI dicts) that a provider may change in place without changing
    the originals (``ModelRequest.messages`` are shared between requests: ``loop.wire``): each
    dict copied, with its ``tool_calls`` (and their ``function``) and list ``content`` parts
    copied too; strings and numbers are shared (immutable)."""
    out = []
    for message in messages:
        copy = dict(message)
        calls = copy.get("tool_calls")
        if isinstance(calls, list):
            copy["tool_calls"] = [_copied_call(call) for call in calls]
        content = copy.get("content")
        if isinstance(content, list):
            copy["content"] = [dict(part) if isinstance(part, dict) else part for part in content]
        out.append(copy)
    return out


def _copied_call(call: Any) -> Any:
    if not isinstance(call, dict):
        return call
    copy = dict(call)
    if isinstance(copy.get("function"), dict):
        copy["function"] = dict(copy["function"])
    return copy
