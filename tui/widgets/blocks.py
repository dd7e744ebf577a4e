"""Conversation blocks other than tool calls: user message, assistant markdown, reasoning,
one-line notices, errors, the stop reason of a turn, and the welcome block.

Every text that comes from the user, the model or a tool is shown without markup parsing.
"""

from __future__ import annotations

import asyncio
import time

from rich.text import Text
from textual.app import ComposeResult
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

# Textual's Markdown widget and rich's markdown renderer are imported when the first reply
# arrives, not at start-up: first paint stays fast.


# Each block styles itself (DEFAULT_CSS): the CSS is parsed when the first block of a kind is
# mounted, not before the first paint (app.tcss holds only the main frame). Selectors start with
# the class name, so Textual's scoping adds nothing, and are more specific than Textual's own
# ``Static`` / ``Widget`` rules they must win over.


class UserBlock(Static):
    """The user's message, shown literally; ``journal_at``: where its turn starts in the
    session journal (a record count), when known."""

    DEFAULT_CSS = """
    UserBlock {
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: outer $user-border;
        background: $surface;
        color: $foreground;
        text-style: bold;
    }
    """

    def __init__(self, text: str, journal_at: int | None = None) -> None:
        super().__init__(Text(text), markup=False, classes="block")
        self.text = text
        #: Records the session journal held before this prompt's (None: not known, e.g. a
        #: prompt sent into a running turn): the blocks above it can be redrawn from them.
        self.journal_at = journal_at


class AssistantBlock(Widget):
    """The assistant's reply as markdown, drawn by one ``FlatMarkdownView`` (rich's renderer).

    Call ``await write(fragment)`` for each piece and ``await finish()`` at the end of the block.
    ``write`` only buffers: a background task redraws the view with the text so far at most every
    ``LIVE_INTERVAL_S`` seconds, so a fast stream costs a few redraws a second, and a redraw that
    adds no line repaints the block without a layout pass. ``finish`` draws whatever is still
    buffered.

    A long reply is drawn as a run of blocks, so each redraw stays small (``cut`` ends a block
    early; ``tui/markdown_split.py`` says where). ``continuation`` marks a block that continues
    the previous one without a blank line between them (no top margin); ``carry`` is markdown it
    is rendered with before its own text (a code fence's opening line or a table's header), and
    ``code_continues_above`` joins its first code block to the previous block's last one.

    Why not Textual's ``Markdown`` widget (DESIGN.md asks for ``Markdown.get_stream()``): it
    builds a widget per paragraph, list item and code block and remounts the last one on every
    append, and each append lays out the whole screen twice. Streaming a 20 KB reply at 200
    chunks/s measured event-loop stalls of 43-51 ms with it (goal: under 50 ms) against about
    20-25 ms with this block (``benchmarks/streaming.py``). The live block and the finished one
    now look the same, where a block used to change look when it was flattened.
    """

    DEFAULT_CSS = """
    AssistantBlock {
        height: auto;
        margin: 1 0 0 0;
    }
    AssistantBlock.continuation {
        margin-top: 0;
    }
    AssistantBlock .assistant-markdown {
        padding: 0 1;
    }
    """

    #: Seconds between two redraws of the block while a reply streams.
    LIVE_INTERVAL_S = 0.1

    def __init__(self, continuation: bool = False, *, carry: str = "",
                 code_continues_above: bool = False) -> None:
        super().__init__(classes="block continuation" if continuation else "block")
        self.text = ""
        self.carry = carry
        self.code_continues_above = code_continues_above
        self.code_continues_below = False
        self._drawn: str | None = ""  # the text last drawn (None: draw again)
        self._pump: asyncio.Task[None] | None = None
        self._flush_now = asyncio.Event()
        self._last_draw = 0.0

    def compose(self) -> ComposeResult:
        from .flat_markdown import FlatMarkdownView

        self._drawn = self.text
        yield FlatMarkdownView(self.carry + self.text, classes="assistant-markdown",
                               code_continues_above=self.code_continues_above,
                               code_continues_below=self.code_continues_below)

    async def write(self, fragment: str) -> None:
        """Append a markdown fragment (drawn within ``LIVE_INTERVAL_S``)."""
        if not fragment:
            return
        self.text += fragment
        if self._pump is None or self._pump.done():
            self._pump = asyncio.create_task(self._run_pump())

    async def _run_pump(self) -> None:
        while self._drawn != self.text and self.is_attached:  # stops if the block is removed
            wait = self._last_draw + self.LIVE_INTERVAL_S - time.monotonic()
            if wait > 0 and not self._flush_now.is_set():
                try:
                    await asyncio.wait_for(self._flush_now.wait(), wait)
                except asyncio.TimeoutError:
                    pass
            if not self._draw():  # not mounted yet: wait for the mount (Textual's event), at most a while
                try:  # (a fixed 0.1 s sleep here made --continue take 0.1 s or more per assistant message)
                    await asyncio.wait_for(self._mounted_event.wait(), self.LIVE_INTERVAL_S)
                except asyncio.TimeoutError:
                    pass
            self._last_draw = time.monotonic()

    def _draw(self) -> bool:
        """Draw the text if it changed; False when the block is not mounted (nothing drawn)."""
        if not (self.is_mounted and self.is_attached):
            return False
        if self._drawn == self.text:
            return True
        from .flat_markdown import FlatMarkdownView

        self._drawn = self.text
        self.query_one(FlatMarkdownView).set_markdown(self.carry + self.text,
                                                      code_continues_below=self.code_continues_below)
        return True

    def cut(self, index: int, *, in_code: bool = False) -> str:
        """Keep the first ``index`` characters of the text and return the rest (it moves to the
        next block); ``in_code``: the cut falls inside a code fence. Call ``finish`` next."""
        self.text, rest = self.text[:index], self.text[index:]
        self.code_continues_below = in_code
        self._drawn = None  # the seam changed how the text draws
        return rest

    async def finish(self) -> None:
        """Draw anything still buffered. Safe to call twice."""
        self._flush_now.set()
        pump, self._pump = self._pump, None
        if pump is not None:
            await pump
        self._draw()
        self._flush_now.clear()


