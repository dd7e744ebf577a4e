"""Running the ``task`` calls of one step in parallel, at most N at a time, first asked first run.

``TaskBatch`` takes jobs (callables returning a ``ToolOutput``) in call order and runs them on up
to ``max_parallel`` daemon threads pulling from one FIFO queue; each job gets a
``concurrent.futures.Future``. The loop then answers the step's calls in order, waiting for each
task's future where its turn comes (``TaskBatch.wait``), so the results land in the calls' order
whatever order the sub-agents finish in. ``stop`` is an event of the batch the loop sets when the
rest of the step is not to run (a guard stop); Esc reaches the jobs through the turn's own
cancel handle. Events the jobs emit go through ``serialized(emit)``: one at a time.
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Callable

from ..events import Emit
from ..tools.base import ToolOutput

#: How long the loop waits for a job after the turn was cancelled before answering without it
#: (seconds): a sub-agent stops within its tools' stop grace, this is a last resort.
CANCEL_WAIT_S = 15.0
#: The result of a job abandoned after ``CANCEL_WAIT_S``.
ABANDONED_TEXT = "Cancelled by user: the sub-agent did not stop in time and was abandoned. Do not retry unless asked."


def serialized(emit: Emit) -> Emit:
    """``emit`` behind a lock, for events sent from several threads at once."""
    lock = threading.Lock()

    def send(event) -> None:
        with lock:
            emit(event)

    return send


class TaskBatch:
    """The parallel jobs of one step (see the module docstring). ``max_parallel`` >= 1."""

    def __init__(self, max_parallel: int) -> None:
        self.max_parallel = max(1, int(max_parallel))
        self.stop = threading.Event()
        self._queue: queue.Queue[tuple[Future, Callable[[], ToolOutput]]] = queue.Queue()
        self._workers = 0
        self._lock = threading.Lock()
        #: Run time of each finished job, by its future (seconds), for the call's duration.
        self.durations: dict[int, float] = {}
        #: Most jobs seen running at once (for tests and figures).
        self.peak = 0
        self._running = 0

    def submit(self, job: Callable[[], ToolOutput]) -> Future:
        """Queue ``job``; a worker starts it when one of the ``max_parallel`` slots is free."""
        future: Future = Future()
        with self._lock:  # with the workers' check for an empty queue: no job is left without one
            self._queue.put((future, job))
            if self._workers < self.max_parallel:
                self._workers += 1
                threading.Thread(target=self._work, name=f"task-worker-{self._workers}", daemon=True).start()
        return future

    def _work(self) -> None:
        while True:
            with self._lock:
                try:
                    future, job = self._queue.get_nowait()
                except queue.Empty:
                    self._workers -= 1
                    return
            if not future.set_running_or_notify_cancel():
                continue
            with self._lock:
                self._running += 1
                self.peak = max(self.peak, self._running)
            started = time.monotonic()
            try:
                output = job()
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting loop
                output = ToolOutput(text=f"task failed with an internal error: {type(exc).__name__}: {exc}",
                                    is_error=True)
            finally:
                with self._lock:
                    self._running -= 1
            self.durations[id(future)] = time.monotonic() - started
            future.set_result(output)

    def wait(self, future: Future, cancel: threading.Event) -> ToolOutput:
        """The job's result, once it has one. After ``cancel`` (or ``stop``) is set the job is
        given ``CANCEL_WAIT_S`` seconds more, then answered as abandoned."""
        given_up_at: float | None = None
        while True:
            try:
                return future.result(timeout=0.1)
            except FutureTimeout:
                pass
            if cancel.is_set() or self.stop.is_set():
                now = time.monotonic()
                given_up_at = given_up_at or now + CANCEL_WAIT_S
                if now >= given_up_at:
                    return ToolOutput(text=ABANDONED_TEXT, is_error=True, outcome="cancelled")

    def duration_s(self, future: Future) -> float | None:
        """The run time of the job of ``future`` (seconds), None while it has not finished."""
        return self.durations.get(id(future))
