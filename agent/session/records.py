"""The typed records of the session journal: one pydantic model per ``kind``, one union, one reader.

Every line of a journal is one record (``JournalRecord``, discriminated by ``kind``); this module
is the only place that knows the ``kind`` strings. ``SessionJournal.append`` writes a record's
``dump()``; ``read_records`` yields typed records. A line that is torn, not JSON, of an unknown
kind or invalid is skipped with a warning. Fields added later are optional, so journals written
before them still load, and unknown extra fields are kept as they are (``extra="allow"``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, ClassVar, Iterable, Iterator, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

from ..events import ToolOutcome, ToolResult
from ..messages import Message, json_loads
from ..plan.model import Plan


class RecordBase(BaseModel):
    model_config = ConfigDict(extra="allow")
    #: Fields left out of ``dump()`` when they are None (optional details older journals lack).
    OMIT_NONE: ClassVar[frozenset[str]] = frozenset()

    def dump(self) -> dict[str, Any]:
        """The JSON object written as the record's journal line (``kind`` first)."""
        data = self.model_dump(mode="json")
        return {key: value for key, value in data.items() if not (key in self.OMIT_NONE and value is None)}


class MessageRecord(RecordBase):
    """A conversation record exactly as sent or received."""

    kind: Literal["message"] = "message"
    message: Message


class SessionRecord(RecordBase):
    """Session metadata, written each time the loop is built: ``event`` is ``started``,
    ``resumed`` or ``rebuilt`` (a model switch)."""

    kind: Literal["session"] = "session"
    event: str = ""
    session_id: str = ""
    model: str = ""
    workspace: str = ""
    time: float = 0.0


class EventRecord(RecordBase):
    """A session event: ``turn_finished`` (with its ``stop_reason``) or ``undo`` (the file lines
    the undo restored, as ``files``)."""

    kind: Literal["event"] = "event"
    event: str = ""
    stop_reason: str | None = None
    files: list[str] | None = None
    time: float | None = None
    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"stop_reason", "files", "time"})

    @property
    def is_turn_finished(self) -> bool:
        return self.event == "turn_finished"

    @property
    def is_undo(self) -> bool:
        return self.event == "undo" and self.files is not None

    @classmethod
    def turn_finished(cls, stop_reason: str, time: float) -> "EventRecord":
        return cls(event="turn_finished", stop_reason=stop_reason, time=time)

    @classmethod
    def undo(cls, files: list[str], time: float) -> "EventRecord":
        return cls(event="undo", files=list(files), time=time)


class ModeRecord(RecordBase):
    """The permission mode and Plan/Act mode, written when either changes."""

    kind: Literal["mode"] = "mode"
    permission_mode: str = ""
    plan_mode: bool = False
    time: float = 0.0


PlanEvent = str  # proposed, approved, updated, undeclared_file, discarded


class PlanRecord(RecordBase):
    """A change of the plan. An invalid ``plan`` reads as ``None`` (the record then sets no plan);
    an ``approved`` record names the ``message_id`` of the execution prompt after it (older
    journals lack it)."""

    kind: Literal["plan"] = "plan"
    event: PlanEvent = ""
    plan: Plan | None = None
    time: float | None = None
    message_id: str | None = None
    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"time", "message_id"})

    @field_validator("plan", mode="wrap")
    @classmethod
    def _invalid_plan_is_none(cls, value: Any, handler: Any) -> Plan | None:
        try:
            return handler(value)
        except ValidationError:
            return None

    @property
    def sets_plan(self) -> bool:
        """True when this record makes its plan the active one."""
        return self.event in ("approved", "updated", "undeclared_file") and self.plan is not None


class CompactionRecord(RecordBase):
    """One compaction: enough to rebuild the view on resume (``view_ids``, ``history_length``,
    ``rewritten``: the summary and the changed messages as dicts) and to show the inspector what
    replaced what (``<how>_ids``)."""

    kind: Literal["compaction"] = "compaction"
    time: float = 0.0
    focus: str | None = None
    tokens_before: int = 0
    tokens_after: int = 0
    summary: str = ""
    history_length: int | None = None
    view_ids: list[str] | None = None
    summarized_ids: list[str] = Field(default_factory=list)
    pruned_ids: list[str] = Field(default_factory=list)
    aggregated_ids: list[str] = Field(default_factory=list)
    stubbed_ids: list[str] = Field(default_factory=list)
    pinned: Any = None
    thrash: bool = False
    rewritten: list[dict[str, Any]] = Field(default_factory=list)

    def ids(self, how: str) -> list[str]:
        """The message ids ``how`` (summarized, pruned, aggregated, stubbed) names."""
        return [str(i) for i in getattr(self, f"{how}_ids", None) or []]


