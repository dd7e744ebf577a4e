"""The session journal: one append-only JSONL file per session.

Each line is one typed record (``session.records``: the union of every record kind, its reader
and the old shapes it still accepts); this module writes them and finds the files.

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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config.files import user_data_dir
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

    def append(self, record: "RecordBase | dict[str, Any]") -> None:
        """Write one record (a typed ``session.records`` record, or an already dumped one) as a
        JSON line (secrets redacted) and flush it."""
        if self.error:
            return
        try:
            fh = self._open()
            data = record.dump() if isinstance(record, RecordBase) else record
            fh.write(redact(json.dumps(data, ensure_ascii=False), self._secrets) + "\n")
            fh.flush()
        except SessionLockedError as exc:
            self.error = f"session journal not written: {exc}"
        except (OSError, TypeError, ValueError) as exc:
            self.error = f"session journal {self.path} could not be written: {exc}"

    def append_message(self, message: "Message") -> None:
        """Write one conversation record (``MessageRecord``)."""
        self.append(MessageRecord(message=message))

    def append_tool_result(self, message: "Message", result: "ToolResult") -> None:
        """Write the ``ToolDetailsRecord`` of the tool result ``message`` (already appended)."""
        self.append(ToolDetailsRecord.of(message, result))

    def close(self) -> None:
        """Close the file and release the lock (later appends reopen and relock it)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None


__all__ = ["SessionJournal", "SessionLockedError", "SystemPromptRecord", "new_session_id", "project_key",
           "read_journal", "read_records", "redact", "secret_values", "sessions_dir"]
