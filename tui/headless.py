"""Headless runs: ``opencli-tui run "task"`` prints the event stream and exits with a code.

Text output uses rich (assistant text on stdout, tool calls and notices dimmed, errors on stderr);
``--output-format json`` prints one JSON object per event and line (DESIGN.md 5a; the field set is
a public interface: extend only). The one-line reason of a non-zero exit goes to stderr.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
from typing import Any, TextIO

from agent.context.truncation.normalise import escape_undecodable
from agent.events import (
    AgentEvent, ErrorEvent, GuardTriggered, JournalStatus, Notice, PermissionRequest, PlanUpdated, ReasoningDelta,
    TextDelta, ToolCallFinished, ToolCallStarted, TurnFinished,
)

from . import signals
from .signals import interrupted_reason, interruptible_turn

EXIT_CODES = {"done": 0, "error": 1, "max_turns": 3, "stuck": 4, "cancelled": 130, "interrupted": 143}
EXIT_CODES["budget"] = 6  # the session's --max-cost / --max-tokens was reached
EXIT_CODES["verify_failed"] = 5  # the verify hook still failed after its rounds (agent.pipeline)


def exit_code_for(stop_reason: str) -> int:
    """Return the process exit code for a turn's ``stop_reason`` (DESIGN.md 5a)."""
    return EXIT_CODES.get(stop_reason, 1)


def summarize_arguments(arguments: Any, limit: int = 80) -> str:
    """Return a one-line ``key=value`` summary of tool arguments, cut to ``limit`` characters."""
    if isinstance(arguments, dict):
        text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    else:
        text = str(arguments)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_UNSAFE_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _terminal_safe(text: str) -> str:
    """Drop control characters (ESC included) from model text before it reaches the terminal:
    a reply must not be able to clear the screen or retitle the window. A surrogate-escaped byte
    (from a file name) is shown as ``\\xNN``, so the output is valid UTF-8."""
    return escape_undecodable(_UNSAFE_CONTROLS.sub("", text))


