"""Throughput and peak memory of the bash tool on large output, next to ``cat FILE | cat``.

For each size (default 16 MB and 256 MB) a text data file is generated once in a temporary
folder (lines of varied ASCII/UTF-8 text). Each measurement runs in a fresh Python subprocess,
so peak-memory figures are comparable between sizes:

- ``tool``: ``cat FILE`` through ``ToolRegistry.execute`` -> ``BashTool.run`` with a
  ``ToolContext``, exactly as the agent runs it (the full output is saved to a file, the
  model-facing text is middle-truncated). Peak memory is the high-water RSS of that process
  (``VmHWM``, the process doing the reading), shown with its RSS before the call.
- ``cat|cat``: ``bash -c 'cat FILE | cat > /dev/null'`` on the same file; its peak is the
  largest child RSS (``RUSAGE_CHILDREN``).

Printed per size: MB/s of both (best of ``--repeat`` runs, alternating the two), the ratio
(goal: tool >= 50% of cat|cat), the CPU time of the tool's process in its best run (all its
threads; the command's own processes not included) and peak memory (goal: the tool's peak is
the same at 16 MB and 256 MB). MB = 2**20 bytes. The data and saved outputs are deleted at the end.

Usage: python benchmarks/bash_output.py [--sizes 16,256] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MB = 1 << 20


def make_data(path: Path, size_mb: int) -> None:
    """Write ``size_mb`` MiB of newline-terminated text lines (some UTF-8) to ``path``."""
    lines = []
    for i in range(4096):
        width = 20 + (i * 37) % 120
        word = "λx" if i % 17 == 0 else "data"
        lines.append(f"{i:06d} {word} " + ("abcdefghij" * 13)[:width] + "\n")
    block = "".join(lines).encode("utf-8")
    target = size_mb * MB
    with open(path, "wb") as fh:
        written = 0
        while written < target:
            piece = block[: target - written]
            fh.write(piece)
            written += len(piece)
        fh.flush()
        os.fsync(fh.fileno())  # no writeback of the fresh file competing with the measurements


def _vm_hwm_kb() -> int:
    """High-water RSS of this process in KiB (``/proc/self/status`` VmHWM, else ru_maxrss)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _vm_rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def child_tool(data: Path, workdir: Path) -> dict:
    """Run ``cat DATA`` through the registry's bash tool; return timing and memory figures."""
    import threading

    from agent.messages import ToolCall
    from agent.tools.base import ToolContext
    from agent.tools.registry import ToolRegistry, default_tools

    registry = ToolRegistry(default_tools(include_think=False))
    out_dir = workdir / "out"
    ctx = ToolContext(workspace=workdir, output_dir=out_dir, cancel=threading.Event(),
                      max_output_chars=20000, bash_timeout_s=600.0)
    call = ToolCall(id="bench", name="bash", arguments=json.dumps({"command": f"cat {data}"}))
    rss_before = _vm_rss_kb()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    output = registry.execute(call, ctx)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
    saved = output.saved_path
    ok = (not output.is_error and output.truncated and saved is not None
          and os.path.getsize(saved) == data.stat().st_size)
    if saved:
        os.unlink(saved)
    return {"seconds": elapsed, "cpu_s": cpu, "peak_kb": _vm_hwm_kb(), "rss_before_kb": rss_before, "ok": ok,
            "lines": output.metadata.get("output_lines"), "text_chars": len(output.text)}


def child_cat(data: Path) -> dict:
    """Time ``cat DATA | cat > /dev/null``; peak memory is the largest RSS among its processes.

    The peak comes from ``/usr/bin/time -f %M`` when installed (Linux carries ``ru_maxrss``
    across ``execve``, so ``RUSAGE_CHILDREN`` here would report this interpreter's own size);
    it is measured in a separate run so the timed run has no extra process.
    """
    command = ["bash", "-c", f"cat '{data}' | cat > /dev/null"]
    started = time.perf_counter()
    subprocess.run(command, check=True)
    elapsed = time.perf_counter() - started
    peak_kb = None
    if os.access("/usr/bin/time", os.X_OK):
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", *command], check=True,
                              capture_output=True, text=True)
        peak_kb = int(proc.stderr.strip().splitlines()[-1])
    return {"seconds": elapsed, "peak_kb": peak_kb, "ok": True}


def _mb(kb: int | None) -> str:
    return "n/a" if kb is None else f"{kb / 1024:.1f}MB"


def measure(kind: str, data: Path, workdir: Path) -> dict:
    """Run one measurement in a fresh interpreter and return its JSON figures."""
    proc = subprocess.run([sys.executable, __file__, "--child", kind, str(data), str(workdir)],
                          check=True, capture_output=True, text=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="16,256", help="comma-separated sizes in MiB")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each kind per size")
    parser.add_argument("--child", nargs=3, metavar=("KIND", "DATA", "WORKDIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, data, workdir = args.child
        result = child_tool(Path(data), Path(workdir)) if kind == "tool" else child_cat(Path(data))
        print(json.dumps(result))
        return

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    tmp = Path(tempfile.mkdtemp(prefix="opencli-bench-bash-", dir="/tmp"))
    try:
        print(f"bash tool vs cat FILE | cat > /dev/null  (best of {args.repeat}; MB = MiB)")
        print(f"{'size':>6} {'tool MB/s':>10} {'cat MB/s':>10} {'ratio':>7} {'tool CPU':>9} "
              f"{'tool peak':>10} {'(before)':>9} {'cat peak':>9}  check")
        for size in sizes:
            data = tmp / f"data-{size}mb.txt"
            make_data(data, size)
            subprocess.run(["cat", str(data)], stdout=subprocess.DEVNULL, check=True)  # warm cache
            tool_runs, cat_runs = [], []
            for _ in range(args.repeat):
                cat_runs.append(measure("cat", data, tmp))
                tool_runs.append(measure("tool", data, tmp))
            tool = min(tool_runs, key=lambda r: r["seconds"])
            cat = min(cat_runs, key=lambda r: r["seconds"])
            tool_mbs = size / tool["seconds"]
            cat_mbs = size / cat["seconds"]
            peak = max(r["peak_kb"] for r in tool_runs) / 1024
            check = "ok" if all(r["ok"] for r in tool_runs) else "FAILED (output not saved whole)"
            print(f"{size:>4}MB {tool_mbs:>10.0f} {cat_mbs:>10.0f} {tool_mbs / cat_mbs:>6.0%} "
                  f"{tool['cpu_s'] * 1000:>7.0f}ms "
                  f"{peak:>8.1f}MB {tool['rss_before_kb'] / 1024:>7.1f}MB "
                  f"{_mb(cat['peak_kb']):>9}  {check}")
            data.unlink()
        print("goal: tool >= 50% of cat|cat throughput; tool peak memory the same at every size")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
