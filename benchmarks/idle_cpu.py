"""Idle CPU of the open TUI, and event-loop lag while litellm imports at start-up (issue 18).

The TUI (``opencli-tui --model openai/gpt-4.1 --api-base http://127.0.0.1:9/v1``: a real litellm
session whose server is never asked anything; config and session data in temporary folders, a
small git workspace) runs on its own 160x48 pseudo-terminal through ``peer_stream.py``'s lag
probe (an asyncio task re-arming every 10 ms, recording how late it woke; here it stops after the
start-up window, so its own cost is not counted as idle). Nothing is typed.
Printed per round and as median (min-max) over ``--rounds``:

- first paint (s);
- event-loop lag p99 (ms) from the first paint for ``--startup`` seconds (default 8: the import
  of litellm, which starts in a thread right after the first paint, and the session's start):
  goal <= 33 ms;
- CPU of the process tree from ``--idle-from`` seconds after the spawn (default 30) for
  ``--idle-for`` seconds (default 30), as a percentage of one core: goal <= 1%;
- RSS at the end (MB).

Nothing is asserted. Usage: python benchmarks/idle_cpu.py [--rounds N] [--startup S]
[--idle-from S] [--idle-for S]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from peer_stream import LAG_WRAPPER, Terminal, p99, tree_cpu, tree_rss_mb  # noqa: E402

#: ``peer_stream``'s probe, stopping after $LAG_SECONDS (so its own ~1% of a core is not idle CPU).
PROBE = LAG_WRAPPER.replace("    while True:\n", "    end = time.monotonic() + float(os.environ['LAG_SECONDS'])\n"
                                                "    while time.monotonic() < end:\n", 1)
assert PROBE != LAG_WRAPPER, "peer_stream.LAG_WRAPPER changed: update PROBE"


def one_round(startup_s: float, idle_from_s: float, idle_for_s: float) -> dict[str, float]:
    """One run of the TUI, left alone; returns first_paint (s), startup_lag_p99_ms, idle_cpu_pct
    (% of one core) and rss_mb."""
    with tempfile.TemporaryDirectory() as tmp:
        ws, lag_file = Path(tmp) / "ws", Path(tmp) / "lag.txt"
        ws.mkdir()
        (ws / "main.py").write_text("print('hello')\n")
        subprocess.run(["git", "init", "-q", str(ws)], check=True)
        subprocess.run(["git", "-C", str(ws), "add", "."], check=True)
        subprocess.run(["git", "-C", str(ws), "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "one"],
                       check=True)
        Path(tmp, "none.toml").write_text("")
        env = dict(os.environ, TERM="xterm-256color", COLUMNS="160", LINES="48",
                   OPENCLI_DATA_DIR=str(Path(tmp) / "data"), OPENCLI_CONFIG=str(Path(tmp) / "none.toml"),
                   XDG_CONFIG_HOME=str(Path(tmp) / "config"), LAG_FILE=str(lag_file),
                   OPENAI_API_KEY="sk-benchmark", LITELLM_LOCAL_MODEL_COST_MAP="True",
                   LAG_SECONDS=str(startup_s + 2),
                   PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        argv = [sys.executable, "-c", PROBE, "-C", str(ws), "--model", "openai/gpt-4.1",
                "--api-base", "http://127.0.0.1:9/v1"]
        term = Terminal(argv, env, ws)
        out: dict[str, float] = {}
        try:
            painted = term.wait_for(b"esc cancel", 60)
            out["first_paint"] = painted - term.started
            term.drain(max(0.0, term.started + idle_from_s - time.monotonic()))
            cpu0, t0 = tree_cpu(term.proc.pid), time.monotonic()
            term.drain(idle_for_s)
            out["idle_cpu_pct"] = (tree_cpu(term.proc.pid) - cpu0) / (time.monotonic() - t0) * 100
            out["rss_mb"] = tree_rss_mb(term.proc.pid)
            lags = []
            if lag_file.exists():
                for line in lag_file.read_text().splitlines():
                    due, late = map(float, line.split())
                    if painted <= due <= painted + startup_s:
                        lags.append(late)
            out["startup_lag_p99_ms"] = p99(lags) * 1000 if lags else float("nan")
        finally:
            term.close()
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--rounds", type=int, default=3, help="rounds; default 3")
    parser.add_argument("--startup", type=float, default=8.0, help="seconds after the first paint for the lag; default 8")
    parser.add_argument("--idle-from", type=float, default=30.0, help="idle window start, s after spawn; default 30")
    parser.add_argument("--idle-for", type=float, default=30.0, help="idle window length, s; default 30")
    args = parser.parse_args()
    rounds = []
    for r in range(args.rounds):
        rounds.append(one_round(args.startup, args.idle_from, args.idle_for))
        print(f"round {r + 1}: " + ", ".join(f"{k} {v:.2f}" for k, v in rounds[-1].items()), flush=True)

    def spread(key: str) -> str:
        values = [r[key] for r in rounds]
        return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"

    print(f"\n{args.rounds} rounds, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}:")
    print(f"  first paint (s)                    : {spread('first_paint')}")
    print(f"  lag p99 in the first {args.startup:.0f} s (ms)     : {spread('startup_lag_p99_ms')} (goal <= 33)")
    print(f"  idle CPU, {args.idle_from:.0f}-{args.idle_from + args.idle_for:.0f} s (% of a core): {spread('idle_cpu_pct')} (goal <= 1)")
    print(f"  RSS (MB)                           : {spread('rss_mb')}")


if __name__ == "__main__":
    main()
