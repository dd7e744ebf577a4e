"""The help screen: keys and slash commands. Esc, q or F1 closes it."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

#: (keys, what they do), shown in this order.
KEYS: list[tuple[str, str]] = [
    ("Enter", "send the prompt (queued while a turn runs)"),
    ("Shift+Enter, Ctrl+J", "new line in the prompt"),
    ("Up / Down", "previous / next prompt (on the first / last line)"),
    ("Esc", "cancel the running turn"),
    ("PageUp / PageDown", "scroll the conversation"),
    ("Ctrl+Home / Ctrl+End", "first message / back to the end (follow new output)"),
    ("Ctrl+C", "copy the text selected with the mouse; else cancel the running turn; when idle, "
               "press twice to quit"),
    ("Ctrl+O", "expand or collapse the latest tool block"),
    ("Enter / Space / click", "expand or collapse the focused tool, reasoning or think block"),
    ("v / click the badge", "open a tool's whole output in the output viewer"),
    ("Viewer keys", "/ search, n / N next / previous match, g / G start / end, c / C copy line / page, "
                    "q / Esc close"),
    ("c / s on a stop", "Continue / Stop after the step limit or a loop guard stopped the turn"),
    ("Ctrl+B", "show or hide the sidebar (tabs: Plan, Files with the git snapshot and changed files, Stats)"),
    ("F4 / click a tab", "next sidebar tab: Plan → Files → Stats (shows the sidebar when hidden)"),
    ("Tab", "complete a /command name (one-line prompt, cursor at the end; several matches are "
            "listed under the prompt); elsewhere move focus between the prompt and the blocks"),
    ("Shift+Tab", "switch Plan / Act mode (Plan: Enter plans the task read-only first)"),
    ("Plan screen", "↑↓ select, Enter edit, a add, d delete, Alt+↑↓ / K J move, s skip, A approve, "
                    "Ctrl+E editor, Esc cancel (asks first: y / Enter discard, n / Esc back)"),
    ("Ctrl+G", "hide the suggestion to use Plan mode"),
    ("Ctrl+T", "switch between the dark and light theme"),
    ("Ctrl+R", "next permission mode: ask → auto-edit → full-auto → read-only (status bar: perm)"),
    ("Ctrl+S", "while a turn runs: send the queued messages into it (read after its current step)"),
    ("@path", "attach a file to the prompt (Tab completes the path, fuzzily)"),
    ("!command", "run a shell line yourself; the model reads it and its output with your next prompt"),
    ("Permission prompt", "y once, t this tool for the session, p bash prefix for the session, n deny "
                          "(reason box text goes to the model), Esc deny"),
    ("F2 / click the ctx meter", "context breakdown: what fills the context window"),
    ("F3", "sub-agent timeline: ← → select, Enter / click open its conversation (read-only)"),
    ("Enter / click ⟲ mark", "open the compaction inspector at that compaction"),
    ("F1", "this help"),
    ("Ctrl+Q", "quit"),
]


class HelpScreen(ModalScreen[None]):
    """Lists keys and commands. ``commands`` is a list of (usage, description)."""

    # App-level CSS, loaded when the screen first shows (not before the app's first paint).
    CSS = """
    HelpScreen {
        align: center middle;
    }

    #help-dialog {
        width: 90;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        padding: 1 2;
        border: thick $primary;
        background: $panel;
    }

    #help-title {
        margin-bottom: 1;
    }
    """

    BINDINGS = [Binding("escape,q,f1", "dismiss_help", "Close")]

    def __init__(self, commands: list[tuple[str, str]]) -> None:
        super().__init__()
        self.commands = commands

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog"):
            yield Static(Text("opencli-tui help", style="bold"), id="help-title")
            yield Static(self._table("Keys", KEYS), markup=False)
            yield Static(self._table("Commands", self.commands), markup=False)
            yield Static(Text("Esc closes this screen.", style="dim"), markup=False)

    @staticmethod
    def _table(title: str, rows: list[tuple[str, str]]) -> Table:
        table = Table(title=title, title_justify="left", show_header=False, box=None, expand=True,
                      padding=(0, 2, 0, 0))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for key, what in rows:
            table.add_row(Text(key), Text(what))
        return table

    def action_dismiss_help(self) -> None:
        """Close the help screen."""
        self.dismiss(None)
