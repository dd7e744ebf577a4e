"""Allow/deny rules for tool calls, and a small parser of bash command lines (DESIGN.md 6).

A rule is a string. For the ``bash`` tool it is a command prefix in words: ``pytest`` matches
``pytest`` and ``pytest -q tests/x.py`` but not ``pytestx``; ``git push`` matches ``git push
origin main``. ``tool:NAME`` names a whole tool (``tool:bash`` is every command); for the other
tools a bare tool name (``edit``, ``write``) works too.

A command line is split into its simple commands (``parse_command_line``): on ``;``, ``&&``,
``||``, ``|``, ``|&``, ``&``, newlines and parentheses, and the commands inside ``$( … )`` and
backticks count too. Redirections (``>``, ``>>``, ``<``, ``2>&1``, ``&>``) belong to their
command; a write redirect to a file other than ``/dev/null`` is risky and keeps the command from
matching an allow rule. Quoting follows ``shlex`` in POSIX mode. Here-documents, process
substitution, ``eval`` and unbalanced quotes or parentheses make the line *unparsable*: no allow
rule matches it (the user is asked), deny rules are still checked on a rough split.

``PermissionRules.check`` applies the rules: a deny rule that matches ANY simple command denies
(the error names the rule); an allow rule set allows a bash line only when EVERY simple command
matches some allow rule. The caller applies deny > allow > the mode gate; "allow for this
session" answers add to the same object (``allow_tool``, ``allow_prefix``). Each new answer is a
``SessionGrant``: ``PermissionRules.on_grant`` is told of it (the runtime journals it) and
``restore`` adds journaled grants back on resume. A grant is only ever an allow rule, checked
after the deny rules and before the mode gate's "ask": it never overrides a deny rule, a
read-only mode or the ``.git/`` protection (agent/loop.py applies those around it).

``risky_spans(line)`` returns the character spans the permission prompt highlights (``rm``,
``sudo``, ``curl | sh``, write redirects, ``git push``, ``chmod``, ``dd``, ``mkfs``...).
"""

from __future__ import annotations

import re
import shlex
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Literal

#: Tools whose calls are command lines (rules are command prefixes for them).
COMMAND_TOOLS = frozenset({"bash"})

#: Leading words that run the rest of the line as a command (stripped before deny matching).
_WRAPPERS = frozenset({"sudo", "doas", "env", "nohup", "time", "command", "exec", "nice", "xargs", "builtin",
                       "timeout", "stdbuf", "ionice", "setsid", "unbuffer"})
#: Shell keywords that can precede a command in a segment (``if rm -rf x; then ...``).
_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{"})
#: Wrapper options that take the next word as their argument (``sudo -u root``, ``nice -n 5``).
_WRAPPER_ARG_OPTS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group", "--host",
                       "--prompt", "--chdir", "--close-from", "--role", "--type", "--other-user",
                       "--command-timeout"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "ionice": frozenset({"-c", "-n", "-p", "--class", "--classdata", "--pid"}),
    "exec": frozenset({"-a"}),
    "xargs": frozenset({"-I", "-n", "-L", "-P", "-d", "-s", "-E", "-a", "--arg-file", "--delimiter",
                        "--max-args", "--max-procs", "--max-lines", "--max-chars", "--process-slot-var"}),
}
#: Shells whose ``-c STRING`` runs STRING as a command line (parsed recursively for the rules).
_C_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "rbash"})
#: How deep ``bash -c "bash -c '...'"`` / ``eval`` nesting is followed (deeper: never allowed).
_MAX_DEPTH = 4
#: git options before the subcommand; the ones in ``_GIT_ARG_OPTS`` take the next word.
_GIT_ARG_OPTS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env",
                           "--super-prefix", "--attr-source"})
#: git global options that are skipped when matching ALLOW rules (``-c`` etc. can run code: not skipped).
_GIT_SAFE_OPTS = frozenset({"-C", "--no-pager", "-P", "--no-optional-locks", "--no-replace-objects",
                            "--literal-pathspecs", "--no-advice"})
