"""Context budget: the token count of a request, reconciled with what the provider reports, and
the largest prompt a context window allows.

Units: *tokens* are model tokens; *characters* are ``str`` lengths (code points), never bytes.

How a request is counted (the one counting for every caller: the loop before each request, the
compaction code, the TUI meter and its F2 breakdown; ``ContextBudget`` for a conversation, the
module functions ``count_text_tokens``, ``message_tokens``, ``request_tokens`` without one):

- each message: its text fields as sent (content, tool call ids, names and arguments, the tool
  result's call id; reasoning only when it is sent back), joined by newlines, counted with the
  model's tokenizer, plus ``MESSAGE_OVERHEAD_TOKENS`` for the role and framing tokens;
- the system prompt, counted like a message; the tool schemas, as compact JSON text (OpenAI
  sends them in a terser form, so this over-counts a little); ``REPLY_PRIMING_TOKENS`` per request.

The tokenizer comes from the model name (``agent/context/tokenizer.py``): OpenAI models count
exactly with their tiktoken encoding (o200k_base for gpt-4o/4.1/5 and the o-series, cl100k_base
for older ones), loaded offline from the files litellm bundles. Every other model (Anthropic,
Gemini, Llama, DeepSeek, the embedded model...) is counted with cl100k_base times a safety
margin, ``NON_OPENAI_MARGIN`` (x1.25; ``EMBEDDED_MARGIN`` x1.55 for the embedded model). The
margins come from tokenizers that ship offline, run on the calibration samples in
``tests/agent/data/token_samples`` (pytest output, logs, JSON, Python, diffs, prose), as the
largest ratio of their count to cl100k's: litellm's bundled Claude tokenizer 1.21 (compact
JSON; 0.86-1.16 elsewhere), its bundled DeepSeek tokenizer 1.16, SmolLM2's (the embedded model,
49k vocabulary) 1.51. Where no encoding can be loaded (tiktoken missing, no rank file), a
calibrated estimate that never undercounts cl100k on those samples stands in (the margin still
applies). The name alone decides, so the scripted provider (tests, ``--replay``) counts exactly
like the real model whose identity it takes. A local count is always flagged ``approximate``.

The margin is applied to each counted part (``ceil(tokens * margin)`` per message, per system
prompt, per tool list), so the figures of ``ContextBudget.message_tokens`` add up to
``ContextBudget.request_tokens`` exactly.

Once the provider reports the prompt tokens of a call (``reconcile``), that number replaces the
local count of everything the call contained: later estimates are the reported figure plus the
local counts of the messages appended since, so a compaction trigger works from the real count
instead of a stale local one.

The largest prompt that may be sent is ``max_prompt_tokens(window)``: the window minus the
tokens reserved for the reply (``reserved_output``).

Speed: each message is counted once and cached by its ``id`` (records are never mutated once
appended to a history; a copy with the same id is counted again); a 20,000-character tool output
costs 0.7-1.4 ms with o200k, 1.0-2.0 ms with cl100k, 1.4-2.1 ms with the estimate (pytest output,
a log, Python), and under a microsecond once cached. An estimate over an unchanged prefix
costs an identity check of that prefix plus the new messages, well under a millisecond for
thousands of messages. litellm is never imported here (its ``token_counter`` uses the same
encodings for OpenAI models, and may try a Hugging Face download for others).
"""

from __future__ import annotations

import json
import math
import operator
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..messages import AssistantMessage, Message, ToolResultMessage, UserMessage
from .tokenizer import ESTIMATE, Tokenizer, is_openai_model, tokenizer_for_model

#: Characters per token of the old characters/4 rule (``chars_to_tokens``; not used for counting).
CHARS_PER_TOKEN = 4
#: Tokens added per message for its role and framing (OpenAI's chat format uses 3-4).
MESSAGE_OVERHEAD_TOKENS = 4
#: Tokens added per request: every reply is primed with ``<|start|>assistant<|message|>``.
REPLY_PRIMING_TOKENS = 3
#: Multiplier on cl100k counts for models whose tokenizer is not OpenAI's (module docstring).
NON_OPENAI_MARGIN = 1.25
#: Multiplier for the embedded model (SmolLM2's 49k vocabulary: up to 1.51 x cl100k measured).
EMBEDDED_MARGIN = 1.55
#: Reply tokens reserved when neither ``max_tokens`` nor the setting says: at most this many...
DEFAULT_RESERVED_OUTPUT_TOKENS = 8192
#: ...and at most this share of the window.
DEFAULT_RESERVED_OUTPUT_FRACTION = 0.2


