"""The session journal: one append-only JSONL file per session.

Each line is one JSON object with a ``kind``: ``session`` (metadata, first line), ``message`` (a
conversation record exactly as sent or received, including reasoning content and full tool
results) or ``event`` (a turn boundary and its stop reason); other modules add ``mode``, ``plan``
and ``compaction`` records. Two optional kinds, which older journals lack (readers must cope):

- ``tool_details``: what the UI showed of a tool result beyond the model's text, written right
  after its ``message`` record: ``{"kind": "tool_details", "message_id", "tool_call_id", "name"}``
  plus any of ``diff`` (the unified diff of an edit/write), ``display`` (the output as shown,
  ANSI colours kept), ``exit_code``, ``truncated``, ``saved_path``, ``reminders`` (the texts of
  the reminders appended to this result, in order, as the live ``ReminderInjected`` events
  carried them; older journals lack it); written only when one of them is set
  (``tool_details_record``);
- ``permission_grant``: an "allow for this session" answer (``permissions.grants.SessionGrant``:
  ``scope``, ``tool``, ``prefix``), restored on resume;
- ``system_prompt``: the exact system prompt the session sends (``SystemPromptRecord``), written
  when the session starts and again only when it legitimately changes (the tool set changed with
  a model switch); a resume sends the last one verbatim, so the first resumed request extends
  the cached prefix instead of rebuilding it (a new git snapshot would differ).

Records are only ever added to this list, never changed. Lines are written whole and flushed
as they happen; the file is created with mode 0600 and locked (``flock``) for the session's life.
Secrets never go in: only records are written, never settings, and the values of secret-looking
environment variables (API keys, tokens) are redacted from every line. A torn last line (power loss
mid-write) is skipped with a warning on reading, and the next append starts on a new line.

Places (DESIGN.md 5b): ``<user data dir>/sessions/<project key>/<session_id>.jsonl``, the project
key derived from the repository root, or the directory when there is none.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Literal, Sequence

from ..config.files import user_data_dir
from ..messages import Message, message_from_dict


def new_session_id() -> str:
    """Return a sortable session id: ``YYYYMMDD-HHMMSS-xxxxxx`` (UTC time + 6 hex characters)."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + uuid.uuid4().hex[:6]


def project_key(root: Path) -> str:
    """Return a folder name for a project: its directory name plus a short hash of its full path."""
    root = Path(root).resolve()
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", root.name)[:40] or "root"
    digest = hashlib.sha1(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return f"{slug}-{digest}"


def sessions_dir(project_root: Path) -> Path:
    """Return the folder holding this project's session journals (not created)."""
    return user_data_dir() / "sessions" / project_key(project_root)


class SessionLockedError(RuntimeError):
    """Another process (or another journal object) holds the session's journal lock."""


#: Environment variables whose values must never reach a journal (API keys, tokens, passwords).
_SECRET_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|ACCESS_KEY)", re.IGNORECASE)
_MIN_SECRET_LEN = 8


