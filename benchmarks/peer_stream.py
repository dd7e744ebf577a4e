"""Streaming a 20 KB reply from a fake OpenAI-compatible server into the real TUI, measured from outside
(issue 18: the set-up the peers were measured with).

A stdlib HTTP server on 127.0.0.1 (a thread of this process, so its CPU is not counted) answers
``POST .../chat/completions`` with ``stream: true`` by streaming a 20 KB markdown reply in
10-character chunks at 200 chunks/s (a 9.99 s stream) as OpenAI's server-sent events. The TUI
(``opencli-tui --model openai/gpt-4.1 --api-base http://127.0.0.1:PORT/v1``, config and session data
in temporary folders) runs on its own pseudo-terminal at 160x48. The moment its first frame is on
the terminal (the key hints of the status bar) the driver types message 1; when its reply's end is
on the terminal it waits a second and types message 2 (warm: litellm imported, a connection open).
Each reply starts with ``Q<n>START`` and ends with ``Q<n>DONE``; "on screen" means those bytes
reached the terminal.

Printed per round and as medians over the rounds (interleaved with a bare Textual app's first
paint and RSS, measured in the same run; the goals are ratios, issue 18):

- first paint (s), and the ratio to the bare app (goal <= 1.2x);
- first-token latency: the first chunk on screen minus the moment the server sent it, for message
  1 and 2, and their ratio (goal: message 1 <= 0.3 s and <= 1.5x message 2);
- send -> end on screen / stream length (goal <= 1.03);
- CPU of the TUI's process tree (utime + stime of it and its children, from /proc) from send to the
  end on screen, per second of stream (goal <= 0.33);
- event-loop lag p99 during the stream (goal <= 33 ms): the TUI runs through a small wrapper that
  adds one asyncio task re-arming every 10 ms and records how late it woke, written to a file
  (the only thing measured from inside; it costs about 1% of a core);
- RSS of the process tree after the second stream (MB), and the difference to the bare app's
  (goal <= +150 MB).

Nothing is asserted: it prints figures. Usage: python benchmarks/peer_stream.py [--rounds N]
[--size CHARS] [--chunk CHARS] [--rate CHUNKS_PER_S]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from first_paint import BARE_APP  # noqa: E402
from streaming import reply_text  # noqa: E402

COLUMNS, LINES = 160, 48
PAGE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")

#: Runs the TUI's entry point with an event-loop lag probe; samples (due, late) go to $LAG_FILE.
LAG_WRAPPER = r'''
import asyncio, os, sys, time
from textual.app import App
_run_async = App.run_async
async def _probe(path):
    samples = []
    last_write = time.monotonic()
    while True:
        due = time.monotonic() + 0.01
        await asyncio.sleep(0.01)
        now = time.monotonic()
        samples.append(f"{due:.6f} {now - due:.6f}\n")
        if now - last_write > 0.5:
            with open(path, "a") as f:
                f.write("".join(samples))
            samples.clear()
            last_write = now
async def run_async(self, *args, **kwargs):
    task = asyncio.get_running_loop().create_task(_probe(os.environ["LAG_FILE"]))
    try:
        return await _run_async(self, *args, **kwargs)
    finally:
        task.cancel()
App.run_async = run_async
from tui.cli import main
sys.exit(main(sys.argv[1:]))
'''


class FakeServer:
    """An OpenAI-compatible chat completions server streaming ``reply(n)`` for the n-th request.

    ``sent[n]`` holds (monotonic seconds of the first chunk written, of the last chunk written)."""

    def __init__(self, size: int, chunk: int, rate: float) -> None:
        self.size, self.chunk, self.rate = size, chunk, rate
        self.sent: dict[int, tuple[float, float]] = {}
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - model probes: not found
                self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if not self.path.endswith("chat/completions"):
                    self._json(404, {"error": {"message": "not found"}})
                    return
                last = next((m.get("content") for m in reversed(body.get("messages", []))
                             if m.get("role") == "user"), "") or ""
                digits = "".join(ch for ch in str(last) if ch.isdigit()) or "0"
                n = int(digits[-3:])
                server.requests += 1
                text = server.reply(n)
                if not body.get("stream"):
                    self._json(200, {"id": "x", "object": "chat.completion", "model": body.get("model"),
                                     "choices": [{"index": 0, "finish_reason": "stop",
                                                  "message": {"role": "assistant", "content": text[:200]}}],
                                     "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                server.stream(self, n, text, body.get("model", "gpt-4.1"))

            def _json(self, code: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def reply(self, n: int) -> str:
        """The markdown reply to message ``n``: ``size`` characters from ``Q<n>START`` to ``Q<n>DONE``."""
        head, tail = f"Q{n}START and then the reply.\n\n", f"\n\nThe last line Q{n}DONE\n"
        return head + reply_text(self.size - len(head) - len(tail)) + tail

    def stream(self, handler: BaseHTTPRequestHandler, n: int, text: str, model: str) -> None:
        def event(payload: dict) -> None:
            data = b"data: " + json.dumps(payload).encode() + b"\n\n"
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            handler.wfile.flush()

        def chunk(delta: dict, finish: str | None = None) -> dict:
            return {"id": f"c{n}", "object": "chat.completion.chunk", "created": 0, "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        pieces = [text[i:i + self.chunk] for i in range(0, len(text), self.chunk)]
        start = time.monotonic()
        first = start
        for i, piece in enumerate(pieces):
            delay = start + i / self.rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            event(chunk({"role": "assistant", "content": piece} if i == 0 else {"content": piece}))
            if i == 0:
                first = time.monotonic()
        last = time.monotonic()
        event(chunk({}, "stop"))
        usage = {"prompt_tokens": 1000, "completion_tokens": len(text) // 4, "total_tokens": 1000 + len(text) // 4}
        event({**chunk({}), "choices": [], "usage": usage})
        handler.wfile.write(b"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n")
        handler.wfile.flush()
        self.sent[n] = (first, last)

    def close(self) -> None:
        self.httpd.shutdown()


def process_tree(root: int) -> list[int]:
    """``root`` and its descendants (pids), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += children.get(pid, [])
    return tree


