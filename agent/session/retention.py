"""Stored sessions across projects: their size, deleting one, and the retention policy.

A stored session is its journal ``<sessions>/<project key>/<id>.jsonl`` plus the folder of its
saved tool outputs beside it, ``<sessions>/<project key>/<id>/``. The policy (``[retention]``:
``max_age_days``, default 30, and ``max_total_mb``, default 2048, over all of the user's
projects) deletes sessions last written longer ago than the age, then the oldest ones while the
total is over the cap. It never deletes the current session nor a locked one (another instance
has it open: its journal's ``flock`` is held).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..config.files import user_data_dir


class SessionInUseError(RuntimeError):
    """The session is open (its journal is locked) and cannot be deleted."""


@dataclass(frozen=True)
class StoredSession:
    """One session on disk: ``id``, ``journal`` path, ``outputs`` folder (may not exist),
    ``size_bytes`` (journal plus saved outputs) and ``updated_at`` (Unix seconds, the newest
    modification time of the journal and the outputs folder)."""

    id: str
    journal: Path
    outputs: Path
    size_bytes: int
    updated_at: float


@dataclass
class RetentionReport:
    """What ``apply_retention`` did: ``deleted`` session ids and the bytes ``freed``."""

    deleted: list[str] = field(default_factory=list)
    freed: int = 0

    def notice(self) -> str:
        """One line for the user, or "" when nothing was deleted."""
        if not self.deleted:
            return ""
        count = len(self.deleted)
        return (f"Retention: deleted {count} old session{'s' if count != 1 else ''} "
                f"({self.freed / 1e6:.1f} MB); see [retention] in the config.")


def _tree_size(folder: Path) -> tuple[int, float]:
    total, newest = 0, 0.0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                st = os.stat(os.path.join(root, name))
            except OSError:
                continue
            total += st.st_size
            newest = max(newest, st.st_mtime)
    return total, newest


def stored_session(journal: Path) -> StoredSession:
    """Describe the session of ``journal``. Raises ``OSError`` when the journal cannot be read."""
    journal = Path(journal)
    st = journal.stat()
    outputs = journal.with_suffix("")
    size, newest = _tree_size(outputs) if outputs.is_dir() else (0, 0.0)
    try:
        size += session_log_path(journal).stat().st_size
    except OSError:
        pass
    return StoredSession(journal.stem, journal, outputs, st.st_size + size, max(st.st_mtime, newest))


def session_log_path(journal: Path) -> Path:
    """The session's structured log beside its journal (``<id>.log.jsonl``)."""
    return journal.with_name(journal.stem + ".log.jsonl")


def is_locked(journal: Path) -> bool:
    """True when some journal object (in this or another process) holds ``journal``'s lock."""
    try:
        fd = os.open(journal, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing the descriptor releases a lock taken here
    return False


def delete_session(journal: Path) -> int:
    """Delete a session's journal and saved outputs; return the bytes freed. Raises
    ``SessionInUseError`` when it is open, ``OSError`` when it cannot be deleted."""
    journal = Path(journal)
    if is_locked(journal):
        raise SessionInUseError(f"session {journal.stem} is open in an opencli-tui instance; close it first")
    info = stored_session(journal)
    journal.unlink()
    session_log_path(journal).unlink(missing_ok=True)
    if info.outputs.is_dir():
        shutil.rmtree(info.outputs, ignore_errors=True)
    return info.size_bytes


def all_sessions(root: Path | None = None) -> list[StoredSession]:
    """Every stored session of every project under ``root`` (``<user data dir>/sessions``), oldest
    first. Unreadable ones are left out."""
    root = Path(root) if root is not None else user_data_dir() / "sessions"
    found = []
    try:
        projects = [p for p in root.iterdir() if p.is_dir()]
    except OSError:
        return []
    for project in projects:
        try:
            journals = [p for p in project.iterdir() if p.suffix == ".jsonl" and p.is_file()
                        and not p.name.endswith(".log.jsonl")]  # a session log goes with its journal
        except OSError:
            continue
        for journal in journals:
            try:
                found.append(stored_session(journal))
            except OSError:
                continue
    found.sort(key=lambda s: (s.updated_at, s.id))
    return found


def apply_retention(max_age_days: float, max_total_mb: float, keep: Iterable[str] = (), *,
                    now: float | None = None, root: Path | None = None) -> RetentionReport:
    """Delete sessions older than ``max_age_days`` (days; 0 = no age limit), then the oldest
    while all sessions take more than ``max_total_mb`` (MB of 10**6 bytes; 0 = no cap). The ids
    in ``keep`` and locked sessions are never deleted. Never raises: a session that cannot be
    deleted is skipped."""
    now = time.time() if now is None else now
    keep = set(keep)
    report = RetentionReport()
    sessions = all_sessions(root)
    total = sum(s.size_bytes for s in sessions)
    cap = max_total_mb * 1e6 if max_total_mb > 0 else None
    for session in sessions:  # oldest first
        too_old = max_age_days > 0 and now - session.updated_at > max_age_days * 86400
        too_big = cap is not None and total > cap
        if not (too_old or too_big) or session.id in keep:
            continue
        try:
            freed = delete_session(session.journal)
        except (SessionInUseError, OSError):
            continue
        report.deleted.append(session.id)
        report.freed += freed
        total -= session.size_bytes
    return report
