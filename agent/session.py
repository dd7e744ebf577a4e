"""The session journal: one append-only JSONL file per session.

Each line is one JSON object with a ``kind``: ``session`` (metadata, first line), ``message`` (a
conversation record exactly as sent or received, including reasoning content and full tool
results) or ``event`` (a turn boundary and its stop reason). Lines are written whole and flushed
as they happen; the file is created with mode 0600. Secrets never go in: only records are written,
never settings.

Places (DESIGN.md 5b): ``<user data dir>/sessions/<project key>/<session_id>.jsonl``, the project
key derived from the repository root, or the directory when there is none.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

from pydantic import ValidationError

from .config import user_data_dir
from .messages import Message, message_from_dict


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


class SessionJournal:
    """Appends records to ``path``; creates it (0600) and its folder on first write.

    A write failure (disk full, permissions) is remembered in ``error`` and reported once by the
    caller; it never stops the conversation.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.error: str | None = None
        self._fh = None

    def _open(self):
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            self._fh = os.fdopen(fd, "a", encoding="utf-8")
        return self._fh

    def append(self, record: dict[str, Any]) -> None:
        """Write one record as a JSON line and flush it."""
        if self.error:
            return
        try:
            fh = self._open()
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            fh.flush()
        except (OSError, TypeError, ValueError) as exc:
            self.error = f"session journal {self.path} could not be written: {exc}"

    def append_message(self, message: Message) -> None:
        """Write one conversation record (``kind="message"``)."""
        self.append({"kind": "message", "message": message.model_dump(mode="json")})

    def close(self) -> None:
        """Close the file (later appends reopen it)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None


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
                continue
            if isinstance(record, dict):
                yield record


def load_messages(path: Path, warnings: list[str] | None = None) -> list[Message]:
    """Return the conversation records of a journal in order (invalid records skipped with a warning)."""
    out: list[Message] = []
    for record in read_journal(path, warnings):
        if record.get("kind") != "message":
            continue
        try:
            out.append(message_from_dict(record["message"]))
        except (KeyError, ValidationError) as exc:
            if warnings is not None:
                warnings.append(f"{path}: a message record is invalid ({type(exc).__name__}); skipped")
    return out
