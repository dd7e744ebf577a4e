"""What a simple command runs: wrappers (``sudo``, ``env``, ``timeout``...) stripped, git's global
options normalised, flag spellings unified, and the commands it runs itself (``bash -c``,
``eval``, ``find -exec``), for matching rules against it.
"""

from __future__ import annotations

from typing import Iterable

from .parse import ASSIGNMENT, KEYWORDS, parse_command_line, rough_commands

#: Leading words that run the rest of the line as a command (stripped before deny matching).
_WRAPPERS = frozenset({"sudo", "doas", "env", "nohup", "time", "command", "exec", "nice", "xargs", "builtin",
                       "timeout", "stdbuf", "ionice", "setsid", "unbuffer"})
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
MAX_DEPTH = 4
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
        if ASSIGNMENT.match(word) or word in KEYWORDS:
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


def strip_wrappers(words: tuple[str, ...]) -> tuple[str, ...]:
    """Drop leading ``VAR=value`` assignments, keywords and wrappers (``sudo``, ``env``, ``xargs``...)."""
    return _wrapper_stages(words)[-1]


def normalize_words(words: tuple[str, ...], for_allow: bool = False) -> tuple[str, ...]:
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


def flag_match(words: tuple[str, ...], rule: tuple[str, ...]) -> bool:
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


def inner_commands(core: tuple[str, ...]) -> list[str | tuple[str, ...]]:
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
    return rough_commands(item), False


def deny_candidates(words: tuple[str, ...], depth: int = 0) -> list[tuple[str, ...]]:
    """Every form of ``words`` a deny rule is tried on: as written, each wrapper stage, normalised
    (basename, git globals), and the commands of ``bash -c``/``eval``/``find -exec`` recursively."""
    out: list[tuple[str, ...]] = []
    for stage in _wrapper_stages(words):
        if stage:
            out.extend((stage, normalize_words(stage)))
    if depth < MAX_DEPTH:
        for item in inner_commands(normalize_words(strip_wrappers(words))):
            for inner in _inner_word_lists(item)[0]:
                out.extend(deny_candidates(inner, depth + 1))
    return out