#: The optional fields of a ``tool_details`` record and the types a reader accepts for them
#: (``list``: a non-empty list of strings; ``float`` also takes an int). A field of another type is
#: dropped on reading. ``outcome``, ``duration_s``, ``output_lines`` and ``output_bytes`` are
#: newer: older records lack them.
TOOL_DETAIL_FIELDS: dict[str, type] = {
    "outcome": str, "diff": str, "display": str, "exit_code": int, "truncated": bool, "saved_path": str,
    "reminders": list, "duration_s": float, "output_lines": int, "output_bytes": int,
}


TOOL_OUTCOMES: tuple[str, ...] = get_args(ToolOutcome)


class ToolDetailsRecord(RecordBase):
    """The typed result of a tool call (``events.ToolResult``) beyond the model's text, written
    right after its message record; ``to_result`` reads it back."""

    kind: Literal["tool_details"] = "tool_details"
    message_id: str = ""
    tool_call_id: str = ""
    name: str = ""
    outcome: ToolOutcome | None = None
    diff: str | None = None
    display: str | None = None
    exit_code: int | None = None
    truncated: bool | None = None
    saved_path: str | None = None
    reminders: list[str] | None = None
    duration_s: float | None = None
    output_lines: int | None = None
    output_bytes: int | None = None
    OMIT_NONE: ClassVar[frozenset[str]] = frozenset(TOOL_DETAIL_FIELDS)

    @model_validator(mode="before")
    @classmethod
    def _drop_malformed(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for key, kind in TOOL_DETAIL_FIELDS.items():
            value = out.get(key)
            if value is None:
                continue
            if kind is list:
                ok = isinstance(value, list) and bool(value) and all(isinstance(item, str) for item in value)
            elif kind is float:
                ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            else:
                ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
            if key == "outcome":
                ok = ok and value in TOOL_OUTCOMES
            if not ok:
                out.pop(key)
        for key in ("message_id", "tool_call_id", "name"):
            if not isinstance(out.get(key, ""), str):
                out[key] = ""
        return out

    @classmethod
    def of(cls, message: Any, result: ToolResult) -> "ToolDetailsRecord":
        """The record of ``result`` for the tool result ``message`` (its ``id``, ``tool_call_id``,
        ``name``); unset details are left out."""
        return cls(message_id=getattr(message, "id", ""), tool_call_id=getattr(message, "tool_call_id", ""),
                   name=getattr(message, "name", ""), outcome=result.outcome, diff=result.diff or None,
                   display=result.display, exit_code=result.exit_code, truncated=True if result.truncated else None,
                   saved_path=result.saved_path or None, reminders=list(result.reminders) or None,
                   duration_s=result.duration_s, output_lines=result.output_lines, output_bytes=result.output_bytes)

    def details(self) -> dict[str, Any]:
        """The set details as a dict (``{}`` when none is set)."""
        found = {key: getattr(self, key) for key in TOOL_DETAIL_FIELDS if getattr(self, key) is not None}
        if found.get("truncated") is False:
            found.pop("truncated")
        return found

    def to_result(self, message: Any) -> ToolResult:
        """The ``ToolResult`` of the tool result ``message`` this record belongs to."""
        return tool_result_of(message, self)


def tool_result_of(message: Any, record: "ToolDetailsRecord | None") -> ToolResult:
    """The ``ToolResult`` of a journaled tool result ``message`` and its details record (None:
    none was written). Records written before the outcome was journaled get it from the message:
    ``error`` when it is an error, ``denied`` when its text is a permission denial, else ``ok``."""
    from ..permissions.policy import DENIAL_PREFIX

    details = record.details() if record is not None else {}
    outcome = details.pop("outcome", None)
    if outcome is None:
        is_error = bool(getattr(message, "is_error", False))
        denied = is_error and str(getattr(message, "content", "")).startswith(DENIAL_PREFIX)
        outcome = "denied" if denied else ("error" if is_error else "ok")
    details["reminders"] = tuple(details.get("reminders") or ())
    return ToolResult(outcome=outcome, **details)


class PermissionGrantRecord(RecordBase):
    """An "allow for this session" answer (``permissions.grants.SessionGrant``). A field of the
    wrong type reads as "", which ``to_grant`` then refuses."""

    kind: Literal["permission_grant"] = "permission_grant"
    scope: str = ""
    tool: str = ""
    prefix: str | None = None
    time: float | None = None
    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"prefix", "time"})

    @model_validator(mode="before")
    @classmethod
    def _strings_only(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = {**data, **{k: "" for k in ("scope", "tool", "prefix") if k in data
                               and data[k] is not None and not isinstance(data[k], str)}}
        return data

    def to_grant(self):  # -> SessionGrant | None
        """The grant this record describes, or None when it is not well-formed."""
        from ..permissions.grants import SessionGrant

        return SessionGrant.checked(self.scope, self.tool, self.prefix or "")

    @classmethod
    def of(cls, grant: Any, time: float | None = None) -> "PermissionGrantRecord":
        return cls(scope=grant.scope, tool=grant.tool,
                   prefix=grant.prefix if grant.scope == "session_prefix" else None, time=time)


#: Why a ``system_prompt`` record was written: a new session; a resume whose journal held no
#: usable prompt (written before the record existed); the registered tools changed.
SystemPromptReason = Literal["started", "resumed_without_prompt", "tools_changed"]


class SystemPromptRecord(RecordBase):
    """The system prompt exactly as sent (``text``), the tools registered with it, in order (a
    session reuses the text only for the same tool set), the model it was built for, why it was
    written (``SystemPromptReason``) and when (Unix seconds)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    kind: Literal["system_prompt"] = "system_prompt"
    text: str = Field(min_length=1)
    tools: tuple[str, ...]
    model: str = ""
    reason: str = "started"
    time: float = 0.0

    @field_validator("model", "reason", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value


class GitBaselineRecord(RecordBase):
    """The paths git listed as changed when the session started (not the session's doing)."""

    kind: Literal["git_baseline"] = "git_baseline"
    dirty: list[str] = Field(default_factory=list)
    time: float = 0.0


class LessonRecord(RecordBase):
    """A lesson (at most 3 lines) the model wrote after a failed round (``pipeline.review``),
    pinned for the next rounds; ``round`` is the round that failed, ``hook`` the hook that failed it."""

    kind: Literal["lesson"] = "lesson"
    text: str
    round: int = 1
    hook: str = ""
    time: float = 0.0
class SubagentRecord(RecordBase):
    """A sub-agent the ``task`` call ``task_id`` started: ``event`` ``started`` or ``finished``
    (then with its ``stop_reason``: ``done``, ``max_turns``, ``timeout``, ``cancelled``, ``error``,
    ``stuck``, ``budget``, its ``duration_s`` in seconds, ``tokens``, prompt + completion, and
    ``summary``: the first line of its result, or of why it stopped, at most ``SUMMARY_CHARS``
    characters, as its timeline card showed it); ``index`` is its 1-based order among the parent's
    sub-agents; ``journal`` the path of its own journal relative to the folder of the parent's
    journal (``SESSION_ID/subagents/ID.jsonl``)."""

    kind: Literal["subagent"] = "subagent"
    event: Literal["started", "finished"] = "started"
    task_id: str = ""
    index: int = 0
    description: str = ""
    journal: str = ""
    stop_reason: str | None = None
    duration_s: float | None = None
    tokens: int | None = None
    summary: str | None = None
    time: float = 0.0
    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"stop_reason", "duration_s", "tokens", "summary"})
    #: Characters of ``summary`` kept.
    SUMMARY_CHARS: ClassVar[int] = 300

    def journal_path(self, parent_journal: Path) -> Path:
        """The sub-agent's journal file, given the parent's journal file ``parent_journal``."""
        return Path(parent_journal).parent / self.journal


