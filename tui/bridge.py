"""The bridge between the synchronous agent core and the Textual event loop.

``AgentRunner`` runs ``session.prepare()`` and ``session.run_turn()`` in Textual thread workers.
Events emitted from the worker thread reach the UI as ``AgentEventMessage`` posted to the app
(``post_message`` is thread-safe and keeps order). Text and reasoning deltas go through a
``DeltaCoalescer`` first: adjacent deltas of one kind are merged and flushed at most every
``FLUSH_INTERVAL_S`` seconds (and before any other event), so a fast stream costs the UI a few
dozen messages a second instead of hundreds.

Messages posted to the app:
- ``AgentEventMessage(event)``: one agent event (deltas possibly merged).
- ``TurnEnded(result, error)``: the worker returned; ``result`` is the ``TurnFinished`` (or None
  when ``run_turn`` raised, then ``error`` holds one line).
- ``SessionOpened(session, notices)``: the app's start worker opened the session.
- ``SessionPrepared(context_window, error)``: ``prepare()`` finished (``error`` when it raised).
"""

from __future__ import annotations

import gc
import threading
import time
from typing import TYPE_CHECKING, Any, Callable

from textual.message import Message

from agent.gc_pause import pause_full_collections, resume_full_collections

if TYPE_CHECKING:
    from textual.app import App
    from textual.worker import Worker

    from .session_api import UISession

    # agent.events (pydantic models, ~100 ms to import) is imported where first used, after the
    # first paint, never at module level.
    from agent.events import ReasoningDelta, TextDelta, TurnFinished


def _denied_by_cancel() -> Any:
    """The ``PermissionDecision`` given to questions still open when the user cancels."""
    from agent.events import PermissionDecision

    return PermissionDecision(allow=False, reason="cancelled by the user")

#: Seconds between two flushes of buffered deltas (30-50 ms, DESIGN.md 2).
FLUSH_INTERVAL_S = 0.04


_turn_paused_gc = False


def _pause_full_gc() -> None:
    """No automatic full (generation 2) garbage collection while a turn runs
    (``agent.gc_pause``: a full pass over a long conversation's objects stops the event loop for
    0.3-0.7 s, a visible freeze of a streaming reply). ``_resume_full_gc`` ends the pause when the
    turn is over."""
    global _turn_paused_gc
    if not _turn_paused_gc:
        _turn_paused_gc = True
        pause_full_collections()


def _resume_full_gc() -> None:
    """Undo ``_pause_full_gc`` (no-op when not paused) without a full pass: the young
    generations are collected (cheap) and the survivors frozen, so no automatic full collection
    re-scans them while the user works (a full pass over a long session takes up to a second).
    ``collect_when_idle`` runs the deferred full collection once the user has been idle."""
    global _turn_paused_gc
    if _turn_paused_gc:
        _turn_paused_gc = False
        resume_full_collections()


#: Seconds without input or a running turn after which frozen objects get their full collection.
IDLE_COLLECT_S = 20.0


def collect_when_idle(idle_s: float, busy: bool) -> bool:
    """Unfreeze and run one full collection when the app has been idle for ``IDLE_COLLECT_S``
    seconds (``idle_s``) and no turn runs (``busy``); returns True when it collected. Called by
    the app's idle timer, so the pause lands when nobody is typing."""
    if busy or idle_s < IDLE_COLLECT_S or gc.get_freeze_count() == 0:
        return False
    gc.unfreeze()
    gc.collect()
    return True


class AgentEventMessage(Message):
    """Carries one agent event from the worker thread to the UI."""

    def __init__(self, event: Any) -> None:
        super().__init__()
        self.event = event


class TurnEnded(Message):
    """The turn worker returned. ``result`` is the ``TurnFinished`` or None; ``error`` is one line
    when ``run_turn`` raised (a bug in the core; the UI still recovers)."""

    def __init__(self, result: TurnFinished | None, error: str | None = None, value: Any = None) -> None:
        super().__init__()
        self.result = result
        self.error = error
        self.value = value  # what a custom ``run`` returned (e.g. a PlanResult); None otherwise


class SessionOpened(Message):
    """The app's start worker opened the session (``tui/startup.open_session``): ``session`` (an
    ``AgentSession``) and ``notices`` (one line each, from loading the settings)."""

    def __init__(self, session: "UISession", notices: list[str]) -> None:
        super().__init__()
        self.session = session
        self.notices = notices


class SessionPrepared(Message):
    """``session.prepare()`` finished. ``context_window`` in tokens (None when unknown);
    ``error`` is one line when prepare raised."""

    def __init__(self, context_window: int | None, error: str | None = None) -> None:
        super().__init__()
        self.context_window = context_window
        self.error = error


