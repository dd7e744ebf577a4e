"""Finding the secret spans of a text or byte string quickly (used by ``redact``).

A pattern with ``needles`` runs only on the lines that contain one of them (found with
``str.find``/``bytes.find`` on the lower-cased text, which is far faster than a regex scan),
unless there are so many such lines that one scan of the whole text is cheaper. Patterns that
span lines (``multiline``) scan the whole text when a needle occurs. Overlapping findings are
merged, so one replacement covers them.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

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


def find_spans(text: Any, patterns: Sequence[tuple[Any, re.Pattern]], tag: Callable[[str], Any]) -> list[tuple[int, int, Any]]:
    """The ``(start, end, replacement)`` spans to replace in ``text`` (str or bytes), sorted and
    non-overlapping. ``patterns``: ``(SecretPattern, compiled regex of text's type)`` pairs;
    ``tag(label)`` builds a replacement."""
    is_bytes = isinstance(text, (bytes, bytearray))
    lowered = text.lower()
    same_length = len(lowered) == len(text)  # str.lower() can change lengths (rare letters)
    newline = b"\n" if is_bytes else "\n"
    found_needles: dict[tuple[str, Any], bool] = {}
    hits: list[tuple[int, int, Any]] = []
    whole = [(0, len(text))]
    def present(needles: Sequence[str], haystack: Any, key: str) -> list[Any]:
        out = []
        for needle in needles:
            raw = needle.encode() if is_bytes else needle
            hit = found_needles.get((key, raw))
            if hit is None:
                hit = found_needles[(key, raw)] = raw in haystack
            if hit:
                out.append(raw)
        return out

    for pattern, compiled in patterns:
        spans = whole
        target = lowered if pattern.on_lowered else text
        if pattern.on_lowered and not same_length:  # spans of the lowered text would not map back
            compiled, target = re.compile(compiled.pattern, re.IGNORECASE), text
        if pattern.requires and not present(pattern.requires, lowered, "lower"):
            continue
        if pattern.needles:
            haystack, key = (text, "exact") if pattern.exact_needles else (lowered, "lower")
            found = present(pattern.needles, haystack, key)
            if not found:
                continue
            if (same_length or pattern.exact_needles) and not pattern.multiline:
                spans = _windows(haystack, found, newline) or whole
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
