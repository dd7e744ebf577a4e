"""Prompt history kept across sessions, per project, as shells and other coding agents do.

File: ``<user data dir>/history/<project key>.jsonl`` (``agent.config.files.user_data_dir``,
``agent.session.journal.project_key``), one ``{"text": ..., "time": ...}`` object per line, created
0600 in a 0700 folder; secret values from the environment are redacted as in session journals
(``agent.secrets.redact``). Only the newest ``LIMIT`` prompts are read; the file is rewritten to
that length when it grows past twice as many. A missing, unreadable or torn file loses nothing
but the lines that cannot be read.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

#: Prompts kept for Up/Down (the same cap as the in-memory history).
LIMIT = 500


def history_path(workspace: Path) -> Path:
    """The history file of the project at ``workspace`` (not created)."""
    from agent.config.files import user_data_dir
    from agent.session.journal import project_key

    return user_data_dir() / "history" / f"{project_key(workspace)}.jsonl"


def load_history(workspace: Path, limit: int = LIMIT) -> list[str]:
    """Return the project's saved prompts, oldest first, at most ``limit`` of them ([] when
    there is no readable file). Lines that are not a JSON object with a string ``text`` are
    skipped."""
    try:
        lines = history_path(workspace).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    texts: list[str] = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("text"), str) and record["text"]:
            texts.append(record["text"])
    return texts[-limit:]


def append_history(workspace: Path, text: str, limit: int = LIMIT) -> None:
    """Append one sent prompt (redacted) to the project's history file; trim the file to the
    newest ``limit`` prompts once it holds more than twice that. Errors writing the file (a
    read-only home, a full disk) are swallowed: history is a convenience, never a reason to fail."""
    from agent.secrets.private_files import open_private, write_private_text
    from agent.secrets.redact import redact_text

    path = history_path(workspace)
    line = json.dumps({"text": redact_text(text), "time": round(time.time(), 3)}, ensure_ascii=False)
    try:
        fd = open_private(path)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
        if path.stat().st_size > 2 * limit * 200:  # cheap check first: long files only
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            if len(lines) > 2 * limit:
                write_private_text(path, "\n".join(lines[-limit:]) + "\n")
    except OSError:
        pass
