"""The one-line mark the conversation shows where a compaction happened.

"⟲ context compacted: 182k → 41k tokens (summarized 120, pruned 8, aggregated 14, stubbed 2, 5 pinned)
— Enter/click to inspect" ("no summary" for a rewrite without a summary call, "⚠ thrash" when it
came within a few model calls of the previous one). It can take focus; Enter or a click opens the compaction inspector at this compaction
(``tui.context_ui.open_inspector``), found in the journal by its token counts.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static

from .token_count import format_tokens


def mark_text(tokens_before: int, tokens_after: int, summarized: int, pruned: int, aggregated: int,
              stubbed: int = 0, *, thrash: bool = False, pinned: int = 0) -> str:
    """The mark's line for a ``CompactionDone`` with these figures (tokens; message counts;
    ``pinned``: how many items were pinned by code). ``stubbed`` and ``pinned`` show when not 0;
    no message summarised reads "no summary"; ``thrash`` adds "⚠ thrash"."""
    parts = [f"summarized {summarized}" if summarized else "no summary", f"pruned {pruned}",
             f"aggregated {aggregated}"]
    if stubbed:
        parts.append(f"stubbed {stubbed}")
    if pinned:
        parts.append(f"{pinned} pinned")
    return (f"⟲ context compacted: {format_tokens(tokens_before)} → {format_tokens(tokens_after)} tokens "
            f"({', '.join(parts)}){' ⚠ thrash' if thrash else ''} — Enter/click to inspect")


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
        line = mark_text(self.tokens_before, self.tokens_after, event.summarized, event.pruned, event.aggregated,
                         getattr(event, "stubbed", 0), thrash=bool(getattr(event, "thrash", False)),
                         pinned=len(getattr(event, "pinned", None) or ()))
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
