""""Allow for this session" answers (``SessionGrant``) and their journal form.

A grant is only ever an allow rule, checked after the deny rules and before the mode gate's
"ask": it never overrides a deny rule, a read-only mode or the ``.git/`` protection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

#: Tools whose calls are command lines (rules are command prefixes for them).
COMMAND_TOOLS = frozenset({"bash"})


#: The scopes of an "allow for this session" answer (``PermissionDecision.scope`` minus ``once``).
GrantScope = Literal["session_tool", "session_prefix"]
#: What a tool name in a grant may look like (journals are read back: nothing else is trusted).
_TOOL_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
#: The longest command prefix a grant may hold (characters).
MAX_PREFIX_CHARS = 1000


@dataclass(frozen=True)
class SessionGrant:
    """One "allow for this session" answer.

    ``scope``: ``session_tool`` (every later call of ``tool``) or ``session_prefix`` (later
    ``tool`` command lines, i.e. bash, whose every command starts with ``prefix``, in words).
    ``prefix`` is "" for a tool grant.

    Journal form: ``session.records.PermissionGrantRecord`` (``checked`` validates what it read).
    """

    scope: GrantScope
    tool: str
    prefix: str = ""

    @classmethod
    def checked(cls, scope: Any, tool: Any, prefix: Any = "") -> "SessionGrant | None":
        """Return the grant these journaled values describe, or ``None`` when they are not
        well-formed (an unknown scope, a tool name that is not a plain name, an empty or over-long
        prefix, a prefix grant for a tool that takes no command line). Nothing malformed is applied."""
        if not isinstance(tool, str) or not _TOOL_NAME.fullmatch(tool):
            return None
        if scope == "session_tool":
            return cls("session_tool", tool)
        if scope == "session_prefix" and tool in COMMAND_TOOLS and isinstance(prefix, str):
            prefix = prefix.strip()
            if prefix and len(prefix) <= MAX_PREFIX_CHARS:
                return cls("session_prefix", tool, prefix)
        return None
