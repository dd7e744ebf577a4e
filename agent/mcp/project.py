"""Which MCP servers a session has: the user's (``[mcp.servers.NAME]`` in the user config) and
the project's (``[mcp.servers.NAME]`` in ``.opencli.toml``, and ``mcpServers`` in a project
``.mcp.json``, the format Claude Code reads), each a ``ServerSpec``.

A project's server runs code from the repository, so it starts only once the user approved it
for that project (``approvals``); until then it is listed as ``needs approval``. A user server of
the same name wins over a project one (the project's is ignored, with a notice). A project entry
that does not validate is skipped with a notice naming the file and key (the repository is not
the user's to fix); bad user entries are configuration errors raised by ``load_settings``.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from ..config.files import PROJECT_FILE
from ..config.mcp_settings import SERVER_NAME_RE, McpServerSettings

#: The project file in Claude Code's format.
MCP_JSON = ".mcp.json"

Origin = Literal["user", "project"]


@dataclass(frozen=True)
class ServerSpec:
    """One server: ``name``, its ``settings``, ``origin`` (user or project) and ``source`` (the
    file it came from, for messages)."""

    name: str
    settings: McpServerSettings
    origin: Origin = "user"
    source: str = "user config"

    def fingerprint(self) -> str:
        """A hash of what the server runs (command, args, env, cwd or url, headers): an approval
        holds for this definition only, so a repository that changes the command asks again."""
        data = self.settings.model_dump(include={"command", "args", "env", "cwd", "url", "headers"})
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def _error_text(exc: ValidationError) -> str:
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    return f"{where + ': ' if where else ''}{first.get('msg', 'invalid')}"


def _from_claude_json(entry: Any) -> Any:
    """A ``.mcp.json`` entry in our keys: ``type`` (stdio/http/sse) is dropped, the rest kept."""
    if not isinstance(entry, dict):
        return entry
    return {k: v for k, v in entry.items() if k != "type"}


def _read_entries(workspace: Path, notices: list[str]) -> list[tuple[str, str, Any]]:
    """``(source, name, raw entry)`` of every project server, ``.opencli.toml`` first."""
    entries: list[tuple[str, str, Any]] = []
    toml_path = workspace / PROJECT_FILE
    if toml_path.is_file():
        try:
            data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            data = {}  # load_settings reports an unreadable project file
        servers = (data.get("mcp") or {}).get("servers") if isinstance(data.get("mcp"), dict) else None
        if isinstance(servers, dict):
            entries += [(PROJECT_FILE, name, entry) for name, entry in servers.items()]
    json_path = workspace / MCP_JSON
    if json_path.is_file():
        try:
            data = json.loads(json_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            notices.append(f"{MCP_JSON} is not valid JSON ({exc}); its MCP servers are ignored.")
            data = {}
        servers = data.get("mcpServers") if isinstance(data, dict) else None
        if isinstance(servers, dict):
            entries += [(MCP_JSON, name, _from_claude_json(entry)) for name, entry in servers.items()]
    return entries


def server_specs(workspace: Path, user_servers: dict[str, McpServerSettings],
                 notices: list[str] | None = None) -> list[ServerSpec]:
    """Every server configured for ``workspace``: the user's (``settings.mcp.servers``) then the
    project's, sorted by name (the tool list's order). Problems with project entries are appended
    to ``notices`` (one line each) and the entry skipped."""
    notices = notices if notices is not None else []
    specs = {name: ServerSpec(name, settings) for name, settings in user_servers.items()}
    for source, name, raw in _read_entries(Path(workspace), notices):
        key = f"{source} mcp{'Servers' if source == MCP_JSON else '.servers'}.{name}"
        if not SERVER_NAME_RE.match(str(name)):
            notices.append(f"{key}: a server name may hold only letters, digits, _ and - (no __, no _ at either end); ignored.")
            continue
        if name in specs:
            if specs[name].origin == "user":
                notices.append(f"{key}: your user config defines a server {name!r} already; the project's is ignored.")
            continue
        try:
            settings = McpServerSettings.model_validate(raw)
        except ValidationError as exc:
            notices.append(f"{key}: {_error_text(exc)}; the server is ignored.")
            continue
        specs[name] = ServerSpec(name, settings, origin="project", source=source)
    return [specs[name] for name in sorted(specs)]
