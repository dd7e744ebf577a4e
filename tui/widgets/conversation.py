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

    def follow(self) -> None:
        """Scroll to the end and keep following new content."""
        self.anchor()
        self.scroll_end(animate=False)

    async def clear_blocks(self) -> None:
        """Remove every block."""
        await self.remove_children()
