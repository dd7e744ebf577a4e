"""The background thread that writes saved tool outputs while the pipe is read (one job queue for
the process).
"""

from __future__ import annotations

import os
import queue
import threading
from typing import Any, Callable


def _no_op(*_: Any) -> None:
    return None


class WriteJob:
    """One call run by the writer thread. ``done()`` polls, ``result()`` waits for it (it never
    raises: jobs record their own failures)."""

    __slots__ = ("_call", "_args", "_pending")

    def __init__(self, call: Callable[..., None], args: tuple) -> None:
        self._call = call
        self._args = args
        self._pending = threading.Lock()
        self._pending.acquire()  # released when the job has run

    def run(self) -> None:
        try:
            self._call(*self._args)
        except BaseException:  # noqa: BLE001 - a job must never kill the writer thread
            pass
        finally:
            self._call, self._args = _no_op, ()  # drop references (the output object) at once
            self._pending.release()

    def done(self) -> bool:
        return not self._pending.locked()

    def result(self) -> None:
        with self._pending:
            pass


class _Writer:
    """A daemon thread running jobs strictly in submission order (so each file's chunks are
    written in order). Lighter than a ``ThreadPoolExecutor`` and needs no extra imports."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[WriteJob] = queue.SimpleQueue()
        self.pid = os.getpid()
        self._thread = threading.Thread(target=self._run, name="opencli-output-writer", daemon=True)
        self._thread.start()

    def submit(self, call: Callable[..., None], *args: Any) -> WriteJob:
        job = WriteJob(call, args)
        self._jobs.put(job)
        return job

    def _run(self) -> None:
        while True:
            self._jobs.get().run()


_writer_lock = threading.Lock()
_writer: _Writer | None = None


def output_writer() -> _Writer:
    """The process-wide writer thread for saved outputs, started on first use (and again in a
    forked child, where the parent's thread does not exist)."""
    global _writer
    with _writer_lock:
        if _writer is None or _writer.pid != os.getpid():
            _writer = _Writer()
        return _writer