JournalRecord = Annotated[
    Union[MessageRecord, SessionRecord, EventRecord, ModeRecord, PlanRecord, CompactionRecord, ToolDetailsRecord,
          PermissionGrantRecord, SystemPromptRecord, GitBaselineRecord, LessonRecord, SubagentRecord],
    Field(discriminator="kind"),
]
RECORD_ADAPTER: TypeAdapter[JournalRecord] = TypeAdapter(JournalRecord)
RECORD_ADAPTER_TYPES: tuple[type[RecordBase], ...] = (
    MessageRecord, SessionRecord, EventRecord, ModeRecord, PlanRecord, CompactionRecord, ToolDetailsRecord,
    PermissionGrantRecord, SystemPromptRecord, GitBaselineRecord, LessonRecord, SubagentRecord)
#: The ``kind`` of every record type.
RECORD_KINDS: tuple[str, ...] = tuple(cls.model_fields["kind"].default for cls in RECORD_ADAPTER_TYPES)


def parse_record(data: Any, where: str = "journal", warnings: list[str] | None = None) -> JournalRecord | None:
    """Validate one decoded journal line; None (with a warning naming ``where``) when it is not a
    record of a known kind or is invalid."""
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind not in RECORD_KINDS:
        if warnings is not None:
            warnings.append(f"{where}: a record of unknown kind {kind!r}; skipped")
        return None
    try:
        return RECORD_ADAPTER.validate_python(data)
    except ValidationError as exc:
        if warnings is not None:
            warnings.append(f"{where}: a {kind} record is invalid ({type(exc).__name__}); skipped")
        return None


