"""Retrying transient provider errors with exponential backoff and a visible notice."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, TypeVar

from ..events import Emit, Notice
from ..providers.base import ProviderError

T = TypeVar("T")


@dataclass
class RetryPolicy:
    """``max_retries`` extra attempts; delay before retry k (1-based) is
    ``min(base_delay_s * 2**(k-1), max_delay_s)`` seconds. An empty reply is retried once only."""

    max_retries: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    max_empty_retries: int = 1


def call_with_retries(attempt: Callable[[], T], policy: RetryPolicy, *, emit: Emit,
                      cancel: threading.Event, instant: bool = False) -> T:
    """Call ``attempt`` until it succeeds, a non-retryable ``ProviderError`` is raised, retries
    run out, or ``cancel`` is set during a wait. Each retry emits a ``Notice``.

    ``instant`` skips the sleeps (the scripted provider in replay mode). Raises the last
    ``ProviderError``.
    """
    retries = 0
    empty_retries = 0
    while True:
        try:
            return attempt()
        except ProviderError as exc:
            if not exc.retryable or retries >= policy.max_retries:
                raise
            if exc.kind == "empty":
                if empty_retries >= policy.max_empty_retries:
                    raise
                empty_retries += 1
            retries += 1
            delay = 0.0 if instant else min(policy.base_delay_s * 2 ** (retries - 1), policy.max_delay_s)
            emit(Notice(message=f"{exc.message}; retrying in {delay:.0f} s "
                                f"(retry {retries} of {policy.max_retries})"))
            if delay and cancel.wait(delay):
                raise ProviderError(exc.kind, f"{exc.message} (cancelled while waiting to retry)") from exc
            if cancel.is_set():
                raise
