"""A small yes/no question over the current screen.

``ConfirmScreen(question)`` dismisses with True (y, Enter, or the yes button) or False (n, Esc,
or the no button). Its buttons are not focusable, so Enter always means yes.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    """Ask ``question`` (plain text, never markup); dismisses with True for yes, False for no.

    ``yes_label`` / ``no_label`` name the two buttons; the yes button is drawn as a warning
    (``yes_variant``, a Textual button variant) because it confirms something that cannot be undone.
    """

    BINDINGS = [
        Binding("y,enter", "answer(True)", "Yes", show=False),
        Binding("n,escape", "answer(False)", "No", show=False),
    ]

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    #confirm-dialog { width: auto; min-width: 40; max-width: 80%; height: auto; padding: 1 2;
                      border: thick $error; background: $panel; }
    #confirm-question { width: auto; max-width: 100%; height: auto; }
    #confirm-buttons { width: auto; height: auto; margin-top: 1; }
    #confirm-buttons Button { margin-right: 2; }
    """

    def __init__(self, question: str, *, yes_label: str = "Yes (y)", no_label: str = "No (n)",
                 yes_variant: str = "error") -> None:
        super().__init__()
        self.question = question
        self.yes_label = yes_label
        self.no_label = no_label
        self.yes_variant = yes_variant

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(Text(self.question), id="confirm-question", markup=False)
            with Horizontal(id="confirm-buttons"):
                for label, button_id, variant in ((self.yes_label, "confirm-yes", self.yes_variant),
                                                  (self.no_label, "confirm-no", "default")):
                    button = Button(label, id=button_id, variant=variant, compact=True)
                    button.can_focus = False  # Enter answers yes whatever the mouse did
                    yield button

    def action_answer(self, yes: bool) -> None:
        """Close the question with ``yes``."""
        self.dismiss(yes)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")
