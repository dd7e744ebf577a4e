"""Messages drawn from the session journal when the view reaches them (issue 18): a resumed
conversation is drawn from its end, and a long conversation's oldest blocks are removed and drawn
again the same way when scrolled back to.

- Resume: ``rebuild_conversation`` (tui/resume_view.py) replays only the journal records from
  ``first_shown(records, FIRST_FRAME_MESSAGES)`` on (the records before it update the sidebar
  only; the pane draws the rest of the last ``FIRST_SHOWN_MESSAGES`` after the first frame), so
  the cost of ``--continue`` does not grow with the session's length. A ``GapLine`` under the header (the welcome and "Resumed session" lines) stands
  for the messages above, and an ``EarlierMessages`` loader (``Conversation.earlier``) draws them.
- A long conversation: the pane removes its oldest hidden blocks, up to a prompt's block that
  knows where its turn starts in the journal (``UserBlock.journal_at``), and puts a gap there
  whose loader reads the journal back (tui/resume_view.py ``journal_loader``) when it is first
  scrolled to.

When the view scrolls up onto the gap, the pane asks the loader for the last ``REVEAL_BATCH``
messages it stands for (drawn under the gap); when it scrolls down onto it, or on Ctrl+Home, for
the first ones (drawn above it). A batch is replayed through its own ``EventHandler`` (so a turn
streaming at the same time keeps its state). A batch never starts at a tool result, so a tool
call and its result are drawn by the same batch. What the records did to the sidebar (the plan
checklist, undone files) was applied when they were first read; a batch only draws blocks.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable, Union

from textual.widget import Widget

from .event_handler import EventHandler

if TYPE_CHECKING:
    from agent.session.resume import LoadedSession

    from .app import OpenCLIApp
    from .widgets.blocks import GapLine

#: Messages drawn when a session is resumed, about two tall terminal screenfuls (the pane draws
#: more while the view is not full: ``Conversation.fill_view``)...
FIRST_SHOWN_MESSAGES = 20
#: ... of which the last this many are drawn before the first frame, the others just after it
#: (above the view): the last message is on the screen sooner (``benchmarks/long_chat.py``:
#: about 0.1 s less on a 5000-message ``--continue``, issue 18).
FIRST_FRAME_MESSAGES = 6


def message_positions(records: list[Any]) -> list[int]:
    """The indexes in ``records`` (a journal's records) of its message records, in order."""
    from agent.session.records import MessageRecord

    return [i for i, record in enumerate(records) if isinstance(record, MessageRecord)]


def batch_start(records: list[Any], positions: list[int], wanted: int) -> int:
    """The message index (into ``positions``) a batch meant to start at message ``wanted`` starts
    at: ``wanted`` moved back past tool results, so the assistant message holding their calls is
    in the same batch. 0 when ``wanted`` <= 0."""
    index = max(0, min(wanted, len(positions)))
    while 0 < index < len(positions) and records[positions[index]].message.role == "tool":
        index -= 1
    return index


def first_shown(records: list[Any], count: int) -> int:
    """The message index the first drawn batch of a resumed journal starts at, for about the last
    ``count`` messages (0: every message is drawn)."""
    positions = message_positions(records)
    return batch_start(records, positions, len(positions) - count)


def batch_end(records: list[Any], positions: list[int], wanted: int) -> int:
    """The message index a batch meant to end before message ``wanted`` ends before: ``wanted``
    moved on past tool results, so their call's message and they are in the same batch; at most
    ``len(positions)``."""
    index = max(0, min(wanted, len(positions)))
    while index < len(positions) and records[positions[index]].message.role == "tool":
        index += 1
    return index


def records_before(positions: list[int], index: int) -> int:
    """The record index where the records of message ``index`` begin: just after message
    ``index - 1`` (the records between two messages go with the later batch's predecessor, i.e.
    a batch ending at message ``index`` holds them). 0 for the first message."""
    return positions[index - 1] + 1 if index > 0 else 0


class _MountAt:
    """Stands in for the conversation pane for a batch's handler: ``add`` mounts each block at
    the gap, in order: just above it (``above``) or, starting just under it, each after the
    previous one. Everything else goes to the pane. A block placed among the pane's hidden
    blocks (``Conversation.hidden_count``) is hidden too; the others are mounted hidden and
    shown together by ``show()`` once the batch is drawn, in one layout pass (shown one at a
    time, the view showed the batch filling in for a second or more, and each block laid the
    pane out again)."""

    def __init__(self, conversation: Any, gap: Widget, *, above: bool) -> None:
        self._conversation = conversation
        self.gap = gap
        self.above = above
        self.last = gap  # the widget the next block goes after (not ``above``)
        self.added = 0
        self._waiting: list[Widget] = []

    def _hidden_at(self, neighbour: Widget, block: Widget) -> None:
        block.display = False
        if not neighbour.display and neighbour not in self._waiting:  # the pane hid its older
            self._conversation.hidden_count += 1                     # blocks: this one is among them
        else:  # (a reminder mark under a block of this batch waits with it)
            self._waiting.append(block)

    def show(self) -> None:
        """Show the blocks the batch drew (those not among the pane's hidden ones)."""
        for block in self._waiting:
            block.display = True
        self._waiting.clear()

    async def add(self, block: Widget) -> None:
        pane = self._conversation
        self._hidden_at(self.gap, block)
        if self.above:
            await pane.mount(block, before=self.gap)
        else:
            await pane.mount(block, after=self.last)
            self.last = block
        self.added += 1

    async def mount(self, widget: Widget, *, after: Widget | None = None, **kwargs: Any) -> None:
        pane = self._conversation
        if after is not None:
            self._hidden_at(after, widget)
        await pane.mount(widget, after=after, **kwargs)
        if after is self.last and not self.above:  # a reminder mark under the last block
            self.last = widget

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conversation, name)


