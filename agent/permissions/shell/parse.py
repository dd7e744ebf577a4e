"""A small parser of bash command lines: simple commands, their words and redirections.

A command line is split into its simple commands (``parse_command_line``): on ``;``, ``&&``,
``||``, ``|``, ``|&``, ``&``, newlines and parentheses, and the commands inside ``$( … )`` and
backticks count too. Redirections (``>``, ``>>``, ``<``, ``2>&1``, ``&>``) belong to their
command; a write redirect to a file other than ``/dev/null`` makes the command write a file.
Quoting follows ``shlex`` in POSIX mode. Here-documents, process substitution, ``eval`` and
unbalanced quotes or parentheses make the line *unparsable* (``ParsedLine.ok`` is False).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

#: Shell keywords that can precede a command in a segment (``if rm -rf x; then ...``).
KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{"})
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


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


def rough_commands(line: str) -> list[tuple[str, ...]]:
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
