"""Time to first paint of opencli-tui against a bare Textual app, measured in the same run.

Each round starts each app as a fresh process on its own pseudo-terminal (120x36, as a user's
terminal would be) and records the wall time from the spawn to the moment the app's first frame
reaches the terminal: the bare app's "hello", opencli-tui's key hints in the status bar (the last
line of its first frame). For opencli-tui it also records when the session is open and shown (the
model name in the status bar; settings, session and journal are loaded in a worker after the first
paint). Rounds alternate between the two apps; medians are printed with the ratio (goal:
opencli-tui <= 1.3x the bare app), both as the ratio of the medians and as the median of each
round's ratio (the two apps of a round ran back to back, so that one is less exposed to a noisy
machine).

A second, in-process probe runs opencli-tui headless and reports whether litellm was imported
before the first paint (it must not be: importing it takes seconds).

Bytecode: both apps run with Python's bytecode cache on, in a temporary folder, after a warm-up
round, as on a user's machine (pip compiles installed packages; our sources are compiled on their
first import). This matters here because the sandbox sets ``PYTHONDONTWRITEBYTECODE``, which
would recompile every module of ours on every start while Textual's stay compiled.

Usage: python benchmarks/first_paint.py [ROUNDS]
"""

from __future__ import annotations

import fcntl
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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLUMNS, LINES = 120, 36

BARE_APP = """
from textual.app import App
from textual.widgets import Static

class Target(App):
    def compose(self):
        yield Static("hello")

Target().run()
"""

#: Runs the real entry point headless and reports litellm in ``sys.modules`` at the first paint.
LITELLM_PROBE = r'''
import os, sys, time
from textual.app import App
import tui.app
_run = App.run
App.run = lambda self, **kw: _run(self, headless=True, size=(120, 36))
mount = tui.app.OpenCLIApp.on_mount
async def on_mount(self):
    self.call_after_refresh(lambda: (print("PAINTED", "litellm" in sys.modules, flush=True), time.sleep(1), os._exit(0)))
    await mount(self)
tui.app.OpenCLIApp.on_mount = on_mount
from tui.cli import main
main(["-C", sys.argv[1], "--model", "openai/gpt-4.1"])
'''


def time_to_output(argv: list[str], markers: list[bytes], env: dict[str, str], timeout_s: float = 20.0,
                   output: bytearray | None = None) -> list[float]:
    """Start ``argv`` on a new pseudo-terminal (COLUMNS x LINES) and return the seconds from the
    spawn until each of ``markers`` first appeared in what it wrote (``output``, when given,
    receives all it wrote). Raises RuntimeError when one does not appear within ``timeout_s``
    seconds."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT,
                            start_new_session=True)
    os.close(slave)
    seen = b""
    found: list[float] = []
    try:
        while len(found) < len(markers) and time.perf_counter() - start < timeout_s:
            ready, _, _ = select.select([master], [], [], 0.2)
            if not ready:
                continue
            try:
                seen += os.read(master, 1 << 16)
            except OSError:  # the child closed the terminal
                break
            while len(found) < len(markers) and markers[len(found)] in seen:
                found.append(time.perf_counter() - start)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        os.close(master)
        if output is not None:
            output += seen
    if len(found) < len(markers):
        tail = seen[-2000:].decode("utf-8", "replace")
        raise RuntimeError(f"{argv[:2]}: {markers[len(found)]!r} never appeared; output ended with {tail!r}")
    return found


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", nargs="?", type=int, default=21, help="rounds; default 21")
    rounds = parser.parse_args().rounds
    opencli = shutil.which("opencli-tui", path=str(Path(sys.executable).parent)) or "opencli-tui"
    with tempfile.TemporaryDirectory() as ws, tempfile.TemporaryDirectory() as data, \
            tempfile.TemporaryDirectory() as pycache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPYCACHEPREFIX=pycache, OPENCLI_DATA_DIR=data, TERM="xterm-256color",
                   COLUMNS=str(COLUMNS), LINES=str(LINES))
        bare_argv = [sys.executable, "-c", BARE_APP]
        ours_argv = [opencli, "-C", ws, "--model", "openai/gpt-4.1"]
        ours_markers = [b"esc cancel", b"gpt-4.1"]
        time_to_output(bare_argv, [b"hello"], env)  # warm-up: bytecode cache and file cache
        time_to_output(ours_argv, ours_markers, env)
        bare, ours, shown = [], [], []
        for _ in range(rounds):
            bare.append(time_to_output(bare_argv, [b"hello"], env)[0])
            painted, ready = time_to_output(ours_argv, ours_markers, env)
            ours.append(painted)
            shown.append(ready)
        probe = bytearray()  # on a terminal too: the TUI refuses to start without one
        time_to_output([sys.executable, "-c", LITELLM_PROBE, ws], [b"PAINTED"], env, timeout_s=60, output=probe)
    b, o, r = statistics.median(bare), statistics.median(ours), statistics.median(shown)

    def spread(values: list[float]) -> str:
        return f"(min {min(values) * 1000:.1f}, max {max(values) * 1000:.1f})"

    print(f"rounds: {rounds}, each app on a {COLUMNS}x{LINES} pseudo-terminal, bytecode cached")
    print(f"bare Textual app        : median {b * 1000:7.1f} ms  {spread(bare)}")
    print(f"opencli-tui first paint : median {o * 1000:7.1f} ms  {spread(ours)}")
    paired = statistics.median(ours_t / bare_t for ours_t, bare_t in zip(ours, bare))
    print(f"ratio                   : {o / b:.2f}x of the medians, {paired:.2f}x median of the rounds' ratios "
          f"(goal <= 1.30x)")
    print(f"opencli-tui session shown (model in the status bar): median {r * 1000:.1f} ms  {spread(shown)}")
    leaked = b"PAINTED True" in probe
    print(f"litellm imported before first paint: {'YES (bad)' if leaked else 'no'}")


if __name__ == "__main__":
    main()
