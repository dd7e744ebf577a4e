"""The observability part of ``AgentSession``: the session log's sink in front of the UI's emit
(``observed``), the session's ``Spending`` with its budget, and the figures read from the log
(``stats``)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from ..events import Emit
    from ..observability.sink import LogSink
    from ..observability.spending import Spending
    from ..observability.stats import SessionStats

_lock = threading.Lock()


class SessionObserving:
    """Session log, spending and stats of ``AgentSession`` (keyed by the session id, so
    ``/clear`` starts a new log and a new total)."""

    #: Called with each log record's JSON line (``--debug`` in headless prints them to stderr).
    log_mirror: Callable[[str], None] | None = None
    _log_sink: "LogSink | None" = None
    _spending: "Spending | None" = None
    _spending_for: str | None = None

    @property
    def log_path(self) -> Path:
        """The session log, beside the journal: ``<sessions_dir>/<session_id>.log.jsonl``."""
        from ..observability.session_log import log_path_for

        return log_path_for(self.journal_path)

    def observed(self, emit: "Emit") -> "Emit":
        """``emit`` with the session log's sink in front of it (``observability.sink``): every
        event worth keeping is written to the log, then passed on. Already wrapped: as is."""
        if getattr(emit, "sink", None) is not None:
            return emit
        return self.log_sink().wrap(emit)

    def log_sink(self) -> "LogSink":
        """The sink writing this session's log (made on first use; a new one after ``/clear``)."""
        from ..config.files import user_data_dir
        from ..observability.session_log import SessionLog
        from ..observability.sink import LogSink, last_turn

        path = self.log_path
        with _lock:
            sink = self._log_sink
            if sink is None or sink.log.path != path:
                if sink is not None:
                    sink.log.close()
                sink = LogSink(SessionLog(path, root=user_data_dir()), turn=last_turn(path))
                self._log_sink = sink
            sink.mirror = self.log_mirror
            return sink

    def session_spending(self) -> "Spending":
        """The session's running total with the ``[budget]`` limits: one per session id, shared
        by every agent of the session (model switches, sub-agents). A resumed session starts
        from the totals in its log, so the budget covers the whole session."""
        from ..observability.spending import Spending
        from ..observability.stats import logged_totals

        with _lock:
            if self._spending is None or self._spending_for != self.session_id:
                tokens, cost = logged_totals(self.log_path)
                self._spending = Spending(tokens, cost)
                self._spending_for = self.session_id
                budget = self.settings.budget
                self._spending.limits(budget.max_tokens, budget.max_cost_usd)
            return self._spending

    def logged_turns(self) -> int:
        """The turns the session log holds (a resumed session numbers its turns on from there)."""
        from ..observability.sink import last_turn

        return last_turn(self.log_path)

    def stats(self) -> "SessionStats":
        """The session's figures read from its log (``observability.stats``), the resumed
        history included. Reads the file: call it off the UI thread for long sessions."""
        from ..observability.stats import read_stats

        return read_stats(self.log_path)
