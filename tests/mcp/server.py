"""A small MCP server for the tests, written with the official SDK (FastMCP).

Run as ``python server.py`` it serves stdio; ``build()`` gives the app for the HTTP tests.
Tools: ``lookup`` (read-only), ``delete_item`` (destructive), ``fail`` (an error result),
``hang`` (sleeps until cancelled; writes ``cancelled`` to ``$MCP_TEST_MARKER`` when the client's
cancellation reaches it), ``big`` (100 KB of text), ``crash`` (the process exits), ``picture``
(an image and a resource link). ``$MCP_TEST_STDERR`` is printed to stderr at start; with
``$MCP_TEST_EXIT`` set the server exits at once (a server that fails to start); with
``$MCP_TEST_CLASH`` set it also has ``do.it`` and ``do_it`` (names that sanitise to one).
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.fastmcp import FastMCP, Image
from mcp.types import ResourceLink, ToolAnnotations


def build(host: str = "127.0.0.1", port: int = 8000) -> FastMCP:
    server = FastMCP("testsrv", host=host, port=port, log_level="WARNING")

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def lookup(key: str, limit: int = 3) -> str:
        """Look a key up (read-only)."""
        return f"value of {key} (limit {limit})"

    @server.tool(annotations=ToolAnnotations(destructiveHint=True))
    def delete_item(item_id: int) -> str:
        """Delete an item."""
        return f"deleted {item_id}"

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def fail(reason: str = "boom") -> str:
        """Always fails."""
        raise ValueError(f"it failed: {reason}")

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    async def hang(seconds: float = 60.0) -> str:
        """Sleeps (until cancelled)."""
        marker = os.environ.get("MCP_TEST_MARKER")
        if marker:
            with open(marker + ".started", "w") as handle:
                handle.write("started")
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            marker = os.environ.get("MCP_TEST_MARKER")
            if marker:
                with open(marker, "w") as handle:
                    handle.write("cancelled")
            raise
        return "woke up"

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def big() -> str:
        """Returns 100 KB of text."""
        return "\n".join(f"line {i:05d} " + "x" * 90 for i in range(1000))

    @server.tool()
    def crash() -> str:
        """The server process exits."""
        print("about to crash: goodbye", file=sys.stderr, flush=True)
        os._exit(3)

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def picture() -> list:
        """An image and a resource link."""
        return [Image(data=b"\x89PNG" + b"\0" * 2044, format="png"),
                ResourceLink(type="resource_link", name="notes", uri="file:///tmp/notes.txt", mimeType="text/plain")]

    if os.environ.get("MCP_TEST_CLASH"):  # two names that sanitise to one offered name
        server.add_tool(lambda: "dot", name="do.it", description="Made do_it too.")
        server.add_tool(lambda: "underscore", name="do_it", description="Also do_it.")

    return server


if __name__ == "__main__":
    if os.environ.get("MCP_TEST_STDERR"):
        print(os.environ["MCP_TEST_STDERR"], file=sys.stderr, flush=True)
    if os.environ.get("MCP_TEST_EXIT"):
        sys.exit(int(os.environ["MCP_TEST_EXIT"]))
    build().run("stdio")
