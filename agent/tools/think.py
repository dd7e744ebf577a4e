"""The ``think`` tool: a no-op scratchpad for models without native reasoning.

Anthropic's "think" tool pattern (DESIGN.md 4): the model writes a thought, nothing happens, and
the thought stays in the conversation. Registered only when the model has no native reasoning.
"""

from __future__ import annotations

from pydantic import Field

from .base import Capability, Tool, ToolArgs, ToolContext, ToolOutput
from .view import ToolView, compact_arguments, one_line


class ThinkArgs(ToolArgs):
    """Arguments of ``think``."""

    thought: str = Field(description="Your reasoning: what you know, what to check next, your plan.")


class ThinkTool(Tool):
    """Record a thought; changes nothing and returns a short acknowledgement."""

    name = "think"
    description = (
        "Think step by step before acting: write down what you found, what is still unclear, and your "
        "next steps. It changes nothing and fetches nothing; use it to plan or to check a result."
    )
    Args = ThinkArgs
    capability = Capability.READ

    def preview(self, args: ThinkArgs, ctx: ToolContext) -> str:
        """Return the first line of the thought."""
        return args.thought.strip().split("\n", 1)[0][:120]


    def describe(self, args: ThinkArgs) -> ToolView:
        """A thought: drawn like reasoning, with the thought as its text."""
        return ToolView(title=self.name, summary=one_line(args.thought), body="thought", text=args.thought)

    def view(self, arguments: object) -> ToolView:
        """A thought even when the arguments are not valid (the raw text is the thought)."""
        view = super().view(arguments)
        if view.body == "thought":
            return view
        return ToolView(title=self.name, summary=view.summary, body="thought", text=compact_arguments(arguments))

    def run(self, args: ThinkArgs, ctx: ToolContext) -> ToolOutput:
        """Return ``"Thought noted."``; the thought's length (characters) goes in metadata."""
        return ToolOutput(text="Thought noted.", metadata={"chars": len(args.thought)})
