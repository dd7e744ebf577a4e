"""What a compaction pins by code, verbatim and once each (DESIGN.md 4, "compaction").

``collect_pins(history, ...)`` reads the whole conversation (not only the part being
summarised) and returns a ``Pins``:

- ``task``: the original task, the first user message typed by the user;
- ``instructions``: every later user message typed by the user (a plan-execution prompt, a mode
  message or an earlier summary is not an instruction: their origin says so);
- ``plan``: the current plan with its step states (given by the caller, pinned once);
- ``test_runs``: a ``TestLedger`` of every test command and its outcome, which gives the last
  unresolved error per test target and the final test state;
- ``changed_files``: files changed in the session, from the tools' calls and from the caller
  (git sees what bash changed).

Test targets. A test command is parsed into its runner (``pytest``, ``npm test``...) and its
selection (paths, node ids, ``-k``/``-m`` filters). A run *covers* another when it has the same
runner and selects at least what the other selects: no selection covers everything; paths cover
paths below them; a filtered run covers only runs with the same filters. A passing run resolves
the failures of the runs it covers, and only those: a subset that passes never resolves a
failure of a wider run. The final test state is the latest run of the widest command (the runs
that no other run strictly covers), with its counts.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from ..messages import AssistantMessage, Message, ModeMessage, ToolResultMessage, UserMessage
from .truncation.truncate import cut_middle

#: Characters kept of one pinned error output (head and tail).
ERROR_CAP_CHARS = 2000
#: Characters kept of one later user instruction (the original task is never cut).
INSTRUCTION_CAP_CHARS = 8000
#: Most changed files listed by name (the rest are counted).
MAX_LISTED_FILES = 60

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


def cap_middle(text: str, cap: int) -> str:
    """``text`` cut to about ``cap`` characters by truncation's ``cut_middle``, with a marker of
    the characters left out (no saved file, so not the tool-output marker). ``cap <= 0``: no cap."""
    if cap <= 0 or len(text) <= cap:
        return text
    head, tail, _ = cut_middle(text, cap)
    omitted = len(text) - len(head) - len(tail)
    if head and not head.endswith("\n"):
        head += "\n"
    return f"{head}[... {omitted} characters left out ...]\n{tail}"


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
@dataclass
class Pins:
    """The items a compaction keeps by code (module docstring). Texts are characters."""

    task: UserMessage | None = None
    instructions: list[UserMessage] = field(default_factory=list)
    plan_markdown: str | None = None
    tests: TestLedger = field(default_factory=TestLedger)
    changed_files: list[str] = field(default_factory=list)
    #: The mode message the conversation stated last (Plan/Act), carried by the summary message
    #: when the message that stated it is summarised.
    mode: ModeMessage | None = None

    def render(self, *, kept_ids: Iterable[str] = (), error_cap_chars: int = ERROR_CAP_CHARS,
               instructions_cap_chars: int | None = None) -> str:
        """The pinned part of a summary message, as markdown sections. Messages whose id is in
        ``kept_ids`` are in the kept part of the context already and are not repeated.
        ``instructions_cap_chars``: the most characters the later instructions may take together
        (``None``: no total cap): the newest stay verbatim, older ones are cut to their head and
        tail, and the oldest to one line, so a long session of long instructions still fits."""
        kept = set(kept_ids)
        parts: list[str] = []
        if self.task is not None and self.task.id not in kept:
            parts.append("## Original task (verbatim)\n" + self.task.content)
        later = [m for m in self.instructions if m.id not in kept]
        if later:
            texts = _fit_instructions([m.content for m in later], instructions_cap_chars)
            parts.append("## Later user instructions (in order; they amend the task)\n" + "\n\n".join(
                f"--- user message {n} ---\n" + text for n, text in enumerate(texts, 1)))
        if self.plan_markdown and self.plan_markdown.strip():
            parts.append("## Current plan (step states as of now; follow it)\n" + self.plan_markdown.strip())
        unresolved = self.tests.unresolved()
        if unresolved:
            parts.append("## Unresolved test failures (the last failing run of each test target; verbatim, capped)\n"
                         + "\n\n".join(f"--- {run.line()} ---\n" + cap_middle(run.output, error_cap_chars)
                                       for run in unresolved))
        others = self.tests.recent_errors()
        if others:
            parts.append("## Latest command errors since the last passing test run (verbatim, capped)\n" + "\n\n".join(
                f"--- {error.name} result ---\n" + cap_middle(error.output, error_cap_chars) for error in others))
        final = self.tests.final_state()
        if final is not None:
            later_runs = [r for r in self.tests.runs if r.index > final.index]
            text = "## Test state (computed from the tool results; this wins over the summary)\n- widest run, latest: " \
                   + final.line()
            if later_runs:
                text += "\n- later runs of narrower targets: " + "; ".join(r.line() for r in later_runs[-3:])
            parts.append(text)
        if self.changed_files:
            shown = self.changed_files[:MAX_LISTED_FILES]
            more = len(self.changed_files) - len(shown)
            parts.append("## Files changed in this session\n" + "\n".join(f"- {p}" for p in shown)
                         + (f"\n- ... and {more} more" if more > 0 else ""))
        return "\n\n".join(parts)


#: Characters an older instruction keeps when the instructions are over their total cap.
SHORT_INSTRUCTION_CHARS = 600
ONE_LINE_INSTRUCTION_CHARS = 160


def _fit_instructions(texts: list[str], total_cap: int | None) -> list[str]:
    """``texts`` (oldest first), each cut to ``INSTRUCTION_CAP_CHARS``, then, newest first, kept
    verbatim while the total fits ``total_cap`` characters, else cut to
    ``SHORT_INSTRUCTION_CHARS``, else to one line; what no longer fits even as one line is one
    count line ("N earlier instructions left out"). Oldest first again on return."""
    capped = [cap_middle(t, INSTRUCTION_CAP_CHARS) for t in texts]
    if total_cap is None or sum(len(t) for t in capped) <= total_cap:
        return capped
    out: list[str] = []  # newest first while filling
    used = 0
    for index in range(len(capped) - 1, -1, -1):
        text = capped[index]
        short = cap_middle(text, SHORT_INSTRUCTION_CHARS)
        one_line = " ".join(text.split())
        one_line = one_line if len(one_line) <= ONE_LINE_INSTRUCTION_CHARS else \
            one_line[:ONE_LINE_INSTRUCTION_CHARS - 1] + "… (cut; the full text is in the session journal)"
        chosen = next((c for c in (text, short, one_line) if used + len(c) <= total_cap), None)
        if chosen is None:  # not even one line fits: the older ones are counted, not shown
            out.append(f"({index + 1} earlier instruction{'s' if index else ''} left out here for room; "
                       "they are in the session journal)")
            break
        out.append(chosen)
        used += len(chosen)
    return out[::-1]


def is_instruction(message: Message) -> bool:
    """Whether ``message`` is a user instruction: a user message typed by the user."""
    return isinstance(message, UserMessage) and message.origin == "user"


def tool_changed_files(messages: Sequence[Message], *, is_mutating: Callable[[str], bool]) -> list[str]:
    """Paths given to successful calls of mutating tools (``is_mutating(tool name)``), in first-seen order."""
    paths: dict[str, None] = {}
    pending: dict[str, str] = {}
    for m in messages:
        if isinstance(m, AssistantMessage):
            for call in m.tool_calls:
                args = call.parsed_arguments()
                if is_mutating(call.name) and isinstance(args, dict):
                    path = args.get("path") or args.get("file_path")
                    if isinstance(path, str) and path:
                        pending[call.id] = path
        elif isinstance(m, ToolResultMessage) and m.tool_call_id in pending:
            path = pending.pop(m.tool_call_id)
            if not m.is_error:
                paths[path.removeprefix("./")] = None
    return list(paths)


def collect_pins(history: Sequence[Message], *, plan_markdown: str | None = None,
                 is_mutating: Callable[[str], bool] = lambda name: name in ("write", "edit"),
                 is_exec: Callable[[str], bool] = lambda name: name == "bash",
                 extra_changed_files: Iterable[str] = ()) -> Pins:
    """The ``Pins`` of a whole conversation ``history`` (records, oldest first; summary messages
    of earlier compactions may be in it and are skipped). ``extra_changed_files``: files changed
    outside the tools' own reports (git: bash), merged after the tools' files. Never raises."""
    instructions = [m for m in history if is_instruction(m)]
    files = tool_changed_files(history, is_mutating=is_mutating)
    files += [p for p in extra_changed_files if p not in files]
    modes = [m.mode for m in history if isinstance(m, UserMessage) and m.mode is not None]
    return Pins(task=instructions[0] if instructions else None, instructions=instructions[1:],
                plan_markdown=plan_markdown, tests=ledger_of(history, is_exec=is_exec), changed_files=files,
                mode=modes[-1] if modes else None)


__all__ = [
    "Pins", "TestLedger", "TestRun", "TestTarget", "ToolError", "cap_middle", "collect_pins", "is_instruction", "looks_failed",
    "ledger_of", "parse_test_command", "summary_counts", "tool_changed_files",
]
