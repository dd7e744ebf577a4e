"""Finding and loading saved sessions (``--continue``, ``--resume [ID]``, the session picker).

A session is its journal ``<sessions_dir(project)>/<id>.jsonl`` (``session.journal``). Listing reads
each journal once as bytes and parses only the few lines it needs (``session`` records and the
first user message), so it stays cheap for long sessions. Loading parses every record with
``read_records``: torn or invalid lines are skipped with a warning, never fatal.

Every launch journals its session (a ``session`` record when the loop is built), so a project
collects sessions in which nothing was said. Those are *empty* (``SessionInfo.messages == 0``):
listings (``list_sessions``, the picker, the ids named in errors) and ``"latest"``
(``--continue``) leave them out; an explicit id or prefix still finds one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from ..plan.model import Plan
from ..messages import json_loads
from .journal import sessions_dir
from .records import (CompactionRecord, EventRecord, GitBaselineRecord, JournalRecord, MessageRecord, ModeRecord,
                      PermissionGrantRecord, PlanRecord, SessionRecord, SystemPromptRecord, ToolDetailsRecord,
                      is_assistant_message_line, is_turn_finished_line, is_user_message_line, is_whole_line,
                      line_record_type, read_records,
                      to_records, tool_result_of)

if TYPE_CHECKING:
    from ..events import ToolResult
    from ..messages import Message
    from ..permissions.grants import SessionGrant

#: How many characters of the first task a ``SessionInfo`` keeps.
FIRST_TASK_CHARS = 200


class SessionNotFoundError(LookupError):
    """No session matches the requested id (or the project has none). ``str()`` is one line for the user."""


@dataclass(frozen=True)
class SessionInfo:
    """One saved session, for a picker or ``--resume`` without an id.

    ``started_at`` / ``updated_at``: Unix seconds (start from the first record or the id, update
    from the file's mtime); ``first_task``: the first user message, one line, cut to 200
    characters ("" when none); ``turns``: finished user turns; ``model``: the latest model used
    ("" when unknown); ``messages``: how many conversation records (user, assistant, tool) the
    journal holds, torn lines not counted (0: an empty session, see ``empty``); ``replies``: how
    many of them are the model's (0: no reply ever came, e.g. a launch that failed on a missing key).
    """

    id: str
    path: Path
    started_at: float
    updated_at: float
    first_task: str
    turns: int
    model: str
    messages: int = 0
    replies: int = 0

    @property
    def empty(self) -> bool:
        """True when the session has no conversation message (launched, nothing said)."""
        return self.messages == 0


@dataclass
class LoadedSession:
    """A journal read back: ``session_id``, ``path``, ``messages`` (conversation records in
    order), ``plan`` (the active approved plan or ``None``), ``model`` (latest, "" if unknown),
    ``records`` (every valid record, for other state such as compaction), ``warnings`` (lines
    skipped, one string each), ``grants`` (the "allow for this session" answers, in order,
    well-formed ones only; ``[]`` for journals written before grants were journaled) and
    ``tool_details`` (``{tool result message id: its ToolDetailsRecord}``, see ``result_for``) and
    ``plan_prompts`` (``{user message id: approved Plan}``: the user messages that are the
    instruction to carry out an approved plan, ``plan_prompts_from_journal``; a UI shows
    them as the short "Plan approved" line rather than the instruction text) and ``system_prompt``
    (the last well-formed ``system_prompt`` record: the prompt the session was sending, reused
    verbatim on resume; ``None`` for journals written before the record existed)."""

    session_id: str
    path: Path
    messages: list["Message"]
    plan: "Plan | None"
    model: str
    records: list[JournalRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    grants: list["SessionGrant"] = field(default_factory=list)
    tool_details: dict[str, ToolDetailsRecord] = field(default_factory=dict)
    plan_prompts: dict[str, "Plan"] = field(default_factory=dict)
    system_prompt: SystemPromptRecord | None = None
    #: When the journal was last written before this load (epoch seconds; 0 when unknown).
    last_write: float = 0.0

    def details_for(self, message: "Message") -> dict[str, Any]:
        """The journaled details of the tool result ``message`` as a dict (the set fields of its
        ``ToolDetailsRecord``: outcome, diff, display, exit_code, truncated, saved_path, reminders,
        duration_s, output_lines, output_bytes); ``{}`` when the journal has none."""
        record = self.tool_details.get(getattr(message, "id", ""))
        return record.details() if record is not None else {}

    def result_for(self, message: "Message") -> ToolResult:
        """The typed result of the tool result ``message``, as the live event carried it (older
        journals: what their records hold, the outcome taken from the message)."""
        return tool_result_of(message, self.tool_details.get(getattr(message, "id", "")))

    def of_kind(self, cls: type) -> list:
        """The records of one type (``session.records``), in journal order."""
        return [record for record in self.records if isinstance(record, cls)]

    @property
    def plan_records(self) -> list[PlanRecord]:
        """Every plan change, in order."""
        return self.of_kind(PlanRecord)

    @property
    def compactions(self) -> list[CompactionRecord]:
        """The compaction records, in order (the last one rebuilds the view)."""
        return self.of_kind(CompactionRecord)

    @property
    def modes(self) -> list[ModeRecord]:
        """The mode records, in order (the last one is restored)."""
        return self.of_kind(ModeRecord)

    @property
    def git_baseline(self) -> GitBaselineRecord | None:
        """The last git baseline record (``None`` for journals without one)."""
        found = self.of_kind(GitBaselineRecord)
        return found[-1] if found else None

    def undo_marks(self) -> list[tuple[int, list[str]]]:
        """The undo events as ``(messages before it, file lines)``, in order."""
        marks: list[tuple[int, list[str]]] = []
        count = 0
        for record in self.records:
            if isinstance(record, MessageRecord):
                count += 1
            elif isinstance(record, EventRecord) and record.is_undo:
                marks.append((count, list(record.files or [])))
        return marks


def session_info(path: Path) -> SessionInfo:
    """Summarise one journal file without parsing every line. Raises ``OSError`` if unreadable."""
    path = Path(path)
    st = path.stat()
    started: float | None = None
    model = ""
    first_task = ""
    turns = 0
    messages = replies = 0
    with path.open("rb") as fh:
        for raw in fh:
            kind = line_record_type(raw)
            if kind is MessageRecord and is_whole_line(raw):
                messages += 1  # a torn line (cut short by a crash) does not end its object
                replies += is_assistant_message_line(raw)
            if is_turn_finished_line(raw):
                turns += 1
            elif kind is SessionRecord:
                record = _parse(raw)
                if isinstance(record, SessionRecord):
                    model = record.model or model
                    if started is None and record.time:
                        started = record.time
            elif not first_task and is_user_message_line(raw):
                record = _parse(raw)
                if isinstance(record, MessageRecord) and isinstance(record.message.content, str):
                    first_task = " ".join(record.message.content.split())[:FIRST_TASK_CHARS]
                    if started is None and "created_at" in record.message.model_fields_set:
                        started = float(record.message.created_at)
    if started is None:
        started = _time_from_id(path.stem) or st.st_mtime
    return SessionInfo(id=path.stem, path=path, started_at=started, updated_at=st.st_mtime,
                       first_task=first_task, turns=turns, model=model, messages=messages, replies=replies)


def list_sessions(project_root: Path, limit: int | None = None, *, include_empty: bool = False) -> list[SessionInfo]:
    """Return the sessions of the project at ``project_root``, most recently updated first
    (``limit`` caps the count). Empty sessions (no conversation message: a launch where nothing
    was said) are left out unless ``include_empty``. Unreadable journals are left out; no folder
    gives ``[]``."""
    infos = []
    for path in _journal_paths(project_root):
        try:
            info = session_info(path)
        except OSError:
            continue
        if include_empty or not info.empty:
            infos.append(info)
    infos.sort(key=lambda i: (i.updated_at, i.id), reverse=True)
    return infos[:limit] if limit is not None else infos


def latest_session(project_root: Path, *, include_empty: bool = False) -> SessionInfo | None:
    """Return the most recently updated session of the project that has at least one reply of
    the model (any session with ``include_empty``), or ``None`` when there is none. This is what
    ``--continue`` resumes: never the empty session another window just opened, nor a launch
    whose prompt got no answer (a missing key, say)."""
    for path in _newest_with_reply(project_root, include_empty):
        try:
            return session_info(path)
        except OSError:  # gone or unreadable since the check
            continue
    return None


def latest_session_path(project_root: Path, *, include_empty: bool = False) -> Path | None:
    """The journal ``latest_session`` describes, found without summarising it: each journal,
    newest first, is read only up to its first whole reply line (``--continue`` on a
    5 000-message session read all of it, 70 ms). None when there is none."""
    return next(_newest_with_reply(project_root, include_empty), None)


def _newest_with_reply(project_root: Path, include_empty: bool) -> Iterable[Path]:
    """The project's journals, newest first, that hold a reply (all of them with
    ``include_empty``); unreadable ones are left out."""
    for path in sorted(_journal_paths(project_root), key=_mtime_key, reverse=True):
        try:
            if include_empty or _has_reply(path):
                yield path
        except OSError:
            continue


def _has_reply(path: Path) -> bool:
    """True when the journal at ``path`` holds a whole line with a reply of the model (what
    ``session_info`` counts as ``replies``). Raises ``OSError`` if unreadable."""
    with path.open("rb") as fh:
        for raw in fh:
            if is_assistant_message_line(raw) and is_whole_line(raw):
                return True
    return False


def find_session(project_root: Path, ref: str) -> Path:
    """Return the journal path for ``ref``: ``"latest"`` (the newest session with at least one
    conversation message, ``latest_session``), a full session id or a unique prefix of one (these
    may name an empty session). Raises ``SessionNotFoundError`` with a one-line message (naming
    recent non-empty ids) otherwise."""
    folder = sessions_dir(project_root)
    if ref == "latest":
        path = latest_session_path(project_root)
        if path is None:
            raise SessionNotFoundError(f"no saved session with a conversation for this project (looked in {folder})")
        return path
    if not ref or "/" in ref or "\\" in ref or ref.startswith("."):
        raise SessionNotFoundError(f"invalid session id {ref!r}")
    exact = folder / f"{ref}.jsonl"
    if exact.is_file():
        return exact
    try:
        matches = sorted(p for p in folder.iterdir() if p.suffix == ".jsonl" and p.stem.startswith(ref)
                         and not p.name.endswith(".log.jsonl"))  # a session log is no journal
    except OSError:
        matches = []
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise SessionNotFoundError(f"session id {ref!r} is ambiguous: "
                                   + ", ".join(p.stem for p in matches[:5]))
    recent = ", ".join(i.id for i in list_sessions(project_root, limit=3))
    hint = f"; recent: {recent}" if recent else "; this project has no saved session with a conversation"
    raise SessionNotFoundError(f"no session {ref!r} for this project{hint}")


def load_session(path: Path) -> LoadedSession:
    """Read a journal back: messages, active plan, latest model, session grants, tool result
    details, plan-approval prompts, the last system prompt, all records, warnings for skipped
    lines. Raises ``OSError`` when the file cannot be read. Malformed grant, details or system
    prompt records are ignored (never applied)."""
    path = Path(path)
    warnings: list[str] = []
    try:
        last_write = path.stat().st_mtime
    except OSError:
        last_write = 0.0
    records = list(read_records(path, warnings))
    messages = []
    model = ""
    grants: list[SessionGrant] = []
    details: dict[str, ToolDetailsRecord] = {}
    system_prompt: SystemPromptRecord | None = None
    for record in records:
        if isinstance(record, MessageRecord):
            messages.append(record.message)
        elif isinstance(record, SessionRecord) and record.model:
            model = record.model
        elif isinstance(record, PermissionGrantRecord):
            grant = record.to_grant()
            if grant is not None and grant not in grants:
                grants.append(grant)
        elif isinstance(record, ToolDetailsRecord) and record.message_id:
            details[record.message_id] = record
        elif isinstance(record, SystemPromptRecord):
            system_prompt = record
    return LoadedSession(session_id=path.stem, path=path, messages=messages, plan=plan_from_journal(records),
                         model=model, records=records, warnings=warnings, grants=grants, tool_details=details,
                         plan_prompts=plan_prompts_from_journal(records), system_prompt=system_prompt,
                         last_write=last_write)


def plan_from_journal(records: Iterable[Any]) -> Plan | None:
    """The active plan of a journal's records (typed, or decoded dicts): the last approved or
    updated plan; ``None`` when there is none, it was discarded, or the last plan record is only a
    proposal. Records with an invalid plan are skipped."""
    active: Plan | None = None
    for record in to_records(records):
        if isinstance(record, PlanRecord):
            if record.event == "discarded":
                active = None
            elif record.sets_plan:
                active = record.plan
    return active


def plan_prompts_from_journal(records: Iterable[Any]) -> dict[str, Plan]:
    """``{user message id: approved Plan}`` for the user messages of a journal (typed records or
    decoded dicts) that are the instruction to carry out an approved plan.

    Recognised by the journal, not by the text: an ``approved`` plan record names the message in
    its ``message_id``; an older record without that field claims the next message record when
    it is a user message (the execution turn journals it right after the plan). Records with an
    invalid plan are skipped."""
    found: dict[str, Plan] = {}
    waiting: Plan | None = None  # an approved record without message_id, before its message
    for record in to_records(records):
        if isinstance(record, PlanRecord) and record.event == "approved":
            waiting = None
            if record.plan is None:
                continue
            if record.message_id:
                found[record.message_id] = record.plan
            else:
                waiting = record.plan
        elif isinstance(record, MessageRecord) and waiting is not None:
            if record.message.role == "user":
                found[record.message.id] = waiting
            waiting = None
    return found


def format_session_list(infos: list[SessionInfo]) -> str:
    """Return one line per session (``id  date  turns  model  first task``) for a terminal."""
    lines = []
    for info in infos:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.updated_at))
        task = info.first_task[:60] + ("…" if len(info.first_task) > 60 else "")
        turns = f"{info.turns:>3} turn" + (" " if info.turns == 1 else "s")
        lines.append(f"{info.id}  {when}  {turns}  {info.model or '?'}  {task}")
    return "\n".join(lines)


def _parse(raw: bytes) -> JournalRecord | None:
    try:
        data = json_loads(raw.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    found = to_records([data]) if isinstance(data, dict) else []
    return found[0] if found else None


def _time_from_id(session_id: str) -> float | None:
    """Start time encoded in a ``YYYYMMDD-HHMMSS-xxxxxx`` id (UTC), or ``None``."""
    try:
        import calendar

        return float(calendar.timegm(time.strptime(session_id[:15], "%Y%m%d-%H%M%S")))
    except ValueError:
        return None


def _journal_paths(project_root: Path) -> list[Path]:
    """The ``*.jsonl`` files in the project's sessions folder (``[]`` when it cannot be read)."""
    try:
        return [p for p in sessions_dir(project_root).iterdir() if p.suffix == ".jsonl" and p.is_file()
                and not p.name.endswith(".log.jsonl")]  # the session logs beside the journals
    except OSError:
        return []


def _mtime_key(path: Path) -> tuple[float, str]:
    try:
        return path.stat().st_mtime, path.stem
    except OSError:
        return 0.0, path.stem
