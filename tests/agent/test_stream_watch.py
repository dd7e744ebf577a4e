"""A hung provider does not wait silently: first-chunk and idle limits, waiting notices, Esc."""

from __future__ import annotations

import threading
import time

import pytest

from agent.events import Notice, TextDelta
from agent.loop.reply import StreamedAttempt
from agent.providers.base import ModelRequest, ProviderError, StreamDelta
from agent.providers.stream_watch import StreamLimits, Waiting, watch_stream
from tests.helpers import Recorder


class Silent:
    """An iterable that yields ``chunks`` and then blocks until ``release`` is set (a server
    that stops talking); ``closed`` records that the watcher closed it."""

    def __init__(self, chunks=(), delay_first: float = 0.0) -> None:
        self.chunks = list(chunks)
        self.delay_first = delay_first
        self.release = threading.Event()
        self.closed = threading.Event()

    def __iter__(self):
        if self.delay_first:
            self.release.wait(self.delay_first)
        yield from self.chunks
        self.release.wait(30)

    def close(self):
        self.closed.set()
        self.release.set()


def test_silent_provider_fails_at_the_first_token_limit_with_waiting_notices_before():
    stream = Silent()
    limits = StreamLimits(first_token_s=0.6, idle_s=10, total_s=10, notice_after_s=0.2, notice_every_s=0.2)
    seen = []
    with pytest.raises(ProviderError) as info:
        for item in watch_stream(lambda: stream, limits, threading.Event()):
            seen.append(item)
    assert info.value.kind == "timeout" and info.value.retryable
    assert "first_token_timeout" in info.value.message and "0.6 s" in info.value.message
    assert seen and all(isinstance(w, Waiting) and w.phase == "first_token" for w in seen)
    assert [round(w.seconds, 1) >= 0.2 for w in seen] == [True] * len(seen)
    assert stream.closed.wait(5)


def test_stream_that_goes_silent_fails_at_the_idle_limit():
    stream = Silent(chunks=["a", "b"])
    limits = StreamLimits(first_token_s=10, idle_s=0.4, total_s=10, notice_after_s=5)
    seen = []
    with pytest.raises(ProviderError) as info:
        for item in watch_stream(lambda: stream, limits, threading.Event()):
            seen.append(item)
    assert seen == ["a", "b"]
    assert "stream_idle_timeout" in info.value.message


def test_cancel_ends_a_blocked_stream():
    stream = Silent()
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    items = list(watch_stream(lambda: stream, StreamLimits(notice_after_s=30), cancel))
    assert items == [] and stream.closed.wait(5)


def test_errors_of_the_stream_reach_the_caller():
    def broken():
        raise RuntimeError("connection refused")

    with pytest.raises(RuntimeError, match="connection refused"):
        list(watch_stream(broken, StreamLimits(), threading.Event()))


class WaitingProvider:
    instant_retries = True

    def stream(self, request, cancel):
        yield StreamDelta(kind="waiting", waited_s=10.2, phase="first_token")
        yield StreamDelta(kind="waiting", waited_s=15.3, phase="first_token")
        yield StreamDelta(kind="text", text="hello")
        yield StreamDelta(kind="waiting", waited_s=10.0, phase="next_chunk")
        yield StreamDelta(kind="text", text=" world")


def test_waiting_deltas_become_keyed_waiting_notices():
    events = Recorder()
    attempt = StreamedAttempt(WaitingProvider(), ModelRequest(model="m", messages=[]), "m", events,
                              threading.Event())
    reply = attempt()
    assert reply.content == "hello world" and attempt.emitted_partial
    notices = events.of(Notice)
    assert [n.message for n in notices] == ["waiting for the model (10 s)", "waiting for the model (15 s)",
                                            "waiting for the model (10 s), its reply paused"]
    assert notices[0].key == notices[1].key != notices[2].key  # one status per silence
    assert [n.waiting_s for n in notices] == [10.2, 15.3, 10.0]
    assert "".join(e.text for e in events.of(TextDelta)) == "hello world"
