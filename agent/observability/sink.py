"""The event sink in front of the UI's ``emit``: it turns the events worth keeping into session
log records (``session_log``) and passes every event on unchanged.

Records: ``turn_started``, ``turn_finished``, ``model_call_finished``, ``tool_call_finished``
(name, argument summary, duration, output lines and bytes, truncated, exit code, outcome),
``guard_triggered``, ``reminder_injected``, ``compaction_done`` (plus ``tokens_saved``),
``step_retried``, ``error``, and any other event not in ``SKIPPED`` (hook and sub-agent events
among them) with its JSON fields, long strings cut to ``MAX_FIELD_CHARS``. Each record carries
``ts`` (Unix time, seconds), ``type``, ``turn`` (1-based in the session; a resumed session goes
on from its log) and ``step`` (1-based in the turn, 0 outside a step).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Callable

from ..events import AgentEvent, Emit, Notice
from .session_log import SessionLog, read_log

#: Events that are not logged: streamed pieces, UI state and requests, sub-agents' heartbeats.
SKIPPED = frozenset({
    "text_delta", "reasoning_delta", "context_usage", "notice", "journal_status", "permission_request",
    "plan_updated", "user_message_added", "step_started", "tool_call_started", "subagent_progress",
    "plan_approval_request",
})
#: Characters kept of a long string field (outputs, summaries, failing test output).
MAX_FIELD_CHARS = 500
#: Characters of a tool call's argument summary.
MAX_ARGUMENT_CHARS = 200


def argument_summary(arguments: Any, limit: int = MAX_ARGUMENT_CHARS) -> str:
    """A one-line ``key=value, ...`` summary of a call's arguments (a raw string as it is), cut
    to ``limit`` characters."""
    if isinstance(arguments, dict):
        text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in arguments.items())
    else:
        text = "" if arguments is None else str(arguments)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
        return value[:MAX_FIELD_CHARS - 1] + "…"
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v) for v in value]
    return value


def last_turn(log_path) -> int:
    """The highest turn number recorded in the log at ``log_path`` (0 for none)."""
    turn = 0
    for record in read_log(log_path):
        if isinstance(record.get("turn"), int):
            turn = max(turn, record["turn"])
    return turn


class LogSink:
    """Writes the session log from the event stream. ``turn``: the turns already in the log;
    ``mirror`` (optional): called with each record's JSON line as written (``--debug``).

    ``wrap(emit)`` returns the emit to hand the loop. A failed write shows one ``Notice`` on
    the first failure, then stays quiet (writes are still tried); a record that cannot be built
    is dropped. Thread-safe (sub-agents emit from their own threads)."""

    def __init__(self, log: SessionLog, *, turn: int = 0, mirror: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.log = log
        self.turn = turn
        self.step = 0
        self.mirror = mirror
        self.clock = clock
        self.noticed = False
        self._started: dict[str, Any] = {}  # call id -> arguments (redacted) of a started call
        self._lock = threading.Lock()

    def wrap(self, emit: Emit) -> Emit:
        """An emit that logs each event, then passes it to ``emit``."""
        def observed(event: AgentEvent) -> None:
            notice = self.observe(event)
            if notice is not None:
                emit(notice)
            emit(event)

        observed.sink = self  # type: ignore[attr-defined]
        observed.inner = emit  # type: ignore[attr-defined]
        return observed

    def observe(self, event: AgentEvent) -> Notice | None:
        """Log ``event`` if it is kept; returns the ``Notice`` to show when the log could not be
        written the first time, else None. Never raises."""
        try:
            with self._lock:
                record = self._record(event)
                if record is None:
                    return None
                line = self.log.encode(record)
                written = self.log.write(line)
            if self.mirror is not None:
                self.mirror(line)
        except Exception:  # a record that cannot be built never breaks a turn
            return None
        if written or self.noticed:
            return None
        self.noticed = True
        return Notice(message=f"The session log is not written: {self.log.error}. The session goes on; "
                              "/stats may miss figures.")

    def _record(self, event: AgentEvent) -> dict[str, Any] | None:
        kind = getattr(event, "type", "")
        if kind == "turn_started":
            self.turn += 1
            self.step = 0
        elif kind == "step_started":
            self.step = event.step
        elif kind == "tool_call_started":
            self._started[event.id] = event.arguments
        if not kind or kind in SKIPPED:
            return None
        record: dict[str, Any] = {"ts": round(self.clock(), 3), "type": kind, "turn": self.turn, "step": self.step}
        if kind == "tool_call_finished":
            result = event.result
            arguments = self.log.redact(self._started.pop(event.id, None))
            record.update(id=event.id, name=event.name, arguments=argument_summary(arguments),
                          duration_s=result.duration_s, output_lines=result.output_lines,
                          output_bytes=result.output_bytes, truncated=result.truncated,
                          exit_code=result.exit_code, outcome=result.outcome)
        elif kind == "turn_started":
            record.update(model=event.model, prompt=argument_summary(self.log.redact(event.prompt)))
        elif kind == "turn_finished":
            record.update(stop_reason=event.stop_reason, usage=event.usage.model_dump(mode="json"),
                          final_text=argument_summary(self.log.redact(event.final_text)))
            self.step = 0
        else:
            fields = event.to_json_dict()
            fields.pop("type", None)
            for key in ("turn", "step"):  # the event's own numbering wins (model calls)
                if key in fields:
                    record[key] = fields.pop(key)
            record.update(_cut(self.log.redact(fields)))
            if kind == "compaction_done":
                record["tokens_saved"] = max(event.tokens_before - event.tokens_after, 0)
        return record