def chars_to_tokens(chars: int) -> int:
    """``ceil(chars / CHARS_PER_TOKEN)`` (0 for 0 or less): the old characters/4 rule, kept for
    callers that still use it. It undercounts logs and test output (2.0-3.3 characters per
    cl100k token): count with ``count_text_tokens`` instead."""
    return -(-max(0, chars) // CHARS_PER_TOKEN)


def margin_for_model(model: str | None) -> float:
    """The multiplier on local counts for ``model``: 1.0 for OpenAI models, ``EMBEDDED_MARGIN``
    for ``embedded/...``, else ``NON_OPENAI_MARGIN`` (unknown models and ``None`` included)."""
    if is_openai_model(model):
        return 1.0
    if model and model.lower().startswith("embedded/"):
        return EMBEDDED_MARGIN
    return NON_OPENAI_MARGIN


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
            chars += len(call.id) + len(call.name) + len(call.sendable_arguments())
        return chars
    if isinstance(message, ToolResultMessage):
        return len(message.content) + len(message.tool_call_id)
    if isinstance(message, UserMessage):
        return len(message.to_openai()["content"])  # the mode message goes first
    content = getattr(message, "content", None)
    if not isinstance(content, str):
        raise TypeError(f"not a message record: {type(message).__name__}")
    return len(content)


def message_text(message: Message, *, include_reasoning: bool = False) -> str:
    """The text fields of ``message`` as sent (what ``message_chars`` measures), joined by newlines.
    Raises ``TypeError`` for an object that is not a message record."""
    if isinstance(message, AssistantMessage):
        parts = [message.content or ""]
        if include_reasoning and message.reasoning_content:
            parts.append(message.reasoning_content)
        for call in message.tool_calls:
            parts += [call.id, call.name, call.sendable_arguments()]
        return "\n".join(parts)
    if isinstance(message, ToolResultMessage):
        return message.tool_call_id + "\n" + message.content
    if isinstance(message, UserMessage):
        return message.to_openai()["content"]  # the mode message goes first
    content = getattr(message, "content", None)
    if not isinstance(content, str):
        raise TypeError(f"not a message record: {type(message).__name__}")
    return content


def tools_text(tools: list[dict[str, Any]] | None) -> str:
    """The tool schemas as counted: compact JSON (``""`` for no tools)."""
    return json.dumps(tools, separators=(",", ":"), ensure_ascii=False) if tools else ""


def count_text_tokens(text: str, model: str | None = None) -> int:
    """Tokens of ``text`` (characters) for ``model``, margin included: exact for OpenAI models,
    ``ceil(cl100k tokens * margin)`` for others (module docstring). 0 for ``""``."""
    return _margined(tokenizer_for_model(model).count(text), margin_for_model(model))


def message_tokens(message: Message, *, include_reasoning: bool = False, model: str | None = None) -> int:
    """Tokens of one message for ``model`` (``None``: an unknown model, so cl100k with
    ``NON_OPENAI_MARGIN``): its text as sent plus ``MESSAGE_OVERHEAD_TOKENS``, margin included.
    Not cached (``ContextBudget.message_tokens`` is). Raises ``TypeError`` for a non-record."""
    raw = tokenizer_for_model(model).count(message_text(message, include_reasoning=include_reasoning))
    return _margined(raw + MESSAGE_OVERHEAD_TOKENS, margin_for_model(model))


def request_tokens(system_prompt: str, messages: Sequence[Message], tools: list[dict[str, Any]] | None = None,
                   *, model: str | None = None, include_reasoning: bool = False) -> int:
    """Local token count of a whole request for ``model``: what a fresh ``ContextBudget`` counts
    (no reported usage). Use the agent's ``budget.request_tokens`` where there is one (cached)."""
    return ContextBudget(model, include_reasoning=include_reasoning).request_tokens(system_prompt, messages, tools)


def reserved_output(window: int, *, max_tokens: int | None = None, setting: int | None = None) -> int:
    """Tokens held back from ``window`` for the reply.

    ``max_tokens``: the reply cap sent with the request (``LoopConfig.max_tokens``); when set the
    provider reserves exactly that much, so at least that much is reserved. ``setting``: the
    ``[compaction] reserved_output_tokens`` setting. Without either:
    ``min(DEFAULT_RESERVED_OUTPUT_TOKENS, DEFAULT_RESERVED_OUTPUT_FRACTION * window)`` (8192 tokens,
    or 20% of a window below 40,960 tokens). Raises ``ValueError`` for a negative argument.
    """
    if window < 0 or (max_tokens is not None and max_tokens < 0) or (setting is not None and setting < 0):
        raise ValueError("window, max_tokens and reserved_output_tokens must be >= 0")
    if max_tokens or setting is not None:
        return max(max_tokens or 0, setting or 0)
    return min(DEFAULT_RESERVED_OUTPUT_TOKENS, int(window * DEFAULT_RESERVED_OUTPUT_FRACTION))


def max_prompt_tokens(window: int, *, max_tokens: int | None = None,
                      reserved_output_tokens: int | None = None) -> int:
    """The largest prompt (tokens, as counted by ``ContextBudget.estimate``) that may be sent to a
    model with a ``window``-token context: ``window`` minus the reserved output (see
    ``reserved_output``; ``reserved_output_tokens`` is the ``[compaction]`` setting), never below 0.
    Raises ``ValueError`` for a negative argument."""
    return max(0, window - reserved_output(window, max_tokens=max_tokens, setting=reserved_output_tokens))


@dataclass(frozen=True)
class BudgetEstimate:
    """A request's size in tokens.

    - ``tokens``: the total (``reported_tokens`` + ``estimated_tokens``).
    - ``approximate``: some of it is a local count (always true before the first reported
      usage; false only when the figure is exactly what the provider reported).
    - ``reported_tokens``: the part the provider reported (prompt tokens of the last reconciled
      call), ``None`` when there is none.
    - ``estimated_tokens``: the locally counted part, margin included.
    - ``margin``: the multiplier applied to the local part (1.0, ``NON_OPENAI_MARGIN``, ...).
    - ``tokenizer``: what counted the local part: ``cl100k_base``, ``o200k_base``, ``estimate``
      (no encoding could be loaded) or ``custom`` (a ``text_counter``).
    """

    tokens: int
    approximate: bool
    reported_tokens: int | None = None
    estimated_tokens: int = 0
    margin: float = 1.0
    tokenizer: str = ESTIMATE


class ContextBudget:
    """Token counts of requests for one conversation, cached per message and reconcilable.

    ``model``: the litellm model name; it decides the tokenizer and the margin (``None`` = an
    unknown model: cl100k with ``NON_OPENAI_MARGIN``). ``margin``: override of the multiplier on
    local counts (>= 1.0). ``include_reasoning``: assistant reasoning is sent back to the
    provider, so count it. ``text_counter``: ``count(text) -> tokens`` replacing the model's
    tokenizer (the margin still applies; if it raises, the model's tokenizer takes over).
    Raises ``ValueError`` for a margin below 1.

    Threads: ``estimate``, ``reconcile`` and ``reset`` belong to one owner (the agent's loop);
    ``message_tokens``, ``text_tokens`` and ``request_tokens`` may also be called from another
    thread (a UI worker): their cache only gains entries, and a race measures a message twice.
    """

    def __init__(self, model: str | None = None, *, margin: float | None = None,
                 include_reasoning: bool = False, text_counter: "Callable[[str], int] | None" = None) -> None:
        if margin is None:
            margin = margin_for_model(model)
        if margin < 1.0:
            raise ValueError(f"margin must be >= 1.0, got {margin}")
        self.model = model
        self.margin = margin
        self.include_reasoning = include_reasoning
        self.text_counter = text_counter
        self._tokenizer: Tokenizer | None = None  # resolved on first count
        self._tokens: dict[str, tuple[Message, int]] = {}  # message id -> (record, tokens)
        # The last estimated message list (references) and the token sum of it.
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

    @property
    def tokenizer(self) -> str:
        """What counts locally: ``cl100k_base``, ``o200k_base``, ``estimate`` or ``custom``.
        Loads the model's encoding if it is not loaded yet."""
        return "custom" if self.text_counter is not None else self._model_tokenizer().name

    def load_tokenizer(self) -> str:
        """Load the model's encoding now rather than on the first count (cl100k about 0.3 s,
        o200k 0.6 s, once per process); returns ``tokenizer``."""
        return self.tokenizer

    def text_tokens(self, text: str) -> int:
        """Tokens of ``text`` (characters) for this budget's model, margin included, no message
        overhead (a part of a message, e.g. one tool call or the reasoning, for a breakdown)."""
        return self._margined(self._count(text))

    def message_tokens(self, message: Message) -> int:
        """Tokens of one message as sent (text + ``MESSAGE_OVERHEAD_TOKENS``), margin included;
        counted once per record (cached by ``id``, re-counted for a different record with the same
        id). Raises ``TypeError`` for an object that is not a message record."""
        entry = self._tokens.get(message.id)
        if entry is not None and entry[0] is message:
            return entry[1]
        text = message_text(message, include_reasoning=self.include_reasoning)
        tokens = self._margined(self._count(text) + MESSAGE_OVERHEAD_TOKENS)
        self._tokens[message.id] = (message, tokens)
        return tokens

    def fixed_tokens(self, system_prompt: str, tools: list[dict[str, Any]] | None = None) -> int:
        """Tokens of the parts of a request other than the history: the system prompt (as a
        message), the tool schemas and ``REPLY_PRIMING_TOKENS``, margin included."""
        tools_json = tools_text(tools)
        key = (system_prompt, tools_json)
        if key == self._fixed_key:
            return self._fixed_tokens
        return self._fixed_for(system_prompt, tools_json)

    def request_tokens(self, system_prompt: str, messages: Sequence[Message],
                       tools: list[dict[str, Any]] | None = None) -> int:
        """Local token count of a request (no reported usage): ``fixed_tokens`` plus the sum of
        ``message_tokens``. Does not change what ``estimate`` anchors on."""
        return self.fixed_tokens(system_prompt, tools) + sum(self.message_tokens(m) for m in messages)

    def estimate(self, system_prompt: str, messages: Sequence[Message],
                 tools: list[dict[str, Any]] | None = None) -> BudgetEstimate:
        """Count the tokens of a request made of ``system_prompt`` (characters), ``messages``
        (the history, without the system message) and ``tools`` (OpenAI tool schemas).

        After ``reconcile`` the result is the reported prompt tokens plus the local count of
        messages appended since, as long as the reconciled messages, system prompt and tools are
        unchanged; otherwise everything is counted locally again (``request_tokens``).
        """
        fixed_key = (system_prompt, tools_text(tools))
        if fixed_key != self._fixed_key:
            self._fixed_tokens = self._fixed_for(*fixed_key)
            self._fixed_key = fixed_key
        total_messages = self._sum_messages(messages)
        tokenizer = self.tokenizer
        anchor = self._anchor
        if (anchor is not None and self._anchor_fixed_key == fixed_key
                and _starts_with(messages, anchor)):
            new = sum(self.message_tokens(m) for m in messages[len(anchor):])
            reported = self._reported
            assert reported is not None
            return BudgetEstimate(tokens=reported + new, approximate=new > 0, reported_tokens=reported,
                                  estimated_tokens=new, margin=self.margin, tokenizer=tokenizer)
        estimated = self._fixed_tokens + total_messages
        return BudgetEstimate(tokens=estimated, approximate=True, estimated_tokens=estimated,
                              margin=self.margin, tokenizer=tokenizer)

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
    def _model_tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            self._tokenizer = tokenizer_for_model(self.model)
        return self._tokenizer

    def _count(self, text: str) -> int:
        """Unmargined tokens of ``text``: the custom counter, else the model's tokenizer."""
        if not text:
            return 0
        if self.text_counter is not None:
            try:
                return int(self.text_counter(text))
            except Exception:  # a tokenizer problem must never stop the loop
                self.text_counter = None
        return self._model_tokenizer().count(text)

    def _fixed_for(self, system_prompt: str, tools_json: str) -> int:
        return (self._margined(self._count(system_prompt) + MESSAGE_OVERHEAD_TOKENS)
                + self._margined(self._count(tools_json)) + REPLY_PRIMING_TOKENS)

    def _margined(self, tokens: int) -> int:
        return _margined(tokens, self.margin)

    def _sum_messages(self, messages: Sequence[Message]) -> int:
        """Token sum of ``messages``, reusing the last sum when they extend the last list."""
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


def _margined(tokens: int, margin: float) -> int:
    return math.ceil(tokens * margin) if margin != 1.0 and tokens > 0 else tokens


def _starts_with(messages: Sequence[Message], prefix: Sequence[Message]) -> bool:
    """Whether ``messages`` begins with exactly the records of ``prefix`` (identity, C speed)."""
    return len(messages) >= len(prefix) and all(map(operator.is_, prefix, messages))


__all__ = [
    "BudgetEstimate", "CHARS_PER_TOKEN", "ContextBudget", "DEFAULT_RESERVED_OUTPUT_FRACTION",
    "DEFAULT_RESERVED_OUTPUT_TOKENS", "EMBEDDED_MARGIN", "MESSAGE_OVERHEAD_TOKENS", "NON_OPENAI_MARGIN",
    "REPLY_PRIMING_TOKENS", "chars_to_tokens", "count_text_tokens", "is_openai_model", "margin_for_model",
    "max_prompt_tokens", "message_chars", "message_text", "message_tokens", "request_tokens",
    "reserved_output", "tools_text",
]
