"""The wait a provider asks for before a retry: ``retry-after-ms`` and ``Retry-After`` headers.

``Retry-After`` is either a number of seconds or an HTTP-date (RFC 9110 10.2.3); some providers
(OpenAI, Azure) also send ``retry-after-ms``, which is more precise and wins. The headers are
found on the exception litellm raises (its ``response`` or ``litellm_response_headers``) or on
an exception it wraps.
"""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime
from typing import Any, Mapping

#: A header value above this many seconds is treated as nonsense (a year), not as a wait.
_MAX_SANE_S = 365 * 24 * 3600.0


def parse_retry_after(headers: Mapping[str, Any] | None, *, now: float | None = None) -> float | None:
    """Return the wait asked for by ``headers`` in seconds (>= 0), or ``None`` when they name none.

    ``headers``: any mapping (``httpx.Headers``, a dict) whose keys are compared case-blind.
    ``now``: the current time (Unix seconds) used to turn an HTTP-date into a wait; the clock
    when omitted. A date in the past gives 0. Unparsable values are ignored. Raises nothing.
    """
    if not headers:
        return None
    try:
        lowered = {str(k).lower(): v for k, v in dict(headers).items()}
    except Exception:  # noqa: BLE001 - an odd mapping: no wait known
        return None
    ms = _number(lowered.get("retry-after-ms"))
    if ms is not None:
        return min(ms / 1000.0, _MAX_SANE_S)
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is not None:
        return min(seconds, _MAX_SANE_S)
    try:
        when = parsedate_to_datetime(str(raw).strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    current = time.time() if now is None else now
    return min(max(0.0, when.timestamp() - current), _MAX_SANE_S)


def retry_after_of(exc: BaseException | None) -> float | None:
    """Return the wait (seconds) asked for by the response behind ``exc``, or ``None``.

    Looks at ``exc.litellm_response_headers``, ``exc.response.headers`` and ``exc.headers``, then
    at the exceptions ``exc`` wraps (``__cause__``, ``__context__``, ``original_exception``), at
    most a few levels deep. Raises nothing."""
    seen: set[int] = set()
    todo = [exc]
    while todo and len(seen) < 8:
        current = todo.pop(0)
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        for headers in _header_sources(current):
            wait = parse_retry_after(headers)
            if wait is not None:
                return wait
        todo.extend([getattr(current, "original_exception", None), current.__cause__, current.__context__])
    return None


def _header_sources(exc: BaseException) -> list[Any]:
    sources = []
    for getter in (lambda: getattr(exc, "litellm_response_headers", None),
                   lambda: getattr(getattr(exc, "response", None), "headers", None),
                   lambda: getattr(exc, "headers", None)):
        try:
            value = getter()
        except Exception:  # noqa: BLE001 - e.g. an exception whose ``response`` property raises
            continue
        if value is not None:
            sources.append(value)
    return sources


def _number(value: Any) -> float | None:
    if value is None:
        return None
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    if number != number or number < 0:  # NaN or negative
        return None
    return number
