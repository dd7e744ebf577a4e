"""Allow/deny rules for tool calls (DESIGN.md 6).

A rule is a string. For the ``bash`` tool it is a command prefix in words: ``pytest`` matches
``pytest`` and ``pytest -q tests/x.py`` but not ``pytestx``; ``git push`` matches ``git push
origin main``. ``tool:NAME`` names a whole tool (``tool:bash`` is every command); for the other
tools a bare tool name (``edit``, ``write``) works too. A name ending in ``*`` is a prefix:
``tool:mcp__db__*`` names every tool of the MCP server ``db``.

``PermissionRules.check`` applies the rules to a command line parsed by ``shell.parse``: a deny
rule that matches ANY simple command denies (the error names the rule); an allow rule set allows
a bash line only when EVERY simple command matches some allow rule, and never an unparsable line
(deny rules are still checked on a rough split). ``policy.decide`` applies deny > allow > the
mode gate. "Allow for this session" answers add to the same object (``allow_tool``,
``allow_prefix``); each new one is a ``SessionGrant``, told to ``on_grant`` (the runtime journals
it), and ``restore`` adds journaled grants back on resume.
"""

from __future__ import annotations

import re
import shlex
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal

from .grants import COMMAND_TOOLS, SessionGrant
from .shell.commands import MAX_DEPTH, deny_candidates, flag_match, inner_commands, normalize_words, strip_wrappers
from .shell.parse import parse_command_line, rough_commands
from .shell.risk import command_risk


# ---------------------------------------------------------------------------------------- rules
def _rule_words(rule: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(rule))
    except ValueError:
        return tuple(rule.split())


def _prefix_match(words: tuple[str, ...], rule: tuple[str, ...]) -> bool:
    return bool(rule) and words[:len(rule)] == rule


def command_prefix(command_line: str, words: int = 2) -> str:
    """A suggested prefix rule for ``command_line``: its first command's first word, plus the
    second when it is a subcommand (not an option or a path), e.g. ``git status``, ``pytest``.
    When that first command is risky (``command_risk``: ``rm -rf build``, ``git push``, ``sudo``),
    or the suggestion itself would be, nothing is suggested (""), so a prefilled answer never
    allows a risky command for the session."""
    parsed = parse_command_line(command_line)
    if parsed.ok:
        first = parsed.commands[0].words if parsed.commands else ()
        if parsed.commands and command_risk(parsed.commands[0]):
            return ""
    else:
        rough = rough_commands(command_line)
        first = rough[0] if rough else ()
    out = list(first[:1])
    if words > 1 and len(first) > 1 and re.fullmatch(r"[A-Za-z][\w:-]*", first[1]):
        out.append(first[1])
    suggestion = shlex.join(out) if out else ""
    checked = parse_command_line(suggestion)
    if suggestion and (not checked.ok or any(command_risk(c) for c in checked.commands)):
        return ""
    return suggestion


RuleVerdict = Literal["allow", "deny", "none"]


@dataclass(frozen=True)
class RuleDecision:
    """What the rules say about one call: ``verdict`` (allow, deny, none = no rule decides),
    the ``rule`` that decided, for a denial the error ``message`` for the model, and ``grant``."""

    verdict: RuleVerdict
    rule: str = ""
    message: str = ""
    #: The allow came from a session grant (``t`` / ``p``), not from a configured rule.
    grant: bool = False


