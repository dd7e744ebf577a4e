"""Crash reports: the traceback of an uncaught exception, written to a private file.

``write_crash_report`` puts it in the user's state folder (platformdirs ``user_state_dir``,
``opencli/crash-<UTC timestamp>.txt``; ``XDG_STATE_HOME`` moves it on Linux), the file 0600 in a
0700 folder, and returns its path for the one line printed on stderr (``crash_line``).
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path


def crash_dir() -> Path:
    """The folder of crash reports (not created)."""
    import platformdirs

    return Path(platformdirs.user_state_dir()) / "opencli"


def write_crash_report(exc: BaseException, *, where: str = "") -> Path | None:
    """Write ``exc``'s traceback (with the Python version, the command line and ``where``, e.g.
    ``tui`` or ``run``) to a new crash file and return its path; None when it cannot be written
    (the error then goes only to stderr). Never raises."""
    try:
        folder = crash_dir()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        path = folder / f"crash-{stamp}-{os.getpid()}.txt"
        text = (f"opencli-tui crash ({where or 'unknown'}) at {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n"
                f"python {sys.version.split()[0]} on {sys.platform}; argv: {sys.argv!r}\n\n"
                + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
        try:
            from agent.secrets.redact import redact_text

            text = redact_text(text)  # a traceback may quote a key (argv, an exception's message)
        except Exception:  # noqa: BLE001 - the report matters more than its redaction
            pass
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as handle:
            handle.write(text)
        return path
    except Exception:  # noqa: BLE001 - a report about a crash must not crash
        return None


def crash_line(exc: BaseException, path: Path | None) -> str:
    """The one stderr line for a crash: what failed and where the traceback is."""
    what = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    where = f"; the traceback is in {path}" if path is not None else "; the traceback could not be saved"
    return f"opencli-tui: crashed: {what}{where}"