#: A journal read back (a ``LoadedSession``), or how to read it (called in a worker thread).
JournalSource = Union["LoadedSession", Callable[[], "LoadedSession"]]


class EarlierMessages:
    """Draws the messages of a journal's first ``end_record`` records that are not drawn; ``gap``
    (a ``GapLine`` in the pane) stands where they are.

    The journal is ``source``: a ``LoadedSession``, or a function reading it (run in a worker
    thread by the first ``load``). Messages ``lo`` .. ``hi - 1`` (indexes into the message
    records) are not drawn; ``remaining`` is how many (before the journal is read: ``end_record``,
    i.e. "some" when > 0). ``await load(count)`` draws about the last ``count`` of them just
    under the gap, ``load(count, from_start=True)`` the first ones just above it; each
    returns how many blocks it mounted (0 when none are left or the gap is gone). Loads run one at
    a time. ``replay(handler, loaded, first_record)`` makes the object that draws a batch's
    records through ``handler`` (``await replay.record(record)`` per record in order, the first
    being record ``first_record`` of ``loaded``: tui/resume_view.py's ``_Replay`` in its backfill
    mode)."""

    def __init__(self, app: "OpenCLIApp", source: JournalSource, gap: "GapLine", end_record: int,
                 replay: Callable[[EventHandler, "LoadedSession", int], Any]) -> None:
        self.app, self.gap = app, gap
        self.end_record = end_record
        self._source = source
        self._replay = replay
        self._lock = asyncio.Lock()
        self.loaded: "LoadedSession | None" = None
        self.records: list[Any] = []
        self.positions: list[int] = []
        self.lo = self.hi = self.rec_lo = self.rec_hi = 0
        if not callable(source):
            self._bind(source)

    def _bind(self, loaded: "LoadedSession") -> None:
        self.loaded = loaded
        self.records = loaded.records[:self.end_record]
        self.positions = message_positions(self.records)
        self.lo, self.hi = 0, len(self.positions)
        self.rec_lo, self.rec_hi = 0, len(self.records)
        self.gap.set_remaining(self.remaining)

    @property
    def drawn_from_start(self) -> bool:
        """True when the first messages are drawn (above the gap)."""
        return self.lo > 0

    @property
    def remaining(self) -> int:
        """Messages not drawn yet (``end_record`` while the journal is not read)."""
        return self.end_record if self.loaded is None else self.hi - self.lo

    async def load(self, count: int, *, from_start: bool = False) -> int:
        """Draw about ``count`` of the messages not drawn (at least one): the last
        ones under the gap, or with ``from_start`` the first ones above it. Returns the number of
        blocks mounted. ``OSError`` reading the journal is said on the gap line (0 returned)."""
        async with self._lock:
            if self.loaded is None:
                try:
                    self._bind(await asyncio.to_thread(self._source))  # type: ignore[arg-type]
                except OSError as exc:
                    self.gap.update(f"Earlier messages could not be read from the session journal: {exc}")
                    return 0
            if self.remaining <= 0 or not self.gap.is_attached:
                return 0
            positions, records = self.positions, self.records
            wanted = max(1, count)
            if from_start:
                first = self.lo
                end = min(self.hi, max(first + 1, batch_end(records, positions, first + wanted)))
                start_record = self.rec_lo
                end_record = self.rec_hi if end >= self.hi else records_before(positions, end)
            else:
                end = self.hi
                first = max(self.lo, batch_start(records, positions, end - wanted))
                start_record = self.rec_lo if first <= self.lo else records_before(positions, first)
                end_record = self.rec_hi
            pane = _MountAt(self.gap.parent, self.gap, above=from_start)
            handler = self._handler(pane)
            replay = self._replay(handler, self.loaded, start_record)  # type: ignore[arg-type]
            for record in records[start_record:end_record]:
                await replay.record(record)
            await handler.close_open_blocks()
            pane.show()
            if from_start:
                self.lo, self.rec_lo = end, end_record
            else:
                self.hi, self.rec_hi = first, start_record
            self.gap.set_remaining(self.remaining)
            return pane.added

    def _handler(self, pane: _MountAt) -> "BatchHandler":
        live = self.app.handler
        return BatchHandler(self.app, pane, live.status, live.runner, live.duration_format)  # type: ignore[arg-type]


class BatchHandler(EventHandler):
    """An ``EventHandler`` for a batch of earlier messages: no sidebar, no sub-agent timeline (it
    shows the last turn's only), and a stop panel drawn as history (no buttons, no focus)."""

    async def _add_stop_panel(self, event: Any) -> None:
        from .widgets.stop_panel import StopPanel

        guard = self.guard
        panel = StopPanel(event.stop_reason, event.final_text or (guard.message if guard else ""),
                          guard.guard if guard else None)
        await self.conversation.add(panel)
        panel.retire()

    def subagent_timeline(self) -> Any:
        return None