#: Per-command flag spellings treated as a short flag letter when matching deny rules.
_FLAG_ALIASES: dict[str, dict[str, str]] = {
    "rm": {"R": "r", "--recursive": "r", "--force": "f"},
    "git": {"--force": "f"},
}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "perl", "ruby", "node"})
_DOWNLOADERS = frozenset({"curl", "wget"})


class _Unparsable(Exception):
    """Raised by the scanner with a short reason."""


@dataclass(frozen=True)
class Redirect:
    """One redirection of a simple command: ``op`` (``>``, ``>>``, ``<``, ``>&``, ``&>``...),
    ``target`` (the file or fd), its span ``start:end`` in the line, and ``writes`` (True when it
    writes to a file other than ``/dev/null`` or an fd)."""

    op: str
    target: str
    start: int
    end: int
    writes: bool


@dataclass(frozen=True)
class SimpleCommand:
    """One simple command: its ``words`` (quotes removed, redirections left out, a command
    substitution shown as ``$(…)``), its ``text`` and span ``start:end`` in the line, its
    ``redirects``, ``nested`` (inside ``$()`` or backticks) and ``piped_from`` (the first word of
    the command whose output it reads through ``|``, or "")."""

    text: str
    words: tuple[str, ...]
    start: int
    end: int
    redirects: tuple[Redirect, ...] = ()
    nested: bool = False
    piped_from: str = ""

    @property
    def writes_file(self) -> bool:
        """True when a redirection writes to a file."""
        return any(r.writes for r in self.redirects)


@dataclass(frozen=True)
class ParsedLine:
    """A parsed command line: its simple ``commands`` in order, or ``unparsable`` (a reason)."""

    line: str
    commands: tuple[SimpleCommand, ...] = ()
    unparsable: str = ""

    @property
    def ok(self) -> bool:
        """True when the line was parsed."""
        return not self.unparsable


@dataclass(frozen=True)
class RiskSpan:
    """A risky part of a command line: ``line[start:end]`` and why (``reason``)."""

    start: int
    end: int
    reason: str


# ------------------------------------------------------------------------------------- scanner
@dataclass
class _Segment:
    start: int
    end: int = -1
    redirects: list[Redirect] = field(default_factory=list)
    subs: list[tuple[int, int]] = field(default_factory=list)  # spans replaced by "$(…)" in words
    inner: list[tuple[int, int]] = field(default_factory=list)  # inner command text spans
    comments: list[tuple[int, int]] = field(default_factory=list)  # '# ...' spans, dropped from words
    piped: bool = False  # preceded by a pipe


