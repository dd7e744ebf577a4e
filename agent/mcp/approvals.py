"""The user's approvals of project MCP servers, remembered per project.

Stored in ``<user data dir>/mcp-approvals.json`` (0600; ``$OPENCLI_DATA_DIR`` moves it, as it
does the sessions): ``{"<project key>": {"<server name>": "<fingerprint>"}}``, the project key of
``session.journal.project_key`` and the fingerprint of ``ServerSpec.fingerprint``: an approval
holds only while the server runs the same command (or URL). Approving is explicit: the TUI's
prompt at session start, ``opencli-tui mcp approve NAME``, or ``--approve-mcp NAME`` for one run;
nothing approves a server by itself. ``revoke`` forgets it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..config.files import user_data_dir
from ..session.journal import project_key
from .project import ServerSpec


def approvals_path() -> Path:
    """The approvals file (may not exist)."""
    return user_data_dir() / "mcp-approvals.json"


def _read() -> dict[str, dict[str, str]]:
    try:
        data = json.loads(approvals_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def _write(data: dict[str, dict[str, str]]) -> None:
    path = approvals_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1, sort_keys=True)
    os.replace(tmp, path)


def is_approved(workspace: Path, spec: ServerSpec) -> bool:
    """True for a user server, or a project server approved for this project as it is now."""
    if spec.origin == "user":
        return True
    return _read().get(project_key(Path(workspace)), {}).get(spec.name) == spec.fingerprint()


def approve(workspace: Path, spec: ServerSpec) -> None:
    """Remember that the user approved project server ``spec`` for this project. Raises ``OSError``
    when the file cannot be written."""
    data = _read()
    data.setdefault(project_key(Path(workspace)), {})[spec.name] = spec.fingerprint()
    _write(data)


def revoke(workspace: Path, name: str) -> bool:
    """Forget the approval of server ``name`` for this project; False when there was none."""
    data = _read()
    approved = data.get(project_key(Path(workspace)), {})
    if name not in approved:
        return False
    del approved[name]
    _write(data)
    return True
