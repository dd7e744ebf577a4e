"""A resumed conversation drawn from its end: the last screenful of messages at once, the earlier
ones when the user scrolls up to them (issue 18: ``--continue`` on a 5 000-message session shows its
last message as fast as an empty session paints).

``rebuild_conversation`` (tui/resume_view.py) replays only the journal records from
``first_shown(records, FIRST_SHOWN_MESSAGES)`` on; the records before it update the sidebar only.
It then hands the pane an ``EarlierMessages`` loader (``Conversation.earlier``): when the view
reaches the top, the pane asks it for ``REVEAL_BATCH`` more messages, and Ctrl+Home asks for all.
A batch is replayed through its own ``EventHandler`` (so a turn streaming at the same time keeps
its state) whose blocks are mounted, in order, just under the conversation's header (the welcome
and "Resumed session" lines). A batch always starts at a message that is not a tool result, so a
tool call and its result are drawn by the same batch. What the earlier records did to the sidebar
(the plan checklist, undone files) was already applied by the first pass; a batch only draws
blocks.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable

from textual.widget import Widget

from .event_handler import EventHandler

if TYPE_CHECKING:
    from agent.session.resume import LoadedSession

    from .app import OpenCLIApp

#: Messages drawn at once when a session is resumed: about a tall terminal's screenful (the pane
#: draws more while the view is not full: ``Conversation.fill_view``); fewer is a faster
#: ``--continue`` (issue 18).
FIRST_SHOWN_MESSAGES = 20


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


def records_before(positions: list[int], index: int) -> int:
    """The record index where the records of message ``index`` begin: just after message
    ``index - 1`` (the records between two messages go with the later batch's predecessor, i.e.
    a batch ending at message ``index`` holds them). 0 for the first message."""
    return positions[index - 1] + 1 if index > 0 else 0


class _MountUnderHeader:
    """Stands in for the conversation pane for a batch's handler: ``add`` mounts each block after
    the previous one placed, starting just under ``after`` (the header's last block); everything
    else goes to the pane."""

    def __init__(self, conversation: Any, after: Widget) -> None:
        self._conversation = conversation
        self.last = after  # the widget the next block goes after
        self.added = 0

    async def add(self, block: Widget) -> None:
        pane = self._conversation
        if not self.last.display:  # the pane hid its older blocks meanwhile: this one is among them
            block.display = False
            pane.hidden_count += 1
        await pane.mount(block, after=self.last)
        self.last = block
        self.added += 1

    async def mount(self, widget: Widget, *, after: Widget | None = None, **kwargs: Any) -> None:
        pane = self._conversation
        if after is not None and not after.display:  # see add
            widget.display = False
            pane.hidden_count += 1
        await pane.mount(widget, after=after, **kwargs)
        if after is self.last:  # a reminder mark under the last block: the next block goes after it
            self.last = widget

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conversation, name)


class EarlierMessages:
    """Draws the messages of a resumed session that are above the first drawn one.

    ``remaining`` is how many are not drawn yet (messages 0 .. remaining-1 of the journal);
    ``await load(count)`` draws about ``count`` more (all when None) under ``header`` and returns
    how many blocks it mounted. Loads run one at a time. ``replay(handler)`` makes the object
    that draws a batch's records through ``handler`` (``await replay.record(record)``, one call
    per record in order: tui/resume_view.py's ``_Replay`` in its backfill mode)."""

    def __init__(self, app: "OpenCLIApp", resumed: "LoadedSession", header: Widget, first: int,
                 replay: Callable[[EventHandler], Any]) -> None:
        self.app, self.resumed, self.header = app, resumed, header
        self._replay = replay
        self.records = resumed.records
        self.positions = message_positions(self.records)
        self.remaining = first
        self._lock = asyncio.Lock()

    async def load(self, count: int | None = None) -> int:
        """Draw about ``count`` earlier messages (at least one; all when None) under the header;
        returns the number of blocks mounted (0 when nothing is left or the header is gone)."""
        async with self._lock:
            end = self.remaining
            if end <= 0 or not self.header.is_attached:
                return 0
            start = 0 if count is None else batch_start(self.records, self.positions, end - max(1, count))
            batch = self.records[records_before(self.positions, start):records_before(self.positions, end)]
            pane = _MountUnderHeader(self.header.parent, self.header)
            handler = self._handler(pane)
            replay = self._replay(handler)
            for record in batch:
                await replay.record(record)
            await handler.close_open_blocks()
            self.remaining = start
            return pane.added

    def _handler(self, pane: _MountUnderHeader) -> "BatchHandler":
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
