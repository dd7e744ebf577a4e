"""Bash command lines as simple commands, their words and redirections (tree-sitter-bash).

A command line is split into its simple commands (``parse_command_line``): on ``;``, ``&&``,
``||``, ``|``, ``|&``, ``&``, newlines, subshells, groups and control structures, and the commands
inside ``$( … )`` and backticks (also within quotes, ``${…}`` and arithmetic) count too.
Redirections (``>``, ``>>``, ``<``, ``2>&1``, ``&>``) belong to their command; a write redirect to
a file other than ``/dev/null`` makes the command write a file. Words lose their quotes as in
``shlex``'s POSIX mode. Any syntax error (unbalanced quotes or parentheses), here-documents,
process substitution and ``eval`` make the line *unparsable* (``ParsedLine.ok`` is False): the
caller asks.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

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


# ------------------------------------------------------------------------------------- the tree
_PARSER: Parser | None = None

#: Nodes that make a line unparsable, with the reason given.
_REFUSED = {"heredoc_redirect": "a here-document", "process_substitution": "process substitution"}
_REDIRECTS = ("file_redirect", "herestring_redirect")


def _parser() -> Parser:
    global _PARSER
    if _PARSER is None:
        _PARSER = Parser(Language(tree_sitter_bash.language()))
    return _PARSER


class _Line:
    """The line, its UTF-8 bytes and the byte-to-character offset map of tree-sitter's spans."""

    def __init__(self, line: str) -> None:
        self.text = line
        data = line.encode("utf-8", "surrogatepass")
        self.data = data
        if len(data) == len(line):
            self._chars: list[int] | None = None
        else:
            chars, pos = [0] * (len(data) + 1), 0
            for index, ch in enumerate(line):
                width = len(ch.encode("utf-8", "surrogatepass"))
                for k in range(width):
                    chars[pos + k] = index
                pos += width
            chars[pos] = len(line)
            self._chars = chars

    def char(self, byte: int) -> int:
        return byte if self._chars is None else self._chars[byte]

    def span(self, node: Node) -> tuple[int, int]:
        start, end = self.char(node.start_byte), self.char(node.end_byte)
        if node.type == "command_substitution":  # a backtick node may start at the blank before it
            while start < end and self.text[start].isspace():
                start += 1
        return start, end


def _first_error(node: Node) -> Node | None:
    if node.type == "ERROR" or node.is_missing:
        return node
    for child in node.children:
        if child.has_error:
            found = _first_error(child)
            if found is not None:
                return found
    return None


def _error_reason(line: _Line, node: Node) -> str:
    """A short reason for the syntax error found at ``node``."""
    near = line.text[line.char(node.start_byte):line.char(node.end_byte)]
    if node.is_missing:  # the parser expected a closing token (or a command) that never came
        opened = {")": "'('", "`": "backtick", "'": "single quote", '"': "double quote", "}": "'{'"}
        return f"an unbalanced {opened[node.type]}" if node.type in opened else "an incomplete command"
    for mark, what in (("'", "single quote"), ('"', "double quote"), ("`", "backtick"), ("$(", "'$('"),
                       ("(", "'('"), (")", "')'")):
        if mark in near:
            return f"an unbalanced {what}"
    return f"a syntax error near {near.strip()[:20]!r}" if near.strip() else "a syntax error"


def _outer_substitutions(node: Node) -> list[Node]:
    """The command substitutions in ``node``'s subtree that are not inside another one (also
    those inside arithmetic, ``$(( $(cmd) + 1 ))``: they run too)."""
    found: list[Node] = []
    stack = list(reversed(node.children))
    while stack:
        child = stack.pop()
        if child.type == "command_substitution":
            found.append(child)
        elif child.type in _REFUSED:
            raise _Unparsable(_REFUSED[child.type])
        else:
            stack.extend(reversed(child.children))
    return found


def _redirect(line: _Line, node: Node) -> Redirect:
    """The ``Redirect`` of a ``file_redirect`` / ``herestring_redirect`` node."""
    start, end = line.span(node)
    op_node = next((c for c in node.children if not c.is_named), None)
    if op_node is None:  # pragma: no cover - the grammar always has an operator
        raise _Unparsable("a redirection")
    op = op_node.type
    if _outer_substitutions(node):
        raise _Unparsable("a command substitution in a redirection target")
    raw_target = line.text[line.char(op_node.end_byte):end].strip()
    if not raw_target:
        raise _Unparsable(f"a redirection '{op}' without a target")
    try:
        target = " ".join(shlex.split(raw_target))
    except ValueError:
        raise _Unparsable("a redirection target") from None
    fd_target = op in (">&", "<&") or (op in (">", "<") and target.startswith("&"))
    writes = (op not in ("<", "<<<", "<&") and not fd_target and target != "/dev/null"
              and not (op == ">&" and target.isdigit()))
    return Redirect(op=op, target=target, start=start, end=end, writes=writes)


