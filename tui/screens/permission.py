"""The permission prompt: one tool call waiting for the user's decision.

``PermissionScreen(request)`` shows the tool, its capability, the arguments and the preview the
loop computed (a diff for edits, the command for bash), as plain text. Keys: ``y`` allows once,
``n`` denies (with the reason typed in the box, if any, which goes back to the model), Enter in
the reason box denies with that reason, Esc denies without one. The screen dismisses with a
``PermissionDecision``; the caller resolves the request's future with it.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from agent.events import PermissionDecision

from ..widgets.diff_view import DiffView
from ..widgets.plain_output import PlainOutput


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, (dict, list)):
        return json.dumps(arguments, ensure_ascii=False, indent=2)
    return "" if arguments is None else str(arguments)


def _replacement_diff(old: str, new: str) -> str:
    """A diff-like view of an edit's replacement: old lines with '-', new lines with '+'."""
    lines = [f"-{line}" for line in old.splitlines()] + [f"+{line}" for line in new.splitlines()]
    return "\n".join(lines)


def _looks_like_diff(text: str) -> bool:
    return text.startswith(("--- ", "diff ", "@@")) or "\n@@ " in text


class PermissionScreen(ModalScreen[PermissionDecision]):
    """Ask whether one tool call may run; dismisses with a ``PermissionDecision``."""

    BINDINGS = [
        Binding("y", "allow", "Allow once"),
        Binding("n", "deny", "Deny"),
        Binding("escape", "deny_silently", "Deny", show=False),
    ]

    class Withdrawn(Message):
        """The request was answered or abandoned elsewhere; the screen closes itself."""

    def __init__(self, tool_name: str, arguments: Any = None, capability: str = "",
                 preview: str = "") -> None:
        super().__init__()
        self.tool_name = tool_name
        self.arguments = arguments
        self.capability = capability
        self.preview = preview

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
            yield Input(placeholder="Reason for denying (optional, sent to the model); Enter denies",
                        id="permission-reason")
            with Horizontal(id="permission-buttons"):
                yield Button(Text("Allow once (y)"), id="allow", variant="success")
                yield Button(Text("Deny (n)"), id="deny", variant="error")

    def _details(self) -> ComposeResult:
        """What the call will do: the preview line, then the change (edit, write), the command
        (bash) or the arguments, always as plain text."""
        args = self.arguments if isinstance(self.arguments, dict) else None
        preview = (self.preview or "").strip()
        if preview and _looks_like_diff(preview):
            yield DiffView(preview, classes="permission-preview")
            return
        if preview:
            yield PlainOutput(preview, max_lines=60, classes="permission-preview")
        if args is not None and self.tool_name == "edit" and "old_string" in args:
            yield DiffView(_replacement_diff(str(args.get("old_string", "")), str(args.get("new_string", ""))),
                           classes="permission-change")
        elif args is not None and self.tool_name == "write" and "content" in args:
            if not preview:
                yield PlainOutput(f"write {args.get('path', '')}", classes="permission-preview")
            yield PlainOutput(str(args["content"]), max_lines=60, classes="permission-change")
        elif not preview or self.tool_name not in ("bash",):
            text = _arguments_text(self.arguments)
            if text and text.strip() not in ("{}", preview):
                yield PlainOutput(text, max_lines=60, classes="permission-args")

    def on_mount(self) -> None:
        self.query_one("#allow", Button).focus()

    def withdraw(self) -> None:
        """Close the screen without a decision. Thread-safe (posts a message)."""
        self.post_message(self.Withdrawn())

    def on_permission_screen_withdrawn(self, event: "PermissionScreen.Withdrawn") -> None:
        event.stop()
        if self.is_current:
            self.dismiss(None)

    def _reason(self) -> str:
        return self.query_one("#permission-reason", Input).value.strip()

    def action_allow(self) -> None:
        """Allow this call once."""
        self.dismiss(PermissionDecision(allow=True))

    def action_deny(self) -> None:
        """Deny, sending the typed reason (if any) to the model."""
        self.dismiss(PermissionDecision(allow=False, reason=self._reason()))

    def action_deny_silently(self) -> None:
        """Deny without a reason (Esc)."""
        self.dismiss(PermissionDecision(allow=False))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "allow":
            self.action_allow()
        else:
            self.action_deny()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_deny()
