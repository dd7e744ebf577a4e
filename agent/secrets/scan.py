"""Finding the secret spans of a text or byte string quickly (used by ``redact``).

A pattern with ``needles`` runs only on the lines that contain one of them (found with
``str.find``/``bytes.find`` on the lower-cased text, which is far faster than a regex scan),
unless there are so many such lines that one scan of the whole text is cheaper. Patterns that
span lines (``multiline``) scan the whole text when a needle occurs. Overlapping findings are
merged, so one replacement covers them.

For bytes (saved tool outputs, redacted as they stream at hundreds of MB/s) which needles occur
can be found in one pass over the data by an RE2 set (``NeedleSet``, google-re2: one DFA over all
the needles at once) instead of one ``in`` scan per needle over a lower-cased copy
(``Redactor.data`` does so); the text is lower-cased only when some pattern's needles occur.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Collection, Sequence

try:
    import re2  # google-re2
except ImportError:  # pragma: no cover - a dependency; without it each needle is its own scan
    re2 = None

#: Past this many candidate lines for one pattern, the pattern scans the whole text instead.
MAX_WINDOWS = 400


def _windows(lowered: Any, needles: Sequence[Any], newline: Any) -> list[tuple[int, int]] | None:
    """The merged spans of the lines of ``lowered`` containing a needle; None: too many (scan all)."""
    size = len(lowered)
    spans: list[tuple[int, int]] = []
    for needle in needles:
        at = lowered.find(needle)
        while at != -1:
            start = lowered.rfind(newline, 0, at) + 1
            end = lowered.find(newline, at)
            end = size if end == -1 else end + 1
            spans.append((start, end))
            if len(spans) > MAX_WINDOWS:
                return None
            at = lowered.find(needle, end)
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


class NeedleSet:
    """Which of a fixed list of needles occur in a byte string, found in one pass (an RE2 set).

    ``needles``: ``(needle, exact)`` pairs; a needle is ``str`` (ASCII; used as its bytes) or
    ``bytes``. An exact needle must occur byte for byte; the others are lower-case ASCII and occur
    in any ASCII letter case (where ``needle in data.lower()`` finds them: the data is read as
    Latin-1, so only ASCII letters fold). Raises ``ValueError`` for a needle that breaks these
    rules and ``re2.error`` if RE2 cannot build the set. Thread-safe.
    """

    def __init__(self, needles: Sequence[tuple[str | bytes, bool]]) -> None:
        self._needles = tuple(dict.fromkeys(needles))
        options = re2.Options()
        options.encoding = re2.Options.Encoding.LATIN1
        options.never_capture = True
        self._set = re2.Set.SearchSet(options)
        for needle, exact in self._needles:
            raw = needle.encode("ascii") if isinstance(needle, str) else bytes(needle)
            if not raw or (not exact and (not raw.isascii() or raw != raw.lower())):
                raise ValueError(f"not a usable needle: {needle!r}")
            self._set.Add((b"" if exact else b"(?i)") + re2.escape(raw))
        self._set.Compile()

    def present(self, data: bytes | bytearray | memoryview) -> set[tuple[str | bytes, bool]]:
        """The ``(needle, exact)`` pairs that occur somewhere in ``data`` (one scan of its bytes,
        about 1.7 ms per MiB on the 2-core AMD EPYC it was measured on,
        holding the GIL)."""
        if not data:
            return set()
        return {self._needles[i] for i in (self._set.Match(data) or ())}


def find_spans(text: Any, patterns: Sequence[tuple[Any, re.Pattern]], tag: Callable[[str], Any],
               found: Collection[tuple[str | bytes, bool]] | None = None) -> list[tuple[int, int, Any]]:
    """The ``(start, end, replacement)`` spans to replace in ``text`` (str or bytes), sorted and
    non-overlapping. ``patterns``: ``(SecretPattern, compiled regex of text's type)`` pairs;
    ``tag(label)`` builds a replacement. ``found``: for bytes, the ``(needle, exact)`` pairs of
    the patterns' needles that occur in ``text`` (``NeedleSet.present``) when already known; a
    needle not in it counts as absent. Without it each needle is looked for with ``in``."""
    is_bytes = isinstance(text, (bytes, bytearray))
    lowered_cache: list[Any] = []

    def lowered_text() -> Any:
        if not lowered_cache:
            lowered_cache.append(text.lower())
        return lowered_cache[0]

    # str.lower() can change lengths (rare letters); bytes.lower() only maps A-Z.
    same_length = is_bytes or len(lowered_text()) == len(text)
    newline = b"\n" if is_bytes else "\n"
    found_needles: dict[tuple[str, Any], bool] = {}
    if is_bytes and found is not None:
        for pattern, _ in patterns:
            key = "exact" if pattern.exact_needles else "lower"
            for needle in pattern.needles:
                found_needles[(key, needle.encode())] = (needle, pattern.exact_needles) in found
            for needle in pattern.requires:
                found_needles[("lower", needle.encode())] = (needle, False) in found
    hits: list[tuple[int, int, Any]] = []
    whole = [(0, len(text))]
    def present(needles: Sequence[str], key: str) -> list[Any]:
        out = []
        for needle in needles:
            raw = needle.encode() if is_bytes else needle
            hit = found_needles.get((key, raw))
            if hit is None:
                hit = found_needles[(key, raw)] = raw in (text if key == "exact" else lowered_text())
            if hit:
                out.append(raw)
        return out

    for pattern, compiled in patterns:
        spans = whole
        if pattern.requires and not present(pattern.requires, "lower"):
            continue
        if pattern.needles:
            key = "exact" if pattern.exact_needles else "lower"
            occurring = present(pattern.needles, key)
            if not occurring:
                continue
        target = lowered_text() if pattern.on_lowered else text
        if pattern.on_lowered and not same_length:  # spans of the lowered text would not map back
            compiled, target = re.compile(compiled.pattern, re.IGNORECASE), text
        if pattern.needles:
            haystack = text if pattern.exact_needles else lowered_text()
            if (same_length or pattern.exact_needles) and not pattern.multiline:
                spans = _windows(haystack, occurring, newline) or whole
        for start, end in spans:
            for match in compiled.finditer(target, start, end):
                group = pattern.group
                if group and match.group(group) is not None:
                    hits.append((*match.span(group), tag(pattern.label)))
                else:
                    hits.append((*match.span(), tag(pattern.label)))
    hits.sort(key=lambda h: (h[0], -h[1]))
    merged: list[tuple[int, int, Any]] = []
    for start, end, replacement in hits:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(end, last[1]), last[2])
        elif end > start:
            merged.append((start, end, replacement))
    return merged


def apply_spans(text: Any, spans: list[tuple[int, int, Any]]) -> Any:
    """``text`` with each ``(start, end, replacement)`` of ``find_spans`` applied."""
    if not spans:
        return text
    pieces = []
    last = 0
    for start, end, replacement in spans:
        pieces.append(text[last:start])
        pieces.append(replacement)
        last = end
    pieces.append(text[last:])
    return (b"" if isinstance(text, (bytes, bytearray)) else "").join(pieces)
