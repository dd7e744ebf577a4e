"""Hook isolation: each hook run gets its own time limit and worker thread, its exceptions become
a ``Notice`` and an ``error`` verdict, and a hook that fails three times in a session is switched
off (``HookRunner``), except a fail-closed one (a ``before_tool`` policy gate): it keeps running on
every call, each failure blocking that call, with one notice at the third failure that it keeps
blocking calls. Every run is announced by ``HookStarted`` and closed by ``HookFinished``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from ..events import Emit, HookFinished, HookStarted, HookVerdict, Notice

#: Failures (errors and time-outs) after which a hook is switched off for the session.
MAX_FAILURES = 3
#: Seconds a timed-out or cancelled hook's thread is given to notice its cancel event and end.
STOP_GRACE_S = 2.0
#: How often the waiting side looks at the user's cancel event (seconds).
POLL_S = 0.05


@dataclass(frozen=True)
class HookOutcome:
    """What one hook run returned: ``verdict``, ``message`` (one line, or the feedback for the
    next round), ``detail`` (longer text for the UI, e.g. failing test output) and ``value`` (a
    result the caller reads, e.g. a rewritten task or a lesson)."""

    verdict: HookVerdict
    message: str = ""
    detail: str = ""
    value: Any = None


#: The body of a hook: called with a cancel event (set on the user's Esc or the hook's time limit).
HookBody = Callable[[threading.Event], HookOutcome]


def one_line(text: str, limit: int = 200) -> str:
    """``text`` on one line (whitespace runs joined), cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class HookRunner:
    """Runs hooks isolated and keeps their failure counts for one session (thread-safe).

    ``run(name, event, round, body, emit=..., cancel=..., timeout_s=...)`` returns the
    ``HookOutcome``: the body's, or ``timeout`` past ``timeout_s`` seconds, ``error`` when it raised,
    ``disabled`` once it has failed ``MAX_FAILURES`` times (never with ``fail_closed=True``: such a
    hook runs every time, and its caller blocks on each failure), ``skipped`` with message
    ``cancelled`` when the user cancelled meanwhile. Never raises.
    """

    def __init__(self, max_failures: int = MAX_FAILURES) -> None:
        self.max_failures = max_failures
        self._failures: dict[str, int] = {}
        self._lock = threading.Lock()

    def disabled(self, name: str) -> bool:
        """True when hook ``name`` has been switched off for this session."""
        with self._lock:
            return self._failures.get(name, 0) >= self.max_failures

    def failures(self, name: str) -> int:
        """How many times hook ``name`` failed (errors and time-outs) in this session."""
        with self._lock:
            return self._failures.get(name, 0)

    def run(self, name: str, event: str, round_no: int, body: HookBody, *, emit: Emit,
            cancel: threading.Event, timeout_s: float, key: str | None = None, agent: str = "main",
            fail_closed: bool = False) -> HookOutcome:
        """Run ``body`` as hook ``name`` on ``event`` in round ``round_no`` (see the class docstring).
        ``key``: what its failures are counted under when several hooks share a name (default ``name``);
        ``agent``: whose tool call it is about (the events' ``agent``); ``fail_closed``: a policy gate
        whose failure blocks what it guards, never switched off."""
        key = key or name
        emit(HookStarted(hook=name, event=event, round=round_no, agent=agent))
        started = time.monotonic()
        if not fail_closed and self.disabled(key):
            outcome = HookOutcome("disabled", f"switched off after {self.max_failures} failures in this session")
        else:
            outcome = self._isolated(name, body, cancel, timeout_s)
            if outcome.verdict in ("error", "timeout"):
                self._count_failure(key, name, outcome, emit, fail_closed)
        emit(HookFinished(hook=name, event=event, round=round_no, verdict=outcome.verdict,
                          duration_s=round(time.monotonic() - started, 3), message=one_line(outcome.message, 500),
                          detail=outcome.detail, agent=agent))
        return outcome

    def _isolated(self, name: str, body: HookBody, cancel: threading.Event, timeout_s: float) -> HookOutcome:
        stop = threading.Event()
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["outcome"] = body(stop)
            except BaseException as exc:  # noqa: BLE001 - a hook's failure never reaches the loop
                box["error"] = exc

        worker = threading.Thread(target=work, name=f"hook-{name}", daemon=True)
        worker.start()
        deadline = time.monotonic() + timeout_s
        while worker.is_alive():
            if cancel.is_set():
                stop.set()
                worker.join(STOP_GRACE_S)
                return HookOutcome("skipped", "cancelled")
            left = deadline - time.monotonic()
            if left <= 0:
                stop.set()
                worker.join(STOP_GRACE_S)
                return HookOutcome("timeout", f"did not finish within {timeout_s:g} s and was stopped")
            worker.join(min(POLL_S, left))
        if "error" in box:
            exc = box["error"]
            return HookOutcome("error", f"{type(exc).__name__}: {exc}")
        outcome = box.get("outcome")
        if not isinstance(outcome, HookOutcome):
            return HookOutcome("error", f"{name} returned {type(outcome).__name__}, not a verdict")
        return outcome

    def _count_failure(self, key: str, name: str, outcome: HookOutcome, emit: Emit, fail_closed: bool) -> None:
        with self._lock:
            count = self._failures.get(key, 0) + 1
            self._failures[key] = count
        if count > self.max_failures:  # a fail-closed hook past its notice: its verdict line says enough
            return
        what = "failed: " if outcome.verdict == "error" else ""
        emit(Notice(message=f"Hook {name} {what}{one_line(outcome.message, 300)}"))
        if count == self.max_failures:
            shown = name if key == name else f"{name} (`{key.split('#', 1)[-1]}`)"
            if fail_closed:
                emit(Notice(message=f"Hook {shown} failed {count} times and keeps failing: it still runs on every "
                                    "call and blocks each call it fails on. Fix it in your user config."))
            else:
                emit(Notice(message=f"Hook {shown} failed {count} times: switched off for this session."))
