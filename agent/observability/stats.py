"""Figures of a session read back from its log (``session_log``): what ``/stats``, the sidebar's
Stats tab and ``opencli-tui sessions stats`` show. Read from the file, not from memory, so a
resumed session shows its whole history."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .session_log import read_log
from .spending import format_usd

#: How many of the slowest tool calls are listed.
SLOWEST = 5


@dataclass(frozen=True)
class SlowCall:
    """One tool call among the slowest: ``name``, ``arguments`` (the logged summary),
    ``duration_s`` (seconds), ``turn``."""

    name: str
    arguments: str
    duration_s: float
    turn: int


@dataclass
class SessionStats:
    """A session's figures. Tokens are counts; ``cost_usd`` US dollars over the calls whose price
    is known (``unpriced_calls`` had none); times in seconds (``model_time_s``: sum of model-call
    latencies; ``tool_time_s``: sum of tool-call durations); ``estimated_calls``: calls whose
    tokens were estimated locally (the provider reported none)."""

    turns: int = 0
    model_calls: int = 0
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    estimated_calls: int = 0
    model_time_s: float = 0.0
    tool_calls: int = 0
    #: Of ``tool_calls``, calls of MCP servers' tools (``mcp__<server>__<tool>``).
    mcp_calls: int = 0
    tool_time_s: float = 0.0
    slowest: list[SlowCall] = field(default_factory=list)
    compactions: int = 0
    tokens_saved: int = 0
    subagents: int = 0
    subagent_tokens: int = 0
    hooks: int = 0
    hook_verdicts: Counter = field(default_factory=Counter)
    guards: Counter = field(default_factory=Counter)
    calls_by_purpose: Counter = field(default_factory=Counter)
    #: Sub-agents' model calls are in the log one by one (purpose ``subagent``), so the call
    #: figures above include them; else only their totals (``subagent_tokens``) are known.
    subagent_calls_logged: bool = False

    @property
    def tokens(self) -> int:
        """Prompt + completion tokens of every model call."""
        return self.prompt_tokens + self.completion_tokens


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _float(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _usage_tokens(usage: object) -> int:
    return _int(usage.get("prompt_tokens")) + _int(usage.get("completion_tokens")) if isinstance(usage, dict) else 0


def read_stats(path: Path) -> SessionStats:
    """The figures of the session log at ``path`` (all zero for a missing or empty log). Never
    raises."""
    stats = SessionStats()
    slow: list[SlowCall] = []
    subagent_calls = False
    for record in read_log(path):
        kind = record["type"]
        if kind == "turn_started":
            stats.turns += 1
        elif kind == "model_call_finished":
            stats.model_calls += 1
            stats.calls_by_purpose[str(record.get("purpose", "main"))] += 1
            subagent_calls = subagent_calls or record.get("purpose") == "subagent"
            stats.failed_calls += record.get("outcome") == "error"
            stats.prompt_tokens += _int(record.get("prompt_tokens"))
            stats.completion_tokens += _int(record.get("completion_tokens"))
            stats.cached_prompt_tokens += _int(record.get("cached_prompt_tokens"))
            stats.estimated_calls += bool(record.get("usage_estimated"))
            stats.model_time_s += _float(record.get("latency_s"))
            if isinstance(record.get("cost_usd"), (int, float)):
                stats.cost_usd += float(record["cost_usd"])
            else:
                stats.unpriced_calls += 1
        elif kind == "tool_call_finished":
            stats.tool_calls += 1
            stats.mcp_calls += str(record.get("name", "")).startswith("mcp__")
            duration = _float(record.get("duration_s"))
            stats.tool_time_s += duration
            slow.append(SlowCall(str(record.get("name", "?")), str(record.get("arguments") or ""), duration,
                                 _int(record.get("turn"))))
        elif kind == "compaction_done":
            stats.compactions += 1
            stats.tokens_saved += _int(record.get("tokens_saved"))
        elif kind == "subagent_started":
            stats.subagents += 1
        elif kind in ("subagent_completed", "subagent_failed"):
            stats.subagent_tokens += _usage_tokens(record.get("usage"))
        elif kind == "hook_finished":
            stats.hooks += 1
            stats.hook_verdicts[str(record.get("verdict", "?"))] += 1
        elif kind == "guard_triggered":
            stats.guards[str(record.get("guard", "?"))] += 1
    stats.slowest = sorted(slow, key=lambda c: -c.duration_s)[:SLOWEST]
    stats.subagent_calls_logged = subagent_calls
    return stats


def logged_totals(path: Path) -> tuple[int, float]:
    """The tokens and US dollars the session log at ``path`` records (model calls, plus the
    totals of sub-agents whose calls were not logged one by one): where a resumed session's
    spending starts. ``(0, 0.0)`` for no log."""
    stats = read_stats(path)
    extra = 0 if stats.subagent_calls_logged else stats.subagent_tokens
    return stats.tokens + extra, stats.cost_usd


def _seconds(value: float) -> str:
    return f"{value:.1f} s" if value < 60 else f"{int(value // 60)} min {value % 60:02.0f} s"


def stats_rows(stats: SessionStats) -> list[tuple[str, str]]:
    """``(label, value)`` rows for showing ``stats`` (one figure each; sub-agents and hooks only
    when there were any). The slowest calls are ``slowest_rows``."""
    cost = format_usd(stats.cost_usd)
    if stats.unpriced_calls:
        cost += f" ({stats.unpriced_calls} call{'s' if stats.unpriced_calls != 1 else ''} unpriced)"
    calls = str(stats.model_calls)
    others = {k: v for k, v in stats.calls_by_purpose.items() if k != "main"}
    if others:
        calls += " (" + ", ".join(f"{v} {k}" for k, v in sorted(others.items())) + ")"
    tokens_in = f"{stats.prompt_tokens:,}"
    if stats.cached_prompt_tokens:
        tokens_in += f" ({stats.cached_prompt_tokens:,} cached)"
    rows = [("turns", str(stats.turns)), ("model calls", calls), ("tokens in", tokens_in),
            ("tokens out", f"{stats.completion_tokens:,}"), ("cost", cost),
            ("model time", _seconds(stats.model_time_s)),
            ("tool time", f"{_seconds(stats.tool_time_s)} ({stats.tool_calls} call{'s' if stats.tool_calls != 1 else ''}"
                          + (f", {stats.mcp_calls} MCP" if stats.mcp_calls else "") + ")"),
            ("compactions", f"{stats.compactions} (-{stats.tokens_saved:,} tokens)" if stats.compactions else "0")]
    if stats.estimated_calls:
        rows.insert(4, ("estimated", f"{stats.estimated_calls} call{'s' if stats.estimated_calls != 1 else ''} (no usage reported)"))
    if stats.subagents:
        rows.append(("sub-agents", f"{stats.subagents} ({stats.subagent_tokens:,} tokens)"))
    if stats.hooks:
        verdicts = ", ".join(f"{v} {k}" for k, v in sorted(stats.hook_verdicts.items()))
        rows.append(("hooks", f"{stats.hooks} ({verdicts})"))
    if stats.guards:
        rows.append(("guards", ", ".join(f"{v} {k}" for k, v in sorted(stats.guards.items()))))
    return rows


def slowest_rows(stats: SessionStats, width: int = 60) -> list[tuple[str, str]]:
    """``(duration, "name arguments")`` rows for the slowest tool calls, the text cut to
    ``width`` characters."""
    rows = []
    for call in stats.slowest:
        text = f"{call.name} {call.arguments}".strip()
        rows.append((f"{call.duration_s:.1f} s", text if len(text) <= width else text[:width - 1] + "…"))
    return rows


def stats_text(stats: SessionStats, width: int = 60) -> str:
    """The figures as plain text, one per line (``opencli-tui sessions stats``)."""
    rows = stats_rows(stats)
    pad = max(len(label) for label, _ in rows)
    lines = [f"{label:<{pad}}  {value}" for label, value in rows]
    if stats.slowest:
        lines.append("slowest tools")
        lines += [f"  {d:>8}  {text}" for d, text in slowest_rows(stats, width)]
    return "\n".join(lines)
