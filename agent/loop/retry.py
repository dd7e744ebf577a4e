"""Retrying transient provider errors: the wait the provider asks for (``Retry-After``), else
exponential backoff; a countdown notice while waiting; a cap on the time spent retrying."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, TypeVar

from ..events import Emit, Notice, StepRetried
from ..messages import new_id
from ..providers.base import ProviderError

T = TypeVar("T")

#: Seconds between two countdown notices while waiting to retry.
COUNTDOWN_EVERY_S = 5.0


@dataclass
class RetryPolicy:
    """``max_retries`` extra attempts; delay before retry k (1-based) is the provider's
    ``Retry-After`` when it sent one, else ``min(base_delay_s * 2**(k-1), max_delay_s)`` seconds.
    No retry starts once ``max_retry_time_s`` seconds (from the first failure, waits and retried
    attempts included) would be passed by its wait. An empty reply is retried once only."""

    max_retries: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    max_empty_retries: int = 1
    max_retry_time_s: float = 120.0


def retry_delay(exc: ProviderError, retry: int, policy: RetryPolicy) -> float:
    """Seconds to wait before retry number ``retry`` (1-based) after ``exc``: the provider's
    ``retry_after_s`` when set (not capped by ``max_delay_s``: it is what the provider asked
    for), else the exponential backoff of ``policy``."""
    if exc.retry_after_s is not None:
        return max(0.0, exc.retry_after_s)
    return min(policy.base_delay_s * 2 ** (retry - 1), policy.max_delay_s)


def call_with_retries(attempt: Callable[[], T], policy: RetryPolicy, *, emit: Emit,
                      cancel: threading.Event, instant: bool = False,
                      emitted_partial: Callable[[], bool] = lambda: False,
                      clock: Callable[[], float] = time.monotonic) -> T:
    """Call ``attempt`` until it succeeds, a non-retryable ``ProviderError`` is raised, retries
    or the retry time (``policy.max_retry_time_s``) run out, or ``cancel`` is set during a wait.

    Each retry emits ``StepRetried`` (``discard_partial`` from ``emitted_partial()``: whether the
    failed attempt emitted text or reasoning deltas) and a countdown ``Notice`` (one ``key``;
    updated every ``COUNTDOWN_EVERY_S`` seconds, ``retry_in_s`` seconds left). ``instant`` skips
    the sleeps (the scripted provider in replay mode). Raises the ``ProviderError`` that ended the
    retries: the error itself when it was not retryable or came first; after retries, one of the
    same kind whose message adds how many were made (and, when the retry time ran out, so).
    """
    retries = 0
    empty_retries = 0
    first_failure: float | None = None
    while True:
        try:
            return attempt()
        except ProviderError as exc:
            if not exc.retryable:
                raise
            if retries >= policy.max_retries or (exc.kind == "empty" and empty_retries >= policy.max_empty_retries):
                if not retries:
                    raise
                raise ProviderError(exc.kind, f"{exc.message}; gave up after {_retries(retries)}",
                                    retry_after_s=exc.retry_after_s) from exc
            if exc.kind == "empty":
                empty_retries += 1
            now = clock()
            first_failure = now if first_failure is None else first_failure
            delay = retry_delay(exc, retries + 1, policy)
            spent = now - first_failure
            if spent + delay > policy.max_retry_time_s:
                raise _out_of_time(exc, retries, spent, delay, policy) from exc
            retries += 1
            emit(StepRetried(attempt=retries + 1, reason=exc.message, discard_partial=bool(emitted_partial())))
            if instant:
                delay = 0.0
            _countdown(exc, delay, retries, policy, emit, cancel)
            if cancel.is_set():
                raise ProviderError(exc.kind, f"{exc.message} (cancelled while waiting to retry)") from exc


def _countdown(exc: ProviderError, delay: float, retry: int, policy: RetryPolicy, emit: Emit,
               cancel: threading.Event) -> None:
    """Wait ``delay`` seconds (returns early when ``cancel`` is set), emitting one countdown notice
    at the start and one every ``COUNTDOWN_EVERY_S`` seconds."""
    key = new_id("retry")
    asked = " as the provider asked" if exc.retry_after_s is not None else ""
    remaining = delay
    while True:
        emit(Notice(message=f"{exc.message}; retrying in {remaining:.0f} s{asked} "
                            f"(retry {retry} of {policy.max_retries})", key=key, retry_in_s=round(remaining, 1)))
        step = min(COUNTDOWN_EVERY_S, remaining)
        if step <= 0 or cancel.wait(step):
            return
        remaining -= step
        if remaining < 1.0:  # the last moment needs no notice of its own
            if remaining > 0:
                cancel.wait(remaining)
            return


def _retries(count: int) -> str:
    return f"{count} {'retry' if count == 1 else 'retries'}"


def _out_of_time(exc: ProviderError, retries: int, spent: float, delay: float,
                 policy: RetryPolicy) -> ProviderError:
    """The error that ends the retries when the next wait would pass ``max_retry_time_s``."""
    cap = f"max_retry_time = {policy.max_retry_time_s:g} s"
    if exc.retry_after_s is not None and exc.retry_after_s > policy.max_retry_time_s:
        why = f"the provider asked to wait {exc.retry_after_s:.0f} s, longer than {cap}: not retrying"
    elif retries:
        why = (f"gave up after {_retries(retries)} in {spent:.0f} s "
               f"(the next wait of {delay:.0f} s would pass {cap})")
    else:
        why = f"the wait of {delay:.0f} s would pass {cap}: not retrying"
    return ProviderError(exc.kind, f"{exc.message}; {why}", retry_after_s=exc.retry_after_s)
