"""Counting a request in tokens, and the largest prompt a context window allows.

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

The margin is applied to each counted part (``margined``); ``context_budget.ContextBudget``
caches the counts of one conversation and reconciles them with what the provider reports.

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
from typing import Any

from ..messages import AssistantMessage, Message, ToolResultMessage, UserMessage
from .tokenizer import is_openai_model, tokenizer_for_model

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
    return margined(tokenizer_for_model(model).count(text), margin_for_model(model))


def message_tokens(message: Message, *, include_reasoning: bool = False, model: str | None = None) -> int:
    """Tokens of one message for ``model`` (``None``: an unknown model, so cl100k with
    ``NON_OPENAI_MARGIN``): its text as sent plus ``MESSAGE_OVERHEAD_TOKENS``, margin included.
    Not cached (``ContextBudget.message_tokens`` is). Raises ``TypeError`` for a non-record."""
    raw = tokenizer_for_model(model).count(message_text(message, include_reasoning=include_reasoning))
    return margined(raw + MESSAGE_OVERHEAD_TOKENS, margin_for_model(model))


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


def margined(tokens: int, margin: float) -> int:
    return math.ceil(tokens * margin) if margin != 1.0 and tokens > 0 else tokens


__all__ = [
    "CHARS_PER_TOKEN", "DEFAULT_RESERVED_OUTPUT_FRACTION", "DEFAULT_RESERVED_OUTPUT_TOKENS", "EMBEDDED_MARGIN",
    "MESSAGE_OVERHEAD_TOKENS", "NON_OPENAI_MARGIN", "REPLY_PRIMING_TOKENS", "chars_to_tokens", "count_text_tokens",
    "margin_for_model", "max_prompt_tokens", "message_chars", "message_text", "message_tokens", "reserved_output",
    "tools_text",
]
