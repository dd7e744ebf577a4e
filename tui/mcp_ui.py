"""The TUI's questions about MCP servers: at session start, each project server that waits for
approval is shown with everything the approval covers (command, args, cwd, env; url, header
names) in ``McpApprovalScreen`` (safe default, typed-ahead keys ignored), and the user approves
it (remembered for this project, ``agent.mcp.approvals``) or leaves it off (asked again next session; ``/mcp`` approves it later).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .app import OpenCLIApp


def approval_question(spec, workspace: Path) -> str:
    """The question for project server ``spec`` (``agent.mcp.project.ServerSpec``) of
    ``workspace``: every field the approval covers (``McpServerSettings.details``)."""
    fields = "\n".join(f"    {line}" for line in spec.settings.details(workspace))
    return (f"This project's {spec.source} declares the MCP server '{spec.name}':\n\n"
            f"{fields}\n\n"
            "It runs code from this repository with your permissions. Start it? The answer is remembered "
            f"for this project (opencli-tui mcp revoke {spec.name} forgets it; /mcp lists the servers).")


def ask_mcp_approvals(app: "OpenCLIApp") -> None:
    """Ask about each project server waiting for approval, one after the other."""
    from .screens.mcp_approval import McpApprovalScreen

    session = app.session
    pending = list(getattr(session, "mcp_pending_approval", lambda: [])())
    asked: set[str] = set()

    def ask_next(_: object = None) -> None:
        spec = next((s for s in pending if s.name not in asked), None)
        if spec is None:
            return
        asked.add(spec.name)

        def answered(yes: bool | None) -> None:
            if yes:
                app.run_worker(lambda: session.approve_mcp(spec.name), thread=True, group="mcp-approve",
                               exit_on_error=False)
            ask_next()

        app.push_screen(McpApprovalScreen(approval_question(spec, session.workspace)), answered)

    ask_next()
