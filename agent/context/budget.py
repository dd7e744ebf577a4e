"""Context budget: a fast token estimate of a request, reconciled with what the provider reports.

Units: *tokens* are model tokens; *characters* are ``str`` lengths (code points), never bytes.

The local estimate is characters / 4, rounded up, per part of the request:

- each message: its text fields as sent (content, tool call ids, names and arguments, the tool
  result's call id; reasoning only when it is sent back) plus ``MESSAGE_OVERHEAD_TOKENS`` for the
  role and framing tokens;
- the system prompt, counted like a message;
- the tool schemas, as compact JSON text.

Anthropic, Gemini, Llama and others tokenize differently from OpenAI's encodings (more tokens
for code, whitespace and non-English text: case C22, litellm issue 8140), so for models that
are not OpenAI's the local part is multiplied by a safety margin, ``NON_OPENAI_MARGIN`` (x1.15).
A local estimate is always flagged ``approximate``.

Once the provider reports the prompt tokens of a call (``reconcile``), that number replaces the
local estimate of everything the call contained: later estimates are the reported figure plus
the local estimates of the messages appended since, so a compaction trigger works from the real
count instead of a stale local one. Once litellm is loaded the runtime plugs in its
``token_counter`` for the model (``text_counter``; offline: the loader disables tokenizer
downloads); this module itself never imports litellm.

Speed: each message is measured once and cached by its ``id`` (records are never mutated once
appended to a history); an estimate over an unchanged prefix costs an identity check of that
prefix plus the new messages, well under a millisecond for thousands of messages.
"""

from __future__ import annotations

import json
import math
import operator
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..messages import AssistantMessage, Message, ToolResultMessage

#: Characters per token of the local estimate.
CHARS_PER_TOKEN = 4
#: Tokens added per message for its role and framing (OpenAI's chat format uses 3-4).
MESSAGE_OVERHEAD_TOKENS = 4
#: Multiplier on local estimates for models whose tokenizer is not OpenAI's (case C22).
NON_OPENAI_MARGIN = 1.15
#: Provider prefixes (litellm style ``provider/model``) whose models use OpenAI's tokenizers.
_OPENAI_PROVIDERS = frozenset({"openai", "azure", "azure_ai", "text-completion-openai"})
#: Bare or routed model names that are OpenAI models.
_OPENAI_MODEL_PREFIXES = ("gpt-", "o1", "o3", "o4", "chatgpt-", "codex-")


