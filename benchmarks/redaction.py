"""Speed of the on-disk redaction (``agent.secrets``) on a 5 MB tool output.

Three kinds of 5 MB (10**6 bytes per MB) output are generated: build-log-like text with no secret,
source code (words such as ``key``, ``token`` and ``password`` appear, so the keyword patterns
run), and the same code with a secret every 100 lines (an ``sk-`` key, a URL password, an AWS key).
Each is redacted as bytes (the saved output, in 1 MiB chunks through ``StreamRedactor``) and as
text (a journal record), best of ``--repeat`` runs. Printed: CPU seconds and MB/s for each, and
how many replacements were made.

Usage: python benchmarks/redaction.py [--repeat 3] [--mb 5]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.secrets.redact import Redactor  # noqa: E402
from agent.secrets.stream import StreamRedactor  # noqa: E402

CHUNK = 1 << 20


def make_output(kind: str, size: int) -> bytes:
    rng = random.Random(7)
    if kind == "log":
        words = ["building", "wheel", "for", "module", "passed", "ok", "tests/test_a.py::test_b", "[100%]",
                 "3f786850e387550fdab836ed7e6dc881de23001b", "collected", "warning:", "src/app.py:12"]
    else:
        words = ["def", "return", "self.key", "token_count", "password_hash(", "if", "else:", "import", "os",
                 "config['api_key']", "value", "=", "(x)", "# comment", "for", "in", "range(10):"]
    lines = []
    total = 0
    n = 0
    while total < size:
        n += 1
        line = " ".join(rng.choice(words) for _ in range(10))
        if kind == "secrets" and n % 100 == 0:
            line += rng.choice([" sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2", " postgres://app:hunter2pass@db/app",
                                " AKIAIOSFODNN7EXAMPLE"])
        lines.append(line)
        total += len(line) + 1
    return ("\n".join(lines) + "\n").encode()[:size]


def best(repeat: int, call) -> float:
    """The smallest CPU time (seconds) of ``repeat`` calls: CPU, not wall time, so that other
    work on a shared machine does not count."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        call()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mb", type=float, default=5.0)
    args = parser.parse_args()
    size = int(args.mb * 1e6)
    redactor = Redactor(environ={"BENCH_TOKEN": "bench-secret-value-123"})
    redactor.text("warm up")
    print(f"redaction of a {args.mb:g} MB output (best of {args.repeat}); {len(redactor._patterns)} patterns")
    for kind in ("log", "code", "secrets"):
        data = make_output(kind, size)
        text = data.decode("utf-8", "replace")

        def stream() -> bytes:
            s = StreamRedactor(redactor)
            return b"".join(s.feed(data[i:i + CHUNK]) for i in range(0, len(data), CHUNK)) + s.flush()

        as_bytes = best(args.repeat, stream)
        as_text = best(args.repeat, lambda: redactor.text(text))
        replaced = stream().count(b"[redacted ")
        print(f"  {kind:8} saved output (bytes): {as_bytes:6.3f} s CPU {size / 1e6 / as_bytes:6.1f} MB/s   "
              f"journal text: {as_text:6.3f} s CPU {size / 1e6 / as_text:6.1f} MB/s   replacements: {replaced}")


if __name__ == "__main__":
    main()
