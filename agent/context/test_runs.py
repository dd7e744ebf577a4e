"""Test runs in a conversation: which tests a command selects, how each run ended, and which
failures are still unresolved (the pinned test state of a compaction, ``pins``).

A test command is parsed into its runner (``pytest``, ``npm test``...) and its selection (paths,
node ids, ``-k``/``-m`` filters): a ``TestTarget``. A run *covers* another when it has the same
runner and selects at least what the other selects: no selection covers everything; paths cover
paths below them; a filtered run covers only runs with the same filters. A passing run resolves
the failures of the runs it covers, and only those: a subset that passes never resolves a
failure of a wider run. The final test state is the latest run of the widest command (the runs
that no other run strictly covers), with its counts. ``TestLedger`` holds the runs in order.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..messages import AssistantMessage, Message, ToolResultMessage

_RUNNERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("pytest", re.compile(r"(?:^|[\s/])(?:python\d?(?:\.\d+)?\s+-m\s+)?(?:pytest|py\.test)\b")),
    ("unittest", re.compile(r"python\d?(?:\.\d+)?\s+-m\s+unittest\b")),
    ("tox", re.compile(r"\btox\b")), ("nox", re.compile(r"\bnox\b")),
    ("jest", re.compile(r"\bjest\b")), ("vitest", re.compile(r"\bvitest\b")), ("mocha", re.compile(r"\bmocha\b")),
    ("go test", re.compile(r"\bgo test\b")), ("cargo test", re.compile(r"\bcargo test\b")),
    ("npm test", re.compile(r"\b(?:npm|yarn|pnpm) (?:run )?test\b")),
    ("make test", re.compile(r"\bmake (?:test|check)\b")), ("ctest", re.compile(r"\bctest\b")),
    ("rspec", re.compile(r"\brspec\b")), ("phpunit", re.compile(r"\bphpunit\b")),
    ("gradle test", re.compile(r"\bgradle test\b")), ("mvn test", re.compile(r"\bmvn test\b")),
    ("dotnet test", re.compile(r"\bdotnet test\b")),
)
#: Options whose value is a selection filter (pytest, jest, go, cargo).
_FILTER_OPTIONS = {"-k", "-m", "-t", "--testNamePattern", "-run", "--run", "--test", "--grep", "-g"}
#: Options that take a value which is not a selection (skip the value).
_VALUED_OPTIONS = {"-p", "-c", "-o", "--rootdir", "--maxfail", "-n", "--tb", "--durations", "-W",
                   "--timeout", "--cov", "--junitxml", "--basetemp"}
_COUNT_RE = re.compile(r"\b(\d+) (passed|failed|errors?|error|skipped|xfailed|xpassed|deselected)\b")
#: Lines that report a failure (test failures, a traceback, an error); ``looks_failed`` uses it.
FAIL_RE = re.compile(r"\bFAILED\b|\bFAIL\b|\b[1-9]\d* (?:failed|errors?)\b|Traceback \(most recent call last\)|"
                     r"^\s*(?:Error|error|ERROR)\b|\w+Error:|exit code [1-9]|command not found", re.MULTILINE)


def looks_failed(text: str, is_error: bool = False) -> bool:
    """Heuristic: does this tool output report a failure (test failures, a traceback, an error)?"""
    return is_error or bool(FAIL_RE.search(text or ""))


# ----------------------------------------------------------------------------------- test runs
@dataclass(frozen=True)
class TestTarget:
    """What a test command selects: ``runner`` and ``paths`` (files, folders, node ids) and
    ``filters`` (``-k``/``-m``-like expressions). No paths and no filters = the whole suite."""

    __test__ = False  # not a pytest test class
    runner: str
    paths: frozenset[str] = frozenset()
    filters: frozenset[str] = frozenset()

    def covers(self, other: "TestTarget") -> bool:
        """Whether a run of this target also runs everything ``other`` selects."""
        if self.runner != other.runner or not self.filters <= other.filters:
            return False
        if self.filters != other.filters and self.filters:
            return False
        if not self.paths:
            return True
        if not other.paths:
            return False
        return all(any(_path_within(p, q) for q in self.paths) for p in other.paths)

    def label(self) -> str:
        """A short name: the runner and its selection (``pytest`` = the whole suite)."""
        parts = [self.runner, *sorted(self.paths), *(f"[{f}]" for f in sorted(self.filters))]
        return " ".join(parts)


def _path_within(path: str, root: str) -> bool:
    path, root = path.split("::")[0].rstrip("/"), root.rstrip("/")
    if "::" in root:
        return False
    return root in ("", ".") or path == root or path.startswith(root + "/")


def parse_test_command(command: str) -> TestTarget | None:
    """The ``TestTarget`` of a shell command that runs tests, or ``None`` when it runs none.

    Only the part of the line after the runner's name counts (``cd x && pytest a`` -> pytest a);
    pipes and redirects end it. Never raises.
    """
    for runner, pattern in _RUNNERS:
        match = pattern.search(command)
        if match is None:
            continue
        rest = re.split(r"\|\||&&|[|;<]|\d*>", command[match.end():], maxsplit=1)[0]
        try:
            words = shlex.split(rest)
        except ValueError:
            words = rest.split()
        paths: set[str] = set()
        filters: set[str] = set()
        skip_next: str | None = None
        for word in words:
            if skip_next is not None:
                if skip_next in _FILTER_OPTIONS:
                    filters.add(f"{skip_next} {word}")
                skip_next = None
                continue
            if word.startswith("-"):
                name, _, value = word.partition("=")
                if name in _FILTER_OPTIONS:
                    if value:
                        filters.add(f"{name} {value}")
                    else:
                        skip_next = name
                elif name in _VALUED_OPTIONS and not value:
                    skip_next = name
                continue
            if runner in ("npm test", "make test", "gradle test", "mvn test", "dotnet test", "tox", "nox"):
                continue  # their words are not test paths we can compare
            if runner == "go test" and word in ("./...", "..."):
                continue
            paths.add(word.removeprefix("./"))
        return TestTarget(runner=runner, paths=frozenset(paths), filters=frozenset(filters))
    return None


@dataclass(frozen=True)
class TestRun:
    """One test command's run: ``command`` (as typed), its ``target``, ``failed``, ``counts``
    (``"3 passed, 1 failed"``, empty when the output had none), ``output`` (the tool result
    text) and ``index`` (position in the conversation)."""

    __test__ = False
    command: str
    target: TestTarget
    failed: bool
    counts: str
    output: str
    index: int

    def line(self) -> str:
        """One line: the command and how it ended."""
        state = "FAILING" if self.failed else "passing"
        counts = f" ({self.counts})" if self.counts else ""
        return f"`{' '.join(self.command.split())[:200]}` -> {state}{counts}"


def summary_counts(text: str) -> str:
    """The counts of the last test-summary line of ``text`` (``"1 failed, 11 passed"``), or ``""``."""
    for line in reversed((text or "").splitlines()):
        found = _COUNT_RE.findall(line)
        if found:
            return ", ".join(f"{n} {word}" for n, word in found)
    return ""


@dataclass(frozen=True)
class ToolError:
    """A failed command that is not a test run: ``name`` of the tool, ``output``, ``index``."""

    name: str
    output: str
    index: int


#: Most non-test errors pinned (the latest ones after the last passing test run).
MAX_OTHER_ERRORS = 2


@dataclass
class TestLedger:
    """Every test run of a conversation, in order (``runs``), and the failed tool results that
    were not test runs (``errors``)."""

    __test__ = False
    runs: list[TestRun] = field(default_factory=list)
    errors: list[ToolError] = field(default_factory=list)

    def recent_errors(self) -> list[ToolError]:
        """The latest ``MAX_OTHER_ERRORS`` non-test errors after the last passing test run (a
        passing run says the code works; errors before it are history)."""
        last_pass = max((run.index for run in self.runs if not run.failed), default=-1)
        return [e for e in self.errors if e.index > last_pass][-MAX_OTHER_ERRORS:]

    def unresolved(self) -> list[TestRun]:
        """The last failing run per target that no later passing run covering it resolved, oldest
        first (one per target: a later failure of the same target replaces an earlier one)."""
        latest: dict[TestTarget, TestRun] = {}
        for run in self.runs:
            if run.failed:
                latest[run.target] = run
                continue
            for target in [t for t in latest if run.target.covers(t)]:
                del latest[target]
        return sorted(latest.values(), key=lambda r: r.index)

    def final_state(self) -> TestRun | None:
        """The latest run of the widest target (a target no other run's target strictly covers)."""
        targets = {run.target for run in self.runs}
        widest = {t for t in targets if not any(o != t and o.covers(t) and not t.covers(o) for o in targets)}
        runs = [run for run in self.runs if run.target in widest]
        return runs[-1] if runs else None


def ledger_of(messages: Sequence[Message], *, is_exec: Callable[[str], bool] = lambda name: name == "bash"
              ) -> TestLedger:
    """The ``TestLedger`` of ``messages`` (records): each bash-like call with a ``command`` that
    runs tests, paired with its result by call id; failed results of other commands (tools for
    which ``is_exec(name)``) are its ``errors`` (a refused or malformed call of another tool is
    not a state of the code)."""
    ledger = TestLedger()
    calls: dict[str, str] = {}
    for index, m in enumerate(messages):
        if isinstance(m, AssistantMessage):
            for call in m.tool_calls:
                args = call.parsed_arguments()
                command = args.get("command") if isinstance(args, dict) else None
                if isinstance(command, str):
                    calls[call.id] = command
        elif isinstance(m, ToolResultMessage):
            command = calls.pop(m.tool_call_id, None)
            target = parse_test_command(command) if command is not None else None
            if target is None:
                if command is not None and is_exec(m.name) and looks_failed(m.content, m.is_error):
                    ledger.errors.append(ToolError(name=m.name or "tool", output=m.content, index=index))
                continue
            counts = summary_counts(m.content)
            failed = looks_failed(m.content, m.is_error) or bool(re.search(r"\b[1-9]\d* (failed|errors?)\b", counts))
            if counts and not re.search(r"\b[1-9]\d* (failed|errors?)\b", counts) and not m.is_error:
                failed = False  # a summary line with no failure wins over a stray word in the log
            ledger.runs.append(TestRun(command=command, target=target, failed=failed, counts=counts,
                                       output=m.content, index=index))
    return ledger


# -------------------------------------------------------------------------------------- pins


__all__ = ["FAIL_RE", "TestLedger", "TestRun", "TestTarget", "ToolError", "ledger_of",
           "looks_failed", "parse_test_command", "summary_counts"]
