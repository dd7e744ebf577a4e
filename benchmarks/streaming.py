"""Streaming a 20 KB reply in 1-token chunks through the real app, headless.

A paced provider yields about 4 characters per chunk at a fixed rate (default 200 chunks/s, the
goal) into a running ``OpenCLIApp``. Printed: chunks/s delivered, chunks/s the UI kept up with
(all text rendered when the stream ended, plus the lag to catch up), and event-loop stalls
(goal: keeps up with 200 chunks/s, no stall over 50 ms).

A stall is measured as event-loop lag: a plain asyncio callback re-arms itself every 5 ms and
records how late it ran; the largest lateness is the longest time the loop could not serve a
callback that was due (Node's ``monitorEventLoopDelay`` measures the same), printed with the CPU
time the UI thread got during it (a stall far longer than that was spent waiting for the GIL or
a CPU, not working). The largest gap between ticks of a 10 ms Textual timer is printed as well;
it overstates a stall by up to one interval plus the timer's own catch-up (a Textual timer that
is late skips to its next slot).

Reply shapes (``--shape``): ``mixed`` (headings, paragraphs, short lists and code blocks: the
default), ``code`` (one 20 KB code block), ``list`` (one 20 KB list), ``paragraph`` (one 20 KB
paragraph), ``table`` (one 20 KB table), or ``all`` to run each in turn.

Usage: python benchmarks/streaming.py [CHUNKS_PER_SECOND] [--shape SHAPE]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.config.settings import Settings  # noqa: E402
from agent.providers.base import StreamDelta  # noqa: E402
from agent.runtime.build import build_session  # noqa: E402


def reply_text(size: int = 20_000, shape: str = "mixed") -> str:
    """A markdown reply of ``size`` characters in the given shape (see the module docstring)."""
    if shape == "code":
        body = "".join(f"def handler_{i}(x):\n    return x * {i}  # comment\n\n" for i in range(size // 20))
        return ("```python\n" + body)[:size - 4] + "\n```"
    if shape == "list":
        return "".join(f"- item {i} reads the **config** and returns `x`\n" for i in range(size // 20))[:size]
    if shape == "paragraph":
        return ("The function reads the config and returns a value; it is called from three places. "
                * (size // 40))[:size]
    if shape == "table":
        rows = "".join(f"| {i} | `handler_{i}` | returns x * {i} |\n" for i in range(size // 20))
        return ("| n | function | result |\n|---|---|---|\n" + rows)[:size]
    parts, i = [], 0
    while sum(map(len, parts)) < size:
        i += 1
        parts.append(f"## Step {i}\n\nThe function `handler_{i}` reads the **config** and returns a value; "
                     f"it is called from three places.\n\n- first item {i}\n- second item\n\n"
                     f"```python\ndef handler_{i}(x):\n    return x * {i}\n```\n\n")
    return "".join(parts)[:size]


class PacedProvider:
    """Yields ``text`` in ~4-character chunks at ``rate`` chunks per second."""

    instant_retries = True

    def __init__(self, text: str, rate: float) -> None:
        self.chunks = [text[i:i + 4] for i in range(0, len(text), 4)]
        self.rate = rate
        self.started = self.ended = 0.0

    def stream(self, request, cancel: threading.Event):
        interval = 1.0 / self.rate
        self.started = time.perf_counter()
        for n, chunk in enumerate(self.chunks):
            target = self.started + n * interval
            delay = target - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            yield StreamDelta(kind="text", text=chunk)
        self.ended = time.perf_counter()
        yield StreamDelta(kind="finish", finish_reason="stop")


async def main(rate: float, shape: str = "mixed") -> None:
    from tui.app import OpenCLIApp

    text = reply_text(shape=shape)
    provider = PacedProvider(text, rate)
    with tempfile.TemporaryDirectory() as ws:
        session = build_session(Path(ws), Settings(model="openai/gpt-4.1"), provider=provider)
        app = OpenCLIApp(session=session, watch_themes=False)
        ticks: list[float] = []
        # (when due, seconds late, seconds the main thread ran on a CPU since the last probe)
        lateness: list[tuple[float, float, float]] = []
        loop = asyncio.get_running_loop()
        measuring = True
        last_cpu = [time.thread_time()]

        def probe(due: float) -> None:
            now, cpu = time.perf_counter(), time.thread_time()
            lateness.append((due, now - due, cpu - last_cpu[0]))
            last_cpu[0] = cpu
            if measuring:
                loop.call_at(loop.time() + 0.005, probe, now + 0.005)

        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause(0.5)
            app.set_interval(0.01, lambda: ticks.append(time.perf_counter()))
            loop.call_at(loop.time() + 0.005, probe, time.perf_counter() + 0.005)
            await app.send_prompt("stream please")
            while not provider.ended:
                await asyncio.sleep(0.05)
            while app.runner.running:
                await asyncio.sleep(0.005)
            caught_up = time.perf_counter()
            measuring = False
            await pilot.pause(0.2)
    during = [t for t in ticks if provider.started <= t <= caught_up]
    gaps = [b - a for a, b in zip(during, during[1:])]
    during_stream = [(late, cpu) for due, late, cpu in lateness if provider.started <= due <= caught_up]
    lags = sorted(late for late, _ in during_stream)
    worst_late, worst_cpu = max(during_stream)
    duration = provider.ended - provider.started
    lag = caught_up - provider.ended
    n = len(provider.chunks)
    print(f"reply            : {len(text)} chars in {n} chunks ({shape})")
    print(f"delivered        : {n / duration:7.1f} chunks/s (target {rate:.0f})")
    print(f"UI kept up with  : {n / (caught_up - provider.started):7.1f} chunks/s (lag after stream end {lag * 1000:.0f} ms)")
    print(f"largest stall    : {lags[-1] * 1000:7.1f} ms event-loop lag (goal < 50 ms); "
          f"p99 {statistics.quantiles(lags, n=100)[98] * 1000:.1f} ms, median {statistics.median(lags) * 1000:.1f} ms")
    # A stall much longer than the CPU time the UI thread got in it was spent waiting: for the
    # agent's threads (the GIL) or for a CPU (a shared machine's other processes).
    print(f"  of which       : {worst_cpu * 1000:7.1f} ms the UI thread ran on a CPU")
    print(f"10 ms timer      : largest gap between ticks {max(gaps) * 1000:.1f} ms, "
          f"p99 {statistics.quantiles(gaps, n=100)[98] * 1000:.1f} ms")


SHAPES = ("mixed", "code", "list", "paragraph", "table")

if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rate", nargs="?", type=float, default=200.0, help="chunks per second")
    parser.add_argument("--shape", choices=(*SHAPES, "all"), default="mixed")
    args = parser.parse_args()
    for shape in SHAPES if args.shape == "all" else (args.shape,):
        asyncio.run(main(args.rate, shape))