class _Scanner:
    """Splits ``line[lo:hi]`` into segments; records redirections and substitutions."""

    def __init__(self, line: str) -> None:
        self.line = line

    def scan(self, lo: int, hi: int) -> list[_Segment]:
        line = self.line
        segments: list[_Segment] = []
        seg = _Segment(lo)
        depth = 0
        i = lo
        word_start = True  # at the start of a word (for '#', fds of redirects)

        def close(at: int, piped_next: bool = False) -> None:
            nonlocal seg
            seg.end = at
            segments.append(seg)
            seg = _Segment(at, piped=piped_next)

        while i < hi:
            c = line[i]
            quoted_end = self._skip_quoting(i, hi, seg)
            if quoted_end is not None:
                i = quoted_end
                word_start = False
                continue
            if c == "`":
                j = self._backtick_end(i, hi)
                seg.subs.append((i, j + 1))
                seg.inner.append((i + 1, j))
                i = j + 1
                word_start = False
                continue
            if c == "$" and line.startswith("$((", i):
                j = self._paren_end(i + 2, hi)  # arithmetic: no commands inside
                i = j + 1
                word_start = False
                continue
            if c == "$" and line.startswith("$(", i):
                j = self._paren_end(i + 1, hi)
                seg.subs.append((i, j + 1))
                seg.inner.append((i + 2, j))
                i = j + 1
                word_start = False
                continue
            if c == "#" and word_start:
                j = line.find("\n", i, hi)
                seg.comments.append((i, hi if j < 0 else j))
                i = hi if j < 0 else j
                continue
            if c in "<>" and line.startswith("(", i + 1):
                raise _Unparsable("process substitution")
            if c in "<>" or (c == "&" and line.startswith(">", i + 1)):
                i = self._redirect(i, hi, seg)
                word_start = True
                continue
            if c in "0123456789" and word_start:
                j = i
                while j < hi and line[j].isdigit():
                    j += 1
                if j < hi and line[j] in "<>":
                    i = self._redirect(i, hi, seg)
                    word_start = True
                    continue
            if c in ";\n":
                close(i)
                seg.start = i + 1
                i += 1
                word_start = True
                continue
            if c == "|":
                step = 2 if line.startswith(("||",), i) else (2 if line.startswith("|&", i) else 1)
                close(i, piped_next=not line.startswith("||", i))
                seg.start = i + step
                i += step
                word_start = True
                continue
            if c == "&":
                step = 2 if line.startswith("&&", i) else 1
                close(i)
                seg.start = i + step
                i += step
                word_start = True
                continue
            if c == "(":
                depth += 1
                close(i)
                seg.start = i + 1
                i += 1
                word_start = True
                continue
            if c == ")":
                depth -= 1
                if depth < 0:
                    raise _Unparsable("an unbalanced ')'")
                close(i)
                seg.start = i + 1
                i += 1
                word_start = True
                continue
            word_start = c.isspace()
            i += 1
        if depth:
            raise _Unparsable("an unbalanced '('")
        close(hi)
        return segments

    def _double_quoted(self, i: int, hi: int, seg: _Segment) -> int:
        """Skip a double-quoted string starting at ``i``; record substitutions inside it."""
        line = self.line
        i += 1
        while i < hi:
            c = line[i]
            if c == "\\":
                i += 2
                continue
            if c == '"':
                return i + 1
            if c == "`":
                j = self._backtick_end(i, hi)
                seg.subs.append((i, j + 1))
                seg.inner.append((i + 1, j))
                i = j + 1
                continue
            if c == "$" and line.startswith("$((", i):
                i = self._paren_end(i + 2, hi) + 1
                continue
            if c == "$" and line.startswith("$(", i):
                j = self._paren_end(i + 1, hi)
                seg.subs.append((i, j + 1))
                seg.inner.append((i + 2, j))
                i = j + 1
                continue
            i += 1
        raise _Unparsable("an unbalanced double quote")

    def _backtick_end(self, i: int, hi: int) -> int:
        j = i + 1
        while j < hi:
            if self.line[j] == "\\":
                j += 2
                continue
            if self.line[j] == "`":
                return j
            j += 1
        raise _Unparsable("an unbalanced backtick")

    def _skip_quoting(self, i: int, hi: int, seg: "_Segment") -> int | None:
        """When ``line[i]`` starts a backslash escape, a single-quoted or a double-quoted string,
        return the index just after it (double quotes record their substitutions in ``seg``);
        otherwise ``None``. Raises ``_Unparsable`` for an unbalanced quote."""
        c = self.line[i]
        if c == "\\":
            return i + 2
        if c == "'":
            end = self.line.find("'", i + 1, hi)
            if end < 0:
                raise _Unparsable("an unbalanced single quote")
            return end + 1
        if c == '"':
            return self._double_quoted(i, hi, seg)
        return None

    def _paren_end(self, i: int, hi: int) -> int:
        """Index of the ``)`` closing the ``(`` at ``i`` (quotes and nesting respected)."""
        line = self.line
        depth = 0
        j = i
        while j < hi:
            c = line[j]
            quoted_end = self._skip_quoting(j, hi, _Segment(j))
            if quoted_end is not None:
                j = quoted_end
                continue
            if c == "`":
                j = self._backtick_end(j, hi) + 1
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return j
            j += 1
        raise _Unparsable("an unbalanced '$('")

    def _redirect(self, i: int, hi: int, seg: _Segment) -> int:
        """Parse a redirection starting at ``i`` (optional fd digits first); return the index after it."""
        line = self.line
        start = i
        while i < hi and line[i].isdigit():
            i += 1
        match = re.compile(r"&>>|&>|>>|>&|>\||<<<|<<|<>|<&|>|<").match(line, i, hi)
        if match is None:  # pragma: no cover - callers check for < or > or &>
            raise _Unparsable("a redirection")
        op = match.group(0)
        if op == "<<":
            raise _Unparsable("a here-document")
        i = match.end()
        while i < hi and line[i] in " \t":
            i += 1
        target_start = i
        while i < hi and not line[i].isspace() and line[i] not in ";|&<>()":
            c = line[i]
            quoted_end = self._skip_quoting(i, hi, seg)
            if quoted_end is not None:
                i = quoted_end
                continue
            if c == "$" and line.startswith("$(", i):
                raise _Unparsable("a command substitution in a redirection target")
            if c == "`":
                raise _Unparsable("a command substitution in a redirection target")
            i += 1
        raw_target = line[target_start:min(i, hi)]
        if not raw_target:
            raise _Unparsable(f"a redirection '{op}' without a target")
        try:
            target = " ".join(shlex.split(raw_target))
        except ValueError:
            raise _Unparsable("a redirection target") from None
        fd_target = op in (">&", "<&") or (op in (">", "<") and target.startswith("&"))
        writes = (op not in ("<", "<<<", "<&") and not fd_target and target != "/dev/null"
                  and not (op == ">&" and target.isdigit()))
        seg.redirects.append(Redirect(op=op, target=target, start=start, end=min(i, hi), writes=writes))
        return i