def tree_cpu(root: int) -> float:
    """CPU seconds (user + system, waited-for children included) of ``root``'s process tree."""
    total = 0
    for pid in process_tree(root):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(v) for v in fields[11:15])
    return total / TICKS


def tree_rss_mb(root: int) -> float:
    """Resident memory of ``root``'s process tree, in MB (10^6 bytes)."""
    total = 0
    for pid in process_tree(root):
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * PAGE
        except OSError:
            continue
    return total / 1e6


class Terminal:
    """A child process on its own pseudo-terminal; ``wait_for`` reads until bytes appear."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
        self.started = time.monotonic()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                                     start_new_session=True)
        os.close(slave)
        self.master = master
        self.seen = bytearray()

    def wait_for(self, marker: bytes, timeout_s: float = 60.0, since: int = 0) -> float:
        """Monotonic seconds when ``marker`` first appeared in the output at or after offset ``since``."""
        deadline = time.monotonic() + timeout_s
        while marker not in self.seen[max(0, since - len(marker)):]:
            if time.monotonic() > deadline:
                tail = bytes(self.seen[-1500:]).decode("utf-8", "replace")
                raise RuntimeError(f"{marker!r} did not appear in {timeout_s:.0f} s; output ended with {tail!r}")
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if ready:
                try:
                    self.seen += os.read(self.master, 1 << 16)
                except OSError:
                    raise RuntimeError(f"the program ended before {marker!r} appeared") from None
        return time.monotonic()

    def drain(self, seconds: float) -> None:
        """Keep reading (so the program never blocks on a full terminal) for ``seconds``."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if ready:
                try:
                    self.seen += os.read(self.master, 1 << 16)
                except OSError:
                    return

    def type(self, text: str) -> float:
        """Type ``text`` and Enter; returns the monotonic time of the Enter."""
        os.write(self.master, text.encode())
        time.sleep(0.05)
        os.write(self.master, b"\r")
        return time.monotonic()

    def close(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        os.close(self.master)


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98] if len(values) >= 2 else (values[0] if values else 0.0)