class JsonPrinter:
    """Prints each event as one JSON line on ``out`` (UI-only requests are skipped)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._lock = threading.Lock()

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, PermissionRequest):
            return
        with self._lock:
            try:
                line = json.dumps(event.to_json_dict(), ensure_ascii=False)
                # valid UTF-8 always: a surrogate-escaped byte (from a file name) becomes "\\xNN"
                self.out.write(escape_undecodable(line, backslash="\\\\") + "\n")
                self.out.flush()
            except BrokenPipeError:  # the reader went away (e.g. `| head`): stop printing quietly
                self.broken = True

    broken = False


class TextPrinter:
    """Prints the run for a person with rich: streamed text, one line per tool call, notices.

    An error that ends the turn (an ``error`` event followed by ``turn_finished`` with stop reason
    ``error`` and the same text) is not printed here: ``run_headless`` prints the one reason line
    for the non-zero exit, and stderr must not say it twice. Any other error goes to stderr as
    ``error: ...`` when the next event arrives (or on ``flush``).
    """

    def __init__(self, out: TextIO, err: TextIO) -> None:
        from rich.console import Console

        self.console = Console(file=out, highlight=False, soft_wrap=True)
        self.err = Console(file=err, highlight=False, soft_wrap=True)
        self._in_text = False
        self._in_reasoning = False
        self._plan_seen: dict[str, tuple[str, str]] | None = None  # step id -> (status, note)
        self._undeclared: set[str] = set()
        self._pending_error: str | None = None  # held until we know whether it ends the turn
        self._session_id = ""  # the session line waits for the end of the run (flush)
        self._hook_notices: list[str] = []  # notices since the last hook_started: a verdict line does not repeat them

    def _end_stream(self) -> None:
        if self._in_text or self._in_reasoning:
            self.console.print()
        self._in_text = self._in_reasoning = False

    def flush(self) -> None:
        """Print the held-back error, if any, on stderr (``error: message``), then the session line
        (``session ID (continue it with --resume ID)``) on stdout, once per run."""
        from rich.text import Text

        if self._pending_error is not None:
            message, self._pending_error = self._pending_error, None
            self.err.print(Text(f"error: {message}", style="bold red"))
        if self._session_id:
            session_id, self._session_id = self._session_id, ""
            self._end_stream()
            self.console.print(Text(f"session {session_id} (continue it with --resume {session_id})", style="dim"))

    def __call__(self, event: AgentEvent) -> None:
        from rich.text import Text

        if self._pending_error is not None:
            if (isinstance(event, TurnFinished) and event.stop_reason == "error"
                    and event.final_text == self._pending_error):
                self._pending_error = None  # the exit's reason line says it
            else:
                self.flush()
        if isinstance(event, TextDelta):
            if self._in_reasoning:
                self._end_stream()
            self._in_text = True
            self.console.print(Text(_terminal_safe(event.text)), end="")
        elif isinstance(event, ReasoningDelta):
            if self._in_text:
                self._end_stream()
            self._in_reasoning = True
            self.console.print(Text(_terminal_safe(event.text), style="dim italic"), end="")
        elif isinstance(event, ToolCallStarted):
            self._end_stream()
            self.console.print(Text(f"● {event.name}({summarize_arguments(event.arguments)})", style="cyan"))
        elif isinstance(event, ToolCallFinished):
            first = event.output.strip().splitlines()[:1]
            status = "error" if event.is_error else "ok"
            detail = f" exit {event.exit_code}" if event.exit_code is not None else ""
            line = f"  ⎿ {status}{detail} in {event.duration_s:.1f}s: {first[0][:100] if first else ''}"
            self.console.print(Text(line, style="red" if event.is_error else "dim"))
        elif isinstance(event, (Notice, GuardTriggered)):
            self._end_stream()
            self.console.print(Text(f"! {event.message}", style="yellow"))
            self._hook_notices.append(event.message)
        elif isinstance(event, ErrorEvent):
            self._end_stream()
            self._pending_error = event.message
        elif isinstance(event, PlanUpdated):
            if event.approved:  # a proposed plan is printed whole by print_plan
                self._end_stream()
                for line in self._plan_changes(event):
                    self.console.print(Text(line, style="magenta"))
        elif getattr(event, "type", "") == "hook_started":
            self._hook_notices = []
        elif getattr(event, "type", "") == "hook_finished":  # a pipeline hook's verdict, one line
            self._end_stream()
            failed = event.verdict in ("retry", "fail", "block", "error", "timeout")
            mark = {"accept": "✓", "retry": "✗", "fail": "✗", "block": "⊘"}.get(event.verdict, "–" if not failed else "!")
            # a failing hook's notice ("Hook verify failed: ...") already printed its message: not twice
            repeated = any(n.startswith(f"Hook {event.hook} ") and event.message[:150] in n for n in self._hook_notices)
            said = f": {event.message}" if event.message and not repeated else ""
            line = f"{mark} {event.hook} · {event.verdict}{said}"
            self.console.print(Text(f"{line} ({event.duration_s:.1f}s)", style="red" if failed else "dim"))
        elif getattr(event, "type", "").startswith("subagent_") and event.type != "subagent_progress":
            self._end_stream()
            line, style = _subagent_line(event)
            self.console.print(Text(line, style=style))
        elif isinstance(event, TurnFinished):
            self._end_stream()
            if event.session_id:  # printed once, last, by flush (a --plan --yes run finishes two turns)
                self._session_id = event.session_id

    def print_plan(self, markdown: str) -> None:
        """Print a proposed plan's markdown checklist as plain text."""
        from rich.text import Text

        self._end_stream()
        self.console.print()
        self.console.print(Text(markdown.rstrip("\n")))

    def _plan_changes(self, event: PlanUpdated) -> list[str]:
        """Lines for what changed since the last ``PlanUpdated``: a header the first time, one line
        per step whose status or note changed, and each newly undeclared file."""
        marks = {"pending": "[ ]", "in_progress": "[~]", "done": "[x]", "skipped": "[-]"}
        lines = []
        first = self._plan_seen is None
        seen = self._plan_seen or {}
        if first:
            lines.append(f"executing plan: {event.title or 'Plan'} ({len(event.steps)} steps)")
        for number, step in enumerate(event.steps, start=1):
            key = step.id or str(number)
            if seen.get(key, ("pending", "")) != (step.status, step.note):
                note = f" ({step.note})" if step.note else ""
                lines.append(f"  {marks.get(step.status, '[ ]')} {key}. {step.text}{note}")
        self._plan_seen = {(s.id or str(i)): (s.status, s.note) for i, s in enumerate(event.steps, start=1)}
        for path in event.undeclared_files:
            if path not in self._undeclared:
                self._undeclared.add(path)
                lines.append(f"  ! {path} changed, but no plan step lists it")
        return lines


def _subagent_line(event: Any) -> tuple[str, str]:
    """The text output's line for a sub-agent's start or end, and its style."""
    who = f"  ◆ sub-agent {event.index}"
    if event.type == "subagent_started":
        return f"{who} started: {_terminal_safe(event.description)}", "cyan"
    tokens = event.usage.prompt_tokens + event.usage.completion_tokens
    figures = f"{event.duration_s:.1f}s, {tokens} tokens"
    if event.type == "subagent_completed":
        return f"{who} done in {figures}", "dim"
    return f"{who} {event.stop_reason} after {figures}: {_terminal_safe(event.message)}", "red"


