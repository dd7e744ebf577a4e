"""Headless runs: ``opencli-tui run "task"`` prints the event stream and exits with a code.

Text output uses rich (assistant text on stdout, tool calls and notices dimmed, errors on stderr);
``--output-format json`` prints one JSON object per event and line (DESIGN.md 5a; the field set is
a public interface: extend only). The one-line reason of a non-zero exit goes to stderr.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from typing import Any, TextIO

from agent.events import (
    AgentEvent, ErrorEvent, GuardTriggered, Notice, PermissionRequest, ReasoningDelta, TextDelta,
    ToolCallFinished, ToolCallStarted, TurnFinished,
)

EXIT_CODES = {"done": 0, "error": 1, "max_turns": 3, "stuck": 4, "cancelled": 130}


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


class JsonPrinter:
    """Prints each event as one JSON line on ``out`` (UI-only requests are skipped)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._lock = threading.Lock()

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, PermissionRequest):
            return
        with self._lock:
            self.out.write(json.dumps(event.to_json_dict(), ensure_ascii=False) + "\n")
            self.out.flush()


class TextPrinter:
    """Prints the run for a person with rich: streamed text, one line per tool call, notices."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        from rich.console import Console

        self.console = Console(file=out, highlight=False, soft_wrap=True)
        self.err = Console(file=err, highlight=False, soft_wrap=True)
        self._in_text = False
        self._in_reasoning = False

    def _end_stream(self) -> None:
        if self._in_text or self._in_reasoning:
            self.console.print()
        self._in_text = self._in_reasoning = False

    def __call__(self, event: AgentEvent) -> None:
        from rich.text import Text

        if isinstance(event, TextDelta):
            if self._in_reasoning:
                self._end_stream()
            self._in_text = True
            self.console.print(Text(event.text), end="")
        elif isinstance(event, ReasoningDelta):
            if self._in_text:
                self._end_stream()
            self._in_reasoning = True
            self.console.print(Text(event.text, style="dim italic"), end="")
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
        elif isinstance(event, ErrorEvent):
            self._end_stream()
            self.err.print(Text(f"error: {event.message}", style="bold red"))
        elif isinstance(event, TurnFinished):
            self._end_stream()


def run_headless(session, task: str, *, output_format: str = "text", notices: list[str] | None = None,
                 out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run ``task`` in ``session`` (an ``agent.runtime.AgentSession`` built non-interactive) and
    return the exit code. SIGINT (Ctrl+C) cancels the turn cleanly (exit 130)."""
    out = out or sys.stdout
    err = err or sys.stderr
    emit = JsonPrinter(out) if output_format == "json" else TextPrinter(out, err)
    for message in (notices or []) + session.startup_notices():
        emit(Notice(message=message))
    cancel = threading.Event()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, lambda *_: cancel.set())
    try:
        try:
            result = session.run_turn(task, emit, cancel)
        except ImportError as exc:
            print(f"opencli-tui: error: {exc}", file=err)
            return 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    code = exit_code_for(result.stop_reason)
    if code != 0:
        reason = {
            "error": f"error: {result.final_text or 'the run failed'}",
            "max_turns": f"stopped: {result.final_text}",
            "stuck": f"stopped: {result.final_text or 'the agent was stuck in a loop'}",
            "cancelled": "cancelled by the user",
        }.get(result.stop_reason, result.stop_reason)
        print(f"opencli-tui: {reason}", file=err)
    return code