def secret_values(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Return ``{value: name}`` for environment variables that look like secrets (name contains
    API_KEY, TOKEN, SECRET, PASSWORD...; value at least 8 characters). Used to redact journals."""
    env = os.environ if environ is None else environ
    return {value: name for name, value in env.items()
            if value and len(value) >= _MIN_SECRET_LEN and _SECRET_NAME.search(name)}


def redact(line: str, secrets: dict[str, str]) -> str:
    """Replace every secret value in ``line`` (a JSON text) by ``[redacted NAME]``."""
    for value, name in secrets.items():
        encoded = json.dumps(value, ensure_ascii=False)[1:-1]  # as it appears inside a JSON string
        if encoded in line:
            line = line.replace(encoded, f"[redacted {name}]")
    return line


class SessionJournal:
    """Appends records to ``path``; creates it (0600) and its folder (0700) on first write.

    Crash safety: each record is one line written whole and flushed; when an existing journal
    ends without a newline (a torn last line after a power loss) the next append starts on a new
    line, so only the torn line is lost. Secret-looking environment values (``secret_values``)
    are redacted from every line before it is written.

    Exclusive use: the first write (or ``lock()``) takes ``fcntl.flock(LOCK_EX | LOCK_NB)`` on the
    file and holds it until ``close()`` or process exit (the kernel drops it on a crash, so a lock
    never goes stale). A second journal on the same file, in this or another process, cannot get
    it: ``lock()`` raises ``SessionLockedError``; ``append`` records the same message in ``error``
    and writes nothing. Other write failures (disk full, permissions) are also remembered in
    ``error`` and reported once by the caller; they never stop the conversation.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.error: str | None = None
        self._fh = None

    @property
    def locked(self) -> bool:
        """True while this object holds the file open and locked."""
        return self._fh is not None

    def lock(self) -> None:
        """Open (creating if needed, mode 0600) and lock the journal now, without writing.

        Raises ``SessionLockedError`` when another instance holds it, ``OSError`` when the file
        cannot be opened. Idempotent."""
        self._open()

    def _open(self):
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0), 0o600)
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise SessionLockedError(
                        f"session {self.path.stem} is in use by another opencli-tui instance "
                        f"({self.path} is locked); close it first or start a new session") from None
                os.fchmod(fd, 0o600)
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    os.write(fd, b"\n")  # a torn last line stays alone on its line
            except BaseException:
                os.close(fd)
                raise
            self._fh = os.fdopen(fd, "a", encoding="utf-8")
            self._secrets = secret_values()
        return self._fh

    def append(self, record: dict[str, Any]) -> None:
        """Write one record as a JSON line (secrets redacted) and flush it."""
        if self.error:
            return
        try:
            fh = self._open()
            fh.write(redact(json.dumps(record, ensure_ascii=False), self._secrets) + "\n")
            fh.flush()
        except SessionLockedError as exc:
            self.error = f"session journal not written: {exc}"
        except (OSError, TypeError, ValueError) as exc:
            self.error = f"session journal {self.path} could not be written: {exc}"

    def append_message(self, message: Message) -> None:
        """Write one conversation record (``kind="message"``)."""
        self.append({"kind": "message", "message": message.model_dump(mode="json")})

    def append_tool_details(self, message: Message, *, diff: str | None = None, display: str | None = None,
                            exit_code: int | None = None, truncated: bool = False,
                            saved_path: str | None = None, reminders: Sequence[str] | None = None) -> None:
        """Write a ``tool_details`` record for the tool result ``message`` (already appended),
        or nothing when none of the details is set (see ``tool_details_record``)."""
        record = tool_details_record(message, diff=diff, display=display, exit_code=exit_code,
                                     truncated=truncated, saved_path=saved_path, reminders=reminders)
        if record is not None:
            self.append(record)

    def close(self) -> None:
        """Close the file and release the lock (later appends reopen and relock it)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None


#: The optional fields of a ``tool_details`` record and the types a reader accepts for them
#: (``list``: a list of strings).
TOOL_DETAIL_FIELDS: dict[str, type] = {
    "diff": str, "display": str, "exit_code": int, "truncated": bool, "saved_path": str, "reminders": list,
}


def tool_details_record(message: Message, *, diff: str | None = None, display: str | None = None,
                        exit_code: int | None = None, truncated: bool = False,
                        saved_path: str | None = None,
                        reminders: Sequence[str] | None = None) -> dict[str, Any] | None:
    """Return the ``tool_details`` journal record of a tool result ``message`` (a
    ``ToolResultMessage``: its ``id``, ``tool_call_id``, ``name``) with the details the UI shows
    besides the model's text: ``diff`` (unified diff of a file change), ``display`` (output with
    ANSI colours), ``exit_code``, ``truncated``, ``saved_path`` (absolute path of the saved full
    output), ``reminders`` (texts of the reminders appended to the result, shown as marks under
    its block). Unset or empty details are left out; ``None`` when none is set (no record is
    needed)."""
    details = {"diff": diff or None, "display": display, "exit_code": exit_code,
               "truncated": True if truncated else None, "saved_path": saved_path or None,
               "reminders": [str(text) for text in reminders] if reminders else None}
    details = {key: value for key, value in details.items() if value is not None}
    if not details:
        return None
    return {"kind": "tool_details", "message_id": getattr(message, "id", ""),
            "tool_call_id": getattr(message, "tool_call_id", ""), "name": getattr(message, "name", ""),
            **details}


def tool_details_from_record(record: Any) -> dict[str, Any]:
    """Return the details of a ``tool_details`` record (only the known fields of the right
    type: ``diff``, ``display``, ``exit_code``, ``truncated``, ``saved_path``, ``reminders`` as a
    list of strings); ``{}`` for any other record."""
    if not isinstance(record, dict) or record.get("kind") != "tool_details":
        return {}
    out: dict[str, Any] = {}
    for key, kind in TOOL_DETAIL_FIELDS.items():
        value = record.get(key)
        if kind is list:
            if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
                out[key] = list(value)
        elif isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            out[key] = value
    return out


#: Why a ``system_prompt`` record was written: a new session; a resume whose journal held no
#: usable prompt (written before the record existed); the registered tools changed (a model switch
#: adding or removing ``think``, or a resume with another tool set).
SystemPromptReason = Literal["started", "resumed_without_prompt", "tools_changed"]


@dataclass(frozen=True)
class SystemPromptRecord:
    """The ``system_prompt`` journal record: the system prompt exactly as sent.

    ``text``: the prompt (the journal redacts secret-looking environment values in it, like in
    every line); ``tools``: the names of the tools registered with it, in order (a session reuses
    the text only for the same tool set); ``model``: the model it was built for; ``reason``: why
    it was written (``SystemPromptReason``); ``time``: Unix seconds.

    Journal shape: ``{"kind": "system_prompt", "text": str, "tools": [str, ...], "model": str,
    "reason": str, "time": float}``.
    """

    text: str
    tools: tuple[str, ...]
    model: str = ""
    reason: str = "started"
    time: float = 0.0

    def to_record(self) -> dict[str, Any]:
        """Return the journal record (see the class docstring)."""
        return {"kind": "system_prompt", "text": self.text, "tools": list(self.tools), "model": self.model,
                "reason": self.reason, "time": self.time}

    @classmethod
    def from_record(cls, record: Any) -> "SystemPromptRecord | None":
        """Read a ``system_prompt`` record; ``None`` for any other record or a malformed one (no
        string ``text``, ``tools`` not a list of strings), which a reader then ignores."""
        if not isinstance(record, dict) or record.get("kind") != "system_prompt":
            return None
        text, tools = record.get("text"), record.get("tools")
        if not isinstance(text, str) or not text or not isinstance(tools, list) \
                or not all(isinstance(name, str) for name in tools):
            return None
        when = record.get("time")
        return cls(text=text, tools=tuple(tools), model=str(record.get("model") or ""),
                   reason=str(record.get("reason") or ""),
                   time=float(when) if isinstance(when, (int, float)) and not isinstance(when, bool) else 0.0)


def read_journal(path: Path, warnings: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """Yield the records of a journal, skipping lines that are not valid JSON (a torn last line
    after a crash) with a warning appended to ``warnings``. Raises ``OSError`` if unreadable."""
    with Path(path).open("r", encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                if warnings is not None:
                    warnings.append(f"{path}: line {number} is torn or not JSON; skipped")
                record = _glued_record(line)  # a whole record written right after a torn one
                if record is None:
                    continue
            if isinstance(record, dict):
                yield record


def _glued_record(line: str) -> dict[str, Any] | None:
    """Return the complete record at the end of a line that starts with a torn one, if any."""
    start = line.rfind('{"kind": ')
    while start > 0:
        try:
            record = json.loads(line[start:])
            return record if isinstance(record, dict) else None
        except json.JSONDecodeError:
            start = line.rfind('{"kind": ', 0, start)
    return None


def message_from_record(record: dict[str, Any], path: Path, warnings: list[str] | None = None) -> Message | None:
    """The ``Message`` of a journal ``{"kind": "message"}`` record, or None (with a warning naming
    ``path`` appended to ``warnings``) when the record is invalid."""
    try:
        return message_from_dict(record["message"])
    except (KeyError, TypeError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
        if warnings is not None:
            warnings.append(f"{path}: a message record is invalid ({type(exc).__name__}); skipped")
        return None


def load_messages(path: Path, warnings: list[str] | None = None) -> list[Message]:
    """Return the conversation records of a journal in order (invalid records skipped with a warning)."""
    found = (message_from_record(r, path, warnings) for r in read_journal(path, warnings) if r.get("kind") == "message")
    return [message for message in found if message is not None]
