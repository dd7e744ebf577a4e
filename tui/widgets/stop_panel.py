"""A turn that stopped early but may go on: the step limit, or a loop guard (stuck, ping-pong,
repeated failure). Shown apart from errors, with Continue and Stop.

``StopPanel(reason, message, guard)`` shows a title ("■ Step limit reached", "■ Stopped: the agent
was repeating itself"), the loop's message, and two buttons. Continue posts
``StopPanel.Closed(prompt=...)`` with a new user turn (for a guard: "Continue, but change your
approach: <message>"); Stop posts ``Closed(prompt=None)``. Either way the buttons go and a dim
line says what was chosen. Keys while the panel has focus: ``c`` / Enter continue, ``s`` / Esc
stop. ``retire()`` removes the buttons silently (the user sent another prompt).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Static

#: Titles per stop reason / guard.
TITLES = {
    "max_turns": "■ Step limit reached",
    "stuck": "■ Stopped: the agent was repeating itself",
    "ping_pong": "■ Stopped: the agent was going back and forth between two calls",
    "repeated_failure": "■ Stopped: the same call kept failing",
}
#: The prompt Continue sends after the step limit.
CONTINUE_AFTER_LIMIT = "Continue where you left off."


def continue_prompt(reason: str, message: str) -> str:
    """Return the user turn that Continue sends for a stop ``reason`` and the loop's ``message``."""
    if reason == "max_turns":
        return CONTINUE_AFTER_LIMIT
    message = " ".join(message.split())
    return f"Continue, but change your approach: {message}" if message else \
        "Continue, but change your approach: do not repeat the same call."


class StopPanel(Widget, can_focus=True):
    """A stop with Continue / Stop. ``reason`` is the stop reason (``max_turns`` or ``stuck``),
    ``guard`` the guard that fired (``stuck``, ``ping_pong``, ``repeated_failure``) if known."""

    DEFAULT_CSS = """
    StopPanel {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: outer $warning;
    }
    StopPanel .stop-title {
        color: $warning;
        text-style: bold;
    }
    StopPanel .stop-message {
        color: $foreground;
    }
    StopPanel .stop-buttons {
        height: auto;
        margin-top: 1;
    }
    StopPanel .stop-buttons Button {
        margin-right: 2;
    }
    StopPanel .stop-note {
        color: $text-muted;
        text-style: italic;
    }
    StopPanel:focus-within {
        background: $boost;
    }
    """

    BINDINGS = [
        Binding("c,enter", "continue_turn", "Continue"),
        Binding("s,escape", "stop", "Stop"),
    ]

    class Closed(Message):
        """The user chose: ``prompt`` is the turn to send (Continue) or None (Stop)."""

        def __init__(self, panel: "StopPanel", prompt: str | None) -> None:
            super().__init__()
            self.panel = panel
            self.prompt = prompt

    def __init__(self, reason: str, message: str = "", guard: str | None = None) -> None:
        super().__init__(classes=f"block stop-panel stop-{reason}")
        self.reason = reason
        self.message = message
        self.guard = guard
        self.open = True

    @property
    def title(self) -> str:
        """The first line: what stopped the turn."""
        return TITLES.get(self.guard or self.reason, TITLES.get(self.reason, f"■ Stopped ({self.reason})"))

    def compose(self) -> ComposeResult:
        yield Static(Text(self.title), markup=False, classes="stop-title")
        if self.message:
            yield Static(Text(self.message), markup=False, classes="stop-message")
        with Horizontal(classes="stop-buttons"):
            yield Button(Text("Continue (c)"), id="stop-continue", variant="primary", compact=True)
            yield Button(Text("Stop (s)"), id="stop-stop", compact=True)

    def focus_continue(self) -> None:
        """Put the focus on the Continue button (nothing while it is not composed yet)."""
        buttons = self.query("#stop-continue")
        if self.open and buttons:
            buttons.first().focus()

    def on_key(self, event) -> None:
        """A printable key not bound here (c, s) goes to the prompt input (typing is never lost)."""
        from .prompt_input import forward_typing

        forward_typing(self, event)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "stop-continue":
            self.action_continue_turn()
        else:
            self.action_stop()

    def action_continue_turn(self) -> None:
        """Send a new user turn that continues the work."""
        if self.open:
            prompt = continue_prompt(self.reason, self.message)
            self._close("↳ continued")
            self.post_message(self.Closed(self, prompt))

    def action_stop(self) -> None:
        """Leave the turn stopped."""
        if self.open:
            self._close("↳ stopped")
            self.post_message(self.Closed(self, None))

    def retire(self) -> None:
        """Remove the buttons without a choice (another prompt was sent)."""
        if self.open:
            self._close("")

    def _close(self, note: str) -> None:
        self.open = False
        self.can_focus = False
        for buttons in self.query(".stop-buttons"):
            buttons.remove()
        if note:
            self.mount(Static(Text(note), markup=False, classes="stop-note"))
