"""``@path`` in a prompt: the file's content goes with the message, as the ``read`` tool returns it.

``attach_mentions(prompt, read)`` finds the ``@path`` words of a prompt (an ``@`` at the start
of a word, the path up to the next whitespace; trailing ``.,;:!?)`` left out) that name a file
``read`` can open, and appends each file once, after the prompt, in a ``<file path="...">``
block holding what ``read(path)`` returns: numbered lines, paged (the first 2000) and capped like
any read, so the model can page on with ``read``. Words naming no readable file stay as typed.
Claude Code, Gemini CLI and Codex attach files the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

_MENTION = re.compile(r"(?<!\S)@([^\s@]+)")
_TRAILING = ".,;:!?)]}'\""
#: The most files one prompt attaches.
MAX_ATTACHED = 10


@dataclass(frozen=True)
class Attachment:
    """One attached file: ``path`` as typed, ``text`` what ``read`` returned, ``lines`` counted."""

    path: str
    text: str
    lines: int


def mentioned_paths(prompt: str) -> list[str]:
    """The ``@path`` words of ``prompt``, in order, each once, trailing punctuation left out."""
    found: list[str] = []
    for match in _MENTION.finditer(prompt):
        path = match.group(1).rstrip(_TRAILING)
        if path and path not in found:
            found.append(path)
    return found


def attach_mentions(prompt: str, read: Callable[[str], str | None]) -> tuple[str, list[Attachment]]:
    """``prompt`` with the files it mentions appended, and those files. ``read(path)`` returns
    the read tool's text for ``path``, or None when it is no readable file (the word stays)."""
    attached: list[Attachment] = []
    for path in mentioned_paths(prompt)[:MAX_ATTACHED]:
        text = read(path)
        if text is None:
            continue
        lines = sum(1 for line in text.splitlines() if re.match(r"^ *\d+\t", line))
        attached.append(Attachment(path, text, lines))
    if not attached:
        return prompt, []
    blocks = "\n\n".join(f'<file path="{a.path}">\n{a.text}\n</file>' for a in attached)
    return f"{prompt}\n\n{blocks}", attached


__all__ = ["Attachment", "MAX_ATTACHED", "attach_mentions", "mentioned_paths"]
