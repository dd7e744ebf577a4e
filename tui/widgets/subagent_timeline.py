"""The sub-agent timeline, docked above the prompt: one card per sub-agent of the turn, side by
side, each with its index, title, status (running, done, or the reason it failed), elapsed time
(ticking while it runs) and tokens.

It is hidden until a turn starts sub-agents and cleared when the next turn starts; after its turn
it stays, and collapses to one summary line (``c`` on a card, or a click on the header); ``c``
keeps the focus on the timeline (its header, where ``c`` or Enter expands it again). A
card, chosen with Enter or a click (F3 focuses the first one; Left / Right move between them),
posts ``SubagentTimeline.Open`` with the sub-agent's journal: the app opens its conversation
read-only (tui/screens/subagent_view.py). Times are formatted by the ``duration_format`` given
(the tool blocks' one by default), so snapshot tests can freeze them.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Static

from .token_count import format_tokens
from .tool_block import format_duration

#: How often running cards redraw their elapsed time (seconds).
TICK_S = 0.5
#: How a card names a status (a ``SubagentFailed.stop_reason`` or ``running`` / ``done``).
STATUS_WORDS = {"max_turns": "turn cap", "timeout": "timed out", "cancelled": "cancelled", "error": "failed",
                "stuck": "stuck", "budget": "budget spent", "interrupted": "interrupted"}


class SubagentCard(Static, can_focus=True):
    """One sub-agent: ``index``, ``description``, ``status`` (``running``, ``done`` or the failure
    reason), elapsed seconds, tokens, its last tool while it runs (then the first line of its
    result, or why it failed) and the path of its journal."""

    BINDINGS = [Binding("enter", "open", "Open", show=False),
                Binding("left", "move(-1)", "Previous", show=False),
                Binding("right", "move(1)", "Next", show=False),
                Binding("c", "collapse", "Collapse", show=False)]

    def __init__(self, task_id: str, index: int, description: str, journal_path: str,
                 duration_format: Callable[[float], str], clock: Callable[[], float]) -> None:
        super().__init__(id=None)
        self.task_id, self.index, self.description = task_id, index, description
        self.journal_path = journal_path
        self.status = "running"
        self.message = ""
        self.tokens = 0
        self.last_tool = ""
        self._format, self._clock = duration_format, clock
        self.started_at = clock()
        self.duration_s: float | None = None

    @property
    def running(self) -> bool:
        return self.status == "running"

    @property
    def elapsed_s(self) -> float:
        """Seconds since it started, or its run time once it ended."""
        return self.duration_s if self.duration_s is not None else max(0.0, self._clock() - self.started_at)

    def render(self) -> Text:
        title = Text(f"#{self.index} ", style="bold")
        title.append(self.description)
        status_style = {"running": "yellow", "done": "green"}.get(self.status, "red")
        mark = {"running": "●", "done": "✓"}.get(self.status, "✗")
        line = Text()
        line.append(f"{mark} {STATUS_WORDS.get(self.status, self.status)}", style=status_style)
        line.append(f" · {self._format(self.elapsed_s)} · {format_tokens(self.tokens)} tok", style="dim")
        tail = self.last_tool if self.running else self.message
        text = Text.assemble(title, "\n", line)
        if tail:
            text.append("\n" + tail, style="dim")
        text.no_wrap = True
        text.overflow = "ellipsis"
        return text

    def end(self, status: str, duration_s: float, tokens: int, message: str = "") -> None:
        """Show how it ended: ``status`` (``done`` or a reason), its run time (seconds), tokens."""
        prefix = f"Sub-agent {self.index} ({self.description}) "
        message = message.removeprefix(prefix).strip().splitlines()[0] if message.strip() else ""
        self.status, self.duration_s, self.tokens, self.message = status, duration_s, tokens, message
        self.set_class(status == "done", "-done")
        self.set_class(status != "done", "-failed")
        self.refresh()

    def action_open(self) -> None:
        self.post_message(SubagentTimeline.Open(self.journal_path, f"Sub-agent {self.index}: {self.description}"))

    def action_move(self, step: int) -> None:
        cards = [c for c in self.parent.children if isinstance(c, SubagentCard)] if self.parent else []
        if self in cards:
            cards[(cards.index(self) + step) % len(cards)].focus()

    def on_click(self) -> None:
        self.action_open()

    def action_collapse(self) -> None:
        """Collapse the timeline to its header; the focus stays on the timeline (its header, where
        ``c`` or Enter expands it again)."""
        self.post_message(SubagentTimeline.Toggle(keep_focus=True))


class _Header(Static):
    """The timeline's header: counts by status; a click collapses or expands. Focusable only
    while the timeline is collapsed by a key on a card (``c``, Enter or Space there expand it
    again): a hidden timeline must never take the focus from the prompt (keys typed at start go there)."""

    can_focus = False
    BINDINGS = [Binding("c,enter,space", "toggle", "Expand", show=False)]

    def action_toggle(self) -> None:
        self.post_message(SubagentTimeline.Toggle(keep_focus=self.has_focus))

    def on_click(self) -> None:
        self.action_toggle()


class SubagentTimeline(Vertical):
    """The cards of the turn's sub-agents (see the module docstring). ``duration_format``:
    seconds -> text; ``clock``: monotonic seconds (for the elapsed time of running cards)."""

    DEFAULT_CSS = """
    SubagentTimeline {
        display: none;
        height: auto;
        max-height: 7;
        margin: 0 1;
    }
    SubagentTimeline.-shown {
        display: block;
    }
    SubagentTimeline _Header {
        height: 1;
        color: $text-muted;
    }
    SubagentTimeline #subagent-cards {
        height: auto;
        overflow-x: auto;
    }
    SubagentTimeline.-collapsed #subagent-cards {
        display: none;
    }
    SubagentCard {
        width: 1fr;
        min-width: 20;
        max-width: 40;
        height: 5;
        padding: 0 1;
        border: round $panel-lighten-2;
    }
    SubagentCard.-done {
        border: round $success 60%;
    }
    SubagentCard.-failed {
        border: round $error 70%;
    }
    SubagentCard:focus {
        border: round $accent;
        background: $boost;
    }
    """

    class Open(Message):
        """Open the conversation of the sub-agent whose journal is ``journal_path``."""

        def __init__(self, journal_path: str, title: str) -> None:
            super().__init__()
            self.journal_path, self.title = journal_path, title

    class Toggle(Message):
        """Collapse or expand the timeline; ``keep_focus``: a key on the timeline asked, so the
        focus stays on it (the header when collapsed, the first card when expanded)."""

        def __init__(self, keep_focus: bool = False) -> None:
            super().__init__()
            self.keep_focus = keep_focus

    def __init__(self, *, duration_format: Callable[[float], str] | None = None,
                 clock: Callable[[], float] = time.monotonic, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._format = duration_format or format_duration
        self._clock = clock
        self.cards: dict[str, SubagentCard] = {}
        self._ticker: Any = None

    def compose(self) -> ComposeResult:
        yield _Header("")
        yield Horizontal(id="subagent-cards")

    # -- events --------------------------------------------------------------------------------
    async def started(self, event: Any) -> SubagentCard:
        """A ``SubagentStarted``: add its card (shows the timeline)."""
        card = SubagentCard(event.task_id, event.index, event.description, event.journal_path,
                            self._format, self._clock)
        self.cards[event.task_id] = card
        row = self.query_one("#subagent-cards", Horizontal)
        later = [c for c in row.children if isinstance(c, SubagentCard) and c.index > card.index]
        await row.mount(card, before=later[0] if later else None)  # in index order, whatever starts first
        self.add_class("-shown")
        if self._ticker is None:
            self._ticker = self.set_interval(TICK_S, self._tick)
        self._update_header()
        return card

    def progress(self, event: Any) -> None:
        """A ``SubagentProgress``: its tokens and last tool."""
        card = self.cards.get(event.task_id)
        if card is not None:
            card.tokens, card.last_tool = event.tokens, event.last_tool
            card.refresh()

    async def finished(self, event: Any) -> None:
        """A ``SubagentCompleted`` or ``SubagentFailed``: its end (a card for one that never
        started: cancelled while it waited for a slot)."""
        card = self.cards.get(event.task_id)
        if card is None:
            card = await self.started(_Unstarted(event))
        usage = event.usage
        tokens = max(card.tokens, usage.prompt_tokens + usage.completion_tokens)
        status = "done" if event.type == "subagent_completed" else event.stop_reason
        text = event.summary if event.type == "subagent_completed" else event.message
        card.end(status, event.duration_s, tokens, text)
        self._update_header()

    async def restore(self, task_id: str, index: int, description: str, journal_path: str,
                      status: str | None, duration_s: float | None, tokens: int | None,
                      summary: str | None = None) -> None:
        """Show a sub-agent of a resumed session from its journal records: ended with ``status``
        after ``duration_s`` seconds and ``tokens``, its ``summary`` (the first line of its result,
        or why it stopped) as the live card showed it, or ``cancelled`` (``status`` None: the
        session stopped while it ran, so it has no end record)."""
        card = self.cards.get(task_id)
        if card is None:
            card = await self.started(_Unstarted.of(task_id, index, description, journal_path))
        card.end(status or "cancelled", duration_s or 0.0, tokens or 0,
                 summary or ("" if status else "was cancelled: the session stopped while it ran"))
        self._update_header()

    async def clear(self) -> None:
        """Forget the cards (a new turn): hidden until its sub-agents start."""
        self.cards.clear()
        await self.query_one("#subagent-cards", Horizontal).remove_children()
        self.remove_class("-shown", "-collapsed")
        self.query_one(_Header).can_focus = False
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def focus_first(self) -> bool:
        """Focus the first card (expanding the timeline); False when there is none."""
        if not self.cards:
            return False
        self.remove_class("-collapsed")
        self.query_one(_Header).can_focus = False
        self._update_header()
        min(self.cards.values(), key=lambda card: card.index).focus()
        return True

    def on_subagent_timeline_toggle(self, message: "SubagentTimeline.Toggle") -> None:
        message.stop()
        self.toggle_class("-collapsed")
        self._update_header()
        header = self.query_one(_Header)
        collapsed = self.has_class("-collapsed")
        header.can_focus = collapsed and message.keep_focus
        if message.keep_focus:
            if collapsed:
                header.focus()
            elif self.cards:
                min(self.cards.values(), key=lambda card: card.index).focus()

    # -- drawing -------------------------------------------------------------------------------
    def _tick(self) -> None:
        running = [card for card in self.cards.values() if card.running]
        for card in running:
            card.refresh()
        if not running and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def _update_header(self) -> None:
        cards = list(self.cards.values())
        counts: dict[str, int] = {}
        for card in cards:
            key = card.status if card.status in ("running", "done") else "failed"
            counts[key] = counts.get(key, 0) + 1
        parts = [f"{counts[k]} {k}" for k in ("running", "done", "failed") if counts.get(k)]
        arrow = "▸" if self.has_class("-collapsed") else "▾"
        text = Text(f"{arrow} Sub-agents ({len(cards)}): ", style="bold")
        text.append(", ".join(parts))
        text.append("  · F3 select · Enter open · c collapse" if not self.has_class("-collapsed")
                    else "  · F3 or a click expands", style="dim")
        self.query_one(_Header).update(text)


class _Unstarted:
    """The ``SubagentStarted`` a sub-agent cancelled before it started never sent (or one made
    from a resumed journal's record, ``of``)."""

    @classmethod
    def of(cls, task_id: str, index: int, description: str, journal_path: str) -> "_Unstarted":
        made = cls.__new__(cls)
        made.task_id, made.index, made.description, made.journal_path = task_id, index, description, journal_path
        return made

    def __init__(self, event: Any) -> None:
        self.task_id, self.index, self.journal_path = event.task_id, event.index, ""
        # the runner's message: "Sub-agent N (TITLE) was cancelled before it started"
        head = f"Sub-agent {event.index} ("
        message = event.message or ""
        title = message[len(head):].rsplit(")", 1)[0] if message.startswith(head) and ")" in message else ""
        self.description = title or f"sub-agent {event.index}"
