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
  (git sees what bash changed);
- ``lessons``: the lessons reflexion wrote after failed rounds (``agent.pipeline``), read from the
  pipeline's round messages (origin ``hook``) under ``LESSONS_HEADING``, newest last, each once.

Test targets, runs and their outcomes are ``test_runs``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from ..messages import AssistantMessage, Message, ModeMessage, ToolResultMessage, UserMessage
from .test_runs import TestLedger, ledger_of
from .truncation.truncate import cap_middle

#: Characters kept of one pinned error output (head and tail).
ERROR_CAP_CHARS = 2000
#: Characters kept of one later user instruction (the original task is never cut).
INSTRUCTION_CAP_CHARS = 8000
#: Most changed files listed by name (the rest are counted).
MAX_LISTED_FILES = 60
#: The line after which a pipeline round message lists the lessons of failed rounds, one per "- " line.
LESSONS_HEADING = "Lessons from earlier failed rounds (keep them in mind):"
#: Most lesson lines pinned (the newest).
MAX_PINNED_LESSON_LINES = 9

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
    lessons: list[str] = field(default_factory=list)

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
        if self.lessons:
            parts.append("## Lessons from failed rounds (keep them in mind)\n"
                         + "\n".join(f"- {line}" for line in self.lessons))
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


def lesson_lines(history: Sequence[Message]) -> list[str]:
    """The lesson lines of the pipeline's round messages in ``history`` (``LESSONS_HEADING``),
    each once, the newest ``MAX_PINNED_LESSON_LINES``."""
    found: dict[str, None] = {}
    for message in history:
        if not (isinstance(message, UserMessage) and message.origin == "hook" and LESSONS_HEADING in message.content):
            continue
        for line in message.content.split(LESSONS_HEADING, 1)[1].splitlines():
            if line.startswith("- ") and line[2:].strip():
                found.pop(line[2:].strip(), None)
                found[line[2:].strip()] = None
    return list(found)[-MAX_PINNED_LESSON_LINES:]


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
                mode=modes[-1] if modes else None, lessons=lesson_lines(history))


__all__ = ["LESSONS_HEADING", "Pins", "collect_pins", "is_instruction", "lesson_lines", "tool_changed_files"]
