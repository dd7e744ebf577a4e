"""Conversation records in the OpenAI chat format that litellm speaks.

Every record is a pydantic model with a stable ``id`` (used by the journal and, later, by the
compaction inspector) and a ``to_openai()`` method that returns exactly the dict sent to the
provider. ``Message`` is the discriminated union over ``role``.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, computed_field, field_validator, model_validator


def new_id(prefix: str = "m") -> str:
    """Return a short random identifier such as ``m_3f2a1bc9d0e4`` (prefix + 12 hex characters)."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


class Usage(BaseModel):
    """Token usage of one model call (or a sum of calls), as the provider reported it (tokens).

    - ``prompt_tokens``: every input token, cache hits included (litellm's OpenAI-style figure).
    - ``completion_tokens``: output tokens.
    - ``cached_prompt_tokens``: the part of ``prompt_tokens`` read from the provider's prompt cache
      (OpenAI ``prompt_tokens_details.cached_tokens``, Anthropic ``cache_read_input_tokens``);
      ``None`` when the provider did not say.
    - ``cache_creation_tokens``: input tokens written to the cache by this call (Anthropic
      ``cache_creation_input_tokens``; billed extra); ``None`` when not reported.

    Adding two usages sums every field; a cache field stays ``None`` only when neither side
    reported it. ``cache_hit_rate`` is derived (and serialised, so the headless ``turn_finished``
    usage carries it). A negative figure (a provider's bug) reads as 0: no count is below zero;
    a cached figure above ``prompt_tokens`` (also a bug: the cache is part of the prompt) reads
    as ``prompt_tokens``.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int | None = None
    cache_creation_tokens: int | None = None

    @field_validator("prompt_tokens", "completion_tokens", "cached_prompt_tokens", "cache_creation_tokens")
    @classmethod
    def _not_negative(cls, value: int | None) -> int | None:
        return max(value, 0) if value is not None else None

    @model_validator(mode="after")
    def _cache_within_prompt(self) -> "Usage":
        if self.cached_prompt_tokens is not None and self.cached_prompt_tokens > self.prompt_tokens:
            self.cached_prompt_tokens = self.prompt_tokens
        return self

    @computed_field  # type: ignore[prop-decorator]
    @property
    def cache_hit_rate(self) -> float | None:
        """``cached_prompt_tokens / prompt_tokens`` rounded to 4 places (0.0 to 1.0); ``None``
        when the provider reported no cache figure or no prompt tokens."""
        if self.cached_prompt_tokens is None or self.prompt_tokens <= 0:
            return None
        return round(min(1.0, self.cached_prompt_tokens / self.prompt_tokens), 4)

    def cache_figures(self) -> dict[str, Any]:
        """Return ``{"cached_prompt_tokens", "cache_creation_tokens", "cache_hit_rate"}`` (the
        added fields of the ``context_usage`` event), each ``None`` when not reported."""
        return {"cached_prompt_tokens": self.cached_prompt_tokens,
                "cache_creation_tokens": self.cache_creation_tokens, "cache_hit_rate": self.cache_hit_rate}

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_prompt_tokens=_add_optional(self.cached_prompt_tokens, other.cached_prompt_tokens),
            cache_creation_tokens=_add_optional(self.cache_creation_tokens, other.cache_creation_tokens),
        )


def _add_optional(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)


class ToolCall(BaseModel):
    """One tool call requested by the model.

    ``arguments`` is the raw JSON text exactly as the model produced it (it may be malformed or
    empty; the tool registry validates it). ``id`` is the provider's call id; some providers reuse
    ids across steps, so pairing with results is by position, not by id alone (DESIGN.md 3).
    """

    id: str
    name: str
    arguments: str = ""

    def to_openai(self) -> dict[str, Any]:
        """Return the OpenAI ``tool_calls`` entry: ``{"id", "type": "function", "function": {...}}``.

        ``function.arguments`` is ``sendable_arguments()``: the raw text when it is a JSON object,
        else a JSON object standing in for it, so a strict provider (Anthropic turns the text into
        an ``input`` object) accepts the history; the raw text stays in ``arguments`` and the
        journal, and the call's error result says what was wrong with it.
        """
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.sendable_arguments()},
        }

    def sendable_arguments(self) -> str:
        """Return the arguments as they are sent back to a provider: always the text of a JSON
        object. The raw text when it decodes to an object (byte for byte, so the prompt prefix
        stays stable); the inner object, re-serialised, of a double-encoded object (what the tool
        ran with); ``"{}"`` for anything else (empty text, JSON cut off mid-object, ``[1]``,
        ``"x"``). Raises nothing."""
        raw = self.arguments
        try:
            value = json_loads(raw)
        except (json.JSONDecodeError, ValueError):
            return "{}"
        if isinstance(value, dict):
            return raw
        inner = unwrap_double_encoded(value)
        if isinstance(inner, dict):
            return json.dumps(inner, ensure_ascii=False)
        return "{}"

    def parsed_arguments(self) -> Any:
        """Return the arguments decoded from JSON, or the raw string when they are not valid JSON."""
        try:
            return json_loads(self.arguments) if self.arguments.strip() else {}
        except (json.JSONDecodeError, ValueError):
            return self.arguments


#: The deepest nesting of objects and lists a decoded JSON value may have (tool arguments, replay
#: files, journal lines); deeper is refused as invalid JSON instead of exhausting the stack.
MAX_JSON_DEPTH = 200


def json_loads(text: str | bytes) -> Any:
    """``json.loads(text)``, refusing values nested deeper than ``MAX_JSON_DEPTH``: raises
    ``json.JSONDecodeError`` (a ``ValueError``) for invalid JSON and for too deep a value, which
    ``json.loads`` alone would answer with ``RecursionError``, or accept and leave every later walk
    of the value (validation, redaction, dumping) to hit it."""
    try:
        value = json.loads(text)
    except RecursionError:
        value = None
        too_deep = True
    else:
        too_deep = _depth_over(value, MAX_JSON_DEPTH)
    if too_deep:
        shown = text if isinstance(text, str) else text.decode("utf-8", "replace")
        raise json.JSONDecodeError(f"nested more than {MAX_JSON_DEPTH} levels deep", shown, 0)
    return value


def _depth_over(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists and dicts more than ``limit`` deep (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def unwrap_double_encoded(value: Any) -> Any:
    """Return ``value`` decoded once more when it is a JSON string that itself holds a JSON object
    (tool arguments some models send double-encoded); otherwise ``value`` unchanged."""
    if isinstance(value, str):
        try:
            inner = json_loads(value)
        except ValueError:
            return value
        if isinstance(inner, dict):
            return inner
    return value


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str = Field(default_factory=new_id)
    created_at: float = Field(default_factory=time.time)


class SystemMessage(_Record):
    """The system prompt."""

    role: Literal["system"] = "system"
    content: str

    def to_openai(self) -> dict[str, Any]:
        """Return ``{"role": "system", "content": str}``."""
        return {"role": "system", "content": self.content}


#: Where a user-role message came from: typed by the ``user``; the instruction that starts
#: carrying out an approved plan (``plan_execution``: compaction pins the plan itself, not this
#: message); a compaction ``summary``.
UserOrigin = Literal["user", "plan_execution", "summary", "hook"]


class ModeMessage(BaseModel):
    """The mode message at the start of a user turn's message (DESIGN.md 4, Plan mode): which mode
    the turn runs in and the rules of that mode, stated in the conversation rather than in the
    system prompt, so switching Plan/Act never changes the request prefix.

    - ``mode``: ``"plan"`` (read-only planning pass, ends with ``submit_plan``) or ``"act"``.
    - ``text``: the exact text sent (kept verbatim in the journal, so a resumed request repeats it).
    """

    model_config = ConfigDict(frozen=True)

    mode: Literal["plan", "act"]
    text: str


class UserMessage(_Record):
    """A message typed by the user (or a synthetic user-side notice).

    ``content`` is the user's own text (what the UI shows, what compaction pins). ``mode``, when
    set, is the mode message that goes before it in the same provider message (one user message,
    never two in a row); ``None`` for turns that state no mode. ``origin``: who wrote it (only
    ``role`` and the content are sent to the model).
    """

    role: Literal["user"] = "user"
    content: str
    mode: ModeMessage | None = None
    origin: UserOrigin = "user"

    def to_openai(self) -> dict[str, Any]:
        """Return ``{"role": "user", "content": str}``: ``content``, after the mode message's text
        and a blank line when ``mode`` is set."""
        if self.mode is not None:
            return {"role": "user", "content": f"{self.mode.text}\n\n{self.content}"}
        return {"role": "user", "content": self.content}


class AssistantMessage(_Record):
    """One model reply: text, reasoning content and tool calls, plus its usage and finish reason."""

    role: Literal["assistant"] = "assistant"
    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None
    model: str | None = None

    def to_openai(self, include_reasoning: bool = False) -> dict[str, Any]:
        """Return the OpenAI assistant dict.

        ``content`` is ``None`` only when there are tool calls (an empty assistant text message is
        rejected by some providers). ``reasoning_content`` is sent back only when
        ``include_reasoning`` is true (providers such as DeepSeek require it with tool calls).
        """
        out: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            out["tool_calls"] = [tc.to_openai() for tc in self.tool_calls]
        elif not out["content"]:
            out["content"] = ""
        if include_reasoning and self.reasoning_content:
            out["reasoning_content"] = self.reasoning_content
        return out


class ToolResultMessage(_Record):
    """The result of one tool call, as the model sees it (possibly truncated)."""

    role: Literal["tool"] = "tool"
    tool_call_id: str
    name: str
    content: str
    is_error: bool = False

    def to_openai(self) -> dict[str, Any]:
        """Return ``{"role": "tool", "tool_call_id", "content"}`` (OpenAI format; litellm maps it)."""
        return {"role": "tool", "tool_call_id": self.tool_call_id, "content": self.content}


Message = Annotated[
    Union[SystemMessage, UserMessage, AssistantMessage, ToolResultMessage],
    Field(discriminator="role"),
]

MESSAGE_ADAPTER: TypeAdapter[Message] = TypeAdapter(Message)


def message_from_dict(data: dict[str, Any]) -> Message:
    """Validate a journal or OpenAI-format dict into a ``Message``.

    Raises ``pydantic.ValidationError`` when the dict is not a valid record.
    """
    return MESSAGE_ADAPTER.validate_python(data)
