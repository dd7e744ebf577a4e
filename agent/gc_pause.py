"""Pausing Python's full (generation 2) garbage collections while latency matters.

A full collection scans every object the process holds: after litellm's import about 800 000,
and a long conversation's widgets and render caches on top. It holds the GIL for 0.1-0.7 s, so
the UI's event loop stops that long: a visible freeze of a streaming reply, or of the screen
while litellm imports at start-up (measured with ``benchmarks/idle_cpu.py``: gen-2 passes of
107-216 ms every second of the import, which were most of the event loop's lag then).

``pause_full_collections()`` raises generation 2's threshold out of reach (young generations are
still collected, which is cheap); ``resume_full_collections()`` restores it once every pause has
been resumed (pauses nest: a turn may start while the import runs) and, by default, collects the
young generations and freezes the survivors (``gc.freeze``), so no automatic full pass re-scans
them later. Thread-safe.
"""

from __future__ import annotations

import gc
import threading

#: Generation 2's threshold while paused: never reached in practice.
PAUSED_THRESHOLD = 1_000_000

_lock = threading.Lock()
_holders = 0
_saved: tuple[int, int, int] | None = None


def pause_full_collections() -> None:
    """Stop automatic full collections until the matching ``resume_full_collections()``."""
    global _holders, _saved
    with _lock:
        if _holders == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(_saved[0], _saved[1], PAUSED_THRESHOLD)
        _holders += 1


def resume_full_collections(*, freeze: bool = True) -> None:
    """End one pause (a call without a pause does nothing). When it was the last one, restore
    the thresholds; with ``freeze``, then collect generations 0-1 and freeze what survived."""
    global _holders, _saved
    with _lock:
        if _holders == 0:
            return
        _holders -= 1
        if _holders or _saved is None:
            return
        gc.set_threshold(*_saved)
        _saved = None
    if freeze:
        gc.collect(1)
        gc.freeze()


def full_collections_paused() -> bool:
    """True while some pause is not resumed."""
    return _holders > 0
