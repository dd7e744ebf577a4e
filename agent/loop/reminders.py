"""Event-driven reminders from one rule list (DESIGN.md 4).

A ``ReminderRule`` maps an event to a short text. The same list feeds the system prompt
(``system_prompt_rules``) and the reminders appended to tool results (``ReminderEngine``), so the
two never disagree. Triggers:

- ``after_edit``: a tool with the mutating capability (write, edit) succeeded; keyed by its path.
- ``after_git``: an exec tool (bash) ran a command line that invokes git, even if it failed.
- ``external_change``: a file the agent read changed on disk outside the agent; keyed by its path.

Deduplication: ``after_edit`` and ``after_git`` fire at most once per user turn for the same
trigger (rule id + path; ``after_git`` has no path). ``external_change`` fires once per real
change (as Claude Code #21650 asks): each ``on_external_change`` call queues one reminder, which
the next tool result carries and which is then gone; it is never repeated on later, unrelated
calls, and a second real change gives a second reminder even within the same turn.

The loop appends ``format(texts)`` to the last tool result of a step, so the reminder is stored
once, inside that result, and never re-injected. ``ReadFileStamps`` is the event source for
``external_change``: it remembers the on-disk state of files the agent read or wrote and reports
the ones that changed since.
"""

from __future__ import annotations

import os
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from ..config.reminder_rules import DEFAULT_RULES, ReminderRule
from ..messages import json_loads
from ..tools.names import parse_name

#: Tools whose successful call on a path means the agent has seen the file's current content.
REREAD_TOOLS = ("read",)
#: Words that may precede the real command name on a command line (``sudo git push``).
_WRAPPERS = {"sudo", "env", "command", "exec", "time", "nice", "nohup", "xargs", "builtin"}


