"""The session's MCP servers (``agent.mcp``), a mixin of ``AgentSession``.

``start_mcp()`` (called by ``prepare()``, before the slow part) starts the configured servers
in the background: the user's, and the project's that the user approved for this project
(``agent.mcp.approvals``) or for this run (``--approve-mcp NAME``: ``mcp_approved_for_run``).
The agent's registry reads their tools through ``attach_source``. ``approve_mcp`` remembers an
approval and starts the server; ``restart_mcp`` restarts one (``/mcp``); ``close_mcp`` stops all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..mcp.manager import McpManager, ServerStatus
    from ..mcp.project import ServerSpec


class SessionMcp:
    """The MCP part of ``AgentSession`` (see the module docstring)."""

    #: Project servers approved for this run only (``--approve-mcp``), by name.
    mcp_approved_for_run: frozenset[str] = frozenset()
    _mcp: "McpManager | None" = None
    _mcp_notices: list[str] | None = None

    @property
    def mcp(self) -> "McpManager":
        """The session's ``McpManager`` (built on first use from the settings and project files)."""
        if self._mcp is None:
            from ..mcp import approvals
            from ..mcp.manager import McpManager
            from ..mcp.project import server_specs

            notices: list[str] = []
            specs = server_specs(self.workspace, self.settings.mcp.servers, notices)
            unknown = sorted(self.mcp_approved_for_run - {s.name for s in specs if s.origin == "project"})
            if unknown:
                notices.append(f"--approve-mcp: no project MCP server named {', '.join(unknown)}.")
            workspace = self.workspace

            def approved(spec: "ServerSpec") -> bool:
                return spec.name in self.mcp_approved_for_run or approvals.is_approved(workspace, spec)

            self._mcp_notices = notices
            self._mcp = McpManager(specs, workspace, approved)
        return self._mcp

    def start_mcp(self) -> None:
        """Start the servers in the background, once (returns at once)."""
        manager = self.mcp
        if not getattr(self, "_mcp_started", False):
            self._mcp_started = True
            manager.start()

    def mcp_statuses(self) -> list["ServerStatus"]:
        """Every configured server's status (``McpManager.statuses``)."""
        return self.mcp.statuses()

    def mcp_pending_approval(self) -> list["ServerSpec"]:
        """Project servers that wait for the user's approval, by name."""
        return [self.mcp.spec(s.name) for s in self.mcp.statuses() if s.status == "needs approval"]

    def approve_mcp(self, name: str) -> None:
        """Remember the user's approval of project server ``name`` for this project and start
        it. Raises ``KeyError`` for an unknown name, ``OSError`` when the approval cannot be saved."""
        from ..mcp import approvals

        spec = self.mcp.spec(name)
        if spec is None:
            raise KeyError(name)
        approvals.approve(self.workspace, spec)
        self.mcp.approve(name)

    def restart_mcp(self, name: str) -> None:
        """Restart server ``name`` (``McpManager.restart``; raises as it does). Blocks while the
        old one stops: call it off the UI thread."""
        self.mcp.restart(name)

    def mcp_startup_notices(self) -> list[str]:
        """Problems with the project's server entries, and the servers waiting for approval."""
        manager = self.mcp
        notices = list(self._mcp_notices or [])
        pending = [s for s in manager.statuses() if s.status == "needs approval"]
        if pending and not self.interactive:
            names = ", ".join(s.name for s in pending)
            notices.append(f"Project MCP server{'s' if len(pending) > 1 else ''} {names} not started: not approved "
                           f"for this project (approve with `opencli-tui mcp approve NAME` or --approve-mcp NAME).")
        return notices

    def close_mcp(self) -> None:
        """Stop every server (a few seconds at most)."""
        if self._mcp is not None:
            self._mcp.close()