def chars_to_tokens(chars: int) -> int:
    """Tokens for ``chars`` characters: ``ceil(chars / CHARS_PER_TOKEN)`` (0 for 0)."""
    return -(-max(0, chars) // CHARS_PER_TOKEN)


def is_openai_model(model: str | None) -> bool:
    """Whether ``model`` (a litellm model name such as ``openai/gpt-4.1`` or ``gpt-4o``) is tokenized
    with OpenAI's encodings, so the local estimate needs no safety margin. ``None`` -> False."""
    if not model:
        return False
    parts = model.lower().split("/")
    name = parts[-1]
    if len(parts) == 1:
        return name.startswith(_OPENAI_MODEL_PREFIXES)
    if parts[0] in _OPENAI_PROVIDERS:
        return True
    # Routers such as openrouter/openai/gpt-4o keep the vendor in the path.
    return "openai" in parts[1:-1] and name.startswith(_OPENAI_MODEL_PREFIXES)


def message_chars(message: Message, *, include_reasoning: bool = False) -> int:
    """Characters of ``message`` as sent to the model (its text fields; see the module docstring).

    ``include_reasoning``: count ``reasoning_content`` of assistant messages (only for providers
    it is sent back to). Raises ``TypeError`` for an object that is not a message record.
    """
    if isinstance(message, AssistantMessage):
        chars = len(message.content or "")
        if include_reasoning and message.reasoning_content:
            chars += len(message.reasoning_content)
        for call in message.tool_calls:
            chars += len(call.id) + len(call.name) + len(call.arguments)
        return chars
    if isinstance(message, ToolResultMessage):
        return len(message.content) + len(message.tool_call_id)
    content = getattr(message, "content", None)
    if not isinstance(content, str):
        raise TypeError(f"not a message record: {type(message).__name__}")
    return len(content)


def message_text(message: Message, *, include_reasoning: bool = False) -> str:
    """The text fields of ``message`` as sent (what ``message_chars`` measures), joined by newlines."""
    if isinstance(message, AssistantMessage):
        parts = [message.content or ""]
        if include_reasoning and message.reasoning_content:
            parts.append(message.reasoning_content)
        for call in message.tool_calls:
            parts += [call.id, call.name, call.arguments]
        return "\n".join(parts)
    if isinstance(message, ToolResultMessage):
        return message.tool_call_id + "\n" + message.content
    return getattr(message, "content", "") or ""


def message_tokens(message: Message, *, include_reasoning: bool = False) -> int:
    """Unmargined local token estimate of one message: ``ceil(chars / 4)`` + the overhead."""
    return chars_to_tokens(message_chars(message, include_reasoning=include_reasoning)) + MESSAGE_OVERHEAD_TOKENS


@dataclass(frozen=True)
class BudgetEstimate:
    """A request's size in tokens.

    - ``tokens``: the total (``reported_tokens`` + ``estimated_tokens``).
    - ``approximate``: some of it is a local estimate (always true before the first reported
      usage; false only when the figure is exactly what the provider reported).
    - ``reported_tokens``: the part the provider reported (prompt tokens of the last reconciled
      call), ``None`` when there is none.
    - ``estimated_tokens``: the locally estimated part, margin included.
    - ``margin``: the multiplier applied to the local part (1.0 or ``NON_OPENAI_MARGIN``).
    """

    tokens: int
    approximate: bool
    reported_tokens: int | None = None
    estimated_tokens: int = 0
    margin: float = 1.0


class ContextBudget:
    """Token estimates of requests for one conversation, cached per message and reconcilable.

    ``model``: the litellm model name (decides the safety margin; ``None`` = unknown, margin
    applied). ``margin``: override of the multiplier on local estimates (>= 1.0).
    ``include_reasoning``: assistant reasoning is sent back to the provider, so count it.
    ``text_counter``: tokens of a text (e.g. litellm's ``token_counter`` for the model, set once
    litellm is loaded); ``None`` uses characters / 4. Counts stay flagged approximate either way
    (a local tokenizer is not the provider's count), and the margin still applies.
    Raises ``ValueError`` for a margin below 1. Not thread-safe: one owner calls it.
    """

    def __init__(self, model: str | None = None, *, margin: float | None = None,
                 include_reasoning: bool = False, text_counter: "Callable[[str], int] | None" = None) -> None:
        if margin is None:
            margin = 1.0 if is_openai_model(model) else NON_OPENAI_MARGIN
        if margin < 1.0:
            raise ValueError(f"margin must be >= 1.0, got {margin}")
        self.model = model
        self.margin = margin
        self.include_reasoning = include_reasoning
        self.text_counter = text_counter
        self._tokens: dict[str, tuple[Message, int]] = {}  # message id -> (record, raw tokens)
        # The last estimated message list (references) and the raw token sum of it.
        self._prefix: list[Message] = []
        self._prefix_tokens = 0
        self._fixed_key: tuple[str, str] | None = None  # (system prompt, tools JSON) last seen
        self._fixed_tokens = 0
        # The reconciled anchor: reported prompt tokens covering these leading messages.
        self._reported: int | None = None
        self._anchor: list[Message] | None = None
        self._anchor_fixed_key: tuple[str, str] | None = None

    @property
    def used_prompt_tokens(self) -> int | None:
        """Prompt tokens the provider last reported (``reconcile``), or ``None`` before any."""
        return self._reported

    def message_tokens(self, message: Message) -> int:
        """Unmargined local estimate of one message (tokens), measured once per record."""
        entry = self._tokens.get(message.id)
        if entry is not None and entry[0] is message:
            return entry[1]
        if self.text_counter is not None:
            text = message_text(message, include_reasoning=self.include_reasoning)
            tokens = self._count(text, len(text)) + MESSAGE_OVERHEAD_TOKENS
        else:
            tokens = message_tokens(message, include_reasoning=self.include_reasoning)
        self._tokens[message.id] = (message, tokens)
        return tokens

    def estimate(self, system_prompt: str, messages: Sequence[Message],
                 tools: list[dict[str, Any]] | None = None) -> BudgetEstimate:
        """Estimate the tokens of a request made of ``system_prompt`` (characters), ``messages``
        (the history, without the system message) and ``tools`` (OpenAI tool schemas).

        After ``reconcile`` the result is the reported prompt tokens plus the (margined) local
        estimate of messages appended since, as long as the reconciled messages, system prompt
        and tools are unchanged; otherwise everything is estimated locally again.
        """
        fixed_key = (system_prompt, json.dumps(tools or [], separators=(",", ":"), ensure_ascii=False))
        if fixed_key != self._fixed_key:
            self._fixed_key = fixed_key
            self._fixed_tokens = (self._count(system_prompt, len(system_prompt)) + MESSAGE_OVERHEAD_TOKENS
                                  + self._count(fixed_key[1], len(fixed_key[1])))
        raw_messages = self._sum_messages(messages)
        anchor = self._anchor
        if (anchor is not None and self._anchor_fixed_key == fixed_key
                and _starts_with(messages, anchor)):
            raw_new = sum(self.message_tokens(m) for m in messages[len(anchor):])
            estimated = self._margined(raw_new)
            reported = self._reported
            assert reported is not None
            return BudgetEstimate(tokens=reported + estimated, approximate=raw_new > 0,
                                  reported_tokens=reported, estimated_tokens=estimated, margin=self.margin)
        estimated = self._margined(self._fixed_tokens + raw_messages)
        return BudgetEstimate(tokens=estimated, approximate=True, estimated_tokens=estimated, margin=self.margin)

    def reconcile(self, prompt_tokens_reported: int, messages_count: int,
                  messages: Sequence[Message] | None = None) -> None:
        """Record that the provider counted ``prompt_tokens_reported`` tokens for a request holding
        the system prompt, the tools and the first ``messages_count`` messages.

        ``messages``: the history the request was built from; by default the list given to the
        last ``estimate`` call. The system prompt and tools are taken from that call too, so
        estimate the request before sending it. Raises ``ValueError`` for negative numbers or a
        ``messages_count`` longer than the history.
        """
        if prompt_tokens_reported < 0 or messages_count < 0:
            raise ValueError("reported tokens and message count must be >= 0")
        source = list(messages) if messages is not None else self._prefix
        if messages_count > len(source):
            raise ValueError(f"messages_count {messages_count} exceeds the {len(source)} known messages")
        self._reported = prompt_tokens_reported
        self._anchor = source[:messages_count]
        self._anchor_fixed_key = self._fixed_key

    def reset(self) -> None:
        """Forget the reconciled figure (e.g. after a compaction rewrote the history)."""
        self._reported = None
        self._anchor = None
        self._anchor_fixed_key = None

    # ------------------------------------------------------------------------------ internals
    def _count(self, text: str, chars: int) -> int:
        """Tokens of ``text`` with the counter, falling back to characters / 4 if it fails."""
        if self.text_counter is not None and text:
            try:
                return int(self.text_counter(text))
            except Exception:  # a tokenizer problem must never stop the loop
                self.text_counter = None
        return chars_to_tokens(chars)

    def _margined(self, raw_tokens: int) -> int:
        return math.ceil(raw_tokens * self.margin) if self.margin != 1.0 else raw_tokens

    def _sum_messages(self, messages: Sequence[Message]) -> int:
        """Raw token sum of ``messages``, reusing the last sum when they extend the last list."""
        prefix = self._prefix
        if prefix and _starts_with(messages, prefix):
            total = self._prefix_tokens + sum(self.message_tokens(m) for m in messages[len(prefix):])
        else:
            total = sum(self.message_tokens(m) for m in messages)
            self._prune(messages)
        self._prefix = list(messages)
        self._prefix_tokens = total
        return total

    def _prune(self, messages: Sequence[Message]) -> None:
        """Drop cached records no longer in the history (after a compaction or /clear)."""
        if len(self._tokens) > 2 * len(messages) + 64:
            keep = {m.id for m in messages}
            self._tokens = {k: v for k, v in self._tokens.items() if k in keep}


def _starts_with(messages: Sequence[Message], prefix: Sequence[Message]) -> bool:
    """Whether ``messages`` begins with exactly the records of ``prefix`` (identity, C speed)."""
    return len(messages) >= len(prefix) and all(map(operator.is_, prefix, messages))


__all__ = [
    "BudgetEstimate", "CHARS_PER_TOKEN", "ContextBudget", "MESSAGE_OVERHEAD_TOKENS", "NON_OPENAI_MARGIN",
    "chars_to_tokens", "is_openai_model", "message_chars", "message_tokens",
]
