"""``/stats``: the session's figures in a modal screen, read from the session log (so a resumed
session shows its whole history): turns, model calls, tokens in/out and cached, cost, time in
the model and in tools, compactions and what they saved, sub-agents, hooks, and the slowest tool
calls. The log is read in a thread worker; until then the screen reads "Reading the session
log...". Esc or q closes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static
from textual.worker import Worker, WorkerState

if TYPE_CHECKING:
    from ..session_api import UISession


def stats_table(stats: Any) -> Table | Text:
    """The figures of ``stats`` (a ``SessionStats``) as a two-column table, then the slowest
    tool calls as a second table in its caption's place; a line for a session without calls."""
    from agent.observability.stats import slowest_rows, stats_rows

    if not (stats.model_calls or stats.turns):
        return Text("No model call yet in this session.", style="italic")
    table = Table(box=None, expand=False, padding=(0, 2, 0, 0), show_header=False)
    table.add_column("figure", style="bold", no_wrap=True)
    table.add_column("value")
    for label, value in stats_rows(stats):
        table.add_row(Text(label), Text(value))
    slow = slowest_rows(stats, 70)
    if slow:
        table.add_row(Text(""), Text(""))
        table.add_row(Text("slowest tools"), Text(""))
        for duration, call in slow:
            table.add_row(Text(duration, justify="right", style="dim"), Text(call))
    return table


class StatsScreen(ModalScreen[None]):
    """The ``/stats`` screen for ``session`` (its ``stats()``). ``stats`` holds the figures once
    read (None before)."""

    DEFAULT_CSS = """
    StatsScreen { align: center middle; }
    StatsScreen #stats-dialog {
        width: 96; max-width: 95%; height: auto; max-height: 90%;
        padding: 1 2; border: thick $primary; background: $panel;
    }
    StatsScreen #stats-title { text-style: bold; }
    StatsScreen #stats-hint { color: $text-muted; margin: 1 0 0 0; }
    """

    BINDINGS = [Binding("escape,q", "close", "Close")]

    def __init__(self, session: "UISession") -> None:
        super().__init__()
        self.session = session
        self.stats = None

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="stats-dialog"):
            yield Static(Text(f"Session stats · {self.session.session_id}"), id="stats-title", markup=False)
            yield Static(Text("Reading the session log..."), id="stats-table", markup=False)
            yield Static(Text("Esc closes this screen · the sidebar's Stats tab shows the same figures"),
                         id="stats-hint", markup=False)

    def on_mount(self) -> None:
        self.run_worker(self.session.stats, thread=True, name="session-stats", group="session-stats",
                        exit_on_error=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name != "session-stats":
            return
        table = self.query_one("#stats-table", Static)
        if event.state == WorkerState.SUCCESS:
            self.stats = event.worker.result
            table.update(stats_table(self.stats))
        elif event.state == WorkerState.ERROR:
            table.update(Text(f"Could not read the session log: {event.worker.error}"))

    def action_close(self) -> None:
        """Close the screen."""
        self.dismiss(None)
