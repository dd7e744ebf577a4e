"""The ``task`` tool: hand a self-contained piece of work to a sub-agent (``agent.subagents``).

The model calls ``task(description, prompt, tools?, max_turns?)``; a sub-agent with its own loop,
history and journal does the work with read-only tools and its final text comes back as the
call's result. The call is not run through ``Tool.run``: the loop starts task calls itself
(``loop.tool_calls``), several of one reply in parallel, because a sub-agent needs the parent
agent, the event stream and the turn's cancel handle, which a ``ToolContext`` does not carry.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Sequence

from pydantic import Field

from ..config.settings import SubagentSettings
from .base import Capability, Tool, ToolArgs, ToolContext, ToolError, ToolOutput
from .view import ToolView, one_line

if TYPE_CHECKING:
    from ..events import Emit


class SubagentStarter(Protocol):
    """What runs one sub-agent for a ``task`` call (``agent.subagents.SubagentRunner``)."""

    def run(self, parent: Any, call_id: str, index: int, args: "TaskArgs", emit: "Emit",
            cancels: Sequence[threading.Event]) -> ToolOutput:
        """Run the sub-agent to its end and return the call's result (never raises)."""
        ...


#: Tools a sub-agent may be given (read-only ones; ``think`` only where the parent has it).
SUBAGENT_TOOL_NAMES: tuple[str, ...] = ("read", "grep", "glob", "think")


class TaskArgs(ToolArgs):
    """Arguments of ``task``: a short title, the self-contained work, optionally the tools
    (read-only names) and a lower turn limit (steps with tool calls)."""

    description: str = Field(min_length=1, max_length=120, description="A short title (3-8 words).")
    prompt: str = Field(min_length=1, description="Complete instructions: it sees nothing of this conversation.")
    tools: list[str] | None = Field(None, description="Read-only tools to give (default: read, grep, glob).")
    max_turns: int | None = Field(None, ge=1, description="A lower step limit.")


class TaskTool(Tool):
    """Delegate work to a sub-agent; ``settings`` are the ``[subagents]`` limits it runs under."""

    name = "task"
    description = (
        "Hand a self-contained read-only job (find, read, summarise) to a sub-agent with its own context; "
        "it returns a concise answer. Several task calls in one reply run in parallel. Sub-agents cannot "
        "change files, run commands or start sub-agents."
    )
    Args = TaskArgs
    capability = Capability.READ
    #: The loop runs this tool itself (``loop.tool_calls``), in parallel with the step's other tasks.
    runs_in_loop: ClassVar[bool] = True

    def __init__(self, settings: SubagentSettings | None = None, runner: SubagentStarter | None = None) -> None:
        self.settings = settings or SubagentSettings()
        self.runner = runner

    def start(self, parent: Any, call_id: str, index: int, args: TaskArgs, emit: "Emit",
              cancels: Sequence[threading.Event]) -> ToolOutput:
        """Run a sub-agent for the call ``call_id`` of ``parent`` (the calling ``Agent``) as the
        ``index``-th (1-based) the parent asked for, stopping when any of ``cancels`` is set.
        Returns the call's result; an error result when no runner is attached. Never raises."""
        if self.runner is None:
            return ToolOutput(text="Error: sub-agents are not available in this session.", is_error=True)
        return self.runner.run(parent, call_id, index, args, emit, cancels)

    def run(self, args: TaskArgs, ctx: ToolContext) -> ToolOutput:
        """Not used: the loop starts sub-agents itself. Raises ``ToolError``."""
        raise ToolError("task runs only as a call of the agent loop")

    def time_limit_s(self, args: TaskArgs, ctx: ToolContext) -> float | None:
        """The sub-agent's own wall-clock limit (seconds) stops it, not the tool runner's."""
        return None

    def preview(self, args: TaskArgs, ctx: ToolContext) -> str:
        """The task's title."""
        return args.description

    def describe(self, args: TaskArgs) -> ToolView:
        """``task`` with the title as the summary."""
        return ToolView(title=self.name, summary=one_line(args.description))