def command_runs_git(command: str) -> bool:
    """True when the shell ``command`` line invokes git as a command (``git push``, ``cd x && git
    status``, ``$(git rev-parse HEAD)``, ``sudo git ...``, ``/usr/bin/git``), not when "git" is
    only an argument (``grep git notes.txt``). Unparsable lines fall back to a word search."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return any(word.strip("`$();&|") == "git" for word in command.split())
    at_start = True
    for token in tokens:
        if token and all(c in "();&|" for c in token):
            at_start = True
            continue
        if token.startswith("`"):
            at_start = True  # a backtick substitution starts a new command
        word = token.lstrip("`$")
        if not at_start:
            continue
        if not word or ("=" in word and not word.startswith("=")) or word in _WRAPPERS or word.startswith("-"):
            continue  # VAR=value, a wrapper or its option: the command name is still ahead
        if os.path.basename(word.rstrip("`")) == "git":
            return True
        at_start = False
    return False


def _arguments_dict(arguments: dict[str, Any] | str | None) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str) and arguments.strip():
        try:
            data = json_loads(arguments)
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}
    return {}


def _path_key(path: str) -> str:
    return os.path.normpath(path.strip())


class ReminderEngine:
    """Turns tool results and external file changes into reminder texts, deduplicated.

    Use one engine per conversation: ``start_turn()`` at each user turn, ``on_tool_result(...)``
    after each tool call (it returns the texts owed for that call, including queued external-change
    reminders), ``format(texts)`` for the suffix of the step's last tool result.
    """

    def __init__(self, rules: Iterable[ReminderRule] = DEFAULT_RULES) -> None:
        self.rules: tuple[ReminderRule, ...] = tuple(rules)
        self._fired: set[tuple[str, str]] = set()
        self._pending: dict[str, str] = {}  # path key -> reminder text, in arrival order

    def start_turn(self) -> None:
        """Begin a user turn: after_edit / after_git reminders may fire again. Queued external-change
        reminders are kept (the change still has to be reported)."""
        self._fired.clear()

    def on_tool_result(self, tool_name: str, capability: str | None,
                       arguments: dict[str, Any] | str | None, is_error: bool) -> list[str]:
        """Return the reminder texts owed after one finished tool call (possibly empty).

        ``capability`` is the tool's capability value (``"read"``, ``"mutating"``, ``"exec"``; a
        ``Capability`` member works too); ``arguments`` the decoded JSON object or the raw JSON
        text. A successful ``read`` of a path clears a queued external-change reminder for that
        path (the agent now has the new content). Queued external-change
        reminders are returned (once) with the first tool result after they were queued.
        """
        args = _arguments_dict(arguments)
        path = args.get("path") if isinstance(args.get("path"), str) else None
        capability = getattr(capability, "value", capability)
        texts: list[str] = []
        if path and tool_name in REREAD_TOOLS and not is_error:
            self._pending.pop(_path_key(path), None)
        for rule in self.rules:
            if rule.trigger == "after_edit" and capability == "mutating" and not is_error and path:
                self._fire(rule, _path_key(path), rule.render(path), texts)
            elif rule.trigger == "after_git" and capability == "exec":
                command = args.get("command")
                if isinstance(command, str) and command_runs_git(command):
                    self._fire(rule, "", rule.render(None), texts)
        texts.extend(self._pending.values())
        self._pending.clear()
        return texts

    def on_external_change(self, path: str) -> None:
        """Queue one reminder that ``path`` changed on disk outside the agent; the next tool result
        carries it. Call it once per detected change (``ReadFileStamps.changed`` does that); repeated
        calls before delivery are merged. Does nothing without an ``external_change`` rule."""
        key = _path_key(path)
        for rule in self.rules:
            if rule.trigger == "external_change":
                self._pending[key] = rule.render(path)
                return

    def has_pending(self) -> bool:
        """True when an external-change reminder is waiting for the next tool result."""
        return bool(self._pending)

    def _fire(self, rule: ReminderRule, key: str, text: str, out: list[str]) -> None:
        dedup = (rule.id, key)
        if dedup not in self._fired:
            self._fired.add(dedup)
            out.append(text)

    @staticmethod
    def format(texts: Iterable[str]) -> str:
        """Return the suffix appended to the step's last tool result: ``"\\n\\n[reminder: T]"`` per
        distinct text in order (identical texts once), or ``""`` when there are none."""
        unique = list(dict.fromkeys(t for t in texts if t))
        if not unique:
            return ""
        return "\n\n" + "\n".join(f"[reminder: {t}]" for t in unique)


@dataclass(frozen=True)
class _Stamp:
    mtime_ns: int
    size: int
    inode: int


class ReadFileStamps:
    """Remembers the on-disk state (mtime in ns, size, inode) of files the agent read or wrote,
    and reports the ones changed since: the event source for the ``external_change`` rule.

    ``note(path)`` after every successful read/write/edit of ``path`` (relative to ``root`` or
    absolute); ``changed()`` returns each path whose state differs (deleted files included) once
    per change, then remembers the new state. Never raises on file-system errors.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._stamps: dict[str, tuple[str, _Stamp | None]] = {}

    def _stat(self, path: str) -> _Stamp | None:
        try:
            st = os.stat(self.root / parse_name(path))  # ``\xNN`` as the tools read it
        except (OSError, ValueError):
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        return _Stamp(st.st_mtime_ns, st.st_size, st.st_ino)

    def paths(self) -> list[str]:
        """The paths remembered, as given to ``note`` (the caller holds ``Agent.stamps_lock``
        when another thread may note or forget at the same time)."""
        return [path for path, _stamp in self._stamps.values()]

    def note(self, path: str) -> None:
        """Record the current state of ``path`` as known to the agent. Folders and missing paths
        are not watched (a folder's mtime changes whenever a file in it is added)."""
        stamp = self._stat(path)
        if stamp is None:
            self.forget(path)
        else:
            self._stamps[_path_key(path)] = (path, stamp)

    def forget(self, path: str) -> None:
        """Stop watching ``path``."""
        self._stamps.pop(_path_key(path), None)

    def changed(self) -> list[str]:
        """Paths (as first noted) whose state changed since they were noted or last reported."""
        out = []
        for key, (path, stamp) in list(self._stamps.items()):
            now = self._stat(path)
            if now != stamp:
                self._stamps[key] = (path, now)
                out.append(path)
        return out
