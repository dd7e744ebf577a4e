"""Running one tool call under Esc and a time limit.

``run_with_limit`` runs the call in a worker thread and waits for it while watching the caller's
cancel event and the call's deadline. The tool gets a cancel event of its own, set on Esc or at
the deadline, so the tools that can stop (bash, grep, glob's walk, anything polling
``ctx.cancel``) stop for real and kill their processes; the runner gives them ``STOP_GRACE_S``
seconds to do so, then answers without them. A tool that cannot stop (a call blocked in the
kernel) is abandoned in its daemon thread: the loop goes on, and the result says so.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Callable

from .base import ToolContext, ToolOutput

#: Time a stopped tool is given to end on its own (seconds): more than a process group's
#: SIGTERM-to-SIGKILL grace (2 s), so a stopped command is really dead when the call returns.
STOP_GRACE_S = 5.0
#: How often cancel and the deadline are checked while a call runs (seconds).
POLL_S = 0.05


#: What a call stopped at its limit is told to do next, unless its tool says otherwise.
DEFAULT_ADVICE = "Narrow the call (a smaller path, a more specific pattern) instead of repeating it."


def over_limit_text(name: str, limit_s: float, still_running: bool, advice: str | None = None) -> str:
    """The result text of a call stopped at its time limit (``limit_s`` seconds); ``advice`` (a
    tool's ``limit_advice``) replaces ``DEFAULT_ADVICE``."""
    tail = " (it did not stop in time and was abandoned)" if still_running else ""
    return f"stopped: over the {limit_s:g} s limit of {name}{tail}. {advice or DEFAULT_ADVICE}"


def run_with_limit(run: Callable[[ToolContext], ToolOutput], ctx: ToolContext, *, name: str,
                   limit_s: float | None, advice: str | None = None) -> ToolOutput:
    """Call ``run(inner_ctx)`` in a worker thread and return its output, or stop waiting.

    ``inner_ctx`` is ``ctx`` with a cancel event of its own and ``time_limit_s = limit_s``
    (seconds; None or 0 = no limit). When ``ctx.cancel`` is set, the inner event is set and the
    tool's own result is returned if it ends within ``STOP_GRACE_S`` seconds (bash reports what
    the command printed), else a cancelled result. At the deadline the inner event is set, the
    tool gets the same grace, and an error result says which limit was exceeded (with ``advice``,
    see ``over_limit_text``). Exceptions
    raised by ``run`` (while it was waited for) are raised again here."""
    stop = threading.Event()
    inner = replace(ctx, cancel=stop, time_limit_s=limit_s or None)
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["output"] = run(inner)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc

    worker = threading.Thread(target=target, name=f"tool-{name}", daemon=True)
    deadline = time.monotonic() + limit_s if limit_s else None
    worker.start()
    reason = ""
    while True:
        worker.join(POLL_S)
        if not worker.is_alive():
            break
        if ctx.cancel.is_set():
            reason = "cancelled"
            break
        if deadline is not None and time.monotonic() >= deadline:
            reason = "limit"
            break
    if reason:
        stop.set()
        worker.join(STOP_GRACE_S)
    still_running = worker.is_alive()
    if reason == "limit":
        return ToolOutput(text=over_limit_text(name, limit_s or 0.0, still_running, advice), is_error=True)
    if reason == "cancelled" and (still_running or "output" not in box):
        tail = " (it did not stop in time and was abandoned)" if still_running else ""
        return ToolOutput(text=f"[cancelled by user: {name} was stopped{tail}]", is_error=True,
                          outcome="cancelled")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["output"]  # type: ignore[return-value]
