"""``TaskBatch``: the bounded FIFO pool behind parallel ``task`` calls."""

from __future__ import annotations

import queue
import threading
import time

from agent.loop.parallel_tasks import TaskBatch
from agent.tools.base import ToolOutput


def test_a_job_submitted_while_a_worker_finds_the_queue_empty_still_runs():
    class SlowEmpty(queue.Queue):
        """Holds a worker that found the queue empty for a moment, so a submit comes in then."""

        def __init__(self) -> None:
            super().__init__()
            self.found_empty = threading.Event()

        def get_nowait(self):
            try:
                return super().get_nowait()
            except queue.Empty:
                self.found_empty.set()
                time.sleep(0.2)
                raise

    batch = TaskBatch(1)
    batch._queue = SlowEmpty()
    batch.submit(lambda: ToolOutput(text="one"))
    assert batch._queue.found_empty.wait(5)
    second = batch.submit(lambda: ToolOutput(text="two"))
    assert second.result(timeout=5).text == "two"  # a hang guard: it must not wait for a worker forever


def test_jobs_start_in_submission_order_and_at_most_max_parallel_run():
    started: list[int] = []
    lock = threading.Lock()
    batch = TaskBatch(2)

    def job(n: int):
        def run() -> ToolOutput:
            with lock:
                started.append(n)
            time.sleep(0.05)
            return ToolOutput(text=str(n))
        return run

    futures = [batch.submit(job(n)) for n in range(6)]
    assert [batch.wait(f, threading.Event()).text for f in futures] == [str(n) for n in range(6)]
    # The first two submitted are the first two started (two workers take them at once, so
    # which of the two appends first is a race) and every job ran once.
    assert sorted(started[:2]) == [0, 1] and sorted(started) == list(range(6))
    assert batch.peak == 2 and all(batch.duration_s(f) is not None for f in futures)


def test_a_failing_job_becomes_an_error_result():
    batch = TaskBatch(1)

    def boom() -> ToolOutput:
        raise RuntimeError("bad")

    output = batch.wait(batch.submit(boom), threading.Event())
    assert output.is_error and "RuntimeError: bad" in output.text