def _words(line: _Line, start: int, end: int, cuts: list[tuple[int, int, str]]) -> tuple[str, ...]:
    """The words of ``line[start:end]`` with the ``cuts`` spans replaced (redirections by a blank,
    substitutions by ``$(…)``), quotes removed."""
    parts, pos = [], start
    for cut_start, cut_end, replacement in sorted(cuts):
        if cut_start < pos:
            continue
        parts.append(line.text[pos:cut_start])
        parts.append(replacement)
        pos = cut_end
    parts.append(line.text[pos:end])
    try:
        return tuple(shlex.split("".join(parts), comments=False, posix=True))
    except ValueError as exc:
        raise _Unparsable(f"quoting ({exc})") from None


class _Walker:
    """Collects the simple commands of a parsed line in source order."""

    def __init__(self, line: _Line) -> None:
        self.line = line
        self.out: list[SimpleCommand] = []
        #: Redirections the grammar attached to a list, for its last command (by node id).
        self._tail: dict[int, tuple[list[Node], Node]] = {}

    def walk(self, node: Node, nested: bool) -> None:
        kind = node.type
        if kind in _REFUSED:
            raise _Unparsable(_REFUSED[kind])
        if kind in ("command", "variable_assignment", "variable_assignments", "declaration_command",
                    "unset_command", "test_command"):
            self.simple(node, node, [], nested)
        elif kind == "redirected_statement":
            self.redirected(node, nested)
        elif kind == "pipeline":
            self.pipeline(node, nested)
        elif kind == "command_substitution":
            for child in node.children:
                self.walk(child, True)
        elif kind == "comment":
            return
        else:
            for child in node.children:
                self.walk(child, nested)

    def pipeline(self, node: Node, nested: bool, piped_from: str = "") -> None:
        previous_first = ""
        piped = False
        for child in node.children:
            if not child.is_named:
                piped = child.type in ("|", "|&")
                continue
            before = len(self.out)
            self.walk(child, nested)
            if piped and len(self.out) > before and child.type in ("command", "redirected_statement"):
                index = next(i for i in range(before, len(self.out)) if self.out[i].nested == nested)
                self.out[index] = replace(self.out[index], piped_from=previous_first)
            first = self.out[before] if len(self.out) > before else None
            simple = child.type in ("command", "redirected_statement") and first is not None
            previous_first = first.words[0] if simple and first.words else ""

    def redirected(self, node: Node, nested: bool) -> None:
        redirects = [c for c in node.children if c.type in _REDIRECTS]
        for child in node.children:
            if child.type in _REFUSED:
                raise _Unparsable(_REFUSED[child.type])
        bodies = [c for c in node.children if c.is_named and c.type not in _REDIRECTS]
        if len(bodies) == 1 and bodies[0].type == "command":
            self.simple(node, bodies[0], redirects, nested)
            return
        last = bodies[-1] if len(bodies) == 1 else None
        while last is not None and last.type in ("list", "pipeline"):
            last = last.named_children[-1] if last.named_children else None
        if last is not None and last.type == "command" and redirects:
            # ``a && b > f``: the grammar hangs the redirection on the list; bash gives it to ``b``.
            self._tail[last.id] = (redirects, node)
            self.walk(bodies[0], nested)
            return
        for body in bodies:
            self.walk(body, nested)
        if redirects:  # a compound command's redirections: a command of no words
            self.simple(node, None, redirects, nested, from_node=redirects[0])

    def simple(self, span_node: Node, command: Node | None, redirect_nodes: list[Node], nested: bool,
               from_node: Node | None = None) -> None:
        line = self.line
        if command is not None and command.id in self._tail:
            redirect_nodes, outer = self._tail.pop(command.id)
            start, end = line.span(command)[0], line.span(outer)[1]
        else:
            start, end = line.span(from_node or span_node)
        redirects = [_redirect(line, r) for r in redirect_nodes]
        inline = [c for c in (command.children if command is not None else ()) if c.type in _REDIRECTS]
        redirects += [_redirect(line, r) for r in inline]
        redirects.sort(key=lambda r: r.start)
        subs = _outer_substitutions(command) if command is not None else []
        cuts = [(r.start, r.end, " ") for r in redirects] + [(*line.span(s), "$(…)") for s in subs]
        words = _words(line, start, end, cuts) if command is not None else ()
        if words and words[0] == "eval":
            raise _Unparsable("eval")
        self.out.append(SimpleCommand(text=line.text[start:end], words=words, start=start, end=end,
                                      redirects=tuple(redirects), nested=nested))
        for sub in subs:
            self.walk(sub, True)


def parse_command_line(line: str) -> ParsedLine:
    """Split a bash command line into its simple commands (see the module docstring)."""
    text = _Line(line)
    try:
        root = _parser().parse(text.data).root_node
        if root.has_error:
            error = _first_error(root)
            raise _Unparsable(_error_reason(text, error) if error is not None else "a syntax error")
        walker = _Walker(text)
        walker.walk(root, False)
    except _Unparsable as exc:
        return ParsedLine(line=line, unparsable=str(exc))
    return ParsedLine(line=line, commands=tuple(walker.out))


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