def _words(line: str, seg: _Segment) -> tuple[str, ...]:
    """The words of a segment, with redirections removed and substitutions as ``$(…)``."""
    cuts = sorted([(r.start, r.end, " ") for r in seg.redirects] + [(s, e, "$(…)") for s, e in seg.subs]
                  + [(s, e, " ") for s, e in seg.comments])
    parts = []
    pos = seg.start
    for start, end, replacement in cuts:
        if start < pos:
            continue
        parts.append(line[pos:start])
        parts.append(replacement)
        pos = end
    parts.append(line[pos:seg.end])
    text = "".join(parts)
    try:
        return tuple(shlex.split(text, comments=False, posix=True))
    except ValueError as exc:
        raise _Unparsable(f"quoting ({exc})") from None


def _parse_range(scanner: _Scanner, lo: int, hi: int, nested: bool, out: list[SimpleCommand]) -> None:
    line = scanner.line
    previous_first = ""
    for seg in scanner.scan(lo, hi):
        words = _words(line, seg)
        start, end = seg.start, seg.end
        while start < end and line[start].isspace():
            start += 1
        while end > start and line[end - 1].isspace():
            end -= 1
        if words or seg.redirects:
            if words and words[0] == "eval":
                raise _Unparsable("eval")
            if words and words[0] in ("{", "}"):
                words = words[1:]
            if words and words[-1] == "}":
                words = words[:-1]
            out.append(SimpleCommand(text=line[start:end], words=words, start=start, end=end,
                                     redirects=tuple(seg.redirects), nested=nested,
                                     piped_from=previous_first if seg.piped else ""))
        previous_first = words[0] if words else ""
        for inner_lo, inner_hi in seg.inner:
            _parse_range(scanner, inner_lo, inner_hi, True, out)


def parse_command_line(line: str) -> ParsedLine:
    """Split a bash command line into its simple commands (see the module docstring)."""
    out: list[SimpleCommand] = []
    try:
        _parse_range(_Scanner(line), 0, len(line), False, out)
    except _Unparsable as exc:
        return ParsedLine(line=line, unparsable=str(exc))
    return ParsedLine(line=line, commands=tuple(out))