class PermissionRules:
    """Allow/deny rules for tool calls (see the module docstring). ``allow`` and ``deny`` are
    rule strings; the session's "allow for this session" answers are added with ``allow_tool``
    and ``allow_prefix`` (or ``restore`` on resume). Session prefixes apply to command lines
    (bash) only. ``on_grant``, when set, is called with each new ``SessionGrant`` (not for
    repeats, not for ``restore``), on the thread that added it, after the grant took effect.
    Thread-safe (the UI adds while the loop checks)."""

    def __init__(self, allow: Iterable[str] = (), deny: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self.allow: list[str] = [r.strip() for r in allow if r and r.strip()]
        self.deny: list[str] = [r.strip() for r in deny if r and r.strip()]
        self.session_tools: set[str] = set()
        self.session_prefixes: list[str] = []
        self._grants: list[SessionGrant] = []
        self.on_grant: Callable[[SessionGrant], None] | None = None

    @classmethod
    def from_settings(cls, settings: Any) -> "PermissionRules":
        """Build the rules of a ``Settings`` (its ``permissions`` section; none when absent)."""
        section = getattr(settings, "permissions", None)
        return cls(getattr(section, "allow", ()) or (), getattr(section, "deny", ()) or ())

    # -- session answers --------------------------------------------------------------------
    def allow_tool(self, tool_name: str) -> None:
        """Allow every later call of ``tool_name`` in this session (deny rules still win)."""
        self._add(SessionGrant("session_tool", tool_name), notify=True)

    def allow_prefix(self, prefix: str, tool_name: str = "bash") -> None:
        """Allow later ``tool_name`` (bash) lines whose every command starts with ``prefix`` (in
        words). An empty prefix is ignored."""
        prefix = prefix.strip()
        if prefix:
            self._add(SessionGrant("session_prefix", tool_name, prefix), notify=True)

    def restore(self, grants: Iterable[SessionGrant]) -> int:
        """Add grants read back from a journal, without calling ``on_grant`` (they are journaled
        already). Returns how many were new. They join the rules as live answers do, so the deny
        rules, the mode gate and the ``.git/`` protection still apply to them."""
        return sum(self._add(grant, notify=False) for grant in grants)

    def session_grants(self) -> list[SessionGrant]:
        """The session's grants in the order they were given (restored ones first)."""
        with self._lock:
            return list(self._grants)

    def _add(self, grant: SessionGrant, *, notify: bool) -> bool:
        with self._lock:
            if grant in self._grants:
                return False
            self._grants.append(grant)
            if grant.scope == "session_tool":
                self.session_tools.add(grant.tool)
            elif grant.prefix not in self.session_prefixes:
                self.session_prefixes.append(grant.prefix)
            listener = self.on_grant if notify else None
        if listener is not None:
            listener(grant)
        return True

    # -- checking ---------------------------------------------------------------------------
    def check(self, tool_name: str, arguments: Any) -> RuleDecision:
        """Apply the rules to one call (``arguments`` the decoded JSON): deny > allow > none."""
        with self._lock:
            allow = list(self.allow)
            prefixes = list(self.session_prefixes)  # command prefixes only, never tool names
            deny = list(self.deny)
            tools = set(self.session_tools)
        tool_rules = {r[5:] for r in allow if r.startswith("tool:")}
        tool_denies = {r[5:] for r in deny if r.startswith("tool:")}
        if tool_name not in COMMAND_TOOLS:
            tool_rules |= set(allow)
            tool_denies |= set(deny)
        tool_rules = _with_wildcards(tool_name, tool_rules)
        tool_denies = _with_wildcards(tool_name, tool_denies)
        if tool_name in tool_denies:
            return RuleDecision("deny", tool_name, f"Permission denied by the deny rule '{tool_name}' "
                                                   f"in the [permissions] config: {tool_name} may not run.")
        command = arguments.get("command") if isinstance(arguments, dict) else None
        if tool_name in COMMAND_TOOLS and isinstance(command, str):
            denied = self._denied_by(command, [r for r in deny if not r.startswith("tool:")])
            if denied:
                return RuleDecision("deny", denied, (
                    f"Permission denied by the deny rule '{denied}' in the [permissions] config: the command "
                    f"line contains a command that matches '{denied}'. Do not retry it; ask the user "
                    f"or do it another way."))
        configured = [r for r in allow if not r.startswith("tool:")]
        for granted, tool_set, extra in ((False, tool_rules, []), (True, tools, prefixes)):
            if tool_name in tool_set:
                return RuleDecision("allow", f"tool:{tool_name}" if tool_name in COMMAND_TOOLS else tool_name,
                                    grant=granted)
            if tool_name in COMMAND_TOOLS and isinstance(command, str) and (extra or not granted):
                rule = self._allowed_by(command, configured + extra)
                if rule:
                    return RuleDecision("allow", rule, grant=granted)
        return RuleDecision("none")

    @staticmethod
    def _denied_by(command_line: str, rules: list[str]) -> str:
        if not rules:
            return ""
        parsed = parse_command_line(command_line)
        word_lists = ([c.words for c in parsed.commands] if parsed.ok else rough_commands(command_line))
        compiled = [(rule, _rule_words(rule)) for rule in rules]
        compiled = [(rule, raw, normalize_words(raw)) for rule, raw in compiled]
        for words in word_lists:
            for candidate in dict.fromkeys(deny_candidates(words)):
                for rule, raw, normal in compiled:
                    if _prefix_match(candidate, raw) or flag_match(candidate, normal):
                        return rule
        return ""

    @staticmethod
    def _allowed_by(command_line: str, rules: list[str]) -> str:
        if not rules:
            return ""
        parsed = parse_command_line(command_line)
        if not parsed.ok or not parsed.commands:
            return ""
        compiled = [(r, _rule_words(r)) for r in rules]
        used: list[str] = []
        for command in parsed.commands:
            if command.writes_file or not command.words:
                return ""
            if not _command_allowed(command.words, compiled, 0, used):
                return ""
        return ", ".join(dict.fromkeys(used))


def _with_wildcards(tool_name: str, names: set[str]) -> set[str]:
    """``names`` plus ``tool_name`` when a name ending in ``*`` matches it as a prefix
    (``mcp__db__*`` covers every tool of the MCP server ``db``)."""
    if any(n.endswith("*") and len(n) > 1 and tool_name.startswith(n[:-1]) for n in names):
        return names | {tool_name}
    return names


def _command_allowed(words: tuple[str, ...], rules: list[tuple[str, tuple[str, ...]]], depth: int,
                     used: list[str]) -> bool:
    """True when an allow rule matches ``words`` (as written or with git's harmless globals
    dropped) and every command it runs itself (``bash -c``, ``eval``, ``find -exec``) is allowed too."""
    normal = normalize_words(words, for_allow=True)
    match = next((r for r, rw in rules if _prefix_match(words, rw) or _prefix_match(normal, rw)), "")
    if not match:
        return False
    inner_items = inner_commands(normalize_words(strip_wrappers(words)))
    if inner_items and depth >= MAX_DEPTH:
        return False
    for item in inner_items:
        if isinstance(item, str):
            parsed = parse_command_line(item)
            if not parsed.ok or not parsed.commands:
                return False
            if any(c.writes_file or not c.words for c in parsed.commands):
                return False
            inner = [c.words for c in parsed.commands]
        else:
            inner = [item]
        if not all(_command_allowed(w, rules, depth + 1, used) for w in inner):
            return False
    used.append(match)
    return True