def run_headless(session, task: str, *, output_format: str = "text", notices: list[str] | None = None,
                 out: TextIO | None = None, err: TextIO | None = None, plan: bool = False,
                 execute_plan: bool = False, debug: bool = False) -> int:
    """Run ``task`` in ``session`` (an ``agent.runtime.session.AgentSession`` built non-interactive) and
    return the exit code. SIGINT (Ctrl+C) cancels the turn cleanly (exit 130); SIGTERM / SIGHUP,
    once ``signals.install_headless_handlers`` ran, interrupt it (exit 143). A non-zero exit
    puts exactly one reason line on stderr (``opencli-tui: error: ...``, ``opencli-tui: stopped:
    ...``), in text and json modes alike.

    ``plan`` runs the read-only planning pass instead and prints the plan (text: its markdown;
    json: the ``plan_updated`` event); exit 0 when a plan came out, 1 when the model gave none.
    ``execute_plan`` (``--yes``) then carries the plan out in the same process; the exit code is
    that of the execution turn.

    ``debug`` (``--debug``) also prints each session log record to ``err``, one JSON line each.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    printer = JsonPrinter(out) if output_format == "json" else TextPrinter(out, err)
    pipe_closed = threading.Event()

    def emit(event: AgentEvent) -> None:
        if isinstance(event, JournalStatus):  # on stderr in both formats: stdout may be a pipe
            label = "warning" if event.state != "ok" else "notice"
            print(f"opencli-tui: {label}: {event.message}", file=err, flush=True)
        if isinstance(event, Notice) and event.waiting_s is not None:
            # "waiting for the model (N s)" goes to stderr in both formats (JSON keeps its event).
            print(f"opencli-tui: {event.message}", file=err, flush=True)
            if output_format != "json":
                return
        if pipe_closed.is_set():
            return
        try:
            printer(event)
        except BrokenPipeError:  # the reader went away (`| head`): the run goes on, quietly
            pipe_closed.set()
        if getattr(printer, "broken", False):
            pipe_closed.set()

    emit.printer = printer  # type: ignore[attr-defined]
    if debug:
        session.log_mirror = lambda line: print(line, file=err, flush=True)
    if output_format == "json":  # settings notices (unknown keys...) reach a person on stderr too
        for message in notices or []:
            print(f"opencli-tui: notice: {message}", file=err, flush=True)
    for message in (notices or []) + session.startup_notices():
        emit(Notice(message=message))
    cancel = threading.Event()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, lambda *_: cancel.set())
    try:
        try:
            with interruptible_turn(cancel):
                if plan:
                    result = _plan_and_maybe_execute(session, task, emit, cancel, execute_plan)
                else:
                    result = session.run_turn(task, emit, cancel)
        except ImportError as exc:
            print(f"opencli-tui: error: {exc}", file=err)
            return 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        if isinstance(printer, TextPrinter):
            if pipe_closed.is_set():
                printer._session_id = ""  # stdout's reader went away: no session line
            try:
                printer.flush()  # an error that did not end the turn (stderr), then the session line
            except BrokenPipeError:
                pipe_closed.set()
    code = exit_code_for(result.stop_reason)
    if pipe_closed.is_set() and out is sys.stdout:
        # Point stdout at /dev/null so the interpreter's final flush does not fail loudly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if code != 0:
        reason = {
            "error": f"error: {result.final_text or 'the run failed'}",
            "max_turns": f"stopped: {result.final_text}",
            "stuck": f"stopped: {result.final_text or 'the agent was stuck in a loop'}",
            "cancelled": "cancelled by the user",
            "interrupted": interrupted_reason(signals.received),
            "budget": f"stopped: {result.final_text or 'the session budget is spent'}",
            "verify_failed": f"stopped: {result.final_text}",
        }.get(result.stop_reason, result.stop_reason)
        print(f"opencli-tui: {reason}", file=err)
    return code


def _plan_and_maybe_execute(session, task: str, emit, cancel: threading.Event, execute: bool) -> TurnFinished:
    """Run the planning pass, print the plan, and carry it out when ``execute``. Returns the
    ``TurnFinished`` that decides the exit code (a synthetic ``error`` one when no plan came out)."""
    planned = session.plan_turn(task, emit, cancel)
    if planned.plan is None:
        if planned.turn.stop_reason != "done":
            return planned.turn
        return planned.turn.model_copy(update={
            "stop_reason": "error", "final_text": "the model gave no plan: " + " ".join(planned.message.split())[:200]})
    printer = getattr(emit, "printer", emit)
    if isinstance(printer, TextPrinter):
        printer.print_plan(planned.plan.to_markdown())
    if not execute:
        return planned.turn
    if cancel.is_set():
        from agent.cancel import was_interrupted

        return planned.turn.model_copy(update={"stop_reason": "interrupted" if was_interrupted(cancel) else "cancelled"})
    return session.execute_plan(planned.plan, emit, cancel)
