"""Token counts as the UI writes them (``12k``, ``1.05M``)."""

from __future__ import annotations


def format_tokens(tokens: int) -> str:
    """Return a compact token count: ``950``, ``12k``, ``1.5k``, ``200k``, ``1M``, ``1.05M``."""
    if tokens < 1000:
        return str(tokens)
    if tokens < 1_000_000:
        value = tokens / 1000
        return f"{value:.1f}k".replace(".0k", "k") if value < 10 else f"{value:.0f}k"
    value = tokens / 1_000_000
    return f"{value:.2f}".rstrip("0").rstrip(".") + "M"
