"""The context breakdown: what fills the model's context window, per category.

Opened from the context meter (click, or F2). The count (``session.context_breakdown()``, with
the request builder's own budget; "~": a local count, not the provider's) runs in a thread worker,
so a long history never blocks the UI; until it is done the screen reads "Measuring...". Esc, q or F2 closes it.
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

from ..widgets.context_meter import meter_bar
from ..widgets.token_count import format_tokens

if TYPE_CHECKING:
    from ..session_api import UISession


class ContextBreakdownScreen(ModalScreen[None]):
    """Token counts per category for ``session`` (its ``agent`` and ``context_window``).

    ``breakdown`` holds the ``ContextBreakdown`` once computed (None before, or when the session
    has no agent yet).
    """

    DEFAULT_CSS = """
    ContextBreakdownScreen { align: center middle; }
    ContextBreakdownScreen #breakdown-dialog {
        width: 100; max-width: 95%; height: auto; max-height: 90%;
        padding: 1 2; border: thick $primary; background: $panel;
    }
    ContextBreakdownScreen #breakdown-title { text-style: bold; }
    ContextBreakdownScreen #breakdown-hint { color: $text-muted; }
    """

    BINDINGS = [Binding("escape,q,f2", "close", "Close")]

    def __init__(self, session: "UISession") -> None:
        super().__init__()
        self.session = session
        self.breakdown = None

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="breakdown-dialog"):
            yield Static(Text("Context breakdown"), id="breakdown-title")
            yield Static(Text("Measuring..."), id="breakdown-table", markup=False)
            yield Static(Text("Esc closes this screen · /compact [focus] compacts now"), id="breakdown-hint",
                         markup=False)

    def on_mount(self) -> None:
        self.run_worker(self._compute, thread=True, name="context-breakdown", group="context-breakdown",
                        exit_on_error=False)

    def _compute(self) -> Any:
        return self.session.context_breakdown()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name != "context-breakdown":
            return
        table = self.query_one("#breakdown-table", Static)
        if event.state == WorkerState.SUCCESS:
            self.breakdown = event.worker.result
            table.update(self.render_breakdown(self.breakdown) if self.breakdown is not None
                         else Text("The model is still loading: nothing to measure yet."))
        elif event.state == WorkerState.ERROR:
            table.update(Text(f"Could not measure the context: {event.worker.error}"))

    @staticmethod
    def render_breakdown(breakdown: Any) -> Table:
        """The breakdown as a table: category, tokens, share of the window, bar, note."""
        window = breakdown.window
        table = Table(box=None, expand=False, padding=(0, 2, 0, 0), show_header=True, header_style="bold")
        table.add_column("Category", no_wrap=True)
        table.add_column("Tokens", justify="right", no_wrap=True)
        table.add_column("Window", justify="right", no_wrap=True)
        table.add_column("", no_wrap=True)
        table.add_column("Messages", justify="right", no_wrap=True)
        table.add_column("Note", style="dim")
        for name, tokens, count, note in breakdown.rows:
            share = tokens / window if window else 0.0
            table.add_row(Text(name), Text(f"~{format_tokens(tokens)}"),
                          Text(f"{100 * share:.1f}%" if window else "-"), Text(meter_bar(share, None)),
                          Text(str(count) if count else ""), Text(note))
        total_share = breakdown.total / window if window else 0.0
        table.add_row(Text("total", style="bold"), Text(f"~{format_tokens(breakdown.total)}", style="bold"),
                      Text(f"{100 * total_share:.1f}%" if window else "-", style="bold"),
                      Text(meter_bar(total_share, None)), Text(""),
                      Text(f"of {format_tokens(window)}" if window else "window unknown"))
        notes = [f"Counted as the request builder counts ({breakdown.tokenizer or 'local count'}"
                 + (f", x{breakdown.margin:g} margin for this model's tokenizer" if breakdown.margin != 1.0 else "")
                 + ", a few tokens per message)."]
        if breakdown.reported is not None:
            notes.append(f"The provider last counted {breakdown.reported:,} prompt tokens; the meter shows "
                         "that figure plus the messages added since.")
        table.caption = " ".join(notes)
        table.caption_justify = "left"
        return table

    def action_close(self) -> None:
        """Close the breakdown."""
        self.dismiss(None)
