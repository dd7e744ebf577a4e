"""The conversation pane: a vertical scroll of blocks that follows new content.

Every block goes through ``add``; the pane stays anchored to the bottom while the user has not
scrolled up (Textual's anchor releases itself when they do; ``follow()`` re-anchors, e.g. when
the user sends a new prompt).

Long conversations (issue 18): Textual lays out every displayed child of the pane on each layout
pass, so the cost of an exchange grew with the number of blocks shown. While the pane follows the
end, only the last blocks that fill ``KEEP_SCREENS`` heights of the pane (and at least
``KEEP_MIN`` blocks) stay laid out; the older ones are hidden (``display: none``: mounted, kept,
not laid out), ``HIDE_SLACK`` or more at a time. Scrolling to the top shows the previous
``REVEAL_BATCH`` of them, keeping the view where it was, and Ctrl+Home (``to_start``) shows them
all. A block holding the focus is never hidden. The window is measured in rows, not blocks, so a
conversation of many one-line tool blocks still fills the screen, and an exchange costs the same
at message 10 as at message 5 000 (``benchmarks/long_chat.py``).

A resumed session (tui/resume_backfill.py) is drawn from its end: ``earlier`` then holds a loader
for the messages above the first drawn one. Reaching the top with nothing hidden draws the
previous ``REVEAL_BATCH`` of them (keeping the view where it was), Ctrl+Home draws them all, and a
view that the drawn messages do not fill asks for more until it is full or none are left.
"""

from __future__ import annotations

import asyncio

from textual import events
from textual.containers import VerticalScroll
from textual.widget import AwaitMount, Widget

#: While following, the last blocks filling this many heights of the pane stay laid out.
KEEP_SCREENS = 2
#: ... and at least this many blocks, however tall.
KEEP_MIN = 6
#: Older blocks are hidden in batches of at least this many (one restyle per batch, not per block).
HIDE_SLACK = 8
#: Blocks shown again each time the view reaches the top of what is shown.
REVEAL_BATCH = 20
#: Seconds the block at the top stays held in place while blocks come in above it (``_hold``).
HOLD_S = 1.0


