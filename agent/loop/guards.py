"""Stuck-loop detection (DESIGN.md 4 "stuck loop").

``LoopGuard`` watches the sequence of executed tool calls in one user turn. The loop asks
``check()`` before running a call and reports the outcome with ``record()`` after. Calls are
compared by tool name and canonical JSON arguments (key order and spacing ignored); results by
their exact text, except error results, which are compared after replacing digit runs and long
hex ids (durations, timestamps, pids, temp names) so the same failure counts as the same.

Rules (each looks only at consecutive executed calls, so identical calls separated by other work
are never flagged):

- ``repeated_failure``: the same call failed twice in a row with the same error; the third is
  not run.
- ``stuck``: the same call returned the same (successful) result twice in a row; the third is not
  run. When the two results differ it is polling, and the call runs.
- ``ping_pong``: a cycle of two (A, B, A, B) or three calls repeated twice with every result
  unchanged; the call that would start the third round is not run. Two full rounds are needed
  before the pattern counts as established.

The first time a pattern is caught the verdict is ``warn``: the loop gives the model the
``message`` as the call's (error) result instead of running it. If the model then continues the
same pattern in the same turn, the verdict is ``stop``: the run ends with stop reason ``stuck``
(the TUI offers Continue / Stop). ``reset()`` at each user turn forgets everything.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import deque
from dataclasses import dataclass
from typing import Any, Literal

from ..messages import json_loads, unwrap_double_encoded

GuardName = Literal["stuck", "ping_pong", "repeated_failure"]
#: Longest call cycle (in calls) the ping-pong rule looks for.
MAX_CYCLE = 3
#: Tool result for a call that was not run because the guard stopped the run.
STOPPED_RESULT_TEXT = "Not run: the run was stopped by the stuck-loop guard."
_VOLATILE_RE = re.compile(r"\b[0-9a-f]{8,}\b|\d+", re.IGNORECASE)
_SPACE_RE = re.compile(r"\s+")
_PREVIEW_CHARS = 80


@dataclass(frozen=True)
class GuardVerdict:
    """What to do with a tool call.

    ``action``: ``allow`` (run it), ``warn`` (do not run it; give the model ``message`` as the
    call's error result), ``stop`` (do not run it; end the run with stop reason ``stuck`` and
    show ``message`` to the user). ``guard`` names the rule (``None`` for allow).
    """

    action: Literal["allow", "warn", "stop"]
    guard: GuardName | None = None
    message: str = ""


ALLOW = GuardVerdict("allow")


def canonical_arguments(arguments: Any) -> str:
    """Return ``arguments`` as canonical JSON (sorted keys, compact separators, non-ASCII kept).

    ``arguments`` is the raw JSON text of a call (or an already decoded value). Empty text counts
    as ``{}``; a JSON string holding a JSON object is decoded once more (as the tool registry
    does); text that is not JSON is returned stripped, as is.
    """
    value = arguments
    if isinstance(arguments, str):
        text = arguments.strip()
        if not text:
            return "{}"
        try:
            value = unwrap_double_encoded(json_loads(text))
        except ValueError:
            return text
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _outcome(result_text: str, is_error: bool) -> tuple[str, str]:
    if is_error:
        text = _SPACE_RE.sub(" ", _VOLATILE_RE.sub("#", result_text)).strip()
        return ("error", hashlib.sha256(text.encode("utf-8", "replace")).hexdigest())
    return ("ok", hashlib.sha256(result_text.encode("utf-8", "replace")).hexdigest())


@dataclass(frozen=True)
class _Executed:
    key: tuple[str, str]
    outcome: tuple[str, str]


def _describe(key: tuple[str, str]) -> str:
    name, args = key
    if len(args) > _PREVIEW_CHARS:
        args = args[:_PREVIEW_CHARS] + "..."
    return f"{name} {args}"


class LoopGuard:
    """Detects stuck loops within one user turn; see the module docstring for the rules.

    Use: ``reset()`` when a user turn starts; for every tool call ``check(name, arguments)``
    first, then, only if the call was actually run, ``record(name, arguments, result, is_error)``
    with the tool's own output (before any reminder suffix is appended). Calls answered with a
    warning or not run are not recorded.
    """

    def __init__(self) -> None:
        self._calls: deque[_Executed] = deque(maxlen=2 * MAX_CYCLE)
        self._warned: set[tuple] = set()

    def reset(self) -> None:
        """Forget all calls and warnings (call at the start of each user turn)."""
        self._calls.clear()
        self._warned.clear()

    def record(self, name: str, arguments: Any, result_text: str, is_error: bool) -> None:
        """Remember one executed call: tool ``name``, its raw ``arguments`` (JSON text), the result
        text the tool returned and whether it was an error."""
        self._calls.append(_Executed((name, canonical_arguments(arguments)), _outcome(result_text, is_error)))

    def check(self, name: str, arguments: Any) -> GuardVerdict:
        """Return the verdict for running tool ``name`` with ``arguments`` (raw JSON text) next."""
        key = (name, canonical_arguments(arguments))
        found = self._same_call(key) or self._cycle(key)
        if found is None:
            return ALLOW
        guard, pattern, warning = found
        if pattern in self._warned:
            return GuardVerdict("stop", guard, self._stop_message(guard, key))
        self._warned.add(pattern)
        return GuardVerdict("warn", guard, warning)

    def _same_call(self, key: tuple[str, str]) -> tuple[GuardName, tuple, str] | None:
        if len(self._calls) < 2:
            return None
        first, second = self._calls[-2], self._calls[-1]
        if first.key != key or second.key != key or first.outcome != second.outcome:
            return None  # different calls, or polling: the result changed
        call = _describe(key)
        if first.outcome[0] == "error":
            return ("repeated_failure", ("repeated_failure", key),
                    f"Not run: {call} failed twice in a row with the same error, so running it unchanged "
                    "will fail again. Read the error and change the call or fix its cause first, or ask "
                    "the user.")
        return ("stuck", ("stuck", key),
                f"Not run: you called {call} with the same arguments twice in a row and got the same "
                "result both times, so a third identical call would change nothing. Change your approach "
                "(other arguments, another tool), or tell the user what is blocking you.")

    def _cycle(self, key: tuple[str, str]) -> tuple[GuardName, tuple, str] | None:
        calls = list(self._calls)
        for period in range(2, MAX_CYCLE + 1):
            if len(calls) < 2 * period:
                continue
            window = calls[-2 * period:]
            round_one, round_two = window[:period], window[period:]
            keys = [c.key for c in round_one]
            if round_one != round_two or len(set(keys)) < 2 or key != keys[0]:
                continue
            names = " / ".join(_describe(k) for k in keys)
            pattern = ("ping_pong", tuple(sorted(set(keys))))
            return ("ping_pong", pattern,
                    f"Not run: you are cycling through the same {period} calls ({names}) and every result "
                    "was the same in both rounds, so another round would change nothing. Break the cycle: "
                    "do something different, or tell the user what is blocking you.")
        return None

    @staticmethod
    def _stop_message(guard: GuardName, key: tuple[str, str]) -> str:
        what = {"stuck": "repeated the same call with the same result",
                "repeated_failure": "repeated a call that keeps failing with the same error",
                "ping_pong": "kept cycling through the same calls with the same results"}[guard]
        return (f"Stopped: the agent {what} after a warning ({guard}; last call: {_describe(key)}). "
                "Send a message to continue with new guidance.")
