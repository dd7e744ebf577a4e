"""Ending on SIGTERM / SIGHUP without leaving commands behind, for ``run`` and the TUI.

The bash tool runs each command in a session of its own (so Esc can kill its whole tree), which
also means a ``kill`` of the app or a closed terminal does not reach it. ``end_running_commands``
kills what is still running; ``take_default_action`` then ends the process as the signal would
have. ``cli`` installs ``install_headless_handlers`` for ``run``; the TUI handles the signals in
its event loop (``OpenCLIApp.on_terminate_signal``) so SIGTERM can restore the terminal first.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

#: The signals that end the app while commands may be running.
TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def end_running_commands() -> None:
    """Kill the commands the bash tool is running, with their process trees. Does nothing when
    the tool was never imported (no command ever ran); never raises."""
    process = sys.modules.get("agent.process")
    if process is not None:
        process.kill_running_commands()


def take_default_action(signum: int) -> None:
    """End the process as ``signum`` would without our handler (restore ``SIG_DFL``, re-raise)."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def install_headless_handlers() -> None:
    """``run``: on SIGTERM / SIGHUP end the running commands, then take the default action."""

    def on_signal(signum: int, _frame: Any) -> None:
        end_running_commands()
        take_default_action(signum)

    for signum in TERMINATING_SIGNALS:
        signal.signal(signum, on_signal)
