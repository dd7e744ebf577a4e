"""MCP servers as tools (Model Context Protocol, official ``mcp`` SDK, client side).

- ``project``: the servers a session may start (user config, approved project servers).
- ``approvals``: the user's approvals of project servers, per project (user state).
- ``naming``: tool names ``mcp__<server>__<tool>`` within providers' limits.
- ``connection``: one server's client session on the manager's event loop.
- ``manager``: every server of a session, started in the background; statuses, notices.
- ``tool``: an MCP tool as a ``tools.base.Tool``; ``results`` turns MCP content into text.
"""