def bare_round(env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(first paint in s, RSS in MB 2 s after it) of a bare Textual app."""
    term = Terminal([sys.executable, "-c", BARE_APP], env, cwd)
    try:
        painted = term.wait_for(b"hello", 30) - term.started
        term.drain(2.0)
        return painted, tree_rss_mb(term.proc.pid)
    finally:
        term.close()


def ours_round(env: dict[str, str], server: FakeServer, base: int, profile: str | None = None) -> dict[str, float]:
    """One run of the TUI: two messages (numbered ``base + 1`` and ``base + 2``); returns the figures.
    ``profile``: a file name for ``py-spy record`` (raw format) of the TUI: from the first paint
    until message 1 ended on screen in ``profile + ".1"``, message 2 in ``profile + ".2"``."""
    with tempfile.TemporaryDirectory() as tmp:
        ws, data, lag_file = Path(tmp) / "ws", Path(tmp) / "data", Path(tmp) / "lag.txt"
        ws.mkdir()
        run_env = dict(env, OPENCLI_DATA_DIR=str(data), OPENCLI_CONFIG=str(Path(tmp) / "none.toml"),
                       XDG_CONFIG_HOME=str(Path(tmp) / "config"), LAG_FILE=str(lag_file),
                       OPENAI_API_KEY="sk-benchmark")
        Path(tmp, "none.toml").write_text("")
        argv = [sys.executable, "-c", LAG_WRAPPER, "-C", str(ws), "--model", "openai/gpt-4.1",
                "--api-base", f"http://127.0.0.1:{server.port}/v1"]
        term = Terminal(argv, run_env, ws)
        out: dict[str, float] = {}
        try:
            painted = term.wait_for(b"esc cancel", 60)
            out["first_paint"] = painted - term.started
            for k in (1, 2):
                n = base + k
                mark = len(term.seen)
                spy = None
                if profile:
                    spy = subprocess.Popen(["py-spy", "record", "-p", str(term.proc.pid), "-o", f"{profile}.{k}",
                                            "-f", "raw", "-d", "10" if k == 2 else "30", "-r", "50",
                                            "--nonblocking", "--threads"],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                cpu0 = tree_cpu(term.proc.pid)
                sent = term.type(f"stream reply {n}")
                seen_first = term.wait_for(f"Q{n}START".encode(), 120, since=mark)
                seen_end = term.wait_for(f"Q{n}DONE".encode(), 120, since=mark)
                cpu = tree_cpu(term.proc.pid) - cpu0
                if spy is not None:
                    spy.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT, not on SIGTERM
                    spy.wait()
                first, last = server.sent.get(n, (seen_first, seen_end))
                length = last - first
                tag = "first" if k == 1 else "warm"
                out[f"{tag}_token_latency"] = seen_first - first
                out[f"{tag}_send_to_first_token"] = seen_first - sent
                out[f"{tag}_end_over_length"] = (seen_end - sent) / length
                out[f"{tag}_cpu_per_s"] = cpu / length
                out[f"{tag}_cpu"] = cpu
                out[f"{tag}_stream_s"] = length
                term.drain(1.0)
                lags = []
                if lag_file.exists():
                    for line in lag_file.read_text().splitlines():
                        due, late = map(float, line.split())
                        if first <= due <= seen_end:
                            lags.append(late)
                out[f"{tag}_lag_p99_ms"] = p99(lags) * 1000
            out["rss_mb"] = tree_rss_mb(term.proc.pid)
        finally:
            term.close()
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--rounds", type=int, default=3, help="rounds (each: bare app, then ours); default 3")
    parser.add_argument("--size", type=int, default=20_000, help="reply size in characters; default 20000")
    parser.add_argument("--chunk", type=int, default=10, help="characters per streamed chunk; default 10")
    parser.add_argument("--rate", type=float, default=200.0, help="chunks per second; default 200")
    parser.add_argument("--py-spy", metavar="FILE", help="also profile the last round with py-spy "
                        "(raw collapsed stacks in FILE.1 and FILE.2, one per message)")
    args = parser.parse_args()
    if shutil.which("git") is None:
        print("note: git is not installed; the TUI runs without git context")
    server = FakeServer(args.size, args.chunk, args.rate)
    with tempfile.TemporaryDirectory() as pycache:
        env = {k: v for k, v in os.environ.items()
               if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("OPENCLI_") and not k.endswith("_API_KEY")}
        env.update(PYTHONPYCACHEPREFIX=pycache, TERM="xterm-256color", COLUMNS=str(COLUMNS), LINES=str(LINES),
                   PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""))
        bare_round(env, ROOT)  # warm-up: bytecode cache and file cache
        ours_round(env, server, 900)
        rounds: list[dict[str, float]] = []
        for r in range(args.rounds):
            bare_paint, bare_rss = bare_round(env, ROOT)
            figures = ours_round(env, server, 10 * (r + 1),
                                 args.py_spy if r == args.rounds - 1 else None)
            figures.update(bare_paint=bare_paint, bare_rss_mb=bare_rss)
            rounds.append(figures)
            print(f"round {r + 1}: " + ", ".join(f"{k} {v:.3f}" for k, v in figures.items()), flush=True)
    server.close()

    def med(key: str) -> float:
        return statistics.median(f[key] for f in rounds)

    def spread(key: str, scale: float = 1.0, fmt: str = ".2f") -> str:
        values = [f[key] * scale for f in rounds]
        return f"median {statistics.median(values):{fmt}} (min {min(values):{fmt}}, max {max(values):{fmt}})"

    stream = med("warm_stream_s")
    print(f"\n{args.rounds} rounds; {args.size} chars in {args.chunk}-char chunks at {args.rate:.0f}/s "
          f"(stream {stream:.2f} s); {COLUMNS}x{LINES} pty; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    print(f"first paint (s)                 : ours {spread('first_paint')}, bare Textual {spread('bare_paint')}, "
          f"ratio {med('first_paint') / med('bare_paint'):.2f}x (goal <= 1.2x)")
    ratio = statistics.median(f["first_token_latency"] / max(f["warm_token_latency"], 1e-3) for f in rounds)
    print(f"first-token latency (s)         : message 1 {spread('first_token_latency', fmt='.3f')}, "
          f"message 2 {spread('warm_token_latency', fmt='.3f')}, ratio {ratio:.2f}x (goal <= 0.3 s and <= 1.5x)")
    for tag, label in (("first", "message 1"), ("warm", "message 2")):
        print(f"{label}: send -> end / stream : {spread(tag + '_end_over_length')} (goal <= 1.03)")
        print(f"{label}: CPU per s of stream  : {spread(tag + '_cpu_per_s')} (goal <= 0.33; "
              f"CPU {med(tag + '_cpu'):.2f} s)")
        print(f"{label}: event-loop lag p99   : {spread(tag + '_lag_p99_ms', fmt='.1f')} ms (goal <= 33)")
    print(f"RSS after the streams (MB)      : ours {spread('rss_mb', fmt='.0f')}, bare {spread('bare_rss_mb', fmt='.0f')}, "
          f"difference {med('rss_mb') - med('bare_rss_mb'):.0f} (goal <= 150)")


if __name__ == "__main__":
    main()
