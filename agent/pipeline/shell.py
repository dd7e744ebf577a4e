"""Running one user hook command: ``bash -c COMMAND`` in the workspace, in a process group of its
own, the event JSON on stdin, killed with its tree on its time limit or the caller's cancel."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..process import kill_process_tree

#: Bytes kept of each of stdout and stderr.
MAX_OUTPUT_BYTES = 64 * 1024
#: How often cancel and the deadline are checked (seconds).
POLL_S = 0.05


@dataclass(frozen=True)
class ShellResult:
    """How a hook command ended: ``returncode`` (None when it was killed), ``stdout`` / ``stderr``
    (decoded, at most ``MAX_OUTPUT_BYTES`` bytes each), ``timed_out``, ``cancelled``."""

    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    cancelled: bool = False


def run_hook_command(command: str, stdin_text: str, *, cwd: Path, timeout_s: float,
                     cancel: threading.Event) -> ShellResult:
    """Run ``command`` (see the module docstring) for at most ``timeout_s`` seconds. Raises
    ``OSError`` when bash cannot start."""
    proc = subprocess.Popen(["bash", "-c", command], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, env=_env())
    box: dict[str, bytes] = {}

    def talk() -> None:
        try:
            out, err = proc.communicate(stdin_text.encode("utf-8", "replace"))
        except (OSError, ValueError):
            out, err = b"", b""
        box["out"], box["err"] = out, err

    talker = threading.Thread(target=talk, name="hook-command", daemon=True)
    talker.start()
    deadline = time.monotonic() + timeout_s
    timed_out = cancelled = False
    while talker.is_alive():
        if cancel.is_set():
            cancelled = True
        elif time.monotonic() >= deadline:
            timed_out = True
        if cancelled or timed_out:
            kill_process_tree(proc, grace_s=0.5)
            talker.join(2.0)
            break
        talker.join(POLL_S)
    out, err = box.get("out", b""), box.get("err", b"")
    return ShellResult(None if (timed_out or cancelled) else proc.returncode,
                       out[-MAX_OUTPUT_BYTES:].decode("utf-8", "replace"),
                       err[-MAX_OUTPUT_BYTES:].decode("utf-8", "replace"), timed_out, cancelled)


def _env() -> dict[str, str]:
    """The environment of a hook: the user's own, secrets included (hooks come from the user's
    config only, like their shell's)."""
    return dict(os.environ)
