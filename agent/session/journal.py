"""The session journal: one append-only JSONL file per session.

Each line is one typed record (``session.records``: the union of every record kind, its reader
and the old shapes it still accepts); this module writes them and finds the files.

Records are only ever added to this list, never changed. Lines are written whole and flushed
as they happen; the file is created with mode 0600 (in 0700 folders) and locked (``flock``) for
the session's life. Secrets never go in: only records are written, never settings, and every
string in a record is redacted (``agent.secrets.redact``: secret-looking environment values and
key patterns). A torn line (power loss or a full disk mid-write) is skipped with a warning on
reading, and the next append starts on a new line. A failed write is retried: see
``SessionJournal``.

Places (DESIGN.md 5b): ``<user data dir>/sessions/<project key>/<session_id>.jsonl``, the project
key derived from the repository root, or the directory when there is none.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..config.files import user_data_dir
from ..secrets.private_files import close_quietly, open_private
from ..secrets.private_files import write_all as _write_all  # one name the fault tests replace
from ..secrets.redact import Redactor, default_redactor
from .records import MessageRecord, SystemPromptRecord, ToolDetailsRecord, RecordBase, read_journal, read_records

if TYPE_CHECKING:
    from ..events import ToolResult
    from ..messages import Message


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


def secret_values(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Return ``{value: name}`` for environment variables that look like secrets (see
    ``agent.secrets.redact.secret_values``)."""
    from ..secrets.redact import secret_values as values

    return values(environ)


def redact(line: str, secrets: dict[str, str] | None = None) -> str:
    """``line`` with secrets replaced by ``[redacted LABEL]``: the values in ``secrets``
    (``{value: name}``; the environment's when None) and the key patterns."""
    redactor = default_redactor() if secrets is None else Redactor(environ={}, extra=secrets)
    return redactor.text(line)


#: Consecutive failed appends after which the journal reports that it cannot resume.
MAX_FAILED_APPENDS = 20
#: Records kept in memory while the disk fails (characters); older ones beyond are counted as lost.
MAX_PENDING_CHARS = 64 * 1024 * 1024

JournalState = Literal["ok", "retrying", "failed"]


@dataclass(frozen=True)
class JournalReport:
    """A change of the journal's state for the user: ``state`` is ``retrying`` (a write failed,
    the records are kept and retried), ``failed`` (journaling cannot resume for now: shown
    persistently) or ``ok`` (writes resumed, the kept records are on disk); ``message`` says so."""

    state: JournalState
    message: str


