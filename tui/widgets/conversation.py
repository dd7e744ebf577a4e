"""The conversation pane: a vertical scroll of blocks that follows new content.

Every block goes through ``add``; the pane stays anchored to the bottom while the user has not
scrolled up (Textual's anchor releases itself when they do; ``follow()`` re-anchors, e.g. when
the user sends a new prompt).

Long conversations (issue 18): Textual lays out every displayed child of the pane on each layout
pass, and walks every child (hidden ones too) to find them, so the cost of an exchange grew with
the number of blocks. So:

- While the pane follows the end, only the last blocks that fill ``KEEP_SCREENS`` heights of the
  pane (and at least ``KEEP_MIN`` blocks) stay laid out; the older ones are hidden (``display:
  none``: mounted, not laid out), ``HIDE_SLACK`` or more at a time. Scrolling to the top shows the
  previous ``REVEAL_BATCH`` of them, keeping the view where it was. The window is measured in
  rows, not blocks, so a conversation of many one-line tool blocks still fills the screen.
- Beyond ``TRIM_AT`` hidden blocks, the oldest are removed (``TRIM_KEEP`` stay hidden), up to a
  prompt's block that knows where its turn starts in the session journal
  (``UserBlock.journal_at``); a ``GapLine`` stands there, and its loader (``make_loader``,
  tui/resume_backfill.py) draws them again from the journal when the view reaches it. So an
  exchange costs the same at message 10 as at message 5 000 (``benchmarks/long_chat.py``).
- A resumed session (tui/resume_view.py) is drawn from its end, with a gap under the header for
  the messages above.

``earlier`` is the gap's loader (None: every message is drawn). Scrolling up onto the gap draws
the previous ``REVEAL_BATCH`` messages under it, keeping the view where it was; scrolling down
onto it draws the next ones above it; Ctrl+Home shows every hidden block and draws the first
messages (above the gap, which then goes down as the view does); a view that the drawn messages
do not fill asks for more until it is full or none are left. A block holding the focus is never
hidden or removed. While blocks come in above the view, the block at its top is held in place
(tui/widgets/held_place.py), and a scroll never passes the gap while it has messages left.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from textual import events
from textual.containers import VerticalScroll
from textual.widget import AwaitMount, Widget

from .held_place import HeldPlace

#: While following, the last blocks filling this many heights of the pane stay laid out.
KEEP_SCREENS = 2
#: ... and at least this many blocks, however tall.
KEEP_MIN = 6
#: Older blocks are hidden in batches of at least this many (one restyle per batch, not per block).
HIDE_SLACK = 8
#: Blocks shown again each time the view reaches the top of what is shown.
REVEAL_BATCH = 20
#: Beyond this many hidden blocks, the oldest are removed (drawn again from the journal)...
TRIM_AT = 120
#: ... down to this many hidden ones (scrolling back over them needs no journal read).
TRIM_KEEP = 40


class Conversation(HeldPlace, VerticalScroll, can_focus=False):
    """Holds the conversation blocks in order; ``hidden_count`` of the first ones are hidden."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.hidden_count = 0
        self._hide_pending = False
        self._init_held_place()  # the block kept in place while blocks come in above it
        #: The loader of the messages not drawn (``EarlierMessages``, its ``gap`` in the pane), or None.
        self.earlier = None
        #: The last block of the conversation's header (welcome, "Resumed session" lines): blocks
        #: after it may be removed (``_trim``). None: none is kept.
        self.header: Widget | None = None
        #: ``(gap, end_record) -> EarlierMessages`` for the first ``end_record`` journal records
        #: (tui/resume_view.py ``journal_loader``); None: blocks are never removed.
        self.make_loader: Callable[[Widget, int], Any] | None = None
        #: Called with the blocks ``_trim`` removed (the event handler forgets them).
        self.on_trimmed: Callable[[list[Widget]], None] | None = None
        self._trimming = False
        self._clamping = False
        #: Rows of the last PageUp that the top of what is shown stopped (``_load_above``).
        self._overshoot = 0
        #: Rows PageUps asked for past the top while a load was starting (before it held the
        #: view's place): the next batch drawn under the gap moves the view up that much more.
        self._pending_rows = 0

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
        if not self.following or not self.is_attached or self._trimming or self._loading:
            return  # (while messages are drawn at the gap, the next block added hides)
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
        if end > TRIM_AT and self.make_loader is not None and not self._loading:
            self._trimming = True
            self.run_worker(self._trim(), group="trim")

    @property
    def _loading(self) -> bool:
        return any(w.group == "earlier" and not w.is_finished for w in self.workers)

    def _after_header(self) -> int:
        """The index (into ``children``) of the first block after the header (0: no header)."""
        children = self.children
        return children.index(self.header) + 1 if self.header is not None and self.header in children else 0

    def _trim_cut(self) -> int | None:
        """Where ``_trim`` cuts: the index of the last block tagged with its journal position
        (``journal_at``) that leaves ``TRIM_KEEP`` blocks hidden after it and comes after the
        header and the gap (None: no such block)."""
        children = self.children
        floor = self._after_header()
        earlier = self.earlier
        if earlier is not None and earlier.gap in children:
            floor = max(floor, children.index(earlier.gap) + 1)
        for index in range(min(self.hidden_count, len(children)) - TRIM_KEEP, floor, -1):
            if getattr(children[index], "journal_at", None) is not None:
                return index
        return None

    async def _trim(self) -> None:
        """Remove the hidden blocks between the header and the cut (``_trim_cut``), the old gap
        among them, and put a ``GapLine`` in their place whose loader (``make_loader``) draws
        them again from the journal's records before the cut's turn. Nothing is removed while a
        block among them has the focus."""
        try:
            cut = self._trim_cut()
            if cut is None or self.make_loader is None:
                return
            children = self.children
            removed = list(children[self._after_header():cut])
            focused = self.screen.focused
            if not removed or (focused is not None and set(focused.ancestors_with_self) & set(removed)):
                return
            from .blocks import GapLine

            gap = GapLine()
            gap.display = False  # among the hidden blocks
            self.earlier = self.make_loader(gap, children[cut].journal_at)
            await self.mount(gap, before=children[cut])
            self.hidden_count += 1
            await self.remove_children(removed)
            self.hidden_count = max(0, self.hidden_count - len(removed))
            if self.on_trimmed is not None:
                self.on_trimmed(removed)
        finally:
            self._trimming = False

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
        self._follow_scroll(new_value)  # a held block moves in the view with the scroll
        if self._clamping or self._stopped_at_gap(old_value, new_value):
            return  # (the scroll that stops at the gap asks for the drawing itself)
        if new_value <= 0 < old_value:
            self._load_above()
        elif new_value > old_value or (new_value < old_value and not self.following):
            if self._gap_in_view(new_value, since=old_value):  # down onto it draws the first ones, up the last
                self._draw_at_gap(from_start=new_value > old_value)

    def _stopped_at_gap(self, old_value: float, new_value: float) -> bool:
        """A scroll from ``old_value`` to ``new_value`` (rows) that would pass over the gap while
        it has messages left goes only as far as the gap, which is then drawn: scrolling down stops
        with the gap at the bottom of the view, scrolling up (when the first messages are drawn
        above it) with the gap at the top. True when it stopped the scroll there."""
        earlier = self.earlier
        if earlier is None or earlier.remaining <= 0 or self.following:
            return False
        if new_value <= 0 or new_value >= self.max_scroll_y:  # Ctrl+Home / Ctrl+End go all the way
            return False
        gap = earlier.gap
        if not gap.is_attached or not gap.display or not gap.virtual_region.height:
            return False
        region, height = gap.virtual_region, self.scrollable_content_region.height
        limit = None
        if new_value > old_value and region.bottom > old_value and new_value + height > region.bottom:
            limit = max(old_value, region.bottom - height)
            from_start = True
        elif (new_value < old_value and earlier.drawn_from_start and region.y < old_value + height
              and new_value < region.y):
            limit = min(old_value, region.y)
            from_start = False
        if limit is None or limit == new_value:
            return False
        self._clamping = True
        try:
            self.scroll_target_y = limit
            self.scroll_y = limit
        finally:
            self._clamping = False
        self._draw_at_gap(from_start=from_start)
        return True

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        """The wheel turned up with the view already at the top (no scroll to watch)."""
        if self.scroll_y <= 0:
            self._load_above()

    def _load_above(self) -> None:
        """The view reached the top while not following: show the previous ``REVEAL_BATCH``
        hidden blocks, or else, with the gap in view, draw the last ``REVEAL_BATCH`` messages it
        stands for; either way the block that was at the top stays where it was in the view,
        moved down by the rows a PageUp could not scroll (``_overshoot``: so that key moves a
        whole page, into the blocks that came)."""
        extra, self._overshoot = self._overshoot, 0
        if self.following or self._trimming:
            return
        if self.hidden_count:
            self.hidden_count = min(self.hidden_count, len(self.children))  # blocks may have been removed
            first_shown = self.children[self.hidden_count] if self.hidden_count < len(self.children) else None
            self._hold(first_shown, extra=extra)
            if not self.reveal(REVEAL_BATCH):
                self._release_hold()
        elif self._gap_in_view(self.scroll_y):
            self._draw_at_gap(from_start=False, extra=extra)

    def _gap_in_view(self, scroll_y: float, since: float | None = None) -> bool:
        """True when the gap (``earlier.gap``) is shown and, as last laid out, within the view
        scrolled to ``scroll_y`` (rows), or passed over by a scroll from ``since`` (a page jump
        may go past it), with messages left to draw."""
        earlier = self.earlier
        if earlier is None or earlier.remaining <= 0:
            return False
        gap = earlier.gap
        if not gap.is_attached or not gap.display:
            return False
        region = gap.virtual_region
        if not region.height:
            return False
        top = scroll_y if since is None else min(scroll_y, since)
        bottom = max(scroll_y, top if since is None else since) + self.scrollable_content_region.height
        return region.y < bottom and region.bottom > top

    def _draw_at_gap(self, *, from_start: bool, extra: int = 0) -> None:
        """Draw ``REVEAL_BATCH`` messages at the gap in a worker (one load at a time): the first
        ones above it (``from_start``: the view came down to it) or the last ones under it."""
        if self._trimming or self._loading:
            # Page keys that came before the running load holds its place (once it holds, a
            # page key moves the held place itself: counted here too, it moved twice).
            if not from_start and not self.holding:
                self._pending_rows += extra
            return
        self.run_worker(self._draw_earlier(REVEAL_BATCH, from_start=from_start, extra=extra), group="earlier")

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        """At the end already (no scroll to watch) with the gap in view, the messages after it
        are drawn."""
        self._at_end_onto_gap()

    def _at_end_onto_gap(self) -> None:
        if self.scroll_y >= self.max_scroll_y and self._gap_in_view(self.scroll_y):
            self._draw_at_gap(from_start=True)

    @property
    def has_earlier(self) -> bool:
        """True when some messages are not drawn (a gap is in the pane)."""
        return self.earlier is not None and self.earlier.remaining > 0

    async def _draw_earlier(self, count: int, *, from_start: bool = False, extra: int = 0,
                            to_top: bool = False) -> None:
        """Draw ``count`` more of the messages not drawn at the gap: the last
        ones under it, keeping the block under it where it is in the view (``extra`` rows lower),
        or ``from_start`` the first ones above it. While the gap is still in
        view afterwards, or page keys pressed meanwhile went past the top of what came, draw
        more. ``to_top``: then go to the first block."""
        earlier = self.earlier
        if earlier is None:
            return
        gap = earlier.gap
        batches = 0
        while True:
            if not from_start and gap.is_attached:
                extra, self._pending_rows = extra + self._pending_rows, 0
                siblings = self.children
                at = siblings.index(gap) if gap in siblings else -1
                self._hold(siblings[at + 1] if 0 <= at < len(siblings) - 1 else None, extra=extra, arm=False)
            added = await earlier.load(count, from_start=from_start)
            batches += 1
            self._arm_release()  # the batch is in: held until it has laid itself out
            if not earlier.remaining:
                await self._close_gap(earlier)
                break
            await _next_refresh(self)
            # Page keys pressed while the batch came in moved the held place past its top (the
            # view stops there): those rows go on into the next batch, so each key moves a page.
            extra = max(0, -self._held_target(0)) if not from_start and self.holding else 0
            if not added:
                break
            # Else a few batches while the gap stays in view; then the next scroll asks.
            if not extra and (batches >= 8 or not self._gap_in_view(self.scroll_y)):
                break
        if to_top:
            self.call_after_refresh(self.scroll_home, animate=False)

    async def _close_gap(self, earlier: Any) -> None:
        """Every message of ``earlier`` is drawn: its gap goes."""
        if self.earlier is earlier:
            self.earlier = None
        gap = earlier.gap
        if gap.is_attached:
            if not gap.display:  # among the hidden blocks
                self.hidden_count = max(0, self.hidden_count - 1)
            await gap.remove()

    async def fill_view(self, more: int = 0) -> None:
        """Draw more of the messages not drawn until the view can scroll (so scrolling up can
        reach them) or none are left, and at least ``more`` messages more; called once the drawn
        messages are laid out (each batch waits for the next screen refresh)."""
        while True:
            await _next_refresh(self)
            earlier = self.earlier
            if not self.has_earlier or not self.is_attached or (self.max_scroll_y > 0 and more <= 0):
                break
            count = more if self.max_scroll_y > 0 else max(REVEAL_BATCH, more)
            more = 0
            if not await earlier.load(count):
                break
            if not earlier.remaining:
                await self._close_gap(earlier)
        if self.following:
            self.scroll_end(animate=False)

    def page(self, pages: int) -> None:
        """Scroll by ``pages`` screens (negative: up). Scrolling up stops following new content
        until the view is back at the end (Textual re-anchors there). A PageUp that reaches the
        top of what is shown with more above (hidden blocks, the gap) still moves a whole page:
        the rows it could not scroll are added once the blocks above are there."""
        step = pages * max(1, self.scrollable_content_region.height - 1)
        # Blocks coming in above a held one: the page moves the held place, so every key counts
        # once they are there (scrolling now would stop at the top of what is shown).
        if self.holding and not self.following:
            # Past the top, what is hidden or not drawn above comes that much higher: said before
            # the scroll, whose watch asks for it (or, at the top already, asked for here).
            self._overshoot = max(0, int(-self._held_target(step)))
            self._page_held(step)
            if self._overshoot:
                self._load_above()
            self._overshoot = 0
            return
        if pages < 0:
            self.release_anchor()
            if self.scroll_y + step < 0 and (self.hidden_count or self.has_earlier):
                self._overshoot = int(-(self.scroll_y + step))
            if self.scroll_y <= 0:  # already at the top: nothing scrolls, so no watch fires
                self._load_above()
                return
        else:
            self._at_end_onto_gap()  # the same at the end
        # At once, not after the next refresh (Textual's default): keys that come before it
        # (a held PageUp) each start from where the one before went, not all from one place.
        self.scroll_relative(y=step, animate=False, immediate=True)

    def to_start(self) -> None:
        """Scroll to the first block (and stop following new content): hidden blocks are shown,
        and when messages before them are not drawn, the first ``REVEAL_BATCH`` of them are
        (above the gap; the rest when scrolled to)."""
        self._release_hold()
        self._pending_rows = 0
        self.release_anchor()
        if self._trimming:  # blocks are being removed: once done
            self.call_after_refresh(self.to_start)
            return
        if self.reveal():
            self.call_after_refresh(self.scroll_home, animate=False)
        self.scroll_home(animate=False)
        earlier = self.earlier
        if self.has_earlier and not earlier.drawn_from_start:
            self.run_worker(self._draw_earlier(REVEAL_BATCH, from_start=True, to_top=True), group="earlier")

    def follow(self) -> None:
        """Scroll to the end and keep following new content."""
        self._release_hold()
        self._pending_rows = 0
        self.anchor()
        self.scroll_end(animate=False)

    async def clear_blocks(self) -> None:
        """Remove every block."""
        self.hidden_count = 0
        self.earlier = None
        self.header = None
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
