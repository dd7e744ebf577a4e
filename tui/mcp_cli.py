"""``opencli-tui mcp list|approve|revoke [NAME]``: the project's MCP servers from the command line.

``list`` prints each configured server (user and project) with where it comes from, what it
runs and, for a project server, whether it is approved for this project, then, indented, every
field an approval covers (command, args, resolved cwd, env with secret-looking values masked;
url and header names: ``McpServerSettings.details``); nothing is started.
``approve NAME`` remembers the approval of a project server (``agent.mcp.approvals``), after
printing what it runs; ``revoke NAME`` forgets it. Exit codes: 0 done, 2 a usage or config error
(an unknown name, a user server given to approve, an invalid config).
"""

from __future__ import annotations

import sys
from pathlib import Path

EXIT_USAGE = 2


def run_mcp_command(workspace: Path, action: str, name: str | None) -> int:
    """Run one ``mcp`` action for ``workspace``; print to stdout (errors to stderr); return the code."""
    from agent.config.loading import load_settings
    from agent.config.settings import ConfigError
    from agent.mcp import approvals
    from agent.mcp.project import server_specs

    notices: list[str] = []
    try:
        settings = load_settings(workspace, {}, notices)
    except ConfigError as exc:
        print(f"opencli-tui: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    specs = {spec.name: spec for spec in server_specs(workspace, settings.mcp.servers, notices)}
    for notice in notices:
        print(f"note: {notice}", file=sys.stderr)
    if action == "list":
        if not specs:
            print("No MCP servers configured ([mcp.servers.NAME] in the user config, .opencli.toml or .mcp.json).")
        for spec in specs.values():
            if spec.origin == "user":
                state = "user server" if spec.settings.enabled else "user server, disabled"
            else:
                state = "approved" if approvals.is_approved(workspace, spec) else "needs approval"
                state = f"{spec.source}, {state}"
            print(f"{spec.name}\t{spec.settings.transport}\t{state}\t{spec.settings.describe()}")
            _print_details(spec, workspace)
        return 0
    if not name:
        print(f"opencli-tui: error: mcp {action} needs the server's NAME", file=sys.stderr)
        return EXIT_USAGE
    if action == "revoke":
        if approvals.revoke(workspace, name):
            print(f"Revoked the approval of MCP server {name} for this project.")
            return 0
        print(f"opencli-tui: error: no approval of an MCP server {name!r} for this project", file=sys.stderr)
        return EXIT_USAGE
    spec = specs.get(name)
    if spec is None or spec.origin != "project":
        known = ", ".join(n for n, s in specs.items() if s.origin == "project") or "none"
        why = "is a user server (it needs no approval)" if spec is not None else "is not configured"
        print(f"opencli-tui: error: MCP server {name!r} {why}; project servers: {known}", file=sys.stderr)
        return EXIT_USAGE
    approvals.approve(workspace, spec)
    print(f"Approved MCP server {name} for this project ({spec.source}): {spec.settings.describe()}")
    _print_details(spec, workspace)
    return 0


def _print_details(spec, workspace: Path) -> None:
    """Every field the approval covers, indented under the server's line (``details``)."""
    for line in spec.settings.details(workspace):
        print(f"    {line}")
