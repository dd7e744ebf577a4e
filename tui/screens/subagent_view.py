"""A sub-agent's conversation, read-only: its prompt, replies, reasoning and tool blocks, drawn
with the blocks of the main pane.

The screen only holds the pane: the app fills it by replaying the sub-agent's journal through the
code that redraws a resumed session, and keeps reading it while the sub-agent runs
(``tui.subagent_follow.follow_journal``), so its blocks are those a live turn shows, updated as
they arrive (a tool call still running shows as running). It takes no input but scrolling and opening blocks; Esc or q closes it.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from ..widgets.conversation import Conversation
from ..widgets.status_bar import StatusBar


class SubagentViewScreen(Screen[None]):
    """The conversation of the sub-agent titled ``title`` (``journal_path``: its journal file;
    empty for one that never started)."""

    CSS = """
    SubagentViewScreen #subagent-title {
        height: 1;
        padding: 0 1;
        background: $panel;
        text-style: bold;
    }
    SubagentViewScreen #subagent-conversation {
        height: 1fr;
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    SubagentViewScreen #subagent-status {
        display: none;
    }
    SubagentViewScreen #subagent-keys {
        height: 1;
        padding: 0 1;
        color: $text-muted;
    }
    """
    BINDINGS = [Binding("escape", "close", "Close", show=False), Binding("q", "close", "Close", show=False),
                Binding("pageup", "page(-1)", "Scroll up", show=False),
                Binding("pagedown", "page(1)", "Scroll down", show=False)]

    def __init__(self, title: str, journal_path: str) -> None:
        super().__init__()
        self.title_text = title
        self.journal_path = journal_path

    def compose(self) -> ComposeResult:
        yield Static(Text(self.title_text + "  (read-only)"), id="subagent-title")
        yield Conversation(id="subagent-conversation")
        yield StatusBar(id="subagent-status")  # the event handler's status target; not shown
        yield Static("esc / q close · pgup / pgdn scroll · enter on a block: open it", id="subagent-keys")

    @property
    def conversation(self) -> Conversation:
        return self.query_one("#subagent-conversation", Conversation)

    @property
    def status(self) -> StatusBar:
        return self.query_one("#subagent-status", StatusBar)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_page(self, pages: int) -> None:
        self.conversation.page(pages)
