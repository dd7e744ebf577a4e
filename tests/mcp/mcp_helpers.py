"""Helpers of the MCP tests (imported as ``tests.mcp.mcp_helpers``; the folder is no package, so
that it never stands in for the ``mcp`` SDK)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

SERVER = Path(__file__).with_name("server.py")


def server_entry(**extra: Any) -> dict[str, Any]:
    """A ``[mcp.servers.NAME]`` entry that runs the test server (``server.py``) over stdio."""
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(SERVER)], "start_timeout_s": 20}
    entry.update(extra)
    return entry
