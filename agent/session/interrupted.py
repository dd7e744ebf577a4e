"""Stand-in results for tool calls a dead agent left without a result, written on resume.

When the agent is killed (``kill -9``, a crash, a power cut) while a tool runs, the journal ends
with an assistant message whose calls have no result. The command may have run in part or to its
end before the supervisor killed it (``agent.supervisor``), so "it was interrupted" alone would
mislead the model. ``interrupted_results`` builds, for each such call, an error result that says
so and lists what the workspace shows changed now: files modified since the call started (the
journal's last write, which is the assistant message) and, in a git repository, what
``git status`` lists.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Sequence

from ..messages import AssistantMessage, Message, ToolResultMessage

#: Names listed per category before "... and N more".
MAX_LISTED = 20
#: Files looked at when scanning the workspace for recent changes.
MAX_SCANNED = 20000
#: Seconds the scan may take.
SCAN_BUDGET_S = 2.0
_SKIPPED_DIRS = frozenset({".git", ".opencli", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
                           ".pytest_cache", ".tox"})


def dangling_calls(history: Sequence[Message]) -> list[tuple[str, str]]:
    """``(call id, tool name)`` of the calls of the last assistant message that have no result."""
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if isinstance(message, AssistantMessage):
            if not message.tool_calls:
                return []
            answered = sum(1 for later in history[index + 1:] if isinstance(later, ToolResultMessage))
            return [(call.id, call.name) for call in message.tool_calls[answered:]]
    return []


def changed_since(workspace: Path, since: float) -> list[str]:
    """Workspace-relative paths of files modified at or after ``since`` (epoch seconds), sorted;
    bounded by ``MAX_SCANNED`` files and ``SCAN_BUDGET_S`` seconds."""
    found: list[str] = []
    seen = 0
    end = time.monotonic() + SCAN_BUDGET_S
    for folder, dirs, files in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in files:
            seen += 1
            path = os.path.join(folder, name)
            try:
                if os.lstat(path).st_mtime >= since:
                    found.append(os.path.relpath(path, workspace).replace(os.sep, "/"))
            except OSError:
                continue
        if seen >= MAX_SCANNED or time.monotonic() > end:
            break
    return sorted(found)


def _listing(paths: Sequence[str]) -> str:
    from ..context.truncation.normalise import escape_undecodable

    shown = escape_undecodable(", ".join(paths[:MAX_LISTED]))  # a non-UTF-8 byte of a name as \xNN
    more = len(paths) - MAX_LISTED
    return shown + (f" ... and {more} more" if more > 0 else "")


def interrupted_text(name: str, changed: Sequence[str], git_dirty: Sequence[str] | None) -> str:
    """The stand-in result text for an interrupted ``name`` call (see the module docstring)."""
    ran = "the command may have run in part or to its end" if name == "bash" else "it may have run in part or fully"
    parts = [f"Error: the agent stopped (killed or crashed) while this {name} call was running, so it has no "
             f"result: {ran} before it was stopped."]
    if changed:
        parts.append(f"Files changed since the call started: {_listing(changed)}.")
    else:
        parts.append("No file in the workspace changed since the call started.")
    if git_dirty:
        parts.append(f"git status now lists: {_listing(sorted(git_dirty))}.")
    parts.append("Check the current state before running it again.")
    return " ".join(parts)


def interrupted_results(history: Sequence[Message], workspace: Path, started_at: float) -> list[ToolResultMessage]:
    """Error results for the dangling calls of ``history`` (``dangling_calls``), in call order.

    ``started_at``: when the interrupted call started (epoch seconds; the journal's last write).
    Empty when nothing dangles. Never raises for an unreadable workspace or a failing git."""
    calls = dangling_calls(history)
    if not calls:
        return []
    try:
        changed = changed_since(workspace, started_at - 1.0)
    except OSError:
        changed = []
    from ..git_repo import changed_paths

    try:
        dirty = changed_paths(workspace)
    except Exception:  # noqa: BLE001 - a listing, not a requirement
        dirty = None
    return [ToolResultMessage(tool_call_id=call_id, name=name, content=interrupted_text(name, changed, dirty),
                              is_error=True) for call_id, name in calls]