class ReasoningBlock(Widget, can_focus=True):
    """The model's reasoning: a dim one-line header, collapsed by default; click or Enter expands.

    The body is mounted only when first expanded.
    """

    DEFAULT_CSS = """
    ReasoningBlock {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1 0 0;
        border-left: blank;  /* the column the focus mark takes */
        color: $reasoning-text;
    }
    ReasoningBlock .reasoning-header {
        text-style: italic;
    }
    ReasoningBlock .reasoning-body {
        display: none;
        padding: 0 0 0 2;
        text-style: italic;
    }
    ReasoningBlock.-expanded .reasoning-body {
        display: block;
    }
    ReasoningBlock:focus {
        background: $boost;
        border-left: thick $accent;
    }
    """

    BINDINGS = [("enter,space", "toggle", "Expand")]

    expanded: reactive[bool] = reactive(False)

    def __init__(self) -> None:
        super().__init__(classes="block")
        self.text = ""
        self.finished = False
        self._body: Static | None = None

    def compose(self) -> ComposeResult:
        yield Static(self._header(), markup=False, classes="reasoning-header")

    def _header(self) -> Text:
        arrow = "▾" if self.expanded else "▸"
        state = "thought" if self.finished else "thinking..."
        words = len(self.text.split())
        return Text(f"{arrow} {state} ({words} words)")

    def append(self, text: str) -> None:
        """Add streamed reasoning text."""
        self.text += text
        self._refresh()

    def finish(self) -> None:
        """Mark the reasoning complete (header says 'thought')."""
        if not self.finished:
            self.finished = True
            self._refresh()

    def _refresh(self) -> None:
        if not self.is_mounted:
            return
        self.query_one(".reasoning-header", Static).update(self._header())
        if self._body is not None:
            self._body.update(Text(self.text.strip()))

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(expanded, "-expanded")
        if expanded and self._body is None:
            self._body = Static(Text(self.text.strip()), markup=False, classes="reasoning-body")
            self.mount(self._body)
        self._refresh()

    def action_toggle(self) -> None:
        """Expand or collapse."""
        self.expanded = not self.expanded

    def on_click(self) -> None:
        self.action_toggle()


