"""Calling the user back to the terminal: the bell or an OSC 9 desktop notification when a long
turn ends or a permission prompt waits while the terminal is not focused.

``Attention`` follows Textual's ``AppFocus`` / ``AppBlur`` events (terminals that report focus;
where none is reported the app counts as focused and nothing rings). ``[notify]`` in the
settings picks ``bell`` (default), ``osc9`` (iTerm2, WezTerm, kitty, foot and others show it as a
desktop notification) or ``off``. Headless runs have no terminal to call back to.
"""

from __future__ import annotations

import time
from typing import Any, Callable

#: A turn shorter than this (seconds) ends without a call back.
LONG_TURN_S = 10.0


class Attention:
    """The focus state and the call back. ``write(sequence)`` sends raw bytes to the terminal
    (the app's driver); ``mode`` is ``bell``, ``osc9`` or ``off``; ``clock`` gives seconds."""

    def __init__(self, write: Callable[[str], None], mode: str = "bell",
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.write, self.mode, self.clock = write, mode, clock
        self.focused = True
        self.turn_started: float | None = None
        self.sent: list[str] = []  # what was sent, for tests and the status line

    def turn_started_now(self) -> None:
        """A turn began (its length decides whether its end calls back)."""
        self.turn_started = self.clock()

    def turn_ended(self) -> bool:
        """A turn ended: call back when it ran over ``LONG_TURN_S`` unseen. Returns True when sent."""
        started, self.turn_started = self.turn_started, None
        if started is None or self.clock() - started < LONG_TURN_S:
            return False
        return self.call("opencli-tui: the turn has ended")

    def prompt_waiting(self) -> bool:
        """A permission prompt waits for the user: call back. Returns True when sent."""
        return self.call("opencli-tui: a tool call waits for your permission")

    def call(self, message: str) -> bool:
        """Ring or notify with ``message`` unless the terminal is focused or the mode is off."""
        if self.focused or self.mode == "off":
            return False
        sequence = f"\x1b]9;{_clean(message)}\x07" if self.mode == "osc9" else "\x07"
        try:
            self.write(sequence)
        except Exception:  # noqa: BLE001 - a call back is a nicety
            return False
        self.sent.append(sequence)
        return True


def _clean(text: str) -> str:
    """``text`` without the control characters that would end or break the escape sequence."""
    return "".join(ch for ch in text if ch >= " " and ch != "\x7f")


def driver_writer(app: Any) -> Callable[[str], None]:
    """Write to the terminal of ``app`` (Textual's driver; nothing without one, e.g. in tests)."""
    def write(sequence: str) -> None:
        driver = getattr(app, "_driver", None)
        if driver is not None:
            driver.write(sequence)
            driver.flush()
    return write


__all__ = ["Attention", "LONG_TURN_S", "driver_writer"]
