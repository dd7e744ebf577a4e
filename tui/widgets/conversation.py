"""The conversation pane: a vertical scroll of blocks that follows new content.

Every block goes through ``add``; the pane stays anchored to the bottom while the user has not
scrolled up (Textual's anchor releases itself when they do; ``follow()`` re-anchors, e.g. when
the user sends a new prompt).
"""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widget import AwaitMount, Widget


class Conversation(VerticalScroll, can_focus=False):
    """Holds the conversation blocks in order."""

    def on_mount(self) -> None:
        self.anchor()

    def add(self, block: Widget) -> AwaitMount:
        """Mount ``block`` at the end; await the result to know it is mounted."""
        return self.mount(block)

    def page(self, pages: int) -> None:
        """Scroll by ``pages`` screens (negative: up). Scrolling up stops following new content
        until the view is back at the end (Textual re-anchors there)."""
        if pages < 0:
            self.release_anchor()
        self.scroll_relative(y=pages * max(1, self.scrollable_content_region.height - 1), animate=False)

    def to_start(self) -> None:
        """Scroll to the first block (and stop following new content)."""
        self.release_anchor()
        self.scroll_home(animate=False)

    def follow(self) -> None:
        """Scroll to the end and keep following new content."""
        self.anchor()
        self.scroll_end(animate=False)

    async def clear_blocks(self) -> None:
        """Remove every block."""
        await self.remove_children()
