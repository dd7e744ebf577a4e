"""``McpManager``: the MCP servers of one session, run on an asyncio loop in a daemon thread.

``start()`` launches every approved, enabled server in the background, each within its own start
time limit (``start_timeout_s``); the caller goes on at once. The loop asks for its tools through
the tool-source interface ``ToolRegistry`` reads: ``settle()`` (block until no server is still
starting: the first request waits so its tool list holds every server that started in time),
``tools()`` (the ready servers' tools, by server name then tool name), ``generation`` (bumped
whenever that list changes) and ``take_notices()``. A server that fails to start, times out or
crashes becomes ``failed`` with a notice holding its stderr tail; its tools leave the list.
``restart(name)`` and ``approve(name)`` (a project server the user just approved) start one
again. ``call`` runs one tool call from a worker thread, cancellable (see ``connection``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import CancelledError as FutureCancelled
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

from ..tools.base import ToolError
from .connection import ServerConnection, ServerGone
from .naming import unique_names
from .project import ServerSpec

Status = Literal["needs approval", "disabled", "starting", "ready", "failed", "stopped"]
#: Seconds given to the servers to close at the end of a session.
STOP_WAIT_S = 4.0


class CallCancelled(ToolError):
    """An MCP call was cancelled (Esc or its time limit); the cancellation was sent to the server."""


@dataclass
class ServerState:
    """What the manager knows of one server (``status``, ``tools`` when ready, the ``error`` and
    ``stderr`` tail of a failure); read it through ``McpManager.statuses()``."""

    spec: ServerSpec
    status: Status = "stopped"
    tools: list = field(default_factory=list)  # McpTool, by tool name
    error: str = ""
    stderr: str = ""
    conn: ServerConnection | None = None
    future: Any = None
    started_at: float = 0.0


@dataclass(frozen=True)
class ServerStatus:
    """A snapshot of one server for the UI: ``name``, ``origin`` (user/project), ``source``,
    ``status``, ``transport`` (stdio/http), ``target`` (command line or URL), ``tools`` (offered
    names), ``error`` and ``stderr`` (its tail, after a failure), ``details`` (every field an
    approval covers, ``McpServerSettings.details``: what ``/mcp`` shows before ``a`` approves)."""

    name: str
    origin: str
    source: str
    status: Status
    transport: str
    target: str
    tools: tuple[str, ...]
    error: str = ""
    stderr: str = ""
    details: tuple[str, ...] = ()


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe_error(exc: BaseException) -> str:
    exc = _leaf(exc)
    if isinstance(exc, ServerGone):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"could not start: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


class McpManager:
    """The servers of one session (see the module docstring). ``specs``: every configured server
    (``project.server_specs``); ``approved(spec) -> bool`` says which may start."""

    def __init__(self, specs: list[ServerSpec], workspace: Path, approved: Callable[[ServerSpec], bool]) -> None:
        self.workspace = Path(workspace)
        self._states = {spec.name: ServerState(spec) for spec in sorted(specs, key=lambda s: s.name)}
        self._approved = approved
        self._lock = threading.Condition()
        self._notices: list[str] = []
        self.generation = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tools_cache: tuple[int, list] | None = None
        #: Every tool name offered this session -> its server (a call after a crash names it).
        self._offered: dict[str, str] = {}
        #: Called (any thread) after a server's status changed; the UI refreshes its /mcp view.
        self.on_change: Callable[[], None] | None = None

    # ------------------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Start every approved, enabled server in the background (returns at once)."""
        for state in self._states.values():
            if state.future is not None and not state.future.done():
                continue  # approved and started already (the TUI's question came first)
            if not state.spec.settings.enabled:
                state.status = "disabled"
            elif not self._approved(state.spec):
                state.status = "needs approval"
            else:
                self._launch(state)

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=loop.run_forever, name="mcp-servers", daemon=True)
                self._thread.start()
                self._loop = loop
            return self._loop

    def _launch(self, state: ServerState) -> None:
        loop = self._ensure_loop()
        with self._lock:
            state.status, state.error, state.stderr, state.tools = "starting", "", "", []
            state.started_at = time.monotonic()
            state.future = asyncio.run_coroutine_threadsafe(self._serve(state), loop)
            self._lock.notify_all()
        self._changed()

    async def _serve(self, state: ServerState) -> None:
        spec = state.spec
        conn = ServerConnection(spec, self.workspace, lambda tools: self._ready(state, tools))
        state.conn = conn
        task = asyncio.current_task()
        timed_out = []

        def over_limit() -> None:  # failed now: closing the process may take its own time
            if state.status == "starting" and state.conn is conn:
                timed_out.append(True)
                self._fail(state, f"did not start within {spec.settings.start_timeout_s:g} s")
                task.cancel()

        timer = asyncio.get_running_loop().call_later(spec.settings.start_timeout_s, over_limit)
        try:
            await conn.run()
            if state.conn is conn:
                self._set(state, "stopped")
        except asyncio.CancelledError:
            if not timed_out and state.conn is conn:
                self._set(state, "stopped")
        except BaseException as exc:  # noqa: BLE001 - a server's failure is a notice, never the session's
            if not timed_out and state.conn is conn:
                self._fail(state, _describe_error(exc))
        finally:
            timer.cancel()
            if state.conn is conn:
                state.conn = None
            conn.discard()

    def _ready(self, state: ServerState, tools: list) -> None:
        from .tool import McpTool

        ordered = sorted(tools, key=lambda t: t.name)
        names, clashes = unique_names(state.spec.name, [info.name for info in ordered])
        made = [McpTool(self, state.spec.name, info, name, state.spec.settings.call_timeout_s)
                for info, name in zip(ordered, names)]
        with self._lock:
            self._notices.extend(clashes)
            for tool in made:
                self._offered[tool.name] = state.spec.name
            state.tools, state.status = made, "ready"
            self.generation += 1
            self._lock.notify_all()
        self._changed()

    def _set(self, state: ServerState, status: Status) -> None:
        with self._lock:
            if state.tools:
                self.generation += 1
            state.status, state.tools = status, []
            self._lock.notify_all()
        self._changed()

    def _fail(self, state: ServerState, message: str) -> None:
        conn = state.conn
        tail = conn.stderr_tail() if conn is not None else ""
        with self._lock:
            had_tools = bool(state.tools)
            if had_tools:
                self.generation += 1
            state.status, state.tools, state.error, state.stderr = "failed", [], message, tail
            text = f"MCP server {state.spec.name} failed: {message}."
            if had_tools:
                text += " Its tools are removed from the next request."
            if tail:
                text += "\nIts stderr ends with:\n" + "\n".join(tail.splitlines()[-12:])
            self._notices.append(text)
            self._lock.notify_all()
        self._changed()

    def _changed(self) -> None:
        listener = self.on_change
        if listener is not None:
            try:
                listener()
            except Exception:  # noqa: BLE001 - a UI refresh never breaks a server
                pass

    def restart(self, name: str) -> None:
        """Stop server ``name`` (if running) and start it again; raises ``KeyError`` for an
        unknown name and ``ValueError`` for a server that is disabled or needs approval."""
        state = self._states[name]
        if not state.spec.settings.enabled:
            raise ValueError(f"MCP server {name} is disabled in the config (enabled = false)")
        if not self._approved(state.spec):
            raise ValueError(f"MCP server {name} needs your approval first")
        self._stop_one(state)
        self._launch(state)

    def approve(self, name: str) -> None:
        """Start project server ``name`` the user just approved (the caller stored the approval)."""
        state = self._states[name]
        if state.status in ("needs approval", "stopped", "failed"):
            self._launch(state)

    def _stop_one(self, state: ServerState, wait_s: float = STOP_WAIT_S) -> None:
        loop, conn, future = self._loop, state.conn, state.future
        if loop is None or future is None or future.done():
            return
        if conn is not None:
            loop.call_soon_threadsafe(conn.stop)
        try:
            future.result(timeout=wait_s)
        except (FutureTimeout, FutureCancelled, Exception):  # noqa: BLE001
            future.cancel()

    def _await_end(self, state: ServerState, wait_s: float = STOP_WAIT_S) -> None:
        """Wait (at most ``wait_s`` seconds) until the server's task ended after its connection
        closed, so its status and notice are set (and its tools gone) when the call returns."""
        future = state.future
        if future is None:
            return
        try:
            future.result(timeout=wait_s)
        except (FutureTimeout, FutureCancelled, Exception):  # noqa: BLE001 - only waiting for the end
            pass

    def close(self) -> None:
        """Stop every server (at most ``STOP_WAIT_S`` seconds in all) and the loop."""
        for state in self._states.values():
            self._stop_one(state)
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(1.0)

    # ---------------------------------------------------------------------------- tool source
    def settle(self, timeout_s: float | None = None) -> None:
        """Block until no server is starting (each has its own start limit, which ends that
        wait), or ``timeout_s`` seconds (None: the longest start limit plus 2 s)."""
        limit = timeout_s if timeout_s is not None else 2.0 + max(
            (s.spec.settings.start_timeout_s for s in self._states.values()), default=0.0)
        deadline = time.monotonic() + limit
        with self._lock:
            while any(s.status == "starting" for s in self._states.values()):
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._lock.wait(min(left, 0.1))

    def tools(self) -> list:
        """The ready servers' tools (``McpTool``), by server name then tool name; a name taken
        by an earlier tool is skipped (two tools that sanitise to one name)."""
        with self._lock:
            cached = self._tools_cache
            if cached is not None and cached[0] == self.generation:
                return list(cached[1])
            seen: set[str] = set()
            out = []
            for state in self._states.values():
                for tool in state.tools:
                    if tool.name not in seen:
                        seen.add(tool.name)
                        out.append(tool)
            self._tools_cache = (self.generation, out)
            return list(out)

    def unavailable_message(self, name: str) -> str | None:
        """Why tool ``name``, offered earlier this session, cannot be called now (its server
        crashed, failed or was stopped: the message says which, with its error); None for a
        name no server of this session offered, or whose server is ready again."""
        with self._lock:
            server = self._offered.get(name)
            state = self._states.get(server) if server else None
            if state is None or state.status == "ready":
                return None
            if state.status == "failed":
                why = f"crashed or failed ({state.error})" if state.error else "crashed or failed"
            else:
                why = f"is {state.status}"
            return (f"MCP server {server} {why}; its tool {name} is no longer available. Go on without it "
                    "(the user can restart the server with /mcp).")

    def take_notices(self) -> list[str]:
        """Notices since the last call (failures with their stderr tail), oldest first."""
        with self._lock:
            notices, self._notices = self._notices, []
            return notices

    def statuses(self) -> list[ServerStatus]:
        """Every configured server by name (``ServerStatus``)."""
        with self._lock:
            return [ServerStatus(name=s.spec.name, origin=s.spec.origin, source=s.spec.source, status=s.status,
                                 transport=s.spec.settings.transport, target=s.spec.settings.describe(),
                                 tools=tuple(t.name for t in s.tools), error=s.error, stderr=s.stderr,
                                 details=tuple(s.spec.settings.details(self.workspace)))
                    for s in self._states.values()]

    def spec(self, name: str) -> ServerSpec | None:
        """The spec of server ``name``, or None."""
        state = self._states.get(name)
        return state.spec if state else None

    def describe(self, name: str) -> str:
        """What server ``name`` runs (command line or URL)."""
        state = self._states.get(name)
        return state.spec.settings.describe() if state else "?"

    # ----------------------------------------------------------------------------------- calls
    def call(self, server: str, tool: str, arguments: dict[str, Any], cancel: threading.Event,
             timed_out: Callable[[], bool] = lambda: False) -> Any:
        """Run ``tools/call`` of ``tool`` on ``server`` and return the ``CallToolResult``. When
        ``cancel`` is set the call is abandoned and ``notifications/cancelled`` sent with the
        reason (``timed_out()`` says whether it was the time limit); raises ``CallCancelled``.
        Raises ``ToolError`` when the server is not running, the connection dropped, or the
        server answered with a JSON-RPC error (its message)."""
        state = self._states.get(server)
        conn = state.conn if state is not None else None
        loop = self._loop
        if state is None or conn is None or loop is None or state.status != "ready":
            status = state.status if state is not None else "unknown"
            how = "crashed or failed" if status == "failed" else "is not running"
            error = f": {state.error}" if state is not None and status == "failed" and state.error else ""
            raise ToolError(f"MCP server {server} {how} ({status}{error}); its tools cannot be called now.")
        sent: list = []
        future = asyncio.run_coroutine_threadsafe(conn.call(tool, arguments, sent), loop)
        while True:
            try:
                return future.result(timeout=0.05)
            except FutureTimeout:
                if cancel.is_set():
                    break
            except FutureCancelled:
                raise CallCancelled(f"the call of {tool} was cancelled") from None
            except ServerGone as exc:
                raise ToolError(f"MCP server {server} crashed or stopped ({exc}); its tool {tool} cannot be "
                                "called now and its tools are removed from the next request.") from None
            except Exception as exc:  # noqa: BLE001 - McpError and transport errors reach the model
                if "Connection closed" in str(exc):
                    self._await_end(state)  # the failure is recorded before the next request is built
                    raise ToolError(f"MCP server {server} closed its connection during the call of {tool} "
                                    "(it may have crashed); its tools are removed.") from None
                raise ToolError(f"MCP server {server} answered {tool} with an error: {_describe_error(exc)}") from None
        future.cancel()
        reason = "time limit" if timed_out() else "cancelled by the user"
        if sent:
            notified = asyncio.run_coroutine_threadsafe(conn.send_cancelled(sent[0], reason), loop)
            try:
                notified.result(timeout=2.0)
            except Exception:  # noqa: BLE001 - the call is answered either way
                pass
        raise CallCancelled(f"the call of {tool} on MCP server {server} was stopped ({reason}); "
                            "the server was told to cancel it")
