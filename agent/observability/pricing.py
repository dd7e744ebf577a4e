"""The price of one model call in US dollars, where litellm knows the model's prices.

With litellm already imported (a real provider loaded it) its own ``cost_per_token`` is asked,
so provider-specific rules (cache reads, tiers) apply. Otherwise (scripted runs, where importing
litellm would cost seconds) the per-token prices are read from litellm's bundled price file as a
file (``providers.preflight.bundled_model_facts``). A model neither knows gets ``None``: never a
made-up figure.
"""

from __future__ import annotations

import sys

from ..providers.preflight import bundled_model_facts


def call_cost_usd(model: str, prompt_tokens: int, completion_tokens: int,
                  cached_prompt_tokens: int | None = None) -> float | None:
    """The cost in US dollars of a call to ``model`` (a litellm name) that read ``prompt_tokens``
    (of which ``cached_prompt_tokens`` came from the provider's cache) and wrote
    ``completion_tokens``; None when the model's prices are unknown. Never raises."""
    if "litellm" in sys.modules:
        cost = _litellm_cost(model, prompt_tokens, completion_tokens, cached_prompt_tokens)
        if cost is not None:
            return cost
    return bundled_cost(model, prompt_tokens, completion_tokens, cached_prompt_tokens)


def bundled_cost(model: str, prompt_tokens: int, completion_tokens: int,
                 cached_prompt_tokens: int | None = None) -> float | None:
    """The cost in US dollars from the bundled price file's per-token prices (input, output,
    cache read: cached prompt tokens at the cache-read price when the file has one); None when
    the file has no input or output price for ``model``. Never raises."""
    facts = bundled_model_facts(model)
    if not facts:
        return None
    price_in, price_out = facts.get("input_cost_per_token"), facts.get("output_cost_per_token")
    if not isinstance(price_in, (int, float)) or not isinstance(price_out, (int, float)):
        return None
    cached = min(max(cached_prompt_tokens or 0, 0), max(prompt_tokens, 0))
    price_cached = facts.get("cache_read_input_token_cost")
    if not isinstance(price_cached, (int, float)):
        price_cached = price_in
    return (max(prompt_tokens, 0) - cached) * price_in + cached * price_cached + max(completion_tokens, 0) * price_out


def _litellm_cost(model: str, prompt_tokens: int, completion_tokens: int,
                  cached_prompt_tokens: int | None) -> float | None:
    try:
        litellm = sys.modules["litellm"]
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
            cache_read_input_tokens=cached_prompt_tokens or 0)
        return float(prompt_cost) + float(completion_cost)
    except Exception:  # litellm raises for a model it has no prices for
        return None
