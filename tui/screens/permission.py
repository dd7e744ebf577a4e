"""The permission prompt: one tool call waiting for the user's decision.

``PermissionScreen(request fields..., view=, diff=)`` shows what the call will do:

- a file change: the unified diff the tool computed without writing (the request's ``diff``),
  coloured like the tool blocks;
- a shell command (the view's ``command``): the line with its risky parts highlighted
  (agent/permissions/shell/risk.py ``risky_spans``: ``rm``, ``sudo``, ``curl | sh``, write
  redirects, ``git push``...) and why;
- other calls: the loop's preview and the arguments, as plain text.

Answers (the letter keys work only while no text box has the focus; in a text box they type
text): ``y`` allow once; ``t`` allow this tool for the rest of the session; ``p`` (bash only)
allow for the session every command line whose commands all start with the prefix in the prefix
box (prefilled with the command's first words, editable; Enter there allows it); ``n`` does not
deny at once: it focuses the (emptied) reason box, and Enter there denies, sending the typed
reason (if any) to the model; the Deny button denies with the reason typed so far. Esc denies
the call and cancels the running turn (like Esc in the main screen). The screen dismisses with a
``PermissionDecision``; the caller resolves the request's future with it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from agent.events import PermissionDecision
from agent.permissions.rules import command_prefix
from agent.permissions.shell.risk import risky_spans

from ..widgets.diff_view import DiffView
from ..widgets.plain_output import PlainOutput

if TYPE_CHECKING:
    from agent.events import ToolView

def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, (dict, list)):
        return json.dumps(arguments, ensure_ascii=False, indent=2)
    return "" if arguments is None else str(arguments)


def _looks_like_diff(text: str) -> bool:
    return text.startswith(("--- ", "diff ", "@@")) or "\n@@ " in text


def highlighted_command(command: str) -> tuple[Text, list[str]]:
    """Return the command as ``Text`` with risky spans in bold reverse red, and the reasons."""
    text = Text(command, no_wrap=False)
    reasons: list[str] = []
    for span in risky_spans(command):
        text.stylize("bold red reverse", span.start, span.end)
        part = " ".join(command[span.start:span.end].split())
        part = part if len(part) <= 40 else part[:39] + "…"
        reasons.append(f"{part}: {span.reason}")
    return text, reasons


#: Button labels: (id, full label, short label for narrow terminals).
BUTTON_LABELS = {
    "allow": ("Once (y)", "Once (y)"),
    "allow-tool": ("Tool, session (t)", "Tool (t)"),
    "allow-prefix": ("Prefix, session (p)", "Prefix (p)"),
    "deny": ("Deny (n)", "Deny (n)"),
}
#: Below this many columns the buttons use their short labels.
NARROW_WIDTH = 100
#: Below this many rows the dialog drops its inner margins (class ``-compact``, see CSS).
SHORT_HEIGHT = 32
#: The most rows the diff / command preview takes; less when the terminal is short.
MAX_DETAILS_HEIGHT = 20
#: The fewest rows the preview keeps (it scrolls).
MIN_DETAILS_HEIGHT = 3


class PermissionScreen(ModalScreen[PermissionDecision]):
    """Ask whether one tool call may run; dismisses with a ``PermissionDecision``."""

    # App-level CSS (beats DEFAULT_CSS, as it did in app.tcss), loaded when the screen first shows.
    CSS = """
    PermissionScreen {
        align: center middle;
    }

    #permission-dialog {
        width: 90;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        padding: 1 2;
        border: thick $warning;
        background: $panel;
    }

    #permission-title {
        margin-bottom: 1;
    }

    #permission-details {
        height: auto;
        max-height: 20;
        background: $surface;
        padding: 0 1;
    }

    #permission-reason {
        margin-top: 1;
    }

    #permission-buttons {
        height: auto;
        margin-top: 1;
        align: right middle;
    }

    #permission-buttons Button {
        margin-left: 2;
    }

    /* a short terminal: the permission dialog drops its inner margins (PermissionScreen._fit) */
    #permission-dialog.-compact {
        max-height: 100%;
        padding: 0 1;
    }

    #permission-dialog.-compact #permission-title,
    #permission-dialog.-compact #permission-reason,
    #permission-dialog.-compact #permission-buttons,
    #permission-dialog.-compact #permission-prefix-row,
    #permission-dialog.-compact #permission-risks {
        margin: 0;
    }

    #permission-details .permission-preview {
        text-style: bold;
    }
    """

    DEFAULT_CSS = """
    #permission-prefix-row { height: auto; margin-top: 1; }
    #permission-prefix-label { width: auto; padding: 1 1 0 0; }
    #permission-prefix { width: 1fr; }
    #permission-risks { color: $error; margin-top: 1; }
    #permission-note { color: $warning; }
    #permission-sandbox { color: $text-muted; }
    #permission-buttons Button { min-width: 10; }
    """

    BINDINGS = [
        Binding("y", "allow", "Allow once"),
        Binding("t", "allow_tool", "Allow tool for session"),
        Binding("p", "allow_prefix", "Allow prefix for session"),
        Binding("n", "deny", "Deny (type a reason, Enter)"),
        Binding("escape", "deny_and_cancel", "Deny and cancel the turn", show=False),
    ]

    class Withdrawn(Message):
        """The request was answered or abandoned elsewhere; the screen closes itself."""

    def __init__(self, tool_name: str, arguments: Any = None, capability: str = "",
                 preview: str = "", *, view: "ToolView | None" = None, diff: str | None = None,
                 note: str = "", sandbox: str = "") -> None:
        """The fields of the ``PermissionRequest``: ``view`` how the call is shown (its
        ``command`` makes the prefix box and the risk highlight), ``diff`` the change a file
        tool would make, ``note`` why a call the session allowed asks again, ``sandbox`` how the
        command will run ("runs sandboxed (workspace-write)", "runs unsandboxed", or "")."""
        super().__init__()
        self.note = note
        self.sandbox = sandbox
        self.tool_name = tool_name
        self.arguments = arguments
        self.capability = capability
        self.preview = preview
        self.view = view
        self.diff = diff

    @property
    def command(self) -> str | None:
        """The shell command line of the call (its view's ``command``), or None."""
        return self.view.command if self.view is not None else None

    def compose(self) -> ComposeResult:
        with Vertical(id="permission-dialog"):
            title = Text("Allow ", style="bold")
            title.append(self.tool_name, style="bold underline")
            if self.capability:
                title.append(f" ({self.capability})")
            title.append("?", style="bold")
            yield Static(title, id="permission-title", markup=False)
            with VerticalScroll(id="permission-details"):
                yield from self._details()
            if self.command is not None:
                text, reasons = highlighted_command(self.command)
                if reasons:
                    yield Static(Text("⚠ " + "; ".join(reasons)), id="permission-risks", markup=False)
            if self.note:
                yield Static(Text("⚠ Asking because " + self.note), id="permission-note", markup=False)
            if self.sandbox:
                mark = "" if self.sandbox.startswith("runs sandboxed") else "⚠ "
                yield Static(Text(mark + self.sandbox[:1].upper() + self.sandbox[1:]), id="permission-sandbox",
                             markup=False)
            if self.command is not None:
                prefix = command_prefix(self.command)
                with Horizontal(id="permission-prefix-row"):
                    yield Static("Prefix (p):", id="permission-prefix-label", markup=False)
                    yield Input(value=prefix, id="permission-prefix",
                                placeholder="command prefix, e.g. pytest" if prefix or not reasons
                                else "no prefix suggested for a risky command; type one to allow it")
            yield Input(placeholder="Reason for denying (optional, sent to the model); Enter denies",
                        id="permission-reason")
            with Horizontal(id="permission-buttons"):
                yield Button(self._label("allow"), id="allow", variant="success")
                yield Button(self._label("allow-tool"), id="allow-tool", variant="primary")
                if self.command is not None:
                    yield Button(self._label("allow-prefix"), id="allow-prefix", variant="primary")
                yield Button(self._label("deny"), id="deny", variant="error")

    def _label(self, button_id: str) -> Text:
        full, short = BUTTON_LABELS[button_id]
        narrow = self.is_attached and 0 < self.app.size.width < NARROW_WIDTH
        return Text(short if narrow else full)

    def _fit(self) -> None:
        """Fit the dialog to the terminal: short button labels when narrow, no inner margins
        when short, and the preview capped so that the reason box and the buttons always show
        (the preview scrolls)."""
        if not self.is_mounted:
            return
        width, height = self.app.size
        for button in self.query("#permission-buttons Button").results(Button):
            label = self._label(button.id or "")
            if str(button.label) != label.plain:
                button.label = label
        dialog = self.query_one("#permission-dialog", Vertical)
        dialog.set_class(height < SHORT_HEIGHT, "-compact")
        details = self.query_one("#permission-details", VerticalScroll)
        styles = dialog.styles
        room = int(height * (1.0 if height < SHORT_HEIGHT else 0.9))
        room -= styles.border.spacing.height + styles.padding.height
        for child in dialog.children:
            if child is details or not child.display:
                continue
            child_height = child.outer_size.height or (3 if isinstance(child, (Input, Horizontal)) else 1)
            room -= child_height + child.styles.margin.height
        room -= details.styles.margin.height
        cap = max(MIN_DETAILS_HEIGHT, min(MAX_DETAILS_HEIGHT, room))
        if details.styles.max_height is None or details.styles.max_height.value != cap:
            details.styles.max_height = cap

    def on_resize(self) -> None:
        self._fit()
        self.call_after_refresh(self._fit)

    def _details(self) -> ComposeResult:
        """What the call will do: a diff (edit, write), the highlighted command (bash) or the
        preview line and arguments, never parsed as markup."""
        preview = (self.preview or "").strip()
        if preview and _looks_like_diff(preview):
            yield DiffView(preview, classes="permission-preview")
            return
        if self.command is not None:
            text, _ = highlighted_command(self.command)
            yield Static(text, classes="permission-command", markup=False)
            return
        if preview:
            yield PlainOutput(preview, max_lines=60, classes="permission-preview")
        if self.diff:
            yield DiffView(self.diff, classes="permission-change")
        else:
            text = _arguments_text(self.arguments)
            if text and text.strip() not in ("{}", preview):
                yield PlainOutput(text, max_lines=60, classes="permission-args")

    def on_mount(self) -> None:
        self.query_one("#allow", Button).focus()
        self._fit()
        self.call_after_refresh(self._fit)  # again, with the measured heights

    def withdraw(self) -> None:
        """Close the screen without a decision. Thread-safe (posts a message)."""
        self.post_message(self.Withdrawn())

    def on_permission_screen_withdrawn(self, event: "PermissionScreen.Withdrawn") -> None:
        event.stop()
        if self.is_current:
            self.dismiss(None)

    def _text_box_focused(self) -> bool:
        return isinstance(self.focused, Input)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While a text box has the focus, the letter keys type text: y/t/p/n never answer."""
        if action in ("allow", "allow_tool", "allow_prefix", "deny") and self._text_box_focused():
            return False
        return True

    def _reason(self) -> str:
        return self.query_one("#permission-reason", Input).value.strip()

    def action_allow(self) -> None:
        """Allow this call once."""
        self.dismiss(PermissionDecision(allow=True))

    def action_allow_tool(self) -> None:
        """Allow this tool for the rest of the session."""
        self.dismiss(PermissionDecision(allow=True, scope="session_tool"))

    def action_allow_prefix(self) -> None:
        """Allow, for the session, bash lines whose every command starts with the prefix box's text
        (an empty box focuses it instead)."""
        if self.command is None:
            return
        box = self.query_one("#permission-prefix", Input)
        prefix = box.value.strip()
        if not prefix:
            box.focus()
            self.notify("Type a command prefix first.", timeout=3)
            return
        self.dismiss(PermissionDecision(allow=True, scope="session_prefix", prefix=prefix))

    def action_deny(self) -> None:
        """``n``: focus the emptied reason box; Enter there denies with the typed reason."""
        box = self.query_one("#permission-reason", Input)
        box.value = ""
        box.focus()

    def deny(self) -> None:
        """Deny, sending the typed reason (if any) to the model."""
        self.dismiss(PermissionDecision(allow=False, reason=self._reason()))

    async def action_deny_and_cancel(self) -> None:
        """Esc: deny this call and cancel the running turn (the app's cancel action resolves the
        pending request and withdraws this screen); without a running turn, just deny."""
        cancel = getattr(self.app, "action_cancel_turn", None)
        if callable(cancel):
            await cancel()
        if self.is_current:
            self.dismiss(PermissionDecision(allow=False, reason="cancelled by the user"))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        actions = {"allow": self.action_allow, "allow-tool": self.action_allow_tool,
                   "allow-prefix": self.action_allow_prefix}
        actions.get(event.button.id or "", self.deny)()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id == "permission-prefix":
            self.action_allow_prefix()
        else:
            self.deny()
