"""``opencli-tui sessions [--delete ID]``: list this project's stored sessions, or delete one.

The listing has one line per session, newest first: id, last write (local time), size (journal
plus saved outputs) and the first prompt. Exit codes: 0 done, 1 the session could not be deleted
(open in another instance, or a file error), 2 unknown id.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TextIO


def format_size(size: int) -> str:
    """``size`` bytes as ``12.3 MB`` / ``4.5 kB`` / ``17 B`` (powers of 1000)."""
    if size >= 1e6:
        return f"{size / 1e6:.1f} MB"
    if size >= 1e3:
        return f"{size / 1e3:.1f} kB"
    return f"{size} B"


def session_rows(workspace: Path) -> list[tuple[str, float, int, str]]:
    """``(id, updated_at, size in bytes, first prompt)`` of the project's sessions, newest first
    (empty sessions included: they take space too)."""
    from agent.session.resume import list_sessions
    from agent.session.retention import stored_session

    rows = []
    for info in list_sessions(workspace, include_empty=True):
        try:
            stored = stored_session(info.path)
        except OSError:
            continue
        rows.append((info.id, stored.updated_at, stored.size_bytes, info.first_task))
    rows.sort(key=lambda r: (r[1], r[0]), reverse=True)
    return rows


def format_row(row: tuple[str, float, int, str], width: int = 60) -> str:
    """One listing line for a ``session_rows`` row."""
    session_id, updated, size, prompt = row
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(updated))
    prompt = prompt or "(no prompt)"
    prompt = prompt if len(prompt) <= width else prompt[:width - 1] + "…"
    return f"{session_id}  {when}  {format_size(size):>9}  {prompt}"


def run_sessions_command(workspace: Path, delete: str | None, out: TextIO | None = None,
                         err: TextIO | None = None) -> int:
    """List (``delete`` None) or delete one session of ``workspace``'s project; returns the exit code."""
    from agent.session.resume import SessionNotFoundError, find_session
    from agent.session.retention import SessionInUseError, delete_session

    out = out or sys.stdout
    err = err or sys.stderr
    if delete is None:
        rows = session_rows(workspace)
        if not rows:
            print("(this project has no saved session)", file=out)
        for row in rows:
            print(format_row(row), file=out)
        return 0
    try:
        path = find_session(workspace, delete)
    except SessionNotFoundError as exc:
        print(f"opencli-tui: error: {exc}", file=err)
        return 2
    try:
        freed = delete_session(path)
    except (SessionInUseError, OSError) as exc:
        print(f"opencli-tui: error: {exc}", file=err)
        return 1
    print(f"deleted session {path.stem} ({format_size(freed)})", file=out)
    return 0


def run_stats_command(workspace: Path, ref: str | None, out: TextIO | None = None,
                      err: TextIO | None = None) -> int:
    """``opencli-tui sessions stats [ID]``: print the figures of session ``ref`` (an id or a
    unique prefix; the latest session when None) read from its session log. Returns the exit
    code: 0 printed, 2 no such session."""
    from agent.observability.session_log import log_path_for
    from agent.observability.stats import read_stats, stats_text
    from agent.session.resume import SessionNotFoundError, find_session

    out = out or sys.stdout
    err = err or sys.stderr
    try:
        path = find_session(workspace, ref or "latest")
    except SessionNotFoundError as exc:
        print(f"opencli-tui: error: {exc}", file=err)
        return 2
    stats = read_stats(log_path_for(path))
    print(f"session {path.stem}", file=out)
    if not (stats.model_calls or stats.turns):
        print("(no model call logged: the session log is empty or missing)", file=out)
        return 0
    print(stats_text(stats), file=out)
    return 0
