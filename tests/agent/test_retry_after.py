"""Retries wait what the provider asks for (Retry-After), count down, and stop at max_retry_time."""

from __future__ import annotations

import threading
from email.utils import format_datetime
from datetime import datetime, timezone

import httpx
import pytest

from agent.events import Notice, StepRetried
from agent.loop.retry import RetryPolicy, call_with_retries
from agent.providers.base import ProviderError
from agent.providers.litellm_loader import load_litellm
from agent.providers.litellm_provider import classify_exception
from agent.providers.retry_after import parse_retry_after
from tests.helpers import Recorder


class RecordingCancel(threading.Event):
    """A cancel event whose ``wait`` records the timeout and moves the fake clock ``now`` on
    instead of sleeping."""

    def __init__(self, now: list[float] | None = None) -> None:
        super().__init__()
        self.waits: list[float] = []
        self.now = now if now is not None else [0.0]

    def wait(self, timeout=None):  # noqa: D401 - Event's signature
        self.waits.append(timeout)
        self.now[0] += timeout or 0.0
        return self.is_set()


def failing(*errors: ProviderError, result: str = "ok"):
    queue = list(errors)

    def attempt():
        if queue:
            raise queue.pop(0)
        return result

    return attempt


def test_retry_after_seconds_http_date_and_ms_are_parsed():
    assert parse_retry_after({"Retry-After": "5"}) == 5.0
    assert parse_retry_after({"retry-after": " 2.5 "}) == 2.5
    assert parse_retry_after({"retry-after-ms": "1500", "Retry-After": "9"}) == 1.5
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    date = format_datetime(datetime(2026, 1, 1, 12, 0, 30, tzinfo=timezone.utc), usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=now.timestamp()) == pytest.approx(30.0)
    assert parse_retry_after({"Retry-After": date}, now=now.timestamp() + 60) == 0.0  # already past
    for bad in ({"Retry-After": "soon"}, {"Retry-After": "-3"}, {}, None):
        assert parse_retry_after(bad) is None


def test_retry_after_is_read_from_a_litellm_rate_limit_error():
    litellm = load_litellm()
    response = httpx.Response(429, headers={"Retry-After": "7"},
                              request=httpx.Request("POST", "http://127.0.0.1/v1/chat/completions"))
    exc = litellm.RateLimitError("slow down", llm_provider="openai", model="gpt-4.1", response=response)
    error = classify_exception(exc)
    assert error.kind == "rate_limit" and error.retry_after_s == 7.0
    plain = classify_exception(litellm.RateLimitError("slow down", llm_provider="openai", model="gpt-4.1"))
    assert plain.retry_after_s is None


def test_retry_after_is_honoured_instead_of_the_backoff():
    cancel, events = RecordingCancel(), Recorder()
    attempt = failing(ProviderError("rate_limit", "rate limited", retry_after_s=12.0))
    assert call_with_retries(attempt, RetryPolicy(), emit=events, cancel=cancel) == "ok"
    assert sum(cancel.waits) == pytest.approx(12.0, abs=1.0)  # not the 1 s of the backoff
    assert max(cancel.waits) <= 5.0  # the wait is cut into countdown steps


def test_backoff_without_retry_after_is_exponential():
    cancel = RecordingCancel()
    errors = [ProviderError("server", "boom") for _ in range(3)]
    call_with_retries(failing(*errors), RetryPolicy(base_delay_s=1.0), emit=Recorder(), cancel=cancel)
    assert cancel.waits == [1.0, 2.0, 4.0]


def test_retry_countdown_notices_share_one_key_and_count_down():
    cancel, events = RecordingCancel(), Recorder()
    call_with_retries(failing(ProviderError("rate_limit", "rate limited", retry_after_s=12.0)), RetryPolicy(),
                      emit=events, cancel=cancel)
    notices = events.of(Notice)
    assert len(notices) >= 2 and len({n.key for n in notices}) == 1 and notices[0].key
    assert notices[0].retry_in_s == 12.0 and "retrying in 12 s as the provider asked" in notices[0].message
    assert [n.retry_in_s for n in notices] == sorted((n.retry_in_s for n in notices), reverse=True)


def test_retry_stops_when_the_retry_time_runs_out():
    now = [0.0]
    cancel = RecordingCancel(now)
    errors = [ProviderError("rate_limit", "rate limited", retry_after_s=30.0) for _ in range(5)]

    def attempt():
        now[0] += 10.0  # each attempt takes 10 s before it fails
        raise errors.pop(0)

    events = Recorder()
    with pytest.raises(ProviderError) as info:
        call_with_retries(attempt, RetryPolicy(max_retries=4, max_retry_time_s=120.0), emit=events, cancel=cancel,
                          clock=lambda: now[0])
    # failures at 10, 50, 90 s on the clock (spent 0, 40, 80); the next wait of 30 s would make 110
    # and is taken; the failure at 130 (spent 120) stops: 120 + 30 > 120.
    assert len(events.of(StepRetried)) == 3
    assert info.value.message == ("rate limited; gave up after 3 retries in 120 s (the next wait of 30 s "
                                  "would pass max_retry_time = 120 s)")


def test_retry_after_longer_than_the_retry_time_is_not_waited():
    cancel, events = RecordingCancel(), Recorder()
    with pytest.raises(ProviderError) as info:
        call_with_retries(failing(ProviderError("rate_limit", "rate limited", retry_after_s=600.0)),
                          RetryPolicy(max_retry_time_s=120.0), emit=events, cancel=cancel)
    assert cancel.waits == [] and events.of(StepRetried) == []
    assert info.value.message == ("rate limited; the provider asked to wait 600 s, longer than "
                                  "max_retry_time = 120 s: not retrying")


def test_step_retried_reports_whether_partial_deltas_were_shown():
    events = Recorder()
    shown = iter([True, False])
    call_with_retries(failing(ProviderError("server", "cut"), ProviderError("network", "down")), RetryPolicy(),
                      emit=events, cancel=threading.Event(), instant=True, emitted_partial=lambda: next(shown))
    assert [(e.attempt, e.reason, e.discard_partial) for e in events.of(StepRetried)] == [
        (2, "cut", True), (3, "down", False)]


def test_retries_that_run_out_say_how_many_were_made():
    errors = [ProviderError("rate_limit", "rate limited", retry_after_s=1.0) for _ in range(3)]
    with pytest.raises(ProviderError) as info:
        call_with_retries(failing(*errors), RetryPolicy(max_retries=2), emit=Recorder(), cancel=RecordingCancel())
    assert info.value.kind == "rate_limit" and info.value.message == "rate limited; gave up after 2 retries"
