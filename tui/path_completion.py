"""Completing ``@path`` in the prompt from the workspace's files (Tab), fuzzily.

``complete_mention(text, files)`` looks at the word the prompt ends with: when it starts with
``@``, the files whose path holds the typed letters in order (case ignored) are the candidates,
best first: the file name starting with them, then holding them in one piece, then in order
anywhere; shorter paths first. One candidate (or a typed path that is a file) completes to
``@path `` (with a space); several extend the word to their common start when they share more
than was typed, else Tab picks the best; the others are listed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Sequence

_LAST_MENTION = re.compile(r"(?:^|(?<=\s))@(\S*)$")
#: Candidates listed under the prompt.
MAX_LISTED = 6


@dataclass(frozen=True)
class MentionCompletion:
    """What Tab does: ``text`` (the new prompt) and ``candidates`` (paths, best first)."""

    text: str
    candidates: tuple[str, ...]


def _rank(path: str, typed: str) -> tuple[int, int] | None:
    lowered, name = path.lower(), path.rsplit("/", 1)[-1].lower()
    if name.startswith(typed):
        return 0, len(path)
    if typed in lowered:
        return 1, len(path)
    at = 0
    for char in typed:
        at = lowered.find(char, at)
        if at < 0:
            return None
        at += 1
    return 2, len(path)


def complete_mention(text: str, files: Sequence[str]) -> MentionCompletion | None:
    """Complete the ``@path`` word ``text`` ends with from ``files`` (workspace-relative paths);
    None when ``text`` does not end with such a word."""
    match = _LAST_MENTION.search(text)
    if match is None:
        return None
    typed = match.group(1)
    if typed in files:
        return MentionCompletion(text + " ", (typed,))
    key = typed.lower()
    ranked = sorted((r, p) for p in files if (r := _rank(p, key)) is not None)
    candidates = tuple(p for _, p in ranked)
    start = text[: match.start(1)]
    if not candidates:
        return MentionCompletion(text, ())
    if len(candidates) == 1:
        return MentionCompletion(f"{start}{candidates[0]} ", candidates)
    common = os.path.commonprefix(list(candidates))
    if len(common) > len(typed) and common.lower().startswith(key):
        return MentionCompletion(start + common, candidates)
    return MentionCompletion(f"{start}{candidates[0]} ", candidates)  # Tab picks the best match


__all__ = ["MAX_LISTED", "MentionCompletion", "complete_mention"]
