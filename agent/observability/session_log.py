"""The session log: one JSON object per line, beside the journal.

Place: ``<sessions_dir>/<session_id>.log.jsonl`` (``log_path_for``), a 0600 file in the 0700
sessions folder. A resumed session (same id) appends to the same file. Every string of a record
is redacted as the journal's are (``agent.secrets.redact``). Writes never raise: a failure is
remembered (``error``) for the one notice the sink shows, and later writes are tried again.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Iterator

from ..secrets.private_files import close_quietly, open_private, write_all
from ..secrets.redact import Redactor, default_redactor

#: How a session log's file name ends (``<session_id>.log.jsonl``).
LOG_SUFFIX = ".log.jsonl"


def log_path_for(journal_path: Path) -> Path:
    """The session log beside the journal ``<id>.jsonl``: ``<id>.log.jsonl``."""
    journal_path = Path(journal_path)
    return journal_path.with_name(journal_path.name.removesuffix(".jsonl") + LOG_SUFFIX)


def is_session_log(path: Path) -> bool:
    """True when ``path`` names a session log (not a journal)."""
    return Path(path).name.endswith(LOG_SUFFIX)


def read_log(path: Path) -> Iterator[dict[str, Any]]:
    """The records of the log at ``path``, oldest first; torn or foreign lines are skipped, a
    missing or unreadable file yields nothing. Never raises."""
    try:
        handle = open(path, encoding="utf-8", errors="replace")
    except OSError:
        return
    with handle:
        for line in handle:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and isinstance(record.get("type"), str):
                yield record


class SessionLog:
    """Appends records (JSON-ready dicts) to ``path``, one line each, redacted with ``redactor``
    (the environment's secrets and key patterns by default). ``root``: the app's data folder, so
    the folders from there down are 0700. ``error`` holds the last write failure (None while
    writes work); ``failures`` counts them."""

    def __init__(self, path: Path, redactor: Redactor | None = None, root: Path | None = None) -> None:
        self.path = Path(path)
        self.error: str | None = None
        self.failures = 0
        self._redactor = redactor
        self._root = root
        self._fd: int | None = None
        self._lock = threading.Lock()

    def redact(self, value: Any) -> Any:
        """``value`` (a JSON-like value) with every string in it redacted."""
        return (self._redactor or default_redactor()).value(value)

    def encode(self, record: dict[str, Any]) -> str:
        """The redacted JSON line (without its newline) for ``record``. Raises ``TypeError`` or
        ``ValueError`` for a value JSON cannot hold."""
        return json.dumps(self.redact(record), ensure_ascii=False, default=str)

    def write(self, line: str) -> bool:
        """Append ``line`` (one encoded record) and a newline; True when it was written. Never
        raises: a failure sets ``error``."""
        data = (line + "\n").encode("utf-8", "backslashreplace")
        with self._lock:
            try:
                if self._fd is None:
                    root = self._root if self._root is not None and self._root in self.path.parents else None
                    self._fd = open_private(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, root)
                write_all(self._fd, data)
            except OSError as exc:
                self.failures += 1
                self.error = f"{self.path} could not be written ({os.strerror(exc.errno) if exc.errno else exc})"
                self._close()
                return False
            self.error = None
            return True

    def _close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            close_quietly(fd)

    def close(self) -> None:
        """Close the file (a later write reopens it)."""
        with self._lock:
            self._close()
