"""What each compaction of a session did, read from its journal for the compaction inspector:
``load_compactions(path)`` (pure; tests use it directly) gives one ``CompactionEntry`` per
compaction with the messages it touched (``AffectedMessage``: how, the original, what replaced
it), and the text helpers format them (list lines, headers, records)."""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..widgets.token_count import format_tokens

if TYPE_CHECKING:
    from agent.session.records import CompactionRecord

#: Characters of a message's first line shown in the list.
FIRST_LINE_CHARS = 48
#: How each kind of change is tagged in the list, in the order a message's kind is decided.
TAGS = {"summarized": "S", "pruned": "P", "aggregated": "A", "stubbed": "T", "notice": "N"}
#: The kinds that have an id list of their own in the compaction record (``<kind>_ids``).
RECORDED = ("summarized", "pruned", "aggregated", "stubbed")
#: The legend under the list.
LEGEND = ("S summarised · P reasoning pruned · A elided by developer-loop aggregation · "
          "N kept, carries the aggregation notice · T tool result stubbed (head + tail + saved-file pointer)")


@dataclass
class AffectedMessage:
    """One message a compaction touched: ``id``, ``how`` (a key of ``TAGS``: summarized, pruned,
    aggregated, stubbed, or notice for a kept tool result that received an aggregation notice;
    the first that applies), ``original`` (its journal record, a message dict, or None when the
    journal lacks it) and ``replacement`` (the record that stands for it now: the rewritten record
    with its id, the summary message, or for an elided message the kept record carrying the notice
    of its run; None when nothing does)."""

    id: str
    how: str
    original: dict[str, Any] | None
    replacement: dict[str, Any] | None
    #: The model call (1-based) the message belongs to: an assistant message's own, a tool
    #: result's call's, 0 before the first; None when the journal does not place it.
    step: int | None = None


@dataclass
class CompactionEntry:
    """One ``CompactionRecord`` of the journal, numbered from 1, with its messages.

    ``summary_message``: the rewritten record with ``origin == "summary"`` (the new summary, or an
    earlier one rebuilt around the current pins by a rewrite without summary), or None.
    """

    number: int
    record: "CompactionRecord"
    messages: list[AffectedMessage] = field(default_factory=list)
    summary_message: dict[str, Any] | None = None

    @property
    def tokens_before(self) -> int:
        """Tokens of the request before the compaction (the budget's count)."""
        return self.record.tokens_before

    @property
    def tokens_after(self) -> int:
        """Tokens of the request after it."""
        return self.record.tokens_after

    @property
    def summary(self) -> str:
        """The model's summary text (``""`` for a rewrite without summary)."""
        return self.record.summary

    @property
    def has_model_summary(self) -> bool:
        """Whether a summary call ran: false for a rewrite of the view without summary (only
        pruning, aggregation and stubs), even when an earlier summary message was rebuilt."""
        return bool(self.summary.strip())

    @property
    def pinned(self) -> list[str]:
        """Names of the items pinned by code in the summary message (task, plan, test state...)."""
        return [str(name) for name in self.record.pinned or []]

    @property
    def thrash(self) -> bool:
        """This compaction came within ``min_steps_between`` model calls of the previous one."""
        return self.record.thrash

    def counts(self) -> dict[str, int]:
        """How many ids were summarized, pruned, aggregated and stubbed (the record's id lists)."""
        return {how: len(self.record.ids(how)) for how in RECORDED}


