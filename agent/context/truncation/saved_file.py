"""The saved full output of a tool call: its file name, creating its file (0600, a fresh name per
call) and describing why a save failed.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

from ...secrets.private_files import private_dir


def close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


_UNSAFE_IN_NAME = re.compile(r"[^A-Za-z0-9_-]")


def safe_call_id(call_id: str, fallback: str = "call") -> str:
    """``call_id`` as a file-name part: characters other than ASCII letters, digits, ``-`` and
    ``_`` become ``_``, at most 64 of them (``fallback`` when nothing is left)."""
    return _UNSAFE_IN_NAME.sub("_", call_id)[:64] or fallback


def create_output_file(output_dir: Path, call_id: str) -> tuple[int, str]:
    """Create ``tool-output-<call_id>.txt`` (0600) in ``output_dir`` (made 0700 with its missing
    parents); return (descriptor, path)."""
    private_dir(output_dir)
    stem = safe_call_id(call_id, fallback=uuid.uuid4().hex[:12])
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for attempt in range(1, 1000):
        suffix = "" if attempt == 1 else f"-{attempt}"
        path = output_dir / f"tool-output-{stem}{suffix}.txt"
        try:
            fd = os.open(path, flags, 0o600)
        except FileExistsError:
            continue
        return fd, str(path)
    raise FileExistsError(f"too many saved outputs named tool-output-{stem}*.txt in {output_dir}")


def describe_os_error(exc: OSError) -> str:
    where = f": {exc.filename}" if exc.filename else ""
    return f"{exc.strerror or type(exc).__name__}{where}"
