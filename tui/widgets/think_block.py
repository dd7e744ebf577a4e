"""A ``think`` tool call drawn like the model's own reasoning: dim, collapsed, expands on demand.

The think tool is a no-op scratchpad for models without native reasoning, so its call is a
thought, not an action: it gets no tool header, status or output, only "▸ think (N words)" and,
when expanded, the thought text. Built on ``ReasoningBlock`` (same keys: Enter, Space, click).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from .blocks import ReasoningBlock


if TYPE_CHECKING:
    from agent.events import ToolResult


class ThinkBlock(ReasoningBlock):
    """One think call. ``finish(output, result)`` records the tool result; an error (a
    malformed call) shows in the header and its message in the body."""

    def __init__(self, call_id: str, thought: str = "") -> None:
        """``thought``: the text of the call (the tool's view gives it)."""
        super().__init__()
        self.call_id = call_id
        self.text = thought
        self.is_error = False
        self.add_class("think")

    def _header(self) -> Text:
        arrow = "▾" if self.expanded else "▸"
        words = len(self.text.split())
        header = Text(f"{arrow} think ({words} word{'s' if words != 1 else ''})")
        if self.is_error:
            header.append(" · not a valid call")
        return header

    def finish(self, output: str = "", result: "ToolResult | None" = None) -> None:  # type: ignore[override]
        """Record the think tool's result (only an error changes what is shown)."""
        is_error = self.is_error = result is not None and result.is_error
        if is_error and output:
            self.text = f"{self.text}\n\n{output}".strip()
        self.set_class(is_error, "-error")
        super().finish()

    def mark_cancelled(self) -> None:
        """The turn ended before the result: nothing to show beyond the thought."""
        ReasoningBlock.finish(self)