def load_compactions(path: str | Path, warnings: list[str] | None = None) -> list[CompactionEntry]:
    """Read the journal at ``path`` and return its compactions, oldest first (``[]`` when the file
    does not exist). Originals come from the message records, or from an earlier compaction's
    rewritten records (a summary compacted again). Pure (reads the file, touches no UI).

    Which record replaced what comes from the record's fields: ``<kind>_ids`` for each kind,
    ``origin == "summary"`` for the summary message. The kept tool results that carry an
    aggregation notice are the rewritten tool results that are neither stubbed nor pruned (or,
    for one also stubbed, whose text holds the notice); each elided message points to the nearest
    of them before it in the journal's order (a run's notice sits in its first kept step).
    Raises ``OSError`` if the file is unreadable.
    """
    from agent.context.aggregation import NOTICE_PREFIX
    from agent.session.records import CompactionRecord, MessageRecord, read_records

    path = Path(path)
    if not path.exists():
        return []
    originals: dict[str, dict[str, Any]] = {}
    order: dict[str, int] = {}  # message id -> position in the journal
    steps: dict[str, int] = {}  # message id -> model call
    step = 0
    entries: list[CompactionEntry] = []
    for record in read_records(path, warnings):
        if isinstance(record, MessageRecord):
            message = record.message.model_dump(mode="json")
            message_id = str(message.get("id"))
            originals[message_id] = message
            order.setdefault(message_id, len(order))
            step += message.get("role") == "assistant"
            steps.setdefault(message_id, step)
        elif isinstance(record, CompactionRecord):
            entry = _entry(record, len(entries) + 1, originals, order, NOTICE_PREFIX)
            for item in entry.messages:
                item.step = steps.get(item.id)
            entries.append(entry)
            for r in record.rewritten:  # a later compaction may rewrite these in turn
                if isinstance(r, dict):
                    originals.setdefault(str(r.get("id")), r)
                    order.setdefault(str(r.get("id")), len(order))
    return entries


def _entry(record: "CompactionRecord", number: int, originals: dict[str, dict[str, Any]], order: dict[str, int],
           notice_prefix: str) -> CompactionEntry:
    """One ``CompactionEntry`` from a compaction record (see ``load_compactions``)."""
    rewritten = list(record.rewritten)
    by_id = {str(r.get("id")): r for r in rewritten}
    ids = {how: record.ids(how) for how in RECORDED}
    summary_message = next((r for r in rewritten if r.get("role") == "user" and r.get("origin") == "summary"), None)
    stubbed, pruned = set(ids["stubbed"]), set(ids["pruned"])
    carriers = [r for r in rewritten if r.get("role") == "tool"
                and (str(r.get("id")) not in stubbed | pruned or notice_prefix in str(r.get("content") or ""))]
    if not ids["aggregated"]:
        carriers = []
    entry = CompactionEntry(number=number, record=record, summary_message=summary_message)
    seen: set[str] = set()

    def add(message_id: str, how: str, replacement: dict[str, Any] | None) -> None:
        if message_id not in seen:
            seen.add(message_id)
            entry.messages.append(AffectedMessage(message_id, how, originals.get(message_id), replacement))

    for how in RECORDED:
        for message_id in ids[how]:
            replacement = by_id.get(message_id)
            if replacement is None and how == "summarized":
                replacement = summary_message
            if replacement is None and how == "aggregated":
                replacement = _notice_for(message_id, carriers, order)
            add(message_id, how, replacement)
    for carrier in carriers:
        add(str(carrier.get("id")), "notice", carrier)
    return entry


def _notice_for(message_id: str, carriers: list[dict[str, Any]], order: dict[str, int]) -> dict[str, Any] | None:
    """The notice-carrying record nearest before ``message_id`` in journal order (the first
    carrier when the position is unknown; None without carriers)."""
    if not carriers:
        return None
    where = order.get(message_id)
    if where is None:
        return carriers[0]
    before = [c for c in carriers if order.get(str(c.get("id")), -1) < where]
    return max(before, key=lambda c: order.get(str(c.get("id")), -1)) if before else carriers[0]


def first_line(message: dict[str, Any] | None) -> str:
    """The first non-empty line of a message's text (or its first tool call), shortened."""
    if not message:
        return "(not in the journal)"
    text = str(message.get("content") or "")
    if not text.strip() and message.get("tool_calls"):
        call = message["tool_calls"][0]
        text = f"{call.get('name', '?')}({call.get('arguments', '')})"
    line = " ".join(next((part for part in text.splitlines() if part.strip()), "").split())
    return line if len(line) <= FIRST_LINE_CHARS else line[: FIRST_LINE_CHARS - 1] + "…"


def message_line(item: AffectedMessage) -> str:
    """The messages list's line: tag, step, role or tool, first words; no ids (they are in the
    panes): ``S  step 2 · tool:read · 1  def add(a, b):``."""
    source = item.original or item.replacement
    step = f"step {item.step}" if item.step else "task" if item.step == 0 else "step ?"
    return f"{TAGS[item.how]}  {step} · {who(source)} · {first_line(source)}"


def who(message: dict[str, Any] | None) -> str:
    """``user``, ``assistant``, ``tool:NAME`` or ``?``."""
    if not message:
        return "?"
    role = str(message.get("role") or "?")
    return f"tool:{message.get('name')}" if role == "tool" and message.get("name") else role


