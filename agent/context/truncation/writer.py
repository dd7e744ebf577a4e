"""The background thread that writes saved tool outputs while the pipe is read (one
single-worker executor for the process).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

#: A submitted write: ``done()`` polls, ``result()`` waits (it never raises: jobs record their own
#: failures).
WriteJob = Future


def _guarded(call: Callable[..., None], *args: Any) -> None:
    try:
        call(*args)
    except BaseException:  # noqa: BLE001 - jobs record their own failures; result() never raises
        pass


class _Writer:
    """One worker thread running jobs strictly in submission order (so each file's chunks are
    written in order)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="opencli-output-writer")

    def submit(self, call: Callable[..., None], *args: Any) -> WriteJob:
        return self._executor.submit(_guarded, call, *args)


_writer_lock = threading.Lock()
_writer: _Writer | None = None


def output_writer() -> _Writer:
    """The process-wide writer for saved outputs, started on first use (and again in a forked
    child, where the parent's thread does not exist)."""
    global _writer
    with _writer_lock:
        if _writer is None or _writer.pid != os.getpid():
            _writer = _Writer()
        return _writer
