"""The prompt box: a multi-line ``TextArea`` where Enter sends.

Keys: Enter posts ``PromptInput.Submitted`` (text stripped; empty text is ignored); Shift+Enter
or Ctrl+J inserts a newline; Up on the first line and Down on the last line walk the history of
sent prompts (the draft being typed is kept and comes back after the newest entry). Tab on a
one-line ``/name`` prompt with the cursor at its end completes the command name (see
``tui.commands.complete_command``; several candidates are listed on the box's bottom border);
anywhere else Tab moves the focus as usual. PageUp / PageDown scroll the conversation.

A paste (``events.Paste``, or Ctrl+V from the app's clipboard) is inserted as plain text by
``clean_paste``: ANSI escape sequences removed, other control characters dropped except tab and
newline, line ends made ``\n``; one paste is one undo step.
"""

from __future__ import annotations

import re
from functools import cache

from textual import events
from textual.binding import Binding
from textual.geometry import Offset
from textual.message import Message
from textual.widgets import TextArea

# The patterns below are compiled on the first paste and ``tui.commands`` is imported on the
# first Tab: the prompt is part of the first frame, whose imports are kept to what it shows.

# ANSI / VT escape sequences; an ESC that starts none of them is removed on its own.
_ESCAPE_SEQUENCE = (
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]?"  # CSI: colours, cursor moves (also cut short at the end)
    r"|\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: window titles, hyperlinks; ends with BEL or ST
    r"|[PX^_][^\x1b]*\x1b\\"  # DCS, SOS, PM, APC strings (unended: the ESC goes, the text stays)
    r"|[ -/]+[0-~]"  # character-set and similar choices (ESC ( B, ESC # 8)
    r"|[0-?c\\]"  # ESC 7 / ESC 8 (save / restore cursor), keypad modes, reset, a stray ST
    r")?"  # any other ESC goes alone: the letter after it is text (ESC b stays "b")
    r"|\x9b[0-?]*[ -/]*[@-~]"  # CSI as one 8-bit character
)
# C0 controls but tab and newline, DEL, C1 controls.
_CONTROL = r"[\x00-\x08\x0b-\x1f\x7f-\x9f]"


@cache
def _pattern(source: str) -> re.Pattern[str]:
    return re.compile(source)