_NOT_PROSE = re.compile(r"^(\s|[-*+>|#`]|\d+[.)]\s|\[)")


def reflow(text: str) -> str:
    """``text`` with its hard-wrapped prose paragraphs joined into one line each, so a narrow
    pane wraps them whole (no orphan words); paragraphs (blank-line separated) stay apart, and
    code, lists, tables, quotes, headings and indented lines keep their line breaks."""
    out: list[str] = []
    in_fence = False
    for paragraph in re.split(r"\n\s*\n", text):
        lines = paragraph.split("\n")
        fences = sum(line.lstrip().startswith("```") for line in lines)
        if in_fence or fences or len(lines) < 2 or any(_NOT_PROSE.match(line) for line in lines):
            out.append(paragraph)
        else:
            out.append(" ".join(line.strip() for line in lines))
        in_fence ^= fences % 2 == 1
    return "\n\n".join(out)


def format_record(message: dict[str, Any] | None, *, empty: str = "(nothing)") -> str:
    """A readable rendering of one message record: a header of its fields, then its text."""
    if not message:
        return empty
    lines = [f"{who(message)} · id {message.get('id', '?')}"]
    if message.get("tool_call_id"):
        lines.append(f"tool call id: {message['tool_call_id']}")
    if message.get("is_error"):
        lines.append("is_error: true")
    for call in message.get("tool_calls") or []:
        lines.append(f"tool call: {call.get('name', '?')} {call.get('arguments', '')}")
    if message.get("reasoning_content"):
        lines += ["", "reasoning:", reflow(str(message["reasoning_content"]))]
    content = message.get("content")
    if content:
        lines += ["", reflow(str(content))]
    return "\n".join(lines)


def compaction_line(entry: CompactionEntry) -> str:
    """The compactions list's line: number, tokens before → after, what it did in words (counts
    that are 0 left out), and marks for a rewrite without summary (``no summary``) and thrash
    (``⚠ thrash``): ``#1  182k → 41k · summarised 3, pruned 1``."""
    c = entry.counts()
    words = {"summarized": "summarised", "pruned": "pruned", "aggregated": "aggregated", "stubbed": "stubbed"}
    did = ", ".join(f"{words[how]} {c[how]}" for how in RECORDED if c[how])
    line = (f"#{entry.number}  {format_tokens(entry.tokens_before)} → {format_tokens(entry.tokens_after)}"
            + (f" · {did}" if did else ""))
    if not entry.has_model_summary:
        line += "  no summary"
    if entry.thrash:
        line += "  ⚠ thrash"
    return line


def header_text(entry: CompactionEntry) -> str:
    """The figures above the panes (several lines): tokens before → after, what was summarised,
    pruned, aggregated and stubbed, the focus, what was pinned by code, and the thrash mark."""
    c = entry.counts()
    focus = entry.record.focus
    lines = [f"#{entry.number}: {format_tokens(entry.tokens_before)} → {format_tokens(entry.tokens_after)} "
             f"tokens ({entry.tokens_before:,} → {entry.tokens_after:,}) · summarised {c['summarized']}, "
             f"pruned {c['pruned']}, aggregated {c['aggregated']}, stubbed {c['stubbed']} messages"
             + (f" · focus: {focus}" if focus else "")]
    if not entry.has_model_summary:
        lines.append("No model summary: the view was rewritten without a summary call.")
    lines.append("Pinned by code: " + (", ".join(entry.pinned) if entry.pinned else "nothing"))
    if entry.thrash:
        lines.append("⚠ thrash: this compaction came within a few model calls of the previous one.")
    return "\n".join(lines)


def summary_text(entry: CompactionEntry) -> str:
    """What the summary pane shows: the summary message (pins and model summary); for a rewrite
    without summary a line saying so, then the earlier summary message it rebuilt, if any."""
    message = str(entry.summary_message.get("content") or "") if entry.summary_message is not None else ""
    if entry.has_model_summary:
        return message or entry.summary
    note = ("No model summary: this compaction rewrote the view without a summary call "
            "(reasoning pruning, loop aggregation, stubbed tool results only).")
    if message:
        return f"{note}\n\nThe earlier summary message, rebuilt around the current pins:\n\n{message}"
    return note