def to_records(items: Iterable[Any], where: str = "journal", warnings: list[str] | None = None) -> list[JournalRecord]:
    """Typed records from decoded dicts (already typed records pass through); invalid ones skipped."""
    out: list[JournalRecord] = []
    for item in items:
        record = item if isinstance(item, RecordBase) else parse_record(item, where, warnings)
        if record is not None:
            out.append(record)
    return out


def read_journal(path: Path, warnings: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """Yield the decoded JSON objects of a journal's lines, untyped (``read_records`` types them).
    Lines that are not valid JSON (a torn last line after a crash) are skipped with a warning
    appended to ``warnings``. Raises ``OSError`` if unreadable."""
    with Path(path).open("r", encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, start=1):
            if line.strip():
                yield from _decoded_line(path, number, line, warnings)


def _decoded_line(path: Path, number: int, line: str, warnings: list[str] | None) -> Iterator[dict[str, Any]]:
    """The JSON object of journal line ``number`` (nothing, with a warning, when it is torn or
    not JSON and holds no whole record after the torn part)."""
    try:
        data = json_loads(line)
    except json.JSONDecodeError:
        if warnings is not None:
            warnings.append(f"{path}: line {number} is torn or not JSON; skipped")
        data = _glued_record(line)  # a whole record written right after a torn one
        if data is None:
            return
    if isinstance(data, dict):
        yield data


def read_records(path: Path, warnings: list[str] | None = None) -> Iterator[JournalRecord]:
    """Yield the typed records of a journal. Torn, non-JSON, unknown or invalid lines are skipped
    with a warning appended to ``warnings``. Raises ``OSError`` if unreadable.

    A line is validated straight from its JSON text (pydantic parses it: about half the time of
    ``json.loads`` and then validating the dict, issue 18); a line that fails is read again the
    long way (``read_journal``'s decoding, depth limit and torn-line recovery, then
    ``parse_record``), which gives the same record or the same warning as before. The parser
    refuses nesting past its own limit of 200 levels, counted slightly differently from
    ``MAX_JSON_DEPTH``'s (a line one or two levels past ours may pass); far below Python's
    recursion limit either way, which is what the limit guards."""
    where = str(path)
    with Path(path).open("r", encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                yield RECORD_ADAPTER.validate_json(line)
                continue
            except ValidationError:
                pass
            for data in _decoded_line(path, number, line, warnings):
                record = parse_record(data, where, warnings)
                if record is not None:
                    yield record


_LINE_START = '{"kind": '


def _glued_record(line: str) -> dict[str, Any] | None:
    """Return the complete record at the end of a line that starts with a torn one, if any."""
    start = line.rfind(_LINE_START)
    while start > 0:
        try:
            record = json_loads(line[start:])
            return record if isinstance(record, dict) else None
        except json.JSONDecodeError:
            start = line.rfind(_LINE_START, 0, start)
    return None


def line_kind(raw: bytes) -> str | None:
    """The ``kind`` of a raw journal line from its first bytes, without parsing it (for cheap
    listings); None when the line does not start like a record."""
    prefix = b'{"kind": "'
    if not raw.startswith(prefix):
        return None
    end = raw.find(b'"', len(prefix))
    return raw[len(prefix):end].decode("ascii", "replace") if end > 0 else None


def line_record_type(raw: bytes) -> type[RecordBase] | None:
    """The record class of a raw journal line from its first bytes (``line_kind``), or None."""
    kind = line_kind(raw)
    return next((cls for cls in RECORD_ADAPTER_TYPES if cls.model_fields["kind"].default == kind), None)


def is_turn_finished_line(raw: bytes) -> bool:
    """True when a raw ``event`` line records a finished turn (a cheap check, no parsing)."""
    return line_kind(raw) == "event" and b'"turn_finished"' in raw


def is_user_message_line(raw: bytes) -> bool:
    """True when a raw ``message`` line probably holds a user message (its role comes first)."""
    return line_kind(raw) == "message" and b'"role": "user"' in raw[:200]


def is_assistant_message_line(raw: bytes) -> bool:
    """True when a raw ``message`` line probably holds a model reply (its role comes first)."""
    return line_kind(raw) == "message" and b'"role": "assistant"' in raw[:200]


def is_whole_line(raw: bytes) -> bool:
    """True when a raw journal line ends its object (a torn line, cut short by a crash, does not)."""
    return raw.rstrip().endswith(b"}")


__all__ = ["JournalRecord", "MessageRecord", "SessionRecord", "EventRecord", "ModeRecord", "PlanRecord",
           "CompactionRecord", "ToolDetailsRecord", "PermissionGrantRecord", "SystemPromptRecord",
           "GitBaselineRecord", "SubagentRecord", "TOOL_DETAIL_FIELDS", "parse_record", "read_journal", "read_records", "to_records", "line_kind"]
