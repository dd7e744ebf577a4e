"""Tool names for MCP tools and how their calls are shown.

A tool ``query`` of server ``db`` is offered as ``mcp__db__query`` (the convention of Claude
Code and Codex CLI). Providers accept function names matching ``^[a-zA-Z0-9_-]{1,64}$`` (OpenAI,
Anthropic; Gemini also allows ``.`` and ``:`` but is stricter on the first character), so every
other character becomes ``_`` and a name longer than 64 characters is cut, with a short hash of
the full name appended so two long names stay distinct. Two tools of one server that still
make the same name (``do.it`` and ``do_it``) are told apart by a suffix (``unique_names``).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from ..events import ToolView
from ..tools.view import compact_arguments

PREFIX = "mcp__"
#: The longest function name providers accept (characters).
MAX_NAME_CHARS = 64
_BAD = re.compile(r"[^A-Za-z0-9_-]")


def sanitize(part: str) -> str:
    """``part`` with every character outside ``[A-Za-z0-9_-]`` made ``_`` ("" becomes ``_``)."""
    return _BAD.sub("_", part) or "_"


def tool_name(server: str, tool: str) -> str:
    """The offered name of ``tool`` of ``server``: ``mcp__<server>__<tool>``, sanitised, at most
    64 characters (a longer one keeps its first 55 and adds ``_`` + 8 hex digits of its sha1)."""
    name = f"{PREFIX}{sanitize(server)}__{sanitize(tool)}"
    if len(name) <= MAX_NAME_CHARS:
        return name
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
    return f"{name[:MAX_NAME_CHARS - 9]}_{digest}"


def unique_names(server: str, tools: list[str]) -> tuple[list[str], list[str]]:
    """Offered names for ``tools`` (raw tool names of ``server``, in the order given) that are
    all distinct, and a notice for each clash. The first tool of each ``tool_name`` keeps it; a
    later tool whose name sanitises to a taken one (``do.it`` and ``do_it``) gets ``_2``, ``_3``...
    (the name cut so it stays within 64 characters), the first suffix no other tool has. Returns
    ``(names, notices)``: ``names[i]`` is the name of ``tools[i]``."""
    natural = [tool_name(server, tool) for tool in tools]
    taken: set[str] = set()
    names: list[str | None] = []
    for name in natural:
        names.append(None if name in taken else name)
        taken.add(name)
    notices: list[str] = []
    for index, name in enumerate(names):
        if name is not None:
            continue
        base = natural[index]
        number = 2
        while True:
            suffix = f"_{number}"
            candidate = base[:MAX_NAME_CHARS - len(suffix)] + suffix
            if candidate not in taken:
                break
            number += 1
        taken.add(candidate)
        names[index] = candidate
        first = tools[natural.index(base)]
        notices.append(f"MCP server {server}: the tools {first!r} and {tools[index]!r} both make the name {base}; "
                       f"{tools[index]!r} is offered as {candidate}.")
    return [n for n in names if n is not None], notices


def split_name(name: str) -> tuple[str, str] | None:
    """``(server, tool)`` of an offered name (as sanitised), or None when ``name`` is not one."""
    if not name.startswith(PREFIX):
        return None
    server, sep, tool = name[len(PREFIX):].partition("__")
    return (server, tool) if sep and server and tool else None


def call_view(name: str, arguments: Any, *, server: str | None = None, tool: str | None = None) -> ToolView:
    """How a call of MCP tool ``name`` is shown: the title ``<tool> · <server> (MCP)`` and the
    arguments on one line. ``server``/``tool`` default to what the name says (a journaled call
    whose server is gone is still shown by its server)."""
    parts = split_name(name)
    server = server or (parts[0] if parts else "?")
    tool = tool or (parts[1] if parts else name)
    return ToolView(title=f"{tool} · {server} (MCP)", summary=compact_arguments(arguments))
