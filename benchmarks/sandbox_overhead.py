"""Milliseconds to start and finish one command sandboxed against unsandboxed.

Both run ``/bin/true`` (and ``bash -c true``) through ``agent.process.run_streaming`` exactly as
the bash tool starts commands: under the subreaper supervisor, once without a sandbox and once
under each sandbox mode (read-only with the network denied; workspace-write with a workspace
folder). Runs alternate between the variants to share the machine's noise; printed per command:
the median and the 10th percentile of each (ms), and the sandbox's overhead over unsandboxed
(median minus median, ms; goal: under 5 ms). These end-to-end figures carry the machine's noise
(the agent polls its commands), so the sandbox's own cost is also measured directly: in a fresh
``python -I -S`` process like the supervisor, the import of ``agent/sandbox/confine.py`` once,
then per command fork + exec of ``/bin/true`` + wait, plain against building the ruleset and
confining the child first (medians of ``--runs``, ms). Linux with Landlock only.

Usage: python benchmarks/sandbox_overhead.py [--runs 60]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.process import run_streaming  # noqa: E402
from agent.sandbox import SandboxMode, SandboxPolicy, probe  # noqa: E402


def _once(argv: list[str], cwd: Path, options: list[str]) -> float:
    started = time.perf_counter()
    result = run_streaming(argv, cwd=cwd, sink=lambda chunk: None, cancel=threading.Event(), timeout_s=30,
                           sandbox=options)
    elapsed = (time.perf_counter() - started) * 1000
    if result.returncode != 0:
        raise SystemExit(f"{argv} failed under {options or 'no sandbox'}: {result.returncode}")
    return elapsed


_DIRECT = r"""
import os, sys, time, ctypes  # the supervisor imports ctypes anyway (subreaper)
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
import confine
imported = (time.perf_counter() - t0) * 1000
def run(sandboxed):
    start = time.perf_counter()
    if sandboxed:
        confine.drop_capabilities()  # the supervisor does this on itself (root: once it has run, cheap)
        ruleset = confine.build_ruleset([sys.argv[2], sys.argv[3]], False)
        program = confine.seccomp_program(False, False)
    pid = os.fork()
    if pid == 0:
        if sandboxed:
            confine.restrict(ruleset, program)
        os.execv("/bin/true", ["/bin/true"])
    if sandboxed:
        os.close(ruleset)
    os.waitpid(pid, 0)
    return (time.perf_counter() - start) * 1000
plain, boxed = [], []
for _ in range(int(sys.argv[4])):
    plain.append(run(False))
    boxed.append(run(True))
plain.sort(); boxed.sort()
print(imported, plain[len(plain) // 2], boxed[len(boxed) // 2])
"""


def _direct(root: Path, runs: int) -> tuple[float, float, float]:
    """(import ms, plain fork+exec+wait ms, sandboxed ms) measured in a ``python -I -S`` child."""
    import subprocess

    folder = str(Path(__file__).resolve().parent.parent / "agent" / "sandbox")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", _DIRECT, folder, str(root / "ws"), str(root / "private"),
                          str(runs)], capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    support = probe()
    if not support.available:
        print(f"no sandbox here: {support.reason}")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ws").mkdir()
        (root / "private").mkdir()
        variants = {
            "unsandboxed": [],
            "read-only": SandboxPolicy(SandboxMode.READ_ONLY, str(root / "private")).supervisor_args(),
            "workspace-write": SandboxPolicy(SandboxMode.WORKSPACE_WRITE, str(root / "private"),
                                             writable=(str(root / "ws"),), network=True).supervisor_args(),
        }
        print(f"Landlock ABI {support.abi}, seccomp {'on' if support.seccomp else 'off'}, {args.runs} runs each")
        for argv in (["/bin/true"], [shutil.which("bash") or "/bin/bash", "-c", "true"]):
            times: dict[str, list[float]] = {name: [] for name in variants}
            for name, options in variants.items():  # warm-up
                _once(argv, root / "ws", options)
            for _ in range(args.runs):
                for name, options in variants.items():
                    times[name].append(_once(argv, root / "ws", options))
            base = statistics.median(times["unsandboxed"])
            print(f"\n{' '.join(argv)}")
            for name, values in times.items():
                p10 = statistics.quantiles(values, n=10)[0]
                median = statistics.median(values)
                extra = "" if name == "unsandboxed" else f"   overhead {median - base:+.2f} ms"
                print(f"  {name:16} median {median:6.2f} ms   p10 {p10:6.2f} ms{extra}")
        imported, plain, boxed = _direct(root, max(args.runs, 100))
        print(f"\ndirect, in a python -I -S process: import of confine {imported:.2f} ms (once per command);"
              f"\n  fork+exec+wait /bin/true: plain {plain:.2f} ms, sandboxed {boxed:.2f} ms "
              f"(+{boxed - plain:.2f} ms); per command in all: +{boxed - plain + imported:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
