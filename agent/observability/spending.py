"""``Spending``: the running total of one session's model calls and its limits (the budget).

The loop adds every model call's usage (``add``) and, before each step, asks ``exceeded()``;
sub-agents share their parent's object, so they count toward the same total and stop on it too.
"""

from __future__ import annotations

import threading


def format_usd(amount: float) -> str:
    """``amount`` in US dollars as text: ``$0.0123`` below a dollar, ``$1.23`` above."""
    return f"${amount:.4f}" if abs(amount) < 1 else f"${amount:.2f}"


class Spending:
    """A thread-safe running total for one session: ``tokens`` (prompt + completion) and
    ``cost_usd`` (US dollars, the calls whose price is known), plus ``unpriced_calls`` (calls
    whose price litellm does not know: they add no cost).

    ``limits(max_tokens, max_cost_usd)`` sets the budget (None: no limit on that figure);
    ``exceeded()`` returns a one-line reason once a limit is reached, else None.
    """

    def __init__(self, tokens: int = 0, cost_usd: float = 0.0) -> None:
        self._lock = threading.Lock()
        self._tokens = max(int(tokens), 0)
        self._cost = max(float(cost_usd), 0.0)
        self.unpriced_calls = 0
        self.max_tokens: int | None = None
        self.max_cost_usd: float | None = None

    def add(self, prompt_tokens: int, completion_tokens: int, cost_usd: float | None) -> None:
        """Add one model call: its prompt and completion tokens and its cost in US dollars (None
        when unknown: counted in ``unpriced_calls``). Negative figures count as 0."""
        with self._lock:
            self._tokens += max(int(prompt_tokens), 0) + max(int(completion_tokens), 0)
            if cost_usd is None:
                self.unpriced_calls += 1
            else:
                self._cost += max(float(cost_usd), 0.0)

    @property
    def tokens(self) -> int:
        """Prompt + completion tokens of every call so far."""
        with self._lock:
            return self._tokens

    @property
    def cost_usd(self) -> float:
        """US dollars of every call whose price is known."""
        with self._lock:
            return self._cost

    def limits(self, max_tokens: int | None, max_cost_usd: float | None) -> None:
        """Set the budget: at most ``max_tokens`` tokens and ``max_cost_usd`` US dollars (None:
        no limit). Raises ``ValueError`` for a negative limit."""
        if (max_tokens is not None and max_tokens < 0) or (max_cost_usd is not None and max_cost_usd < 0):
            raise ValueError("a budget limit cannot be negative")
        with self._lock:
            self.max_tokens = max_tokens
            self.max_cost_usd = max_cost_usd

    def exceeded(self) -> str | None:
        """A one-line reason when a limit is reached (the figures and the limit), else None."""
        with self._lock:
            tokens, cost = self._tokens, self._cost
            max_tokens, max_cost = self.max_tokens, self.max_cost_usd
        if max_cost is not None and cost >= max_cost:
            return (f"budget reached: {format_usd(cost)} spent of --max-cost {format_usd(max_cost)} "
                    f"({tokens} tokens); raise --max-cost (budget.max_cost_usd; in the TUI: /budget cost USD) to go on")
        if max_tokens is not None and tokens >= max_tokens:
            return (f"budget reached: {tokens} tokens used of --max-tokens {max_tokens}"
                    f" ({format_usd(cost)}); raise --max-tokens (budget.max_tokens; in the TUI: /budget tokens N) to go on")
        return None