class NoticeBlock(Static):
    """A one-line notice (dim). ``kind`` adds a CSS class: notice, warning, reminder, queued."""

    DEFAULT_CSS = """
    NoticeBlock {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        color: $text-muted;
    }
    NoticeBlock.warning {
        color: $warning;
    }
    NoticeBlock.reminder {
        text-style: italic;
    }
    NoticeBlock.queued {
        color: $secondary;
        text-style: italic;
    }
    """

    def __init__(self, message: str, kind: str = "notice") -> None:
        super().__init__(Text(message), markup=False, classes=f"block line {kind}")
        self.message = message


class GapLine(Static):
    """Stands where messages are not drawn (a resumed session's earlier ones, or the oldest of a
    long conversation, tui/resume_backfill.py): one dim line saying how many (``remaining``; None
    when not known yet) and that scrolling to it draws them."""

    DEFAULT_CSS = """
    GapLine {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        color: $text-muted;
        text-style: italic;
    }
    """

    def __init__(self, remaining: int | None = None) -> None:
        super().__init__(self.describe(remaining), markup=False, classes="block line")

    @staticmethod
    def describe(remaining: int | None) -> Text:
        """The line's text for ``remaining`` messages not drawn (None: not counted yet)."""
        what = "Messages" if remaining is None else f"{remaining:,} message{'' if remaining == 1 else 's'}"
        return Text(f"\u22ef {what} not drawn yet: scrolling onto this line draws them")

    def set_remaining(self, remaining: int | None) -> None:
        """Say ``remaining`` messages are not drawn."""
        self.update(self.describe(remaining))


class ReminderMark(Static):
    """A dim one-line mark under the tool block a reminder was appended to:
    "↳ reminder: run the relevant tests...". The full text is the tooltip."""

    DEFAULT_CSS = """
    ReminderMark.reminder-mark {
        height: 1;
        margin: 0;
        padding: 0 0 0 2;
        color: $text-muted;
        text-style: italic;
    }
    """

    def __init__(self, text: str) -> None:
        line = " ".join(text.split())
        super().__init__(Text(f"↳ reminder: {line}", no_wrap=True, overflow="ellipsis"), markup=False,
                         classes="reminder-mark")
        self.text = text
        self.tooltip = text


class ErrorBlock(Static):
    """An error in one line (or a few), in the error colour."""

    DEFAULT_CSS = """
    ErrorBlock {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        color: $error;
    }
    """

    def __init__(self, message: str) -> None:
        super().__init__(Text(f"✗ {message}"), markup=False, classes="block line error")
        self.message = message


#: What the user sees when a turn stops for a reason other than "done".
STOP_TEXT = {
    "max_turns": "■ Stopped: step limit reached",
    "stuck": "■ Stopped: the agent was repeating itself",
    "cancelled": "■ Cancelled by you",
    "error": "■ Stopped by an error",
    "budget": "■ Stopped: the session budget is spent",  # the detail names the limit and the figures
    "verify_failed": "■ Stopped: the tests still fail after the verify rounds",
}


class StopBlock(Static):
    """The end of a turn that did not finish normally; ``reason`` is the stop reason."""

    DEFAULT_CSS = """
    StopBlock {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        color: $warning;
        text-style: bold;
    }
    StopBlock.stop-error {
        color: $error;
    }
    StopBlock.stop-cancelled {
        color: $text-muted;
    }
    """

    def __init__(self, reason: str, detail: str = "") -> None:
        text = STOP_TEXT.get(reason, f"■ Stopped ({reason})")
        if detail and reason == "max_turns":
            text += f": {detail}"
        elif detail and reason == "budget":
            text = f"■ Stopped: {detail}"
        super().__init__(Text(text), markup=False, classes=f"block line stop stop-{reason}")
        self.reason = reason


class WelcomeBlock(Static):
    """The first block: what this is, where it works, how to start."""

    DEFAULT_CSS = """
    WelcomeBlock {
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: outer $primary;
    }
    """

    def __init__(self, workspace_name: str, model: str) -> None:
        text = Text()
        text.append("opencli-tui", style="bold")
        text.append("  a terminal coding agent\n")
        text.append(f"workspace {workspace_name} · model {model}\n", style="dim")
        text.append("Type a task and press Enter. /help lists keys and commands.", style="dim")
        super().__init__(text, markup=False, classes="block welcome")
