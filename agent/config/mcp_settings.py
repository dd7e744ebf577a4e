"""The ``[mcp]`` section: the user's MCP servers (``[mcp.servers.NAME]``).

A server is either a stdio server (``command``, ``args``, ``env``, ``cwd``: the app starts it as a
child process and talks JSON-RPC over its stdin/stdout) or a streamable HTTP server (``url``,
``headers``). Each has a start time limit and a call time limit (seconds). Unknown keys in a
server table are errors naming the key (a typo would otherwise start the wrong thing).
Project servers (``.opencli.toml``, ``.mcp.json``) use the same model but are read by
``agent.mcp.project`` and run only once the user approved them (``agent.mcp.approvals``).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: Server names: letters, digits, ``_`` and ``-``, no ``__`` and no ``_`` at either end (they become
#: part of tool names, ``mcp__<server>__<tool>``: the first ``__`` must end the server's name, so two
#: servers can never make the same tool name).
SERVER_NAME_RE = re.compile(r"^(?!_)(?!.*__)[A-Za-z0-9_-]{1,40}(?<!_)$")
#: Environment variable names whose values are masked when shown (case-insensitive parts).
SECRET_NAME_RE = re.compile(r"TOKEN|KEY|SECRET|PASSW|PASSPHRASE|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE",
                            re.IGNORECASE)
MASK = "****"


def shown_value(name: str, value: str) -> str:
    """``value`` of variable ``name`` as shown to the user: ``****`` when the name looks secret
    (``SECRET_NAME_RE``: *TOKEN*, *KEY*, *SECRET*, *PASSWORD*, ...), else the value quoted for a shell."""
    return MASK if SECRET_NAME_RE.search(name) else shlex.quote(value)


class McpServerSettings(BaseModel):
    """One ``[mcp.servers.NAME]`` table: exactly one of ``command`` (stdio) or ``url`` (HTTP)."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = Field(None, min_length=1, description="stdio server: the program to start.")
    args: list[str] = Field(default_factory=list, description="stdio server: its arguments.")
    env: dict[str, str] = Field(default_factory=dict, description="stdio server: extra environment variables.")
    cwd: str | None = Field(None, description="stdio server: working folder (default: the workspace).")
    url: str | None = Field(None, min_length=1, description="streamable HTTP server: its endpoint URL.")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP server: headers sent with every request.")
    start_timeout_s: float = Field(30.0, gt=0, description="Seconds a server may take to start and list its tools.")
    call_timeout_s: float = Field(120.0, gt=0, description="Time limit of one tool call (seconds).")
    enabled: bool = Field(True, description="false keeps the server configured but not started.")

    @model_validator(mode="after")
    def _one_transport(self) -> "McpServerSettings":
        if bool(self.command) == bool(self.url):
            raise ValueError("set exactly one of command (a stdio server) or url (a streamable HTTP server)")
        if self.url and not re.match(r"^https?://", self.url):
            raise ValueError(f"url must start with http:// or https://, got {self.url!r}")
        return self

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command else "http"

    def describe(self) -> str:
        """One line saying what runs: the command line (stdio) or the URL (HTTP)."""
        if self.command:
            return shlex.join([self.command, *self.args])
        return str(self.url)

    def resolved_cwd(self, workspace: Path) -> Path:
        """The folder a stdio server starts in: ``cwd`` (``~`` expanded; a relative one is taken
        from ``workspace``), or ``workspace`` itself when unset; made absolute."""
        if not self.cwd:
            return Path(workspace).resolve()
        return (Path(workspace) / Path(self.cwd).expanduser()).resolve()

    def details(self, workspace: Path) -> list[str]:
        """Every field an approval covers, one ``"key: value"`` line each (what decides what runs):
        stdio: ``command``, ``args`` (shell-quoted), ``cwd`` (resolved against ``workspace``) and
        each ``env`` variable (``NAME=value``; a secret-looking name's value is ``****``);
        HTTP: ``url`` and the names of the ``headers`` (their values are never shown)."""
        if self.command:
            lines = [f"command: {shlex.quote(self.command)}",
                     f"args: {shlex.join(self.args) if self.args else '(none)'}",
                     f"cwd: {self.resolved_cwd(workspace)}"]
            if self.env:
                lines += [f"env: {name}={shown_value(name, value)}" for name, value in sorted(self.env.items())]
            else:
                lines.append("env: (none added)")
            return lines
        lines = [f"url: {self.url}"]
        lines.append("headers: " + (", ".join(sorted(self.headers)) if self.headers else "(none)")
                     + (" (values hidden)" if self.headers else ""))
        return lines


class McpSettings(BaseModel):
    """The ``[mcp]`` section: ``servers`` by name."""

    servers: dict[str, McpServerSettings] = Field(default_factory=dict, description="MCP servers by name.")

    @field_validator("servers")
    @classmethod
    def _names(cls, servers: dict[str, McpServerSettings]) -> dict[str, McpServerSettings]:
        for name in servers:
            if not SERVER_NAME_RE.match(name):
                raise ValueError(f"server name {name!r} may hold only letters, digits, _ and - (at most 40; no __, no _ at either end)")
        return servers
