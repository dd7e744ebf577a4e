"""One MCP server's client session, run as a task on the manager's asyncio loop.

``ServerConnection.run`` opens the transport (``mcp.client.stdio.stdio_client`` for a stdio
server, its stderr appended to a file so the last lines can be shown when it fails;
``mcp.client.streamable_http.streamable_http_client`` for an HTTP one), initialises a
``ClientSession`` and lists the tools (every page) within the server's start time limit, then
stays open until ``stop()`` or until the server's stream ends (the process died, the connection
dropped). ``call`` runs one ``tools/call``; when the call is cancelled (Esc, the call time limit)
the request's id, seen on its way out through ``_RecordingWriter``, is named in the MCP
cancellation notification (``notifications/cancelled``, sent with the SDK's
``send_notification``), since the SDK sends none itself when a request is abandoned.
"""

from __future__ import annotations

import contextvars
import os
import tempfile
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Callable

import anyio

from .project import ServerSpec

#: Characters of a server's stderr shown in a failure notice.
STDERR_TAIL_CHARS = 1500
#: The ``tools/call`` request ids sent by the running call (one list per call task).
_SENT_IDS: contextvars.ContextVar[list | None] = contextvars.ContextVar("mcp_sent_ids", default=None)


class _StreamProxy:
    """A stream wrapper: entering, leaving and every other attribute go to ``self._inner``."""

    _inner: Any

    async def __aenter__(self) -> "_StreamProxy":
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _RecordingWriter(_StreamProxy):
    """The session's write stream, noting the id of each ``tools/call`` request a call task sends."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def send(self, message: Any) -> None:
        ids = _SENT_IDS.get()
        root = getattr(getattr(message, "message", None), "root", None)
        if ids is not None and getattr(root, "method", None) == "tools/call":
            ids.append(root.id)
        await self._inner.send(message)

class _WatchedReader(_StreamProxy):
    """The session's read stream, calling ``on_end`` once the server's stream ends."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    def __aiter__(self) -> "_WatchedReader":
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

class ServerGone(Exception):
    """The server stopped (crashed, closed the connection) or never started; the message says how."""


class ServerConnection:
    """The live session of one server. Create and use it on the manager's loop only.

    The start time limit is the caller's (it cancels ``run``). ``on_ready(tools)`` is called with the server's ``mcp.types.Tool`` list once it listed them;
    ``run`` returns normally after ``stop()`` and raises on a failure (the message says what:
    a start error, the start time limit, the server's exit)."""

    def __init__(self, spec: ServerSpec, workspace: Path, on_ready: Callable[[list], None]) -> None:
        self.spec = spec
        self.workspace = Path(workspace)
        self._on_ready = on_ready
        self._stop = anyio.Event()  # create on the loop: anyio events need a running loop
        self._ended = anyio.Event()
        self.session: Any = None
        fd, name = tempfile.mkstemp(prefix=f"opencli-mcp-{spec.name}-", suffix=".stderr")
        os.close(fd)
        self.stderr_path = Path(name)

    def stderr_tail(self) -> str:
        """The last ``STDERR_TAIL_CHARS`` characters the server wrote to stderr ("" for none)."""
        try:
            with open(self.stderr_path, "rb") as handle:
                handle.seek(0, os.SEEK_END)
                size = handle.tell()
                handle.seek(max(0, size - STDERR_TAIL_CHARS))
                return handle.read().decode("utf-8", "replace").strip()
        except OSError:
            return ""

    def discard(self) -> None:
        """Delete the stderr file (the connection is over)."""
        self.stderr_path.unlink(missing_ok=True)

    def stop(self) -> None:
        """Ask ``run`` to close the session and return (on the loop's thread)."""
        self._stop.set()

    async def _open(self, stack: AsyncExitStack) -> tuple[Any, Any]:
        settings = self.spec.settings
        if settings.command:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(command=settings.command, args=list(settings.args),
                                           env=dict(settings.env) or None,
                                           cwd=str(settings.resolved_cwd(self.workspace)))
            errlog = stack.enter_context(open(self.stderr_path, "a", encoding="utf-8"))
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            return read, write
        import httpx
        from mcp.client.streamable_http import streamable_http_client

        client = await stack.enter_async_context(httpx.AsyncClient(
            headers=dict(settings.headers), timeout=httpx.Timeout(30.0, read=300.0), follow_redirects=True))
        read, write, _ = await stack.enter_async_context(streamable_http_client(str(settings.url), http_client=client))
        return read, write

    async def run(self) -> None:
        """Start, list the tools, report them, and stay open until stopped (see the class)."""
        from mcp import ClientSession
        from mcp.types import Implementation

        async with AsyncExitStack() as stack:  # the manager enforces the start time limit (cancelling this task)
            read, write = await self._open(stack)
            session = await stack.enter_async_context(ClientSession(
                _WatchedReader(read, self._ended.set), _RecordingWriter(write),
                client_info=Implementation(name="opencli-tui", version="0.1.0")))
            await session.initialize()
            tools: list = []
            cursor = None
            while True:
                page = await session.list_tools(cursor=cursor) if cursor else await session.list_tools()
                tools += page.tools
                cursor = page.nextCursor
                if not cursor:
                    break
            self.session = session
            self._on_ready(tools)
            async with anyio.create_task_group() as group:
                async def wait_end() -> None:
                    await self._ended.wait()
                    group.cancel_scope.cancel()

                group.start_soon(wait_end)
                await self._stop.wait()
                group.cancel_scope.cancel()
            self.session = None
            if not self._stop.is_set():
                raise ServerGone("the server stopped (its connection closed)")

    async def call(self, tool: str, arguments: dict[str, Any], sent: list) -> Any:
        """``tools/call`` of ``tool`` with ``arguments``; returns the ``CallToolResult``. The
        request's id goes into ``sent`` as it is sent. Raises ``ServerGone`` when not connected."""
        session = self.session
        if session is None:
            raise ServerGone("the server is not running")
        _SENT_IDS.set(sent)
        return await session.call_tool(tool, arguments)

    async def send_cancelled(self, request_id: Any, reason: str) -> None:
        """Send ``notifications/cancelled`` for ``request_id`` (errors ignored: the server may be gone)."""
        from mcp.types import CancelledNotification, CancelledNotificationParams, ClientNotification

        session = self.session
        if session is None:
            return
        try:
            await session.send_notification(ClientNotification(CancelledNotification(
                params=CancelledNotificationParams(requestId=request_id, reason=reason))))
        except Exception:  # noqa: BLE001 - best effort: the call is answered either way
            pass
