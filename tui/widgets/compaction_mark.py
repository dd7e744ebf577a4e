"""The one-line mark the conversation shows where a compaction happened.

"⟲ context compacted: 182k → 41k tokens (summarized 120, pruned 8, aggregated 14) — Enter/click to
inspect". It can take focus; Enter or a click opens the compaction inspector at this compaction
(``tui.context_ui.open_inspector``), found in the journal by its token counts.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static

from .token_count import format_tokens


def mark_text(tokens_before: int, tokens_after: int, summarized: int, pruned: int, aggregated: int) -> str:
    """The mark's line for a ``CompactionDone`` with these figures."""
    return (f"⟲ context compacted: {format_tokens(tokens_before)} → {format_tokens(tokens_after)} tokens "
            f"(summarized {summarized}, pruned {pruned}, aggregated {aggregated}) — Enter/click to inspect")


class CompactionMark(Static, can_focus=True):
    """Marks one compaction in the conversation; built from a ``CompactionDone`` event.

    Attributes: ``tokens_before``, ``tokens_after`` (used to find the journal record).
    """

    DEFAULT_CSS = """
    CompactionMark { height: auto; padding: 0 1; margin: 1 0 0 0; color: $accent; }
    CompactionMark:hover { background: $boost; }
    CompactionMark:focus { background: $boost; text-style: bold; }
    """

    BINDINGS = [Binding("enter,space", "inspect", "Inspect", show=False)]

    def __init__(self, event: Any) -> None:
        self.tokens_before = int(event.tokens_before)
        self.tokens_after = int(event.tokens_after)
        line = mark_text(self.tokens_before, self.tokens_after, event.summarized, event.pruned, event.aggregated)
        super().__init__(Text(line), markup=False, classes="block compaction-mark")
        self.text = line

    class InspectRequested(Message):
        """Open the compaction inspector at the compaction with these token counts."""

        def __init__(self, tokens_before: int, tokens_after: int) -> None:
            super().__init__()
            self.tokens_before = tokens_before
            self.tokens_after = tokens_after

    def action_inspect(self) -> None:
        """Ask for the compaction inspector at this compaction."""
        self.post_message(self.InspectRequested(self.tokens_before, self.tokens_after))

    def on_click(self) -> None:
        self.action_inspect()
