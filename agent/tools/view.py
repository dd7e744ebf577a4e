"""Helpers for how a tool call is shown (``events.ToolView``): one-line summaries and the
generic view of calls no tool describes.

Each tool describes its own calls (``Tool.describe``), so a user interface needs no list of tool
names: the TUI's tool blocks and the permission prompt read the ``ToolView`` the loop puts on
``ToolCallStarted`` and ``PermissionRequest``.
"""

from __future__ import annotations

import json
from typing import Any

from ..events import ToolBody, ToolView


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) made one space."""
    return " ".join(text.split())


def compact_arguments(arguments: Any) -> str:
    """A one-line rendering of arguments: compact JSON for objects, the raw string as it came (an
    invalid JSON string), "" for None."""
    if arguments is None:
        return ""
    if isinstance(arguments, (dict, list)):
        if not arguments:
            return ""
        return one_line(json.dumps(arguments, ensure_ascii=False, separators=(", ", ": ")))
    return one_line(str(arguments))


def generic_view(name: str, arguments: Any) -> ToolView:
    """The view of a call no tool describes (an unknown tool, or arguments its model rejects):
    the name and the arguments on one line."""
    return ToolView(title=name, summary=compact_arguments(arguments))


__all__ = ["ToolBody", "ToolView", "compact_arguments", "generic_view", "one_line"]
