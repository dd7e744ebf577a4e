"""Conversation blocks other than tool calls: user message, assistant markdown, reasoning,
one-line notices, errors, the stop reason of a turn, and the plan checklist.

Every text that comes from the user, the model or a tool is shown without markup parsing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from rich.text import Text
from textual.app import ComposeResult
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

if TYPE_CHECKING:
    from textual.widgets._markdown import MarkdownStream

# Textual's Markdown widget and rich's markdown renderer are imported when the first reply
# arrives, not at start-up: first paint stays fast.


class UserBlock(Static):
    """The user's message, shown literally."""

    def __init__(self, text: str) -> None:
        super().__init__(Text(text), markup=False, classes="block")
        self.text = text


class AssistantBlock(Widget):
    """The assistant's reply as markdown, written through one ``MarkdownStream``.

    Call ``await write(fragment)`` for each piece and ``await finish()`` at the end of the block.
    ``continuation`` marks a block that continues the previous one (a long reply is split at
    paragraph breaks so each markdown document stays small); it has no top margin.
    ``await flatten()`` swaps the finished markdown widget tree (dozens of widgets for a long
    reply) for a single widget drawing the same text, so old blocks cost layout almost nothing.
    """

    DEFAULT_CSS = """
    AssistantBlock { height: auto; }
    """

    def __init__(self, continuation: bool = False) -> None:
        super().__init__(classes="block continuation" if continuation else "block")
        self._stream: MarkdownStream | None = None
        self.text = ""
        self.flat = False

    def compose(self) -> ComposeResult:
        from textual.widgets import Markdown

        yield Markdown("", classes="assistant-markdown")

    async def write(self, fragment: str) -> None:
        """Append a markdown fragment (opens the stream on first use)."""
        if not fragment:
            return
        self.text += fragment
        if self._stream is None:
            from textual.widgets import Markdown

            self._stream = Markdown.get_stream(self.query_one(Markdown))
        await self._stream.write(fragment)

    async def finish(self) -> None:
        """Close the stream, rendering anything still pending. Safe to call twice."""
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

    async def flatten(self) -> None:
        """Replace the markdown widgets with one ``Static`` (after ``finish``). Idempotent."""
        if self.flat or self._stream is not None or not self.is_mounted:
            return
        from textual.widgets import Markdown

        from .flat_markdown import FlatMarkdownView

        self.flat = True
        await self.query_one(Markdown).remove()
        await self.mount(FlatMarkdownView(self.text, classes="assistant-flat"))


class ReasoningBlock(Widget, can_focus=True):
    """The model's reasoning: a dim one-line header, collapsed by default; click or Enter expands.

    The body is mounted only when first expanded.
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

    def __init__(self, message: str, kind: str = "notice") -> None:
        super().__init__(Text(message), markup=False, classes=f"block line {kind}")
        self.message = message


class ReminderMark(Static):
    """A dim one-line mark under the tool block a reminder was appended to:
    "↳ reminder: run the relevant tests...". The full text is the tooltip."""

    def __init__(self, text: str) -> None:
        line = " ".join(text.split())
        super().__init__(Text(f"↳ reminder: {line}", no_wrap=True, overflow="ellipsis"), markup=False,
                         classes="reminder-mark")
        self.text = text
        self.tooltip = text


class ErrorBlock(Static):
    """An error in one line (or a few), in the error colour."""

    def __init__(self, message: str) -> None:
        super().__init__(Text(f"✗ {message}"), markup=False, classes="block line error")
        self.message = message


#: What the user sees when a turn stops for a reason other than "done".
STOP_TEXT = {
    "max_turns": "■ Stopped: step limit reached",
    "stuck": "■ Stopped: the agent was repeating itself",
    "cancelled": "■ Cancelled by you",
    "error": "■ Stopped by an error",
}


class StopBlock(Static):
    """The end of a turn that did not finish normally; ``reason`` is the stop reason."""

    def __init__(self, reason: str, detail: str = "") -> None:
        text = STOP_TEXT.get(reason, f"■ Stopped ({reason})")
        if detail and reason == "max_turns":
            text += f": {detail}"
        super().__init__(Text(text), markup=False, classes=f"block line stop stop-{reason}")
        self.reason = reason


_PLAN_MARK = {"pending": "☐", "in_progress": "▶", "done": "☑", "skipped": "⊘"}


class PlanBlock(Static):
    """The plan checklist, one line per step (rendered simply for now)."""

    def __init__(self, steps: Iterable[object]) -> None:
        text = Text("Plan\n", style="bold")
        for step in steps:
            status = getattr(step, "status", "pending")
            text.append(f"  {_PLAN_MARK.get(status, '☐')} {getattr(step, 'text', step)}\n")
        text.rstrip()
        super().__init__(text, markup=False, classes="block plan")


class WelcomeBlock(Static):
    """The first block: what this is, where it works, how to start."""

    def __init__(self, workspace_name: str, model: str) -> None:
        text = Text()
        text.append("opencli-tui", style="bold")
        text.append("  a terminal coding agent\n")
        text.append(f"workspace {workspace_name} · model {model}\n", style="dim")
        text.append("Type a task and press Enter. /help lists keys and commands.", style="dim")
        super().__init__(text, markup=False, classes="block welcome")
