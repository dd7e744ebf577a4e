"""``/sessions``: this project's saved sessions, and deleting one.

``SessionsScreen(workspace, current_id)`` lists the sessions (``tui.sessions_cli.session_rows``:
id, last write, size of the journal plus saved outputs, first prompt), newest first. Enter (or a
click) on a session asks for confirmation (``ConfirmScreen``) and deletes its journal and saved
outputs; the current session and sessions open in another instance are not deleted (a notice
says why). Esc closes; the screen dismisses with the ids deleted.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..sessions_cli import format_row, format_size, session_rows
from .confirm import ConfirmScreen


class SessionsScreen(ModalScreen[list[str]]):
    """List the project's sessions; delete the chosen one after confirmation."""

    DEFAULT_CSS = """
    SessionsScreen { align: center middle; }
    #sessions-dialog { width: 120; max-width: 95%; height: auto; max-height: 80%; padding: 1 2;
                       border: thick $primary; background: $panel; }
    #sessions-title { margin-bottom: 1; }
    #sessions-list { height: auto; max-height: 20; }
    #sessions-hint { margin-top: 1; color: $text-muted; }
    """

    BINDINGS = [Binding("escape", "close", "Close")]

    def __init__(self, workspace: Path, current_id: str | None = None) -> None:
        super().__init__()
        self.workspace = Path(workspace)
        self.current_id = current_id
        self.deleted: list[str] = []
        self.rows = session_rows(self.workspace)

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions-dialog"):
            yield Static(Text("Saved sessions of this project", style="bold"), id="sessions-title", markup=False)
            yield OptionList(*self._options(), id="sessions-list", markup=False)
            yield Static("↑↓ choose · Enter delete (asks first) · Esc close", id="sessions-hint", markup=False)

    def _options(self) -> list[Option]:
        if not self.rows:
            return [Option("(this project has no saved session)", id="", disabled=True)]
        return [Option(format_row(row) + ("  (current)" if row[0] == self.current_id else ""), id=row[0])
                for row in self.rows]

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def _refresh(self) -> None:
        self.rows = session_rows(self.workspace)
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(self._options())

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        session_id = event.option.id
        if not session_id:
            return
        if session_id == self.current_id:
            self.notify("This is the current session: it cannot be deleted while it is open.", severity="warning")
            return
        row = next((r for r in self.rows if r[0] == session_id), None)
        size = format_size(row[2]) if row else "?"
        prompt = (row[3] if row else "") or "(no prompt)"

        def answered(yes: bool | None) -> None:
            if yes:
                self._delete(session_id)

        self.app.push_screen(ConfirmScreen(f"Delete session {session_id} ({size}): {prompt[:80]}?\n"
                                           "Its journal and saved outputs are removed; this cannot be undone.",
                                           yes_label="Delete (y)"), answered)

    def _delete(self, session_id: str) -> None:
        from agent.session.resume import SessionNotFoundError, find_session
        from agent.session.retention import SessionInUseError, delete_session

        try:
            freed = delete_session(find_session(self.workspace, session_id))
        except (SessionNotFoundError, SessionInUseError, OSError) as exc:
            self.notify(f"Not deleted: {exc}", severity="warning")
            return
        self.deleted.append(session_id)
        self.notify(f"Deleted session {session_id} ({format_size(freed)}).")
        self._refresh()

    def action_close(self) -> None:
        """Close the list."""
        self.dismiss(self.deleted)