class SessionJournal:
    """Appends records to ``path``; creates it (0600) and its folder (0700) on first write.

    Crash safety: each record is one line written whole; when the file ends without a newline
    (a torn line after a power loss or a failed write) the next write starts on a new line, so
    only the torn line is lost, and a record whose line was complete but for its newline is not
    written twice. Every string in a record is redacted (``agent.secrets.redact``).

    Failed writes (disk full, I/O error): the record stays in a queue, in order, and every later
    ``append`` (or ``retry()``) writes the queue first; nothing is dropped while the queue is under
    ``MAX_PENDING_CHARS``. ``state`` is ``ok``, ``retrying`` (a write failed) or ``failed``
    (``MAX_FAILED_APPENDS`` appends in a row failed, the file was deleted, or another instance holds
    the lock); ``take_reports()`` returns each change once, for the UI: the first failure, giving
    up, resuming. ``error`` is the message of the current failure (None when ``ok``).

    Exclusive use: the first write (or ``lock()``) takes ``fcntl.flock(LOCK_EX | LOCK_NB)`` on the
    file and holds it until ``close()`` or process exit (the kernel drops it on a crash, so a lock
    never goes stale). A second journal on the same file, in this or another process, cannot get
    it: ``lock()`` raises ``SessionLockedError``; ``append`` reports it (state ``failed``).
    """

    def __init__(self, path: Path, redactor: Redactor | None = None) -> None:
        self.path = Path(path)
        self.error: str | None = None
        self.state: JournalState = "ok"
        #: Records never written: beyond ``MAX_PENDING_CHARS``, or after a fatal failure.
        self.lost = 0
        #: Records this object has queued (written, or waiting to be): with ``lost`` 0, the file
        #: holds this many lines more than when it was opened, once the queue is empty.
        self.queued_records = 0
        self._fd: int | None = None
        self._redactor = redactor
        self._pending: deque[bytes] = deque()
        self._pending_chars = 0
        self._failures = 0
        self._fatal = False
        self._reports: list[JournalReport] = []
        #: The loop's thread appends while the UI's closes or the writer retries: one at a time.
        self._io_lock = threading.RLock()

    @property
    def locked(self) -> bool:
        """True while this object holds the file open and locked."""
        return self._fd is not None

    @property
    def pending(self) -> int:
        """How many records wait to be written (a write failed)."""
        return len(self._pending)

    def lock(self) -> None:
        """Open (creating if needed, mode 0600) and lock the journal now, without writing.

        Raises ``SessionLockedError`` when another instance holds it, ``OSError`` when the file
        cannot be opened. Idempotent."""
        self._open()

    def _open(self) -> int:
        if self._fd is None:
            root = user_data_dir()
            fd = open_private(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND,
                              root if root in self.path.parents else None)
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise SessionLockedError(
                        f"session {self.path.stem} is in use by another opencli-tui instance "
                        f"({self.path} is locked); close it first or start a new session") from None
                self._end_line(fd)
            except BaseException:
                os.close(fd)
                raise
            self._fd = fd
        return self._fd

    @staticmethod
    def _end_line(fd: int, next_line: bytes = b"") -> bool:
        """Make the file end with a newline (a torn line stays alone on its line). Returns True
        when the torn line is exactly ``next_line`` without its newline (it is then complete)."""
        size = os.fstat(fd).st_size
        if not size or os.pread(fd, 1, size - 1) == b"\n":
            return False
        body = next_line[:-1]
        complete = False
        if body and size >= len(body):
            start = size - len(body)
            complete = os.pread(fd, len(body), start) == body and (
                start == 0 or os.pread(fd, 1, start - 1) == b"\n")
        _write_all(fd, b"\n")
        return complete

    def append(self, record: "RecordBase | dict[str, Any]") -> None:
        """Queue one record (a typed ``session.records`` record, or an already dumped one) as a
        redacted JSON line and write the queue (see the class docstring). Never raises."""
        try:
            data = record.dump() if isinstance(record, RecordBase) else record
            redactor = self._redactor or default_redactor()
            value = redactor.value(data)
            try:
                line = (json.dumps(value, ensure_ascii=False) + "\n").encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:  # a lone surrogate no byte stands for: JSON's \\uXXXX keeps it
                line = (json.dumps(value, ensure_ascii=True) + "\n").encode("ascii")
        except (TypeError, ValueError) as exc:
            self.lost += 1
            self._report("retrying" if self.state == "ok" else self.state,
                         f"a session journal record could not be encoded and was not written: {exc}")
            return
        with self._io_lock:
            self._queue(line)

    def _queue(self, line: bytes) -> None:
        if self._fatal:
            self.lost += 1
            return
        self.queued_records += 1
        self._pending.append(line)
        self._pending_chars += len(line)
        dropped, first = 0, False
        while self._pending_chars > MAX_PENDING_CHARS and len(self._pending) > 1:
            self._pending_chars -= len(self._pending.popleft())
            dropped += 1
        if dropped:
            first = self.lost == 0
            self.lost += dropped
            self.state = "failed"
        if dropped and first:  # said once; the count is repeated when writes resume
            self._report("failed", f"session journaling stopped: {self.error or 'writes fail'}; more than "
                                   f"{MAX_PENDING_CHARS // 2**20} MiB waited, so the {self.lost} oldest "
                                   f"record{'s' if self.lost != 1 else ''} waiting were dropped")
        self.retry()

    def retry(self) -> bool:
        """Write the queued records now; True when none is left. Never raises."""
        with self._io_lock:
            return self._retry()

    def _retry(self) -> bool:
        if self._fatal or not self._pending:
            return not self._pending
        try:
            fd = self._open()
            if os.fstat(fd).st_nlink == 0:
                self._give_up(f"session journal {self.path} was deleted; {self._unwritten()} not written")
                return False
            if self._end_line(fd, self._pending[0]):
                self._pending_chars -= len(self._pending.popleft())
            while self._pending:
                _write_all(fd, self._pending[0])
                self._pending_chars -= len(self._pending.popleft())
        except SessionLockedError as exc:
            self._give_up(f"session journal not written: {exc}")
            return False
        except OSError as exc:
            self._failed(exc)
            return False
        if self.state != "ok":
            self.error = None
            self.state = "ok"
            lost = f" ({self.lost} record{'s' if self.lost != 1 else ''} lost)" if self.lost else ""
            self._report("ok", f"session journal writes resumed: the delayed records are on disk{lost}")
        self._failures = 0
        return True

    def _unwritten(self) -> str:
        count = len(self._pending) + self.lost
        return f"{count} record{'s' if count != 1 else ''}"

    def _failed(self, exc: OSError) -> None:
        self._failures += 1
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        if exc.errno == errno.ENOENT:
            self._give_up(f"session journal {self.path} cannot be written ({reason}); {self._unwritten()} not written")
            return
        self.error = f"session journal {self.path} could not be written ({reason})"
        if self.state == "ok":
            self.state = "retrying"
            self._report("retrying", f"{self.error}; {self._unwritten()} kept in memory, retried on the next write")
        elif self.state == "retrying" and self._failures >= MAX_FAILED_APPENDS:
            self.state = "failed"
            self._report("failed", f"session journaling stopped: {self.error} {self._failures} times in a row; "
                                   f"{self._unwritten()} kept in memory and retried on every later write")

    def _give_up(self, message: str) -> None:
        self._fatal = True
        self.lost += len(self._pending)
        self._pending.clear()
        self._pending_chars = 0
        self.error = message
        if self.state != "failed":
            self.state = "failed"
            self._report("failed", f"session journaling stopped: {message}")

    def _report(self, state: JournalState, message: str) -> None:
        self._reports.append(JournalReport(state, message))

    def take_reports(self) -> list[JournalReport]:
        """The state changes since the last call, oldest first (each is returned once)."""
        reports, self._reports = self._reports, []
        return reports

    def append_message(self, message: "Message") -> None:
        """Write one conversation record (``MessageRecord``)."""
        self.append(MessageRecord(message=message))

    def append_tool_result(self, message: "Message", result: "ToolResult") -> None:
        """Write the ``ToolDetailsRecord`` of the tool result ``message`` (already appended)."""
        self.append(ToolDetailsRecord.of(message, result))

    def close(self) -> None:
        """Try the queued records once more, close the file and release the lock (later appends
        reopen and relock it)."""
        with self._io_lock:
            if self._pending:
                self._retry()
            if self._fd is not None:
                fd, self._fd = self._fd, None
                close_quietly(fd)


__all__ = ["JournalReport", "SessionJournal", "SessionLockedError", "SystemPromptRecord", "new_session_id",
           "project_key", "read_journal", "read_records", "redact", "secret_values", "sessions_dir"]
