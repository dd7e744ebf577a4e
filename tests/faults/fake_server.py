"""A fake OpenAI-compatible server on 127.0.0.1 for the fault-injection tests.

``FakeServer(script)`` serves ``POST /v1/chat/completions``; each request takes the next entry of
``script`` (a list of ``Reply``); when the script runs out the request gets a 500. Every request
body and the time it arrived (``time.monotonic()``) are recorded in ``requests``.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer.

    ``status``/``headers``/``body``: a plain JSON answer (an error) when ``status`` != 200 or
    ``chunks`` is None. ``chunks``: SSE ``data:`` payloads (dicts) for a streamed 200 answer, then
    ``data: [DONE]`` unless ``cut`` (the connection is closed without it). ``hang_s``: sleep this
    long before answering anything (or until the server stops). ``raw_sse``: lines sent as-is
    after the chunks (e.g. an error event). ``hang_after_s``: after the chunks, stay silent this
    long (or until the server stops) before finishing.
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    chunks: list[dict[str, Any]] | None = None
    cut: bool = False
    hang_s: float = 0.0
    raw_sse: list[str] = field(default_factory=list)
    hang_after_s: float = 0.0


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def text_reply(text: str, *, reasoning: str | None = None, piece: int = 4) -> Reply:
    """A streamed reply: optional ``reasoning_content`` then ``text``, in pieces of ``piece`` chars."""
    chunks = [_chunk({"role": "assistant", "content": ""})]
    for i in range(0, len(reasoning or ""), piece):
        chunks.append(_chunk({"reasoning_content": reasoning[i:i + piece]}))
    for i in range(0, len(text), piece):
        chunks.append(_chunk({"content": text[i:i + piece]}))
    chunks.append(_chunk({}, "stop"))
    chunks.append({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake",
                   "choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}})
    return Reply(chunks=chunks)


def tool_reply(name: str, arguments: str, *, call_id: str = "call_1", cut_after: int | None = None,
               reasoning: str | None = None, text: str | None = None) -> Reply:
    """A streamed tool call whose raw ``arguments`` string comes in 5-character pieces, after
    optional ``reasoning`` and ``text``; with ``cut_after`` the connection closes after that many
    argument pieces (no finish, no [DONE])."""
    chunks = [_chunk({"role": "assistant", "content": None})]
    if reasoning:
        chunks.append(_chunk({"reasoning_content": reasoning}))
    if text:
        chunks.append(_chunk({"content": text}))
    chunks.append(_chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                          "function": {"name": name, "arguments": ""}}]}))
    pieces = [arguments[i:i + 5] for i in range(0, len(arguments), 5)]
    if cut_after is not None:
        pieces = pieces[:cut_after]
    for p in pieces:
        chunks.append(_chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}))
    if cut_after is not None:
        return Reply(chunks=chunks, cut=True)
    chunks.append(_chunk({}, "tool_calls"))
    return Reply(chunks=chunks)


def error_reply(status: int, message: str, *, code: str | None = None, err_type: str = "server_error",
                headers: dict[str, str] | None = None) -> Reply:
    """A JSON error answer in OpenAI's shape."""
    return Reply(status=status, headers=headers or {},
                 body={"error": {"message": message, "type": err_type, "code": code, "param": None}})


class FakeServer:
    """The server; ``url`` is its ``/v1`` base. Use as a context manager (``stop`` on exit)."""

    def __init__(self, script: list[Reply], models: list[str] | None = None) -> None:
        """``models``: the ids ``GET /v1/models`` lists (none: that path is a 404)."""
        self.script = list(script)
        self.models = models
        self.model_meta: dict[str, Any] = {}  # extra fields of each /models entry (max_model_len...)
        self.requests: list[tuple[float, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                if server.models is None or not self.path.rstrip("/").endswith("/models"):
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = json.dumps({"object": "list", "data": [{"id": m, "object": "model", **server.model_meta}
                                                              for m in server.models]})
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"raw": raw.decode("utf-8", "replace")}
                with server._lock:
                    server.requests.append((time.monotonic(), body))
                    reply = server.script.pop(0) if server.script else error_reply(500, "script exhausted")
                server._answer(self, reply)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    def _answer(self, handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.hang_s:
            self._stopping.wait(reply.hang_s)
            if self._stopping.is_set():
                return
        try:
            if reply.status != 200 or reply.chunks is None:
                data = json.dumps(reply.body if reply.body is not None else {}).encode()
                handler.send_response(reply.status)
                handler.send_header("Content-Type", "application/json")
                handler.send_header("Content-Length", str(len(data)))
                for k, v in reply.headers.items():
                    handler.send_header(k, v)
                handler.end_headers()
                handler.wfile.write(data)
                return
            handler.send_response(200)
            handler.send_header("Content-Type", "text/event-stream")
            handler.send_header("Cache-Control", "no-cache")
            handler.send_header("Connection", "close")
            for k, v in reply.headers.items():
                handler.send_header(k, v)
            handler.end_headers()
            for chunk in reply.chunks:
                handler.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                handler.wfile.flush()
            if reply.hang_after_s:
                self._stopping.wait(reply.hang_after_s)
                if self._stopping.is_set():
                    return
            for line in reply.raw_sse:
                handler.wfile.write(line.encode())
                handler.wfile.flush()
            if not reply.cut:
                handler.wfile.write(b"data: [DONE]\n\n")
            handler.wfile.flush()
            handler.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            pass

    def start(self) -> "FakeServer":
        """Start serving in a daemon thread; returns self."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release hanging answers."""
        self._stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "FakeServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
