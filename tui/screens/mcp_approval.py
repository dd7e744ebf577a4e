"""The question whether to start a project's MCP server (asked at session start, ``tui.mcp_ui``).

It opens by itself a few seconds after launch, often while the user is typing the first prompt,
so it is built to be hard to answer by accident: the safe answer (``Not now``) has the focus,
Enter presses the focused button (Tab / arrows move between them), and for ``ARM_DELAY_S``
seconds after it opens every key and click is ignored (typed-ahead keys answer nothing). After
that, ``y`` starts the server, ``n`` / Esc leave it off. Dismisses with True (start) or False.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class McpApprovalScreen(ModalScreen[bool]):
    """Ask ``question`` (plain text) about one project server; True = start it, False = not now."""

    #: Seconds after opening during which keys and clicks are ignored (typed-ahead input).
    ARM_DELAY_S = 1.0

    BINDINGS = [
        Binding("y", "answer(True)", "Start it", show=False),
        Binding("n,escape", "answer(False)", "Not now", show=False),
        Binding("left,up", "app.focus_previous", show=False),
        Binding("right,down", "app.focus_next", show=False),
    ]

    DEFAULT_CSS = """
    McpApprovalScreen { align: center middle; }
    #mcp-approval-dialog { width: auto; min-width: 40; max-width: 90%; height: auto; max-height: 90%;
                           padding: 1 2; border: thick $warning; background: $panel; }
    #mcp-approval-question { width: auto; max-width: 100%; height: auto; }
    #mcp-approval-buttons { width: auto; height: auto; margin-top: 1; }
    #mcp-approval-buttons Button { margin-right: 2; }
    """

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question
        self.opened_at = float("inf")  # armed only once mounted

    def compose(self) -> ComposeResult:
        with Vertical(id="mcp-approval-dialog"):
            yield Static(Text(self.question), id="mcp-approval-question", markup=False)
            with Horizontal(id="mcp-approval-buttons"):
                yield Button("Not now (n)", id="mcp-approval-no", variant="primary", compact=True)
                yield Button("Start it (y)", id="mcp-approval-yes", variant="warning", compact=True)

    def on_mount(self) -> None:
        self.opened_at = time.monotonic()
        self.query_one("#mcp-approval-no", Button).focus()

    @property
    def armed(self) -> bool:
        """True once ``ARM_DELAY_S`` seconds passed since the dialog opened."""
        return time.monotonic() - self.opened_at >= self.ARM_DELAY_S

    async def _on_key(self, event: events.Key) -> None:
        if not self.armed:  # typed ahead: no binding, no button answers it
            event.stop()
            event.prevent_default()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.armed or action not in ("answer", "app.focus_previous", "app.focus_next")

    def action_answer(self, yes: bool) -> None:
        """Close the question with ``yes`` (ignored while not armed)."""
        if self.armed:
            self.dismiss(yes)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if self.armed:
            self.dismiss(event.button.id == "mcp-approval-yes")
