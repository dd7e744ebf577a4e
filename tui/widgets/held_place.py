"""Keeping a block at its place in a scrolling view while blocks come in above it (issue 18).

``HeldPlace`` is a mixin for a ``VerticalScroll`` whose children can be shown again or drawn
above the view (tui/widgets/conversation.py: hidden blocks revealed, messages drawn at the gap).
``_hold(block)`` remembers ``(block, rows from the top of the view)``; in every layout pass until
the hold is let go, ``arrange`` sets the scroll offset so the block is at those rows again, the
way Textual keeps an anchored view at the end: the frame that first shows the new blocks already
shows the same place (scrolling after that frame showed them at the top for a frame or more: a
flash). A scroll by the user meanwhile moves the held place with it (``_follow_scroll``), and a
page key moves it a page (``_page_held``, to ``_held_target``), so keys pressed while blocks come
in count from where the view is. The hold is let go ``HOLD_S`` after the blocks are in
(``_arm_release``).

The host sets ``_init_held_place()`` up in its ``__init__``, calls ``_follow_scroll`` from its
``watch_scroll_y``, and has a ``following`` property (True while it follows the end: no hold).
"""

from __future__ import annotations

from textual.widget import Widget

#: Seconds a hold lasts after the blocks it waited for are in.
HOLD_S = 1.0


class HeldPlace:
    """The mixin (see the module docstring); ``_keep_in_view`` is the hold, None when none."""

    def _init_held_place(self) -> None:
        #: (block, rows from the top of the view) to keep while blocks come in above it.
        self._keep_in_view: tuple[Widget, int] | None = None
        self._hold_id = 0  # which hold a release timer belongs to
        self._paging = False

    @property
    def holding(self) -> bool:
        """True while a block is held in place."""
        keep = self._keep_in_view
        return keep is not None and keep[0].is_attached

    def _hold(self, block: Widget | None, *, extra: int = 0, arm: bool = True) -> None:
        """Keep ``block`` at its place in the view while blocks are shown or drawn above it (and
        lay themselves out, over several frames), until ``HOLD_S`` after the last of them came
        (``_arm_release``; ``arm``: the timer starts now, else when the caller says: a batch
        being drawn may take longer than ``HOLD_S``); ``extra``: that many rows lower than now."""
        if block is None or not block.is_attached or not block.region.height:
            self._keep_in_view = None
            return
        # Virtual rows (as last laid out: a scroll since does not change them) minus where the
        # view is now (``region`` would still show the place before a scroll not yet laid out).
        self._keep_in_view = (block, block.virtual_region.y - round(self.scroll_y) + extra)
        self._hold_id += 1
        if arm:
            self._arm_release()

    def _arm_release(self) -> None:
        """Let the current hold go ``HOLD_S`` from now (unless another hold came since)."""
        hold_id = self._hold_id
        self.set_timer(HOLD_S, lambda: self._release_hold(hold_id))

    def _release_hold(self, hold_id: int | None = None) -> None:
        """Stop holding (only hold ``hold_id``, when given: a later hold stays)."""
        if hold_id is None or hold_id == self._hold_id:
            self._keep_in_view = None

    def _follow_scroll(self, new_value: float) -> None:
        """The view scrolled to ``new_value`` (rows; by the user or Textual): the held block
        moves in the view with it."""
        if self.holding and not self._paging:
            block = self._keep_in_view[0]
            self._keep_in_view = (block, round(block.virtual_region.y - new_value))

    def _held_target(self, step: int) -> int:
        """Where a scroll by ``step`` rows (negative: up) moves the view while holding, as the
        held block was last laid out (rows; below 0: past the top of what is there yet, which
        the blocks coming in will fill)."""
        block, rows = self._keep_in_view
        return block.virtual_region.y - (rows - step)

    def _page_held(self, step: int) -> None:
        """While holding (``holding``): scroll by ``step`` rows by moving the held place, to
        ``_held_target(step)`` (held at 0 above the top, at the end below it)."""
        target = self._held_target(step)
        block, rows = self._keep_in_view
        self._keep_in_view = (block, rows - step)
        self._paging = True
        try:
            self.scroll_target_y = self.scroll_y = max(0, min(target, self.max_scroll_y))
        finally:
            self._paging = False

    def arrange(self, size, optimal: bool = False):  # type: ignore[no-untyped-def]
        """Textual's arrangement of the children; while a block is held, the scroll offset is
        set from it here, in the layout pass (see the module docstring)."""
        result = super().arrange(size, optimal)  # type: ignore[misc]
        keep = self._keep_in_view
        if keep is not None and not self.following:
            block, rows = keep
            placement = next((p for p in result.placements if p.widget is block), None)
            if placement is not None:
                offset = max(0, placement.region.y - rows)
                cls = type(self)
                self.set_reactive(cls.scroll_y, offset)
                self.set_reactive(cls.scroll_target_y, offset)
                self.vertical_scrollbar._reactive_position = offset
        return result
