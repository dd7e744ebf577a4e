"""Why a turn was cancelled: the user (Esc, Ctrl+C) or the process being asked to end.

The loop's cancel handle is a ``threading.Event``; ``interrupt`` sets it and marks it, so the turn
ends with stop reason ``interrupted`` (SIGTERM / SIGHUP) instead of ``cancelled``, in the event,
the journal and the exit code alike.
"""

from __future__ import annotations

import threading

_INTERRUPTED = "_opencli_interrupted"


def interrupt(cancel: threading.Event) -> None:
    """Cancel the turn watching ``cancel`` because the process is asked to end."""
    setattr(cancel, _INTERRUPTED, True)
    cancel.set()


def was_interrupted(cancel: threading.Event | None) -> bool:
    """Whether ``cancel`` was set by ``interrupt`` (not by the user)."""
    return bool(getattr(cancel, _INTERRUPTED, False))