def clean_paste(text: str) -> str:
    """Return pasted ``text`` as plain text for the prompt.

    ANSI escape sequences (colours, cursor moves, titles, hyperlinks) are removed with their
    parameters; any other ESC is removed on its own (the character after it is kept);
    ``\\r\\n`` and a lone ``\\r`` become ``\\n``; every other control character (C0 but
    tab and newline, DEL, C1) is dropped.
    """
    if "\x1b" in text or "\x9b" in text:
        text = _pattern(_ESCAPE_SEQUENCE).sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _pattern(_CONTROL).sub("", text)


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

    # PageUp / PageDown scroll the conversation (the app's actions), not the prompt's cursor.
    BINDINGS = [
        Binding("pageup", "app.scroll_conversation(-1)", "Scroll up", show=False),
        Binding("pagedown", "app.scroll_conversation(1)", "Scroll down", show=False),
    ]

    class Submitted(Message):
        """The user pressed Enter with ``text`` (already stripped, never empty)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, *, id: str | None = None, placeholder: str = "") -> None:
        super().__init__(id=id, placeholder=placeholder, soft_wrap=True, show_line_numbers=False,
                         tab_behavior="focus", compact=True)
        self.prompt_history = PromptHistory()
        self._hint_for: str | None = None  # the text the completion hint was shown for

    def scroll_cursor_visible(self, center: bool = False, animate: bool = False) -> Offset:
        """Textual's ``TextArea.scroll_cursor_visible``, skipped while the cursor lies beyond the
        document. Textual 8.2.8's undo resizes the box (a paste of 12+ lines loses its scrollbar)
        before it moves the cursor back into the shorter text, and scrolling to that stale cursor
        raised ValueError and crashed the app; the cursor is scrolled to once it has moved."""
        row, _ = self.cursor_location
        if row >= self.document.line_count:
            return Offset(0, 0)
        return super().scroll_cursor_visible(center=center, animate=animate)

    def _set_text(self, text: str) -> None:
        self.text = text
        self.move_cursor(self.document.end)

    # -- pasting ---------------------------------------------------------------------------------
    def insert_paste(self, text: str) -> str:
        """Insert pasted ``text`` over the selection, cleaned by ``clean_paste``, as one undo
        step, and put the cursor after it. Returns the text inserted ('' when nothing was left or
        the box is read-only)."""
        text = clean_paste(text)
        if not text or self.read_only:
            return ""
        self.history.checkpoint()  # never merged with the typing before it ...
        result = self.replace(text, *self.selection, maintain_selection_offset=False)
        self.history.checkpoint()  # ... or after it
        self.move_cursor(result.end_location)
        return text

    async def _on_paste(self, event: events.Paste) -> None:
        event.stop()
        event.prevent_default()  # TextArea's own handler would insert the raw text
        self.insert_paste(event.text)
        self.focus()

    def action_paste(self) -> None:
        """Ctrl+V: paste the app's clipboard, cleaned like a terminal paste."""
        self.insert_paste(self.app.clipboard)

    # -- command completion ------------------------------------------------------------------------
    def complete_command_name(self) -> bool:
        """Tab: complete the slash command name when the prompt is one line ``/name...`` and the
        cursor is at its end. Returns False when that is not the case (Tab then moves the focus).

        A unique match becomes ``/name `` (a space after it); several matches are completed to
        their longest common start and listed on the box's bottom border until the text
        changes; no match changes nothing.
        """
        if not self.selection.is_empty or self.cursor_location != self.document.end:
            return False
        from ..command_table import complete_command

        completion = complete_command(self.text)
        if completion is None:
            return self.complete_mention()
        if completion.text != self.text:
            self.replace(completion.text, self.document.start, self.document.end,
                         maintain_selection_offset=False)
            self.move_cursor(self.document.end)
        if len(completion.candidates) > 1:
            self.border_subtitle = "  ".join(f"/{c.name}" for c in completion.candidates)
            self._hint_for = completion.text
        else:
            self._clear_hint()
        return True

    #: The workspace's files for ``@path`` completion (set by the app when the session opens).
    workspace_files: list[str] = []

    def complete_mention(self) -> bool:
        """Tab at the end of an ``@path`` word: complete it from ``workspace_files``
        (``path_completion``); several matches are listed on the bottom border."""
        from ..path_completion import MAX_LISTED, complete_mention

        completion = complete_mention(self.text, self.workspace_files)
        if completion is None:
            return False
        if completion.text != self.text:
            self.replace(completion.text, self.document.start, self.document.end, maintain_selection_offset=False)
            self.move_cursor(self.document.end)
        if len(completion.candidates) > 1:
            shown = completion.candidates[:MAX_LISTED]
            more = len(completion.candidates) - len(shown)
            self.border_subtitle = "  ".join(f"@{p}" for p in shown) + (f"  +{more}" if more > 0 else "")
            self._hint_for = completion.text
        else:
            self._clear_hint()
        return True

    def _clear_hint(self) -> None:
        if self._hint_for is not None:
            self._hint_for = None
            self.border_subtitle = ""

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        """Drop the completion hint once the text differs from what it was shown for; while an
        ``@path`` word is typed at the end, list the files it matches (Tab picks)."""
        if self._hint_for is not None and self.text != self._hint_for:
            self._clear_hint()
        self._hint_mentions()

    def _hint_mentions(self) -> None:
        if not self.workspace_files or "@" not in self.text:
            return
        from ..path_completion import MAX_LISTED, complete_mention

        completion = complete_mention(self.text, self.workspace_files)
        if completion is None or not completion.candidates or completion.candidates == (self.text,):
            return
        shown = completion.candidates[:MAX_LISTED]
        more = len(completion.candidates) - len(shown)
        self.border_subtitle = "Tab: " + "  ".join(f"@{p}" for p in shown) + (f"  +{more}" if more > 0 else "")
        self._hint_for = self.text

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
        if key == "tab" and self.complete_command_name():
            event.stop()
            event.prevent_default()
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
