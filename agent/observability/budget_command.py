"""``/budget``: read or change the session's budget while it runs (the TUI's way to go on after a
``budget`` stop without restarting with a higher ``--max-cost`` / ``--max-tokens``).

``apply_budget_command(spending, args)`` takes the text after ``/budget`` and returns the line to
show; it changes ``spending``'s limits for the rest of the session (not the config files).
"""

from __future__ import annotations

from .spending import Spending, format_usd

USAGE = "/budget [cost USD | tokens N | off]"


def describe_budget(spending: Spending) -> str:
    """One line: what the session spent and its limits, e.g. ``Budget: $0.0120 spent of $1.00;
    12000 tokens, no token limit.``"""
    cost, tokens = spending.cost_usd, spending.tokens
    cost_part = (f"{format_usd(cost)} spent of {format_usd(spending.max_cost_usd)}"
                 if spending.max_cost_usd is not None else f"{format_usd(cost)} spent, no cost limit")
    token_part = (f"{tokens} tokens of {spending.max_tokens}" if spending.max_tokens is not None
                  else f"{tokens} tokens, no token limit")
    unpriced = f" ({spending.unpriced_calls} calls without a known price)" if spending.unpriced_calls else ""
    return f"Budget: {cost_part}; {token_part}{unpriced}."


def apply_budget_command(spending: Spending, args: str) -> str:
    """Carry out ``/budget ARGS`` on ``spending`` and return the line to show.

    ``''`` shows the figures; ``cost USD`` sets the cost limit in US dollars (``$`` allowed);
    ``tokens N`` sets the token limit (prompt + completion tokens; ``_`` and ``,`` allowed, ``k``
    / ``m`` suffixes); ``off`` removes both limits; ``cost off`` / ``tokens off`` one of them.
    Raises ``ValueError`` with the usage for anything else (a negative or unreadable figure).
    """
    words = args.split()
    if not words:
        return describe_budget(spending)
    if words == ["off"]:
        spending.limits(None, None)
        return "Budget limits removed for this session. " + describe_budget(spending)
    if len(words) != 2 or words[0].lower() not in ("cost", "tokens"):
        raise ValueError(f"usage: {USAGE}")
    which, value = words[0].lower(), words[1].lower()
    if which == "cost":
        limit = None if value == "off" else _number(value.lstrip("$"), float)
        spending.limits(spending.max_tokens, limit)
    else:
        limit = None if value == "off" else _tokens(value)
        spending.limits(limit, spending.max_cost_usd)
    line = "Budget changed for this session. " + describe_budget(spending)
    reached = spending.exceeded()
    if reached is not None:
        line += " The new limit is already reached: the next step stops again."
    return line


def _tokens(text: str) -> int:
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    number = _number(text[:-1] if scale > 1 else text, float)
    return int(number * scale)


def _number(text: str, kind):
    try:
        value = kind(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise ValueError(f"not a number: {text!r}; usage: {USAGE}") from None
    if value < 0:
        raise ValueError(f"a budget limit cannot be negative; usage: {USAGE}")
    return value
