""""Allow for this session" answers (``SessionGrant``) and their journal form.

A grant is only ever an allow rule, checked after the deny rules and before the mode gate's
"ask": it never overrides a deny rule, a read-only mode or the ``.git/`` protection. Nor does it
cover a command line the risk analysis flags (``grant_gaps``): that line still asks, and the
prompt says why (``grant_gap_note``).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Literal

from .shell.parse import SimpleCommand, parse_command_line
from .shell.risk import command_risk

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


def _within(path: str, workspace: Path) -> bool:
    """True when the redirect target ``path`` surely lies inside ``workspace`` (a target with a
    variable, a substitution or ``~user`` is not known to)."""
    if not path or any(ch in path for ch in "$`") or (path.startswith("~") and not path.startswith("~/")):
        return False
    target = Path(os.path.expanduser(path))
    if not target.is_absolute():
        target = workspace / target
    try:
        resolved = target.resolve()
        root = workspace.resolve()
    except (OSError, RuntimeError):
        return False
    return resolved == root or root in resolved.parents


def _risky_prefix(prefix: str) -> bool:
    parsed = parse_command_line(prefix)
    return not parsed.ok or any(command_risk(c) for c in parsed.commands)


def _covered(command: SimpleCommand, prefixes: Iterable[str]) -> bool:
    """True when a granted prefix that is itself risky (the user typed it on purpose) starts
    ``command``."""
    for prefix in prefixes:
        try:
            words = tuple(shlex.split(prefix))
        except ValueError:
            continue
        if words and command.words[:len(words)] == words and _risky_prefix(prefix):
            return True
    return False


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def grant_gaps(command_line: str, workspace: Path, prefixes: Iterable[str] = ()) -> list[str]:
    """Why a session grant (``t`` or ``p``) does not cover ``command_line``: one ``"part: reason"``
    per risky simple command (``shell.risk.command_risk``: deletes files, runs downloaded code...)
    not started by a granted risky ``prefix``, per write redirect out of ``workspace``, or the
    reason the line cannot be parsed. Empty: the grant covers the line."""
    parsed = parse_command_line(command_line)
    if not parsed.ok:
        return [f"{_short(command_line)}: cannot be parsed ({parsed.unparsable})"]
    prefixes = list(prefixes)
    gaps: list[str] = []
    for command in parsed.commands:
        reason = command_risk(command)
        if reason and not _covered(command, prefixes):
            gaps.append(f"{_short(command.text)}: {reason}")
        for redirect in command.redirects:
            if redirect.writes and not _within(redirect.target, Path(workspace)):
                gaps.append(f"{_short(command_line[redirect.start:redirect.end])}: writes to "
                            f"{redirect.target}, outside the workspace")
    return gaps


def grant_gap_note(tool_name: str, gaps: list[str]) -> str:
    """The sentence the permission prompt shows for ``grant_gaps``' answer."""
    return f"the session grant for {tool_name} does not cover risky commands: " + "; ".join(gaps)

