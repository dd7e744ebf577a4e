"""Ending on SIGTERM / SIGHUP cleanly, without leaving commands behind, for ``run`` and the TUI.

``run`` (``install_headless_handlers``): the first SIGTERM or SIGHUP during a turn interrupts it
(``agent.cancel.interrupt``): the running command's tree is killed, the loop writes the journal's
``turn_finished`` record and emits ``turn_finished`` with stop reason ``interrupted``, and
``run_headless`` exits with ``EXIT_INTERRUPTED`` (143) and a one-line reason on stderr. If the
turn has not ended ``FORCE_EXIT_S`` seconds later, or at a second signal, the commands are killed
and the process exits 143 at once. Outside a turn (starting up, closing) the signal ends the run
with 143 straight away (``SystemExit``). The TUI handles the signals in its event loop
(``OpenCLIApp.on_terminate_signal``) so that SIGTERM can restore the terminal first; it uses
``interrupt_and_wait`` for the turn.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

#: The signals that end the app while commands may be running.
TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
#: Exit code of a run ended by SIGTERM / SIGHUP (128 + SIGTERM, as a shell reports it).
EXIT_INTERRUPTED = 143
#: Seconds an interrupted turn is given to end before the process exits regardless.
FORCE_EXIT_S = 10.0

_turn_cancel: threading.Event | None = None
#: The first terminating signal received (None before any).
received: int | None = None


def signal_name(signum: int | None) -> str:
    """``SIGTERM`` for 15 and so on (``a signal`` when unknown)."""
    try:
        return signal.Signals(signum).name if signum is not None else "a signal"
    except ValueError:
        return f"signal {signum}"


def interrupted_reason(signum: int | None) -> str:
    """The one-line reason of an interrupted run (without the program name)."""
    return f"interrupted by {signal_name(signum)}: the turn was stopped (--continue resumes the session)"


def end_running_commands() -> None:
    """Kill the commands the tools are running, with their process trees. Does nothing when
    ``agent.process`` was never imported (no command ever ran); never raises."""
    process = sys.modules.get("agent.process")
    if process is not None:
        process.kill_running_commands()


def take_default_action(signum: int) -> None:
    """End the process as ``signum`` would without our handler (restore ``SIG_DFL``, re-raise)."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _say(line: str) -> None:
    """Write ``opencli-tui: LINE`` on stderr, ignoring a closed or gone terminal."""
    try:
        sys.stderr.write(f"opencli-tui: {line}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _exit_now(signum: int | None, why: str = "") -> None:
    end_running_commands()
    _say(interrupted_reason(signum) + why)
    os._exit(EXIT_INTERRUPTED)


@contextmanager
def interruptible_turn(cancel: threading.Event) -> Iterator[None]:
    """While the block runs, a terminating signal interrupts the turn watching ``cancel``."""
    global _turn_cancel
    _turn_cancel = cancel
    try:
        yield
    finally:
        _turn_cancel = None


def _on_signal(signum: int, _frame: Any) -> None:
    global received
    first = received is None
    received = received or signum
    cancel = _turn_cancel
    if not first:
        _exit_now(received, " (a second signal: not waiting for the turn)")
    if cancel is None:
        end_running_commands()
        _say(interrupted_reason(signum))
        raise SystemExit(EXIT_INTERRUPTED)
    from agent.cancel import interrupt

    interrupt(cancel)
    timer = threading.Timer(FORCE_EXIT_S, _exit_now, args=(signum, f" (the turn did not end within {FORCE_EXIT_S:g} s)"))
    timer.daemon = True
    timer.start()


def install_headless_handlers() -> None:
    """``run``: SIGTERM / SIGHUP interrupt the turn (see the module docstring). Main thread only."""
    global received
    received = None
    for signum in TERMINATING_SIGNALS:
        signal.signal(signum, _on_signal)


def interrupt_and_wait(cancel: threading.Event, turn_running: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    """Interrupt the turn watching ``cancel`` and wait up to ``timeout_s`` seconds while
    ``turn_running()`` is true (the loop writes the end of the turn meanwhile). Returns whether
    the turn ended in time. For the TUI, which must not block its event loop for long."""
    from agent.cancel import interrupt

    interrupt(cancel)
    end = time.monotonic() + timeout_s
    while turn_running() and time.monotonic() < end:
        time.sleep(0.02)
    return not turn_running()
