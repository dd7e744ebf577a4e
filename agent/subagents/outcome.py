"""How a sub-agent ended, as its parent's tool result says it.

A sub-agent that finished (``done``) returns its final text. Every other end is an error result
that says plainly what happened and that the text is not a result: a turn cap, the time limit,
the user's Esc, a provider error, the loop guard, the session budget. What it had written so far
follows as notes, cut to ``PARTIAL_CHARS``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..events import ToolOutcome

#: Characters of a stopped sub-agent's last text quoted in its result.
PARTIAL_CHARS = 2000
#: The reasons a sub-agent fails with (``SubagentFailed.stop_reason``).
FAILED_REASONS = ("max_turns", "timeout", "cancelled", "error", "stuck", "budget")


@dataclass(frozen=True)
class SubagentOutcome:
    """The end of one sub-agent: ``stop_reason`` (``done`` or one of ``FAILED_REASONS``), the
    result ``text`` for the parent's model, ``message`` (one line for the user), and the tool
    call's ``outcome`` (``ok``, ``error``, ``cancelled``, ``interrupted``)."""

    stop_reason: str
    text: str
    message: str
    outcome: ToolOutcome

    @property
    def ok(self) -> bool:
        return self.stop_reason == "done"


def outcome_of(stop_reason: str, final_text: str, *, index: int, description: str, max_turns: int,
               time_limit_s: float, notes: str = "", error: str = "", interrupted: bool = False,
               turn_cap: int | None = None) -> SubagentOutcome:
    """The outcome of sub-agent ``index`` (its ``description``) whose loop stopped with
    ``stop_reason`` (a ``TurnFinished`` stop reason, or ``timeout`` when its wall-clock limit
    of ``time_limit_s`` seconds stopped it): ``final_text`` is its answer when ``done``,
    ``notes`` the last text it wrote otherwise; ``max_turns`` is its step limit, ``error`` the
    provider's message, ``interrupted`` the process is ending; ``turn_cap`` the most steps the
    settings allow a sub-agent (a call cannot ask for more; None: no cap known)."""
    who = f"Sub-agent {index} ({description})"
    if stop_reason == "done":
        final = final_text.strip() or f"{who} finished without writing a result."
        return SubagentOutcome("done", final, f"{who} finished", "ok")
    reason = stop_reason if stop_reason in FAILED_REASONS else ("cancelled" if stop_reason == "interrupted"
                                                                 else "error")
    outcome: ToolOutcome = "error"
    advice = ""
    if reason == "max_turns":
        what = f"stopped at its turn cap (max_turns = {max_turns}) before it finished"
        advice = (" Narrow the task, or give it a higher max_turns." if turn_cap is None or max_turns < turn_cap
                  else f" Narrow the task or split it into smaller tasks ({turn_cap} steps is the most a sub-agent "
                       "may take: [subagents] max_turns).")
    elif reason == "timeout":
        what = f"stopped at its time limit of {time_limit_s:g} s before it finished"
        advice = " Narrow the task."
    elif reason == "cancelled":
        what = ("was cancelled before it finished: the app was stopped (SIGTERM, SIGHUP or Ctrl+C)" if interrupted
                else "was cancelled by the user before it finished")
        advice = " Do not retry unless asked."
        outcome = "interrupted" if interrupted else "cancelled"
    elif reason == "stuck":
        what = "was stopped by the stuck-loop guard before it finished"
    elif reason == "budget":
        what = "was stopped because the session's budget is spent"
    else:
        what = f"failed: {error or 'it stopped with an error'}"
    message = f"{who} {what}"
    text = f"{message}. This is not a result.{advice}"
    notes = notes.strip()
    if notes:
        cut = notes if len(notes) <= PARTIAL_CHARS else notes[:PARTIAL_CHARS] + " [...]"
        text += f"\nIts notes so far (unfinished):\n{cut}"
    return SubagentOutcome(reason, text, message, outcome)
