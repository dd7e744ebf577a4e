"""The prompt box: a multi-line ``TextArea`` where Enter sends.

Keys: Enter posts ``PromptInput.Submitted`` (text stripped; empty text is ignored); Shift+Enter
or Ctrl+J inserts a newline; Up on the first line and Down on the last line walk the history of
sent prompts (the draft being typed is kept and comes back after the newest entry).
"""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import TextArea


class PromptHistory:
    """Sent prompts, oldest first, with a cursor for Up/Down browsing.

    ``previous(draft)`` / ``next()`` return the text to show, or None when there is nowhere to go.
    """

    def __init__(self, limit: int = 500) -> None:
        self.entries: list[str] = []
        self.limit = limit
        self._index: int | None = None  # None: editing the draft
        self._draft = ""

    def add(self, text: str) -> None:
        """Remember a sent prompt (a repeat of the last one is not stored twice)."""
        if text and (not self.entries or self.entries[-1] != text):
            self.entries.append(text)
            del self.entries[: -self.limit]
        self._index = None

    def previous(self, draft: str) -> str | None:
        """Step back in history; ``draft`` is the current text (saved when leaving it)."""
        if not self.entries:
            return None
        if self._index is None:
            self._draft = draft
            self._index = len(self.entries) - 1
        elif self._index > 0:
            self._index -= 1
        else:
            return None
        return self.entries[self._index]

    def next(self) -> str | None:
        """Step forward; past the newest entry the saved draft comes back."""
        if self._index is None:
            return None
        if self._index < len(self.entries) - 1:
            self._index += 1
            return self.entries[self._index]
        self._index = None
        return self._draft


class PromptInput(TextArea):
    """Multi-line prompt input; see the module docstring for keys."""

    class Submitted(Message):
        """The user pressed Enter with ``text`` (already stripped, never empty)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, *, id: str | None = None, placeholder: str = "") -> None:
        super().__init__(id=id, placeholder=placeholder, soft_wrap=True, show_line_numbers=False,
                         tab_behavior="focus", compact=True)
        self.prompt_history = PromptHistory()

    def _set_text(self, text: str) -> None:
        self.text = text
        self.move_cursor(self.document.end)

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if key == "enter":
            event.stop()
            event.prevent_default()
            text = self.text.strip()
            if text:
                self.prompt_history.add(text)
                self.post_message(self.Submitted(text))
                self.clear()
            return
        if key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            start, end = self.selection
            self.replace("\n", start, end, maintain_selection_offset=False)
            return
        row, _ = self.cursor_location
        if key == "up" and row == 0:
            text = self.prompt_history.previous(self.text)
            if text is not None:
                event.stop()
                event.prevent_default()
                self._set_text(text)
                return
        if key == "down" and row == self.document.line_count - 1:
            text = self.prompt_history.next()
            if text is not None:
                event.stop()
                event.prevent_default()
                self._set_text(text)
                return
        await super()._on_key(event)


def forward_typing(widget, event: events.Key) -> bool:
    """Send a printable key typed on ``widget`` (a tool block, a stop panel) to the prompt input
    of its screen, so typing is never lost: the prompt gets focus and the character.

    Keys bound on the focus chain (``v``, ``c``, space, ...) are left alone. Returns True when
    the key was forwarded (the event is then stopped)."""
    if not event.is_printable or not event.character or event.key in widget.screen.active_bindings:
        return False
    try:
        prompt = widget.screen.query_one(PromptInput)
    except Exception:  # noqa: BLE001 - no prompt on this screen: leave the key alone
        return False
    if not prompt.focusable:
        return False
    event.stop()
    event.prevent_default()
    prompt.insert(event.character)
    prompt.focus()
    return True
