"""Maps each agent event to widgets: the one place that knows how events look on screen.

``EventHandler.handle(event)`` is awaited by the app for every ``AgentEventMessage``, in order,
on the UI thread. It keeps the state of the turn being shown: the assistant block being
streamed, the reasoning block, the tool blocks by call id. A new assistant block starts after
tool calls (and after a new step), so text and tool blocks read in the order they happened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from agent.events import (
    CompactionDone, ContextUsage, ErrorEvent, GuardTriggered, Notice, PermissionDecision,
    PermissionRequest, PlanUpdated, ReasoningDelta, ReminderInjected, StepStarted, TextDelta,
    ToolCallFinished, ToolCallStarted, TurnFinished, TurnStarted,
)

from .widgets.blocks import AssistantBlock, ErrorBlock, NoticeBlock, PlanBlock, ReasoningBlock, StopBlock
from .widgets.conversation import Conversation
from .widgets.status_bar import StatusBar, format_tokens
from .widgets.tool_block import ToolBlock

if TYPE_CHECKING:
    from textual.app import App

    from .bridge import AgentRunner


#: An assistant block longer than this (characters) continues in a new block at the next
#: paragraph break outside a code fence.
SPLIT_AT_CHARS = 1500
#: Finished assistant blocks kept as live markdown widgets; older ones are flattened to one
#: widget each (the layout of a long conversation then stays cheap).
KEEP_LIVE_BLOCKS = 2


def _inside_fence(markdown: str) -> bool:
    """True when ``markdown`` ends inside a fenced code block (an odd number of fence lines)."""
    fences = sum(1 for line in markdown.split("\n") if line.lstrip().startswith(("```", "~~~")))
    return fences % 2 == 1


def split_point(existing: str, fragment: str, limit: int) -> int | None:
    """Where to end the current assistant block inside ``fragment``, or None to keep going.

    The cut falls just after the first paragraph break (a blank line) at which the block holds at
    least ``limit`` characters and no code fence is open; the index returned is in ``fragment``.
    """
    start = max(0, limit - len(existing) - 1)
    index = fragment.find("\n\n", start)
    while index >= 0:
        if not _inside_fence(existing + fragment[:index]):
            return index + 2
        index = fragment.find("\n\n", index + 2)
    return None


class EventHandler:
    """Turns agent events into conversation blocks and status-bar updates.

    Inputs: the app (to push the permission screen), the conversation pane, the status bar, the
    runner (its cancel state tells a cancelled tool call from a failed one) and an optional
    ``duration_format`` (seconds -> text) handed to tool blocks.
    """

    def __init__(self, app: "App", conversation: Conversation, status: StatusBar, runner: "AgentRunner",
                 duration_format: Callable[[float], str] | None = None) -> None:
        self.app = app
        self.conversation = conversation
        self.status = status
        self.runner = runner
        self.duration_format = duration_format
        self.assistant: AssistantBlock | None = None
        self.reasoning: ReasoningBlock | None = None
        self.tools: dict[str, ToolBlock] = {}
        self.last_tool: ToolBlock | None = None
        self.turn_finished: TurnFinished | None = None
        self._finished: list[AssistantBlock] = []
        self._continuing = False
        self._handlers: dict[type, Callable[[Any], Any]] = {
            TurnStarted: self._on_turn_started,
            StepStarted: self._on_step_started,
            TextDelta: self._on_text,
            ReasoningDelta: self._on_reasoning,
            ToolCallStarted: self._on_tool_started,
            ToolCallFinished: self._on_tool_finished,
            Notice: self._on_notice,
            ErrorEvent: self._on_error,
            GuardTriggered: self._on_guard,
            ContextUsage: self._on_context_usage,
            TurnFinished: self._on_turn_finished,
            PermissionRequest: self._on_permission_request,
            PlanUpdated: self._on_plan_updated,
            ReminderInjected: self._on_reminder,
            CompactionDone: self._on_compaction,
        }

    async def handle(self, event: Any) -> None:
        """Show one event. Unknown event types become a dim notice (never a crash)."""
        handler = self._handlers.get(type(event))
        if handler is None:
            await self.conversation.add(NoticeBlock(f"(event {getattr(event, 'type', type(event).__name__)})"))
            return
        await handler(event)

    def reset(self) -> None:
        """Forget the turn state (after /clear)."""
        self.assistant = None
        self.reasoning = None
        self.tools.clear()
        self.last_tool = None
        self.turn_finished = None
        self._finished.clear()

    # -- streams -------------------------------------------------------------------------------
    async def end_assistant(self) -> None:
        """Close the assistant block being streamed, if any; flatten older finished ones."""
        if self.assistant is not None:
            block, self.assistant = self.assistant, None
            await block.finish()
            self._finished.append(block)
            while len(self._finished) > KEEP_LIVE_BLOCKS:
                await self._finished.pop(0).flatten()

    def end_reasoning(self) -> None:
        """Close the reasoning block being streamed, if any."""
        if self.reasoning is not None:
            self.reasoning.finish()
            self.reasoning = None

    async def end_streams(self) -> None:
        """Close both streams (what comes next is a new block, not a continuation)."""
        self._continuing = False
        self.end_reasoning()
        await self.end_assistant()

    # -- events --------------------------------------------------------------------------------
    async def _on_turn_started(self, event: TurnStarted) -> None:
        self.turn_finished = None
        self.status.activity = "working..."

    async def _on_step_started(self, event: StepStarted) -> None:
        await self.end_streams()

    async def _on_text(self, event: TextDelta) -> None:
        self.end_reasoning()
        text = event.text
        while text:
            if self.assistant is None:
                self.assistant = AssistantBlock(continuation=self._continuing)
                self._continuing = False
                await self.conversation.add(self.assistant)
            # Keep each markdown widget small: a long reply continues in a new block at a
            # paragraph break outside code fences (appending to a huge document gets slow).
            cut = split_point(self.assistant.text, text, SPLIT_AT_CHARS)
            if cut is None:
                await self.assistant.write(text)
                break
            await self.assistant.write(text[:cut])
            await self.end_assistant()
            self._continuing = True
            text = text[cut:]

    async def _on_reasoning(self, event: ReasoningDelta) -> None:
        await self.end_assistant()
        if self.reasoning is None:
            self.reasoning = ReasoningBlock()
            await self.conversation.add(self.reasoning)
        self.reasoning.append(event.text)

    async def _on_tool_started(self, event: ToolCallStarted) -> None:
        await self.end_streams()
        block = ToolBlock(event.id, event.name, event.arguments, duration_format=self.duration_format)
        self.tools[event.id] = block
        self.last_tool = block
        await self.conversation.add(block)

    async def _on_tool_finished(self, event: ToolCallFinished) -> None:
        block = self.tools.pop(event.id, None)
        if block is None:  # a result without a visible start: show it anyway
            block = ToolBlock(event.id, event.name, None, duration_format=self.duration_format)
            self.last_tool = block
            await self.conversation.add(block)
        cancelled = event.is_error and self.runner.cancel_event.is_set()
        block.finish(event.output, is_error=event.is_error, truncated=event.truncated,
                     saved_path=event.saved_path, duration_s=event.duration_s, exit_code=event.exit_code,
                     diff=event.diff, cancelled=cancelled)

    async def _on_notice(self, event: Notice) -> None:
        await self.conversation.add(NoticeBlock(event.message))

    async def _on_error(self, event: ErrorEvent) -> None:
        await self.end_streams()
        await self.conversation.add(ErrorBlock(event.message))

    async def _on_guard(self, event: GuardTriggered) -> None:
        await self.end_streams()
        if event.guard == "max_turns":
            return  # the stop block of TurnFinished says it, once
        await self.conversation.add(NoticeBlock(f"⚠ {event.guard}: {event.message}", kind="warning"))

    async def _on_context_usage(self, event: ContextUsage) -> None:
        self.status.context_window = event.window_tokens
        self.status.used_tokens = event.used_tokens

    async def _on_turn_finished(self, event: TurnFinished) -> None:
        self.turn_finished = event
        await self.end_streams()
        for block in self.tools.values():
            block.mark_cancelled()
        self.tools.clear()
        if event.stop_reason != "done":
            detail = event.final_text if event.stop_reason == "max_turns" else ""
            await self.conversation.add(StopBlock(event.stop_reason, detail))

    async def _on_permission_request(self, event: PermissionRequest) -> None:
        await self.end_streams()
        reply = event.reply

        block = self.tools.get(event.call_id)
        if block is not None:
            block.set_awaiting_approval(True)

        def resolve(decision: PermissionDecision | None) -> None:
            if block is not None:
                block.set_awaiting_approval(False)
            if not reply.done():
                try:
                    reply.set_result(decision or PermissionDecision(allow=False))
                except Exception:  # noqa: BLE001 - cancelled meanwhile by the loop
                    pass

        if reply.done():
            return
        from .screens.permission import PermissionScreen  # first use only: keeps start-up light

        screen = PermissionScreen(event.tool_name, event.arguments, event.capability, event.preview)
        # Close the prompt if the loop stops waiting (turn cancelled) before the user answers.
        reply.add_done_callback(lambda _future: screen.withdraw())
        await self.app.push_screen(screen, resolve)

    async def _on_plan_updated(self, event: PlanUpdated) -> None:
        await self.end_streams()
        await self.conversation.add(PlanBlock(event.steps))

    async def _on_reminder(self, event: ReminderInjected) -> None:
        await self.conversation.add(NoticeBlock(f"reminder: {event.text}", kind="reminder"))

    async def _on_compaction(self, event: CompactionDone) -> None:
        saved = event.tokens_before - event.tokens_after
        await self.conversation.add(NoticeBlock(
            f"Context compacted: {format_tokens(event.tokens_before)} -> {format_tokens(event.tokens_after)} "
            f"tokens ({format_tokens(max(saved, 0))} saved; {event.summarized} summarised, "
            f"{event.pruned} pruned, {event.aggregated} aggregated)"))

