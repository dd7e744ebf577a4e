"""``ContextBudget``: the token count of one conversation's requests, cached per message and
reconciled with what the provider reports (see ``budget`` for how a request is counted).

Once the provider reports the prompt tokens of a call (``reconcile``), that number replaces the
local count of everything the call contained: later estimates are the reported figure plus the
local counts of the messages appended since, so a compaction trigger works from the real count
instead of a stale local one. The margin is applied to each counted part (``ceil(tokens *
margin)`` per message, per system prompt, per tool list), so the figures of ``message_tokens``
add up to ``request_tokens`` exactly.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..messages import Message
from .budget import MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS, margin_for_model, margined, message_text, tools_text
from .tokenizer import ESTIMATE, Tokenizer, tokenizer_for_model


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
        return margined(tokens, self.margin)

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


def request_tokens(system_prompt: str, messages: Sequence[Message], tools: list[dict[str, Any]] | None = None,
                   *, model: str | None = None, include_reasoning: bool = False) -> int:
    """Local token count of a whole request for ``model``: what a fresh ``ContextBudget`` counts
    (no reported usage). Use the agent's ``budget.request_tokens`` where there is one (cached)."""
    return ContextBudget(model, include_reasoning=include_reasoning).request_tokens(system_prompt, messages, tools)


def _starts_with(messages: Sequence[Message], prefix: Sequence[Message]) -> bool:
    """Whether ``messages`` begins with exactly the records of ``prefix`` (identity, C speed)."""
    return len(messages) >= len(prefix) and all(map(operator.is_, prefix, messages))