def _rough_commands(line: str) -> list[tuple[str, ...]]:
    """Best-effort word lists of an unparsable line (for deny rules only)."""
    out = []
    for part in re.split(r"[;&|\n`()]+|\$\(", line):
        try:
            words = tuple(shlex.split(part))
        except ValueError:
            words = tuple(part.replace('"', " ").replace("'", " ").split())
        if words:
            out.append(words)
    return out


# ----------------------------------------------------------------------------------------- risk
def _base(word: str) -> str:
    """The basename of a command word (``/bin/rm`` -> ``rm``)."""
    return word.rsplit("/", 1)[-1] or word


def _wrapper_stages(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """``words`` and each suffix left after dropping a leading ``VAR=value``, shell keyword or
    wrapper (``sudo -u x``, ``env``, ``timeout 5``, ``nice -n 5``, ``xargs``...) with its options;
    the last one is the core command."""
    stages = [words]
    i = 0
    while i < len(words):
        word = words[i]
        name = _base(word)
        if _ASSIGNMENT.match(word) or word in _KEYWORDS:
            i += 1
        elif name in _WRAPPERS:
            i += 1
            arg_opts = _WRAPPER_ARG_OPTS.get(name, frozenset())
            while i < len(words) and words[i].startswith("-") and words[i] != "-":
                option = words[i]
                i += 1
                if option == "--":
                    break
                if option in arg_opts:
                    i += 1
            if name == "timeout" and i < len(words):
                i += 1  # the duration
        else:
            break
        stages.append(words[i:])
    return stages


def _strip_wrappers(words: tuple[str, ...]) -> tuple[str, ...]:
    """Drop leading ``VAR=value`` assignments, keywords and wrappers (``sudo``, ``env``, ``xargs``...)."""
    return _wrapper_stages(words)[-1]


def _normalize(words: tuple[str, ...], for_allow: bool = False) -> tuple[str, ...]:
    """The command name as its basename (not for allow rules: ``./pytest`` is not ``pytest``) and
    git's global options before the subcommand dropped (``git -C . push`` -> ``git push``; for allow
    rules only the harmless ones, so ``git -c core.pager=x status`` matches no allow rule)."""
    if not words:
        return words
    name = _base(words[0])
    rest = words[1:]
    if name == "git":
        i = 0
        while i < len(rest) and rest[i].startswith("-") and rest[i] != "--":
            option = rest[i]
            key = option.split("=", 1)[0]
            if for_allow and key not in _GIT_SAFE_OPTS:
                break
            i += 1
            if "=" not in option and option in _GIT_ARG_OPTS:
                i += 1
        rest = rest[i:]
    return ((words[0] if for_allow else name),) + rest


def _split_args(name: str, args: Iterable[str]) -> tuple[set[str], set[str], list[str]]:
    """Short flag letters, long options and non-flag words of a command's arguments."""
    aliases = _FLAG_ALIASES.get(name, {})
    short: set[str] = set()
    long: set[str] = set()
    positional: list[str] = []
    ended = False
    for arg in args:
        if ended or arg == "-" or not arg.startswith("-"):
            positional.append(arg)
        elif arg == "--":
            ended = True
        elif arg.startswith("--"):
            key = arg.split("=", 1)[0]
            if key in aliases:
                short.add(aliases[key])
            else:
                long.update({arg, key})
        else:
            short.update(aliases.get(ch, ch) for ch in arg[1:])
    return short, long, positional


def _flag_match(words: tuple[str, ...], rule: tuple[str, ...]) -> bool:
    """Deny matching of normalised words: same command name, every short flag letter of the rule
    among the command's (any clusters, any order), every long option present, and the rule's
    other words in order among the command's other words."""
    if not rule or not words or words[0] != rule[0]:
        return False
    r_short, r_long, r_pos = _split_args(rule[0], rule[1:])
    c_short, c_long, c_pos = _split_args(words[0], words[1:])
    if not r_short <= c_short:
        return False
    if not r_long <= c_long:  # c_long holds "--opt=value" and "--opt"
        return False
    if rule[0] == "git" and r_pos and c_pos[:1] != r_pos[:1]:
        return False  # the subcommand (globals already dropped): 'git commit -m push' is no push
    remaining = iter(c_pos)
    return all(word in remaining for word in r_pos)


def _inner_commands(core: tuple[str, ...]) -> list[str | tuple[str, ...]]:
    """Command lines (strings) or commands (word tuples) that ``core`` runs itself: the string of
    ``bash -c STRING`` (sh, zsh, dash...), the words of ``eval``, ``find -exec CMD ... ;``."""
    if not core:
        return []
    name = core[0]
    if name in _C_SHELLS:
        has_c = False
        i = 1
        while i < len(core):
            word = core[i]
            if word in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                i += 2
                continue
            if word == "--":
                i += 1
                break
            if word.startswith(("-", "+")) and word not in ("-", "+"):
                if not word.startswith("--") and "c" in word[1:]:
                    has_c = True
                i += 1
                continue
            break
        return [core[i]] if has_c and i < len(core) else []
    if name == "eval":
        return [" ".join(core[1:])] if len(core) > 1 else []
    if name == "find":
        out: list[str | tuple[str, ...]] = []
        i = 1
        while i < len(core):
            if core[i] in ("-exec", "-execdir", "-ok", "-okdir"):
                j = i + 1
                while j < len(core) and core[j] not in (";", "+"):
                    j += 1
                if j > i + 1:
                    out.append(tuple(core[i + 1:j]))
                i = j
            i += 1
        return out
    return []


def _inner_word_lists(item: str | tuple[str, ...]) -> tuple[list[tuple[str, ...]], bool]:
    """The word lists of an inner command line and whether it parsed (rough split if not)."""
    if isinstance(item, tuple):
        return [item], True
    parsed = parse_command_line(item)
    if parsed.ok:
        return [c.words for c in parsed.commands], True
    return _rough_commands(item), False


def _deny_candidates(words: tuple[str, ...], depth: int = 0) -> list[tuple[str, ...]]:
    """Every form of ``words`` a deny rule is tried on: as written, each wrapper stage, normalised
    (basename, git globals), and the commands of ``bash -c``/``eval``/``find -exec`` recursively."""
    out: list[tuple[str, ...]] = []
    for stage in _wrapper_stages(words):
        if stage:
            out.extend((stage, _normalize(stage)))
    if depth < _MAX_DEPTH:
        for item in _inner_commands(_normalize(_strip_wrappers(words))):
            for inner in _inner_word_lists(item)[0]:
                out.extend(_deny_candidates(inner, depth + 1))
    return out


def command_risk(command: SimpleCommand) -> str:
    """Why a simple command is risky, or "" (used for highlighting, not for deciding)."""
    words = command.words
    if words and words[0] in ("sudo", "doas", "su"):
        return f"runs as another user ({words[0]})"
    core = _strip_wrappers(words)
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
    When that first command is risky (``command_risk``: ``rm -rf build``, ``git push``, ``sudo``)
    the whole first command is suggested instead, so the prefilled answer never allows every
    ``rm`` for the session."""
    parsed = parse_command_line(command_line)
    if parsed.ok:
        first = parsed.commands[0].words if parsed.commands else ()
        if parsed.commands and command_risk(parsed.commands[0]):
            return shlex.join(first)
    else:
        rough = _rough_commands(command_line)
        first = rough[0] if rough else ()
    out = list(first[:1])
    if words > 1 and len(first) > 1 and re.fullmatch(r"[A-Za-z][\w:-]*", first[1]):
        out.append(first[1])
    return shlex.join(out) if out else ""


Verdict = Literal["allow", "deny", "none"]


@dataclass(frozen=True)
class RuleDecision:
    """What the rules say about one call: ``verdict`` (allow, deny, none = no rule decides),
    the ``rule`` that decided and, for a denial, the error ``message`` for the model."""

    verdict: Verdict
    rule: str = ""
    message: str = ""


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

    Journal form (``to_record`` / ``from_record``): ``{"kind": "permission_grant", "scope":
    "session_tool", "tool": "edit"}`` or ``{"kind": "permission_grant", "scope":
    "session_prefix", "tool": "bash", "prefix": "git status"}``; the journal adds ``time``.
    """

    scope: GrantScope
    tool: str
    prefix: str = ""

    def to_record(self) -> dict[str, Any]:
        """Return the journal record of this grant (without ``time``)."""
        record: dict[str, Any] = {"kind": "permission_grant", "scope": self.scope, "tool": self.tool}
        if self.scope == "session_prefix":
            record["prefix"] = self.prefix
        return record

    @classmethod
    def from_record(cls, record: Any) -> "SessionGrant | None":
        """Return the grant a journal record describes, or ``None`` when ``record`` is not a
        well-formed ``permission_grant`` record (wrong kind or scope, a tool name that is not a
        plain name, an empty or over-long prefix, a prefix grant for a tool that takes no command
        line). Nothing in a malformed record is applied."""
        if not isinstance(record, dict) or record.get("kind") != "permission_grant":
            return None
        scope, tool, prefix = record.get("scope"), record.get("tool"), record.get("prefix", "")
        if not isinstance(tool, str) or not _TOOL_NAME.fullmatch(tool):
            return None
        if scope == "session_tool":
            return cls("session_tool", tool)
        if scope == "session_prefix" and tool in COMMAND_TOOLS and isinstance(prefix, str):
            prefix = prefix.strip()
            if prefix and len(prefix) <= MAX_PREFIX_CHARS:
                return cls("session_prefix", tool, prefix)
        return None


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
        tool_rules = {r[5:] for r in allow if r.startswith("tool:")} | tools
        tool_denies = {r[5:] for r in deny if r.startswith("tool:")}
        if tool_name not in COMMAND_TOOLS:
            tool_rules |= set(allow)
            tool_denies |= set(deny)
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
        if tool_name in tool_rules:
            return RuleDecision("allow", f"tool:{tool_name}" if tool_name in COMMAND_TOOLS else tool_name)
        if tool_name in COMMAND_TOOLS and isinstance(command, str):
            rule = self._allowed_by(command, [r for r in allow if not r.startswith("tool:")] + prefixes)
            if rule:
                return RuleDecision("allow", rule)
        return RuleDecision("none")

    @staticmethod
    def _denied_by(command_line: str, rules: list[str]) -> str:
        if not rules:
            return ""
        parsed = parse_command_line(command_line)
        word_lists = ([c.words for c in parsed.commands] if parsed.ok else _rough_commands(command_line))
        compiled = [(rule, _rule_words(rule)) for rule in rules]
        compiled = [(rule, raw, _normalize(raw)) for rule, raw in compiled]
        for words in word_lists:
            for candidate in dict.fromkeys(_deny_candidates(words)):
                for rule, raw, normal in compiled:
                    if _prefix_match(candidate, raw) or _flag_match(candidate, normal):
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


def _command_allowed(words: tuple[str, ...], rules: list[tuple[str, tuple[str, ...]]], depth: int,
                     used: list[str]) -> bool:
    """True when an allow rule matches ``words`` (as written or with git's harmless globals
    dropped) and every command it runs itself (``bash -c``, ``eval``, ``find -exec``) is allowed too."""
    normal = _normalize(words, for_allow=True)
    match = next((r for r, rw in rules if _prefix_match(words, rw) or _prefix_match(normal, rw)), "")
    if not match:
        return False
    inner_items = _inner_commands(_normalize(_strip_wrappers(words)))
    if inner_items and depth >= _MAX_DEPTH:
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
