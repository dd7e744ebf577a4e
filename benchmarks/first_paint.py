"""Time to first paint of opencli-tui against a bare Textual app, measured in the same run.

Each round starts a fresh Python process per app, headless, and records the wall time from the
spawn to the moment the app has painted its first frame (the child prints a marker from
``call_after_refresh`` after mount). Rounds alternate between the two apps; medians are printed
with the ratio (goal: opencli-tui <= 1.3x the bare app; litellm must not be imported before the
first paint, which the child also reports).

Usage: python benchmarks/first_paint.py [ROUNDS]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r'''
import sys, os
kind = sys.argv[1]
from textual.app import App
if kind == "bare":
    from textual.widgets import Static
    class Target(App):
        def compose(self):
            yield Static("hello")
    app_cls = Target
    kwargs = {}
else:
    from pathlib import Path
    from agent.config import load_settings
    from agent.runtime import build_session
    from tui.app import OpenCLIApp
    ws = Path(sys.argv[2])
    session = build_session(ws, load_settings(ws, {"model": "openai/gpt-4.1"}))
    app_cls = OpenCLIApp
    kwargs = {"session": session, "watch_themes": False}

class Probe(app_cls):
    if kind != "bare":
        import tui.app as _tui_app
        CSS_PATH = str(Path(_tui_app.__file__).with_name("app.tcss"))
    def on_mount(self):
        self.call_after_refresh(self._painted)
    def _painted(self):
        print("PAINTED", "litellm" in sys.modules, flush=True)
        os._exit(0)

Probe(**kwargs).run(headless=True, size=(120, 36))
'''


def one(kind: str, workspace: str) -> tuple[float, bool]:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, kind, workspace], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("PAINTED"):
            elapsed = time.perf_counter() - start
            litellm_loaded = line.split()[1] == "True"
            proc.kill()
            proc.wait()
            return elapsed, litellm_loaded
    raise RuntimeError(f"{kind} never painted: {proc.stderr.read() if proc.stderr else ''}")


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    with tempfile.TemporaryDirectory() as ws:
        one("bare", ws), one("opencli", ws)  # warm the file cache
        bare, ours, leaked = [], [], False
        for _ in range(rounds):
            bare.append(one("bare", ws)[0])
            t, loaded = one("opencli", ws)
            ours.append(t)
            leaked |= loaded
    b, o = statistics.median(bare), statistics.median(ours)
    print(f"bare Textual app : median {b * 1000:7.1f} ms  (min {min(bare) * 1000:.1f}, max {max(bare) * 1000:.1f})")
    print(f"opencli-tui      : median {o * 1000:7.1f} ms  (min {min(ours) * 1000:.1f}, max {max(ours) * 1000:.1f})")
    print(f"ratio            : {o / b:.2f}x  (goal <= 1.30x)")
    print(f"litellm imported before first paint: {'YES (bad)' if leaked else 'no'}")


if __name__ == "__main__":
    main()