class DeltaCoalescer:
    """Buffers text/reasoning deltas and posts them merged.

    ``post`` is called with each outgoing event (from whichever thread flushes). ``add`` is called
    from the agent thread for every event; ``flush`` posts what is buffered. A background ticker
    (``start``/``stop``) flushes deltas that would otherwise wait for the next event.
    Thread-safe: one lock guards the buffer and the posting order.
    """

    def __init__(self, post: Callable[[Any], None], interval_s: float = FLUSH_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._post = post
        self._interval = interval_s
        self._clock = clock
        self._lock = threading.Lock()
        from agent.events import ReasoningDelta, TextDelta

        self._delta_types = (TextDelta, ReasoningDelta)
        # Runs of same-kind deltas as (event type, text pieces); joined into one event per run
        # only when flushed (no new event and no string copy per delta).
        self._pending: list[tuple[type, list[str]]] = []
        self._oldest: float | None = None
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def add(self, event: Any) -> None:
        """Accept one event: deltas are buffered, anything else flushes the buffer then posts."""
        with self._lock:
            if isinstance(event, self._delta_types):
                if self._pending and self._pending[-1][0] is type(event):
                    self._pending[-1][1].append(event.text)
                else:
                    self._pending.append((type(event), [event.text]))
                if self._oldest is None:
                    self._oldest = self._clock()
                elif self._clock() - self._oldest >= self._interval:
                    self._flush_locked()
                return
            self._flush_locked()
            self._post(event)

    def flush(self, only_if_due: bool = False) -> None:
        """Post the buffered deltas; with ``only_if_due`` only when the oldest waited an interval."""
        with self._lock:
            if only_if_due and (self._oldest is None or self._clock() - self._oldest < self._interval):
                return
            self._flush_locked()

    def _flush_locked(self) -> None:
        pending, self._pending, self._oldest = self._pending, [], None
        for kind, pieces in pending:
            self._post(kind(text="".join(pieces)))

    def start(self) -> None:
        """Start the ticker thread that flushes stale deltas every interval."""
        self._stop.clear()
        self._ticker = threading.Thread(target=self._tick, name="opencli-delta-flush", daemon=True)
        self._ticker.start()

    def stop(self) -> None:
        """Stop the ticker and flush what is left."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=1.0)
            self._ticker = None
        self.flush()

    def _tick(self) -> None:
        while not self._stop.wait(self._interval / 2):
            self.flush(only_if_due=True)


class AgentRunner:
    """Runs the agent session in Textual thread workers on behalf of ``app``.

    - ``prepare()`` starts ``session.prepare()`` (slow: imports litellm) in a worker; call it after
      the first paint. Turns wait for it to finish.
    - ``start_turn(prompt)`` runs one turn in a worker; returns False when one is already running.
    - ``cancel()`` sets the cancel event and denies a pending permission request.
    """

    def __init__(self, app: "App", session: "UISession | None") -> None:
        self.app = app
        self.session = session
        self.cancel_event = threading.Event()
        self._prepared = threading.Event()
        self._turn_worker: "Worker | None" = None
        self._busy = False
        self._pending_permissions: set[Any] = set()
        self._lock = threading.Lock()
        self._op_lock = threading.Lock()
        self._ops_pending = 0

    # -- state -------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True from ``start_turn`` until the UI handled the turn's ``TurnEnded`` (``turn_ended``)."""
        return self._busy

    def turn_ended(self) -> None:
        """Mark the turn over; the UI calls this when it handles ``TurnEnded``."""
        self._busy = False
        _resume_full_gc()

    @property
    def cancelling(self) -> bool:
        """True after ``cancel()`` until the running turn ends."""
        return self.running and self.cancel_event.is_set()

    @property
    def prepared(self) -> bool:
        """True once ``session.prepare()`` returned (or failed)."""
        return self._prepared.is_set()

    # -- prepare and other session operations ------------------------------------------------
    def prepare(self) -> None:
        """Run ``session.prepare()`` in a thread worker, then warm up the markdown renderer (its
        imports would otherwise stall the first reply); posts ``SessionPrepared`` when done."""
        def prepare_and_warm_up() -> None:
            self.session.prepare()
            from .widgets.flat_markdown import warm_up  # imported here, off the event loop

            warm_up()

        self.run_session_op(prepare_and_warm_up)

    def run_session_op(self, operation: Callable[[], Any]) -> None:
        """Run a slow session operation (prepare, set_model, clear) in a thread worker.

        Turns started meanwhile wait for it. Posts ``SessionPrepared`` when it is done.
        """
        with self._lock:
            self._ops_pending += 1
            self._prepared.clear()
        self.app.run_worker(lambda: self._session_op_work(operation), thread=True, name="session-op",
                            group="session-op", exit_on_error=False)

    def _session_op_work(self, operation: Callable[[], Any]) -> None:
        error = None
        try:
            with self._op_lock:  # operations run one at a time, in order of arrival
                operation()
                self.session.prepare()  # idempotent; builds what set_model/clear dropped
            # prepare() imports litellm: ~800k long-lived objects that every full garbage
            # collection would scan again (a 0.4-0.7 s freeze of the UI every few seconds while a
            # reply streams). Move them out of the collector's sight.
            gc.freeze()
        except Exception as exc:  # noqa: BLE001 - shown to the user, the app keeps running
            error = f"{type(exc).__name__}: {exc}"
        finally:
            with self._lock:
                self._ops_pending -= 1
                if self._ops_pending == 0:
                    self._prepared.set()
        self.app.post_message(SessionPrepared(self.session.context_window if self.session else None, error))

    # -- turns -------------------------------------------------------------------------------
    def start_turn(self, prompt: str, run: Callable[[Callable[[Any], None], threading.Event], Any] | None = None) -> bool:
        """Start a turn in a thread worker. Returns False (and does nothing) if one is running.

        ``run(emit, cancel)``, when given, replaces ``session.run_turn(prompt, ...)`` (Plan mode's
        planning pass and plan execution); its return value goes out as ``TurnEnded.value`` and
        its ``.turn`` (or itself) as ``TurnEnded.result``.
        """
        return self._launch(lambda cancel: self._turn_work(prompt, cancel, run), "agent-turn")

    def _launch(self, work: Callable[[threading.Event], None], name: str) -> bool:
        """Start ``work(cancel)`` in the agent's thread worker unless a turn or job runs (False).
        Full garbage collections are paused until ``turn_ended``."""
        if self.running:
            return False
        cancel = self.cancel_event = threading.Event()
        self._busy = True
        _pause_full_gc()
        self._turn_worker = self.app.run_worker(lambda: work(cancel), thread=True, name=name,
                                                group="agent", exit_on_error=False)
        return True

    def _turn_work(self, prompt: str, cancel: threading.Event, run: Callable[..., Any] | None = None) -> None:
        coalescer = DeltaCoalescer(self._post_event)
        coalescer.start()
        result: TurnFinished | None = None
        error: str | None = None
        value: Any = None
        try:
            self._wait_prepared(cancel)
            if run is None:
                result = self.session.run_turn(prompt, coalescer.add, cancel)
            else:
                value = run(coalescer.add, cancel)
                result = getattr(value, "turn", value)
        except Exception as exc:  # noqa: BLE001 - a core bug must not kill the UI
            error = f"{type(exc).__name__}: {exc}"
        finally:
            coalescer.stop()
        self.app.post_message(TurnEnded(result, error, value))

    def _wait_prepared(self, cancel: threading.Event) -> None:
        """Block until the session's pending operations (prepare, set_model, clear) are done, or
        until ``cancel`` is set (checked every 50 ms)."""
        while not self._prepared.wait(0.05):
            if cancel.is_set():
                return

    def start_job(self, job: Callable[[Any, threading.Event], Any], name: str = "agent-job") -> bool:
        """Run ``job(emit, cancel)`` (e.g. ``/compact``: ``agent.compact``) in a thread worker like a
        turn: prompts typed meanwhile are queued, Esc cancels it, its events reach the UI in order
        and ``TurnEnded(None, error)`` follows. Returns False (and does nothing) if a turn runs."""
        return self._launch(lambda cancel: self._job_work(job, cancel), name)

    def _job_work(self, job: Callable[[Any, threading.Event], Any], cancel: threading.Event) -> None:
        error: str | None = None
        try:
            self._wait_prepared(cancel)
            if not cancel.is_set():
                job(self._post_event, cancel)
        except Exception as exc:  # noqa: BLE001 - a core bug must not kill the UI
            error = f"{type(exc).__name__}: {exc}"
        self.app.post_message(TurnEnded(None, error))

    def _post_event(self, event: Any) -> None:
        from agent.events import PermissionRequest

        if isinstance(event, PermissionRequest):
            with self._lock:
                self._pending_permissions.add(event.reply)
            event.reply.add_done_callback(self._forget_permission)
            if self.cancel_event.is_set():
                self._resolve(event.reply, _denied_by_cancel())
        self.app.post_message(AgentEventMessage(event))

    def _forget_permission(self, future: Any) -> None:
        with self._lock:
            self._pending_permissions.discard(future)

    @staticmethod
    def _resolve(future: Any, decision: Any) -> None:
        if not future.done():
            try:
                future.set_result(decision)
            except Exception:  # noqa: BLE001 - already resolved by another path
                pass

    def cancel(self) -> bool:
        """Ask the running turn to stop. Returns False when no turn is running."""
        if not self.running:
            return False
        self.cancel_event.set()
        with self._lock:
            pending = list(self._pending_permissions)
        for future in pending:
            self._resolve(future, _denied_by_cancel())
        return True
