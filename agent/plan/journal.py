"""Plan records in the session journal: ``{"kind": "plan", "event": ..., "plan": {...}}`` for every
change, so a resumed or compacted session can re-inject the plan verbatim (``plan_from_journal``).
An ``approved`` record also names the ``message_id`` of the execution prompt that follows it, so a
resumed UI shows that message as the short approved notice (``plan_prompts_from_journal``; older
journals lack the field and are matched by position).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:  # pragma: no cover - typing only
    from ..loop.agent import Agent
from .model import Plan


def record_plan(agent: "Agent", event: str, plan: Plan | None, *, message_id: str | None = None) -> None:
    """Append a ``{"kind": "plan"}`` record to the agent's journal (when it has one); an
    ``approved`` record also names the ``message_id`` of the execution prompt that follows."""
    if agent.journal is not None:
        record: dict[str, Any] = {"kind": "plan", "event": event,
                                  "plan": plan.model_dump(mode="json") if plan is not None else None,
                                  "time": time.time()}
        if message_id:
            record["message_id"] = message_id
        agent.journal.append(record)


def plan_from_journal(records: Iterable[dict[str, Any]]) -> Plan | None:
    """Return the active plan recorded in a session journal (``session.journal.read_journal`` records):
    the last approved/updated plan, or ``None`` when there is none, it was discarded, or the last
    plan record is only a proposal. Invalid plan records are skipped."""
    active: Plan | None = None
    for record in records:
        if record.get("kind") != "plan":
            continue
        event = record.get("event")
        if event == "discarded":
            active = None
        elif event in ("approved", "updated", "undeclared_file") and isinstance(record.get("plan"), dict):
            try:
                active = Plan.model_validate(record["plan"])
            except ValueError:
                continue
    return active


def plan_prompts_from_journal(records: Iterable[dict[str, Any]]) -> dict[str, Plan]:
    """Return ``{user message id: approved Plan}`` for the user messages of a journal (records as
    ``session.journal.read_journal`` yields them) that are the instruction to carry out an approved plan.

    Recognised by the journal, not by the text: an ``approved`` plan record names the message in
    its ``message_id``; an older record without that field claims the next message record when
    it is a user message (the execution turn journals it right after the plan). Invalid plan
    records are skipped."""
    found: dict[str, Plan] = {}
    waiting: Plan | None = None  # an approved record without message_id, before its message
    for record in records:
        kind = record.get("kind")
        if kind == "plan" and record.get("event") == "approved":
            waiting = None
            try:
                plan = Plan.model_validate(record.get("plan"))
            except ValueError:
                continue
            message_id = record.get("message_id")
            if isinstance(message_id, str) and message_id:
                found[message_id] = plan
            else:
                waiting = plan
        elif kind == "message" and waiting is not None:
            message = record.get("message")
            if isinstance(message, dict) and message.get("role") == "user" and isinstance(message.get("id"), str):
                found[message["id"]] = waiting
            waiting = None
    return found
