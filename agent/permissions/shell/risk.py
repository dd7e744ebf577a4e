"""Command risk: which simple commands are risky (``rm``, ``sudo``, ``curl | sh``, write redirects,
``git push``, ``chmod``, ``dd``, ``mkfs``...) and the character spans the permission prompt
highlights (``risky_spans``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .commands import strip_wrappers
from .parse import SimpleCommand, parse_command_line

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "perl", "ruby", "node"})
_DOWNLOADERS = frozenset({"curl", "wget"})


@dataclass(frozen=True)
class RiskSpan:
    """A risky part of a command line: ``line[start:end]`` and why (``reason``)."""

    start: int
    end: int
    reason: str


def command_risk(command: SimpleCommand) -> str:
    """Why a simple command is risky, or "" (used for highlighting, not for deciding)."""
    words = command.words
    if words and words[0] in ("sudo", "doas", "su"):
        return f"runs as another user ({words[0]})"
    core = strip_wrappers(words)
    if not core:
        return ""
    name = core[0].rsplit("/", 1)[-1]
    rest = core[1:]
    if name in ("rm", "rmdir", "shred", "unlink", "truncate"):
        return "deletes files"
    if name == "dd" or name.startswith("mkfs") or name in ("fdisk", "parted", "wipefs"):
        return "writes to disks"
    if name in ("chmod", "chown", "chgrp", "chattr"):
        return "changes permissions"
    if name in ("kill", "killall", "pkill", "shutdown", "reboot", "halt", "poweroff"):
        return "stops processes or the machine"
    if name == "find" and any(w in ("-delete", "-exec", "-execdir") for w in rest):
        return "find that deletes or runs commands"
    if name == "git" and rest:
        sub = rest[0]
        if sub == "push":
            return "pushes to a remote"
        if sub == "reset" and "--hard" in rest:
            return "discards changes"
        if sub in ("clean", "filter-branch") or (sub == "checkout" and "--" in rest) or sub == "restore":
            return "discards changes"
        if sub == "branch" and any(w in ("-D", "--delete", "-d") for w in rest):
            return "deletes a branch"
    if name in _SHELLS and command.piped_from in _DOWNLOADERS:
        return "runs downloaded code"
    if name in ("mv", "cp") and any(w in ("-f", "--force") for w in rest):
        return "overwrites files"
    if name in ("npm", "pnpm", "yarn", "cargo") and rest[:1] == ("publish",):
        return "publishes a package"
    return ""


def risky_spans(line: str) -> list[RiskSpan]:
    """The risky parts of ``line`` for the prompt: whole risky simple commands and write
    redirections, in order, non-overlapping. An unparsable line gives one span over all of it."""
    parsed = parse_command_line(line)
    if not parsed.ok:
        return [RiskSpan(0, len(line), f"cannot be parsed ({parsed.unparsable})")] if line else []
    spans: list[RiskSpan] = []
    for command in parsed.commands:
        reason = command_risk(command)
        if reason:
            spans.append(RiskSpan(command.start, command.end, reason))
        for redirect in command.redirects:
            if redirect.writes:
                spans.append(RiskSpan(redirect.start, redirect.end, f"writes to {redirect.target}"))
    spans.sort(key=lambda s: (s.start, -s.end))
    merged: list[RiskSpan] = []
    for span in spans:
        if merged and span.start < merged[-1].end:
            continue  # inside a span already highlighted
        merged.append(span)
    return merged
