"""The session picker (``/resume``, ``opencli-tui --resume`` without an id).

``SessionPickerScreen(infos)`` lists saved sessions of the project (``agent.session.resume.SessionInfo``,
most recent first), one line each: date, turns, model, first task. Enter (or a click) picks one
and the screen dismisses with its id; Esc dismisses with ``None``.
"""

from __future__ import annotations

import time
from typing import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent.session.resume import SessionInfo


def session_label(info: SessionInfo, now: float | None = None) -> Text:
    """One picker line: ``2026-11-30 08:17  3 turns  openai/gpt-4.1  first task...`` (plain text)."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.updated_at))
    turns = f"{info.turns} turn" + ("" if info.turns == 1 else "s")
    task = info.first_task or "(no task yet)"
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(when, style="bold")
    text.append(f"  {turns:>9}  ")
    text.append(info.model or "?", style="italic")
    text.append(f"  {task}")
    return text


class SessionPickerScreen(ModalScreen[str | None]):
    """Pick a saved session; dismisses with its id or ``None``."""

    DEFAULT_CSS = """
    SessionPickerScreen { align: center middle; }
    #session-dialog { width: 110; max-width: 95%; height: auto; max-height: 80%; padding: 1 2;
                      border: thick $primary; background: $panel; }
    #session-title { margin-bottom: 1; }
    #session-list { height: auto; max-height: 20; }
    #session-hint { margin-top: 1; color: $text-muted; }
    """

    BINDINGS = [Binding("escape", "cancel", "Close")]

    def __init__(self, infos: Sequence[SessionInfo]) -> None:
        super().__init__()
        self.infos = list(infos)

    def compose(self) -> ComposeResult:
        with Vertical(id="session-dialog"):
            yield Static(Text("Resume a session", style="bold"), id="session-title", markup=False)
            if self.infos:
                yield OptionList(*[Option(session_label(info), id=info.id) for info in self.infos],
                                 id="session-list", markup=False)
                hint = "↑↓ choose · Enter resume · Esc close"
            else:
                yield Static("This project has no other saved session.", id="session-empty", markup=False)
                hint = "Esc close"
            yield Static(hint, id="session-hint", markup=False)

    def on_mount(self) -> None:
        if self.infos:
            self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        """Close without resuming."""
        self.dismiss(None)
