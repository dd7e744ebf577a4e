"""Output viewer on a big saved output: time to the first screen of lines, time to index the whole
file, and peak memory growth.

Writes a file of SIZE_MB megabytes (default 100) of numbered 74-byte lines (some with ANSI
colours, as a test runner prints them), starts a minimal Textual app headless under
``App.run_test`` (Pilot), and opens ``OutputViewerScreen`` on it ROUNDS times (default 3):

- first screen: from ``push_screen`` to the moment the view has drawn its last visible row with
  file lines (``FileView.first_screen_at``); goal < 1 s for 100 MB;
- whole index: from ``push_screen`` until the line index is complete (it runs in a thread while
  the screen is already usable);
- then End (jump to the last line; the figure includes Pilot's key-press round trip, about
  80 ms) and a search from the top for a string on the last line, timed too;
- peak RSS growth: the process's peak resident memory during a round minus the resident
  memory just before it (Linux ``/proc/self/status`` VmHWM, reset through ``/proc/self/clear_refs``;
  elsewhere a sampling thread). The first round includes first-use costs (screen CSS, imports). Goal: a few MB, however large the file (the index keeps 8 bytes
  per 32 lines, the cache 2000 cleaned lines).

Usage: python benchmarks/output_viewer.py [SIZE_MB] [ROUNDS]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual.app import App  # noqa: E402
from textual.widgets import Static  # noqa: E402

from tui.line_index import format_count, format_size  # noqa: E402
from tui.screens.output_viewer import OutputViewerScreen  # noqa: E402

LINE_BYTES = 74


def write_file(path: Path, size_mb: int) -> int:
    """Write about ``size_mb`` MiB of numbered lines, one MiB at a time; return the line count."""
    target = size_mb << 20
    written = lines = 0
    with open(path, "wb") as fh:
        while written < target:
            block = []
            for _ in range((1 << 20) // LINE_BYTES):
                if lines % 50 == 0:
                    body = b"\x1b[31mFAILED\x1b[0m test_%07d " % lines + b"x" * 38
                else:
                    body = b"line %07d " % lines + b"x" * 60
                block.append(body[:LINE_BYTES - 1].ljust(LINE_BYTES - 1, b"x") + b"\n")
                lines += 1
            data = b"".join(block)
            fh.write(data)
            written += len(data)
    return lines


def rss_kib(field: str = "VmRSS") -> int | None:
    """Resident memory of this process in KiB (``VmRSS`` now, ``VmHWM`` peak), Linux only."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark (Linux >= 4.0); False when not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


class PeakSampler:
    """Fallback peak-RSS meter when the kernel mark cannot be reset: samples ``VmRSS`` every
    10 ms in a thread (``active`` False: does nothing, so it does not disturb the timings)."""

    def __init__(self, active: bool) -> None:
        self.active = active
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, rss_kib() or 0)

    def __enter__(self) -> "PeakSampler":
        if self.active:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.active:
            self._stop.set()
            self._thread.join()
        self.peak = max(self.peak, rss_kib() or 0)


class Host(App):
    """A bare app that only hosts the viewer screen."""

    def compose(self):
        yield Static("host")


async def run(path: Path, lines: int, rounds: int) -> None:
    app = Host()
    results = []
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(0.2)
        for _ in range(rounds):
            baseline = rss_kib()
            hwm_reset = reset_peak()
            with PeakSampler(active=not hwm_reset) as sampler:
                start = time.monotonic()
                screen = OutputViewerScreen(path)
                await app.push_screen(screen)
                view = screen.view
                while view.first_screen_at is None:
                    await pilot.pause(0.001)
                first = view.first_screen_at - start
                while view.indexed_at is None:
                    await pilot.pause(0.005)
                indexed = view.indexed_at - start
                assert view.line_count == lines, (view.line_count, lines)
                jump_start = time.monotonic()
                await pilot.press("G")
                await pilot.pause()
                jump = time.monotonic() - jump_start
                search_start = time.monotonic()
                target = "line %07d" % (lines - 1) if (lines - 1) % 50 else "test_%07d" % (lines - 1)
                view.cursor = 0
                view.set_search(target)
                screen.search(from_line=0)
                while not screen.message.startswith(("match", "not found")):
                    await pilot.pause(0.002)
                search = time.monotonic() - search_start
                assert view.cursor == lines - 1, screen.message
            peak = rss_kib("VmHWM") if hwm_reset else None
            growth = ((peak if peak is not None else sampler.peak) - (baseline or 0)) / 1024
            results.append((first, indexed, jump, search, growth, view.index.index_bytes, view.cache_size))
            screen.dismiss()
            await pilot.pause(0.1)
    size = path.stat().st_size
    print(f"file: {format_size(size)}, {format_count(lines)} lines ({path})")
    for i, (first, indexed, jump, search, growth, index_bytes, cache) in enumerate(results, 1):
        print(f"round {i}: first screen {first * 1000:7.1f} ms | whole index {indexed * 1000:7.1f} ms | "
              f"End {jump * 1000:5.1f} ms | search to last line {search * 1000:6.1f} ms | "
              f"peak RSS growth {growth:5.1f} MB | index {index_bytes / 1024:.0f} KB, cache {cache} lines")
    firsts = [r[0] for r in results]
    print(f"first screen median {statistics.median(firsts) * 1000:.1f} ms (goal < 1000 ms); "
          f"whole index median {statistics.median(r[1] for r in results) * 1000:.1f} ms; "
          f"peak RSS growth (first round) {results[0][4]:.1f} MB for a {format_size(size)} file")


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("size_mb", nargs="?", type=int, default=100, help="file size in MB; default 100")
    parser.add_argument("rounds", nargs="?", type=int, default=3, help="rounds; default 3")
    args = parser.parse_args()
    size_mb, rounds = args.size_mb, args.rounds
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tool-output-bench.txt"
        started = time.monotonic()
        lines = write_file(path, size_mb)
        print(f"wrote the file in {time.monotonic() - started:.2f} s")
        asyncio.run(run(path, lines, rounds))


if __name__ == "__main__":
    main()