class Conversation(VerticalScroll, can_focus=False):
    """Holds the conversation blocks in order; ``hidden_count`` of the first ones are hidden."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.hidden_count = 0
        self._hide_pending = False
        #: (block, rows from the top of the view) to hold while blocks come in above it.
        self._keep_in_view: tuple[Widget, int] | None = None
        #: The loader of a resumed session's messages not drawn yet (``EarlierMessages``), or None.
        self.earlier = None

    def on_mount(self) -> None:
        self.anchor()

    @property
    def following(self) -> bool:
        """True while the pane stays at the end as content arrives."""
        return self._anchored and not self._anchor_released

    def add(self, block: Widget) -> AwaitMount:
        """Mount ``block`` at the end; await the result to know it is mounted."""
        mounted = self.mount(block)
        if not self._hide_pending:  # decided once the new blocks are laid out (their heights known)
            self._hide_pending = True
            self.call_after_refresh(self._hide_old)
        return mounted

    def first_kept(self) -> int:
        """The index (into ``children``) of the oldest block that stays laid out while following:
        the last blocks together at least ``KEEP_SCREENS`` pane heights tall (rows, margins
        included, as last laid out; a block not laid out yet counts 1) and at least ``KEEP_MIN``
        of them. ``hidden_count`` when the shown blocks are not that tall (or the pane has no
        size yet)."""
        children = self.children
        need = KEEP_SCREENS * self.size.height
        if need <= 0:
            return self.hidden_count
        rows = 0
        index = len(children)
        while index > self.hidden_count:
            index -= 1
            rows += _rows(children[index]) or 1  # not laid out yet: at least its line
            if rows >= need and len(children) - index >= KEEP_MIN:
                return index
        return self.hidden_count

    def _hide_old(self) -> None:
        """While following, hide the blocks before ``first_kept()`` once ``HIDE_SLACK`` or more
        of them are laid out."""
        self._hide_pending = False
        if not self.following or not self.is_attached:
            return
        children = self.children
        self.hidden_count = min(self.hidden_count, len(children))  # blocks may have been removed
        end = self.first_kept()
        if end - self.hidden_count < HIDE_SLACK:
            return
        focused = self.screen.focused
        holding = set(focused.ancestors_with_self) if focused is not None else set()
        for block in children[self.hidden_count:end]:
            if block not in holding:
                block.display = False
        self.hidden_count = end

    def reveal(self, count: int | None = None) -> list[Widget]:
        """Show the last ``count`` hidden blocks (all when None); returns them, oldest first."""
        start = 0 if count is None else max(0, self.hidden_count - count)
        blocks = list(self.children[start:self.hidden_count])
        for block in blocks:
            block.display = True
        self.hidden_count = start
        return blocks

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= 0 < old_value:
            self._load_above()

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        """The wheel turned up with the view already at the top (no scroll to watch)."""
        self._release_hold()
        if self.scroll_y <= 0:
            self._load_above()

    def _load_above(self) -> None:
        """The view reached the top while not following: show the previous ``REVEAL_BATCH``
        hidden blocks, or else draw that many more of a resumed session's earlier messages,
        keeping the block that was at the top where it was."""
        if self.following:
            return
        if self.hidden_count:
            self.hidden_count = min(self.hidden_count, len(self.children))  # blocks may have been removed
            first_shown = self.children[self.hidden_count] if self.hidden_count < len(self.children) else None
            self._hold(first_shown)
            if not self.reveal(REVEAL_BATCH):
                self._keep_in_view = None
        elif self.has_earlier and not any(w.group == "earlier" and not w.is_finished for w in self.workers):
            self.run_worker(self._draw_earlier(REVEAL_BATCH), group="earlier")

    def _hold(self, block: Widget | None, *, at_top: bool = False) -> None:
        """Keep ``block`` at its place in the view while blocks are shown or drawn above it (and
        lay themselves out, over several frames), until the user scrolls or ``HOLD_S`` passed;
        ``at_top``: at the top of the view instead."""
        if block is None or not block.is_attached or not block.region.height:
            self._keep_in_view = None
            return
        # Virtual rows (as last laid out: a scroll since does not change them) minus where the
        # view is now (``region`` would still show the place before a scroll not yet laid out).
        self._keep_in_view = (block, 0 if at_top else block.virtual_region.y - round(self.scroll_y))
        hold = self._keep_in_view
        self.set_timer(HOLD_S, lambda: self._release_hold(hold))

    def _release_hold(self, hold: tuple[Widget, int] | None = None) -> None:
        """Stop holding (only ``hold``, when given: a later hold stays)."""
        if hold is None or self._keep_in_view is hold:
            self._keep_in_view = None

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        """The user scrolls: a held block is let go (``_hold``)."""
        self._release_hold()

    def arrange(self, size, optimal: bool = False):  # type: ignore[no-untyped-def]
        """Textual's arrangement of the blocks; while a block is held (``_hold``), the scroll
        offset is set from it here, in the layout pass, the way Textual keeps an anchored view at
        the end: the frame that first shows the blocks added above already shows the same place
        (scrolling after that frame showed them at the top for a frame or more: a flash)."""
        result = super().arrange(size, optimal)
        keep = self._keep_in_view
        if keep is not None and not self.following:
            block, rows = keep
            placement = next((p for p in result.placements if p.widget is block), None)
            if placement is not None:
                offset = max(0, placement.region.y - rows)
                self.set_reactive(Conversation.scroll_y, offset)
                self.set_reactive(Conversation.scroll_target_y, offset)
                self.vertical_scrollbar._reactive_position = offset
        return result

    @property
    def has_earlier(self) -> bool:
        """True when a resumed session has messages above the first drawn one."""
        return self.earlier is not None and self.earlier.remaining > 0

    async def _draw_earlier(self, count: int | None, *, to_top: bool = False) -> None:
        """Draw ``count`` more of a resumed session's earlier messages (all when None) under the
        header, then keep the view on the block that was first under the header (``to_top``: go
        to the first block instead)."""
        earlier = self.earlier
        if earlier is None:
            return
        under = None
        if earlier.header.is_attached:
            siblings = list(self.children)
            at = siblings.index(earlier.header) if earlier.header in siblings else -1
            under = siblings[at + 1] if 0 <= at < len(siblings) - 1 else None
        if not to_top and under is not None:
            self._hold(under, at_top=True)  # the first block under the header: at the top
        if not await earlier.load(count):
            return
        if to_top:
            self.call_after_refresh(self.scroll_home, animate=False)

    async def fill_view(self) -> None:
        """Draw earlier messages of a resumed session until the view can scroll (so scrolling up
        can reach them) or none are left; called once the resumed messages are laid out."""
        while True:
            await _next_refresh(self)
            if not self.has_earlier or self.max_scroll_y > 0 or not self.is_attached:
                break
            if not await self.earlier.load(REVEAL_BATCH):
                break
        if self.following:
            self.scroll_end(animate=False)

    def page(self, pages: int) -> None:
        """Scroll by ``pages`` screens (negative: up). Scrolling up stops following new content
        until the view is back at the end (Textual re-anchors there)."""
        self._release_hold()
        if pages < 0:
            self.release_anchor()
            if self.scroll_y <= 0:  # already at the top: nothing scrolls, so no watch fires
                self._load_above()
        self.scroll_relative(y=pages * max(1, self.scrollable_content_region.height - 1), animate=False)

    def to_start(self) -> None:
        """Scroll to the first block (and stop following new content); hidden blocks are shown."""
        self._release_hold()
        self.release_anchor()
        if self.reveal():
            self.call_after_refresh(self.scroll_home, animate=False)
        self.scroll_home(animate=False)
        if self.has_earlier:
            self.run_worker(self._draw_earlier(None, to_top=True), group="earlier")

    def follow(self) -> None:
        """Scroll to the end and keep following new content."""
        self._release_hold()
        self.anchor()
        self.scroll_end(animate=False)

    async def clear_blocks(self) -> None:
        """Remove every block."""
        self.hidden_count = 0
        self.earlier = None
        await self.remove_children()


def _rows(block: Widget) -> int:
    """Rows ``block`` took when last laid out, its larger vertical margin included (0: never
    laid out)."""
    height = block.outer_size.height
    return height + max(block.styles.margin.top, block.styles.margin.bottom) if height else 0


async def _next_refresh(widget: Widget) -> None:
    """Wait until ``widget``'s screen has refreshed (its layout is up to date)."""
    done = asyncio.Event()
    widget.call_after_refresh(done.set)
    await done.wait()
