"""The sidebar's Stats tab: the session's figures (``agent.observability.stats``), read from the
session log so a resumed session shows its whole history.

``StatsPanel.show(stats)`` draws a ``SessionStats`` (None: "no model call yet"); ``stats_text``
is the same as plain ``Text`` for a width, also used by the ``/stats`` screen. The reading is the
caller's (a thread worker): this widget only draws.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widget import Widget


def _cut(value: str, room: int) -> str:
    return value if len(value) <= room else value[:room - 1] + "…"


def stats_text(stats: Any | None, width: int) -> Text:
    """The figures of ``stats`` (a ``SessionStats``) as label/value lines cut to ``width``
    cells, then the slowest tool calls; "no model call yet" for None or an empty session."""
    from agent.observability.stats import slowest_rows, stats_rows

    text = Text()
    if stats is None or not (stats.model_calls or stats.turns):
        text.append("no model call yet", style="italic")
        return text
    rows = stats_rows(stats)
    pad = min(max(len(label) for label, _ in rows), 14)
    room = max(width - pad - 1, 4)
    for i, (label, value) in enumerate(rows):
        if i:
            text.append("\n")
        text.append(f"{label:<{pad}} ", style="dim")
        head, paren, rest = value.partition(" (")
        if len(value) > room and paren:  # "3,300 (900 cached)": the detail goes on its own line
            text.append(_cut(head, room))
            text.append("\n" + " " * (pad + 1))
            text.append(_cut("(" + rest, room), style="dim")
        else:
            text.append(_cut(value, room))
    slow = slowest_rows(stats, max(width - 9, 8))
    if slow:
        text.append("\nslowest tools", style="bold")
        for duration, call in slow:
            text.append(f"\n{duration:>7} ", style="dim")
            text.append(call[:max(width - 8, 4)])
    return text


class StatsPanel(Widget):
    """The Stats tab's body: ``show(stats)`` replaces the figures; plain text, lines never wrap."""

    DEFAULT_CSS = """
    StatsPanel { height: auto; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.stats: Any | None = None

    def show(self, stats: Any | None) -> None:
        """Draw ``stats`` (a ``SessionStats``; None: nothing yet)."""
        self.stats = stats
        self.refresh(layout=True)

    def render(self) -> Text:
        """The figures at the current width."""
        return stats_text(self.stats, max(self.content_size.width, 20))
