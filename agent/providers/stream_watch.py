"""Time limits around a blocking model stream: time to first chunk, silence between chunks, total.

The HTTP call and the reads run in a daemon thread that hands each chunk over through a queue; the
caller's thread waits on that queue with the limits in mind, so a server that accepts the
connection and then says nothing is noticed (``Waiting`` items, then a ``timeout``
``ProviderError``) and Esc (``cancel``) is obeyed even while a read is blocked.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Literal

from .base import ProviderError

#: How often the caller's thread looks at ``cancel`` while nothing arrives (seconds).
POLL_S = 0.1


@dataclass(frozen=True)
class StreamLimits:
    """Limits of one streamed call, in seconds.

    ``first_token_s``: from sending the request to the first chunk; ``idle_s``: between two
    chunks; ``total_s``: the whole call. ``notice_after_s``: silence after which ``Waiting`` items
    start, then one every ``notice_every_s``.
    """

    first_token_s: float = 60.0
    idle_s: float = 60.0
    total_s: float = 600.0
    notice_after_s: float = 10.0
    notice_every_s: float = 5.0


@dataclass(frozen=True)
class Waiting:
    """Nothing arrived for ``seconds``; ``phase`` is ``first_token`` or ``next_chunk``."""

    seconds: float
    phase: Literal["first_token", "next_chunk"]


def watch_stream(open_stream: Callable[[], Any], limits: StreamLimits, cancel: threading.Event, *,
                 clock: Callable[[], float] = time.monotonic) -> Iterator[Any]:
    """Yield the chunks of the iterable ``open_stream()`` returns, interleaved with ``Waiting``
    items while it is silent.

    Ends quietly when the stream ends or ``cancel`` is set. Raises ``ProviderError("timeout")``
    when a limit of ``limits`` is passed (the message names the limit and its setting), and
    re-raises whatever ``open_stream`` or the iteration raised. On every exit the stream is
    closed (its ``close()``, when it has one) and the reading thread told to stop.
    """
    items: queue.Queue = queue.Queue()
    stop = threading.Event()
    holder: dict[str, Any] = {}

    def pump() -> None:
        try:
            stream = open_stream()
            holder["stream"] = stream
            if stop.is_set():
                return
            for chunk in stream:
                if stop.is_set():
                    return
                items.put(("chunk", chunk))
            items.put(("end", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            items.put(("error", exc))
        finally:
            if stop.is_set():
                close_stream(holder.get("stream"))

    thread = threading.Thread(target=pump, name="opencli-model-stream", daemon=True)
    thread.start()
    start = last = clock()
    got_chunk = False
    next_notice = limits.notice_after_s
    try:
        while True:
            now = clock()
            silent = now - last
            phase: Literal["first_token", "next_chunk"] = "next_chunk" if got_chunk else "first_token"
            limit = limits.idle_s if got_chunk else limits.first_token_s
            if now - start >= limits.total_s:
                raise ProviderError("timeout", f"the model call took longer than {limits.total_s:g} s "
                                               "(request_timeout)")
            if silent >= limit:
                raise ProviderError("timeout", _silence_message(phase, limit))
            if silent >= next_notice:
                yield Waiting(seconds=silent, phase=phase)
                next_notice += limits.notice_every_s
                continue
            wait = min(POLL_S, limit - silent, next_notice - silent, limits.total_s - (now - start))
            try:
                kind, value = items.get(timeout=max(wait, 0.001))
            except queue.Empty:
                if cancel.is_set():
                    return
                continue
            if kind == "chunk":
                got_chunk = True
                last = clock()
                next_notice = limits.notice_after_s
                yield value
                if cancel.is_set():
                    return
            elif kind == "end":
                return
            else:
                raise value
    finally:
        stop.set()
        close_stream(holder.get("stream"))


def _silence_message(phase: str, limit: float) -> str:
    if phase == "first_token":
        return (f"no reply from the model within {limit:g} s of sending the request "
                "(first_token_timeout)")
    return f"the model's stream went silent for {limit:g} s (stream_idle_timeout)"


def close_stream(stream: Any) -> None:
    """Close a stream early (``close()`` when it has one); errors are ignored. Raises nothing."""
    close = getattr(stream, "close", None)
    if callable(close):
        try:
            close()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass
