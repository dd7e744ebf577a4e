"""Maps each agent event to widgets: the one place that knows how events look on screen.

``EventHandler.handle(event)`` is awaited by the app for every ``AgentEventMessage``, in order,
on the UI thread. It keeps the state of the turn being shown: the assistant block being
streamed, the reasoning block, the tool blocks by call id. A new assistant block starts after
tool calls (and after a new step), so text and tool blocks read in the order they happened.

Also: ``think`` calls become dim collapsed ``ThinkBlock``s (not tool blocks); a reminder becomes a
small mark under the call it was appended to; a stop by the step limit or a loop guard becomes a
``StopPanel`` with Continue / Stop; write/edit results feed the sidebar's changed files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from textual.widget import Widget

from .around_loop_events import AroundLoopEvents
from .markdown_split import find_cut
from .widgets.blocks import AssistantBlock, ErrorBlock, NoticeBlock, ReasoningBlock, ReminderMark, StopBlock
from .widgets.conversation import Conversation
from .widgets.diff_view import diff_stats
from .widgets.sidebar import Sidebar
from .widgets.status_bar import StatusBar
from .widgets.think_block import ThinkBlock
from .widgets.tool_block import ToolBlock

#: Stop reasons shown as a ``StopPanel`` (the turn may go on) rather than a one-line stop.
CONTINUABLE_STOPS = ("max_turns", "stuck")
#: Tools whose successful results list a changed file in the sidebar.

if TYPE_CHECKING:
    from textual.app import App

    # agent.events (pydantic models) is imported on the first event, not before the first paint.
    from agent.events import (
        CompactionDone, ContextUsage, ErrorEvent, GuardTriggered, Notice, PermissionRequest,
        PlanUpdated, ReasoningDelta, ReminderInjected, StepRetried, StepStarted, TextDelta, ToolCallFinished,
        ToolCallStarted, TurnFinished, TurnStarted,
    )

    from .widgets.stop_panel import StopPanel

    from .bridge import AgentRunner


#: A streaming assistant block is rendered again on each redraw; past this many characters a long
#: reply continues in a new block at the next boundary ``tui/markdown_split.py`` allows.
SPLIT_AT_CHARS = 1000
#: A block with no clean boundary (one huge paragraph or line) is cut here anyway.
HARD_SPLIT_AT_CHARS = 4000


class EventHandler(AroundLoopEvents):
    """Turns agent events into conversation blocks and status-bar updates.

    Inputs: the app (to push the permission screen), the conversation pane, the status bar, the
    runner, an optional
    ``duration_format`` (seconds -> text) handed to tool blocks and an optional ``sidebar``.
    """

    def __init__(self, app: "App", conversation: Conversation, status: StatusBar, runner: "AgentRunner",
                 duration_format: Callable[[float], str] | None = None, *,
                 sidebar: Sidebar | None = None) -> None:
        self.app = app
        self.conversation = conversation
        self.status = status
        self.runner = runner
        self.duration_format = duration_format
        self.sidebar = sidebar
        self.assistant: AssistantBlock | None = None
        self.reasoning: ReasoningBlock | None = None
        self.tools: dict[str, ToolBlock | ThinkBlock] = {}
        self.last_tool: ToolBlock | ThinkBlock | None = None
        self.turn_finished: TurnFinished | None = None
        self.guard: GuardTriggered | None = None
        self.stop_panel: "StopPanel | None" = None
        self._reminder_anchor: dict[int, Widget] = {}
        self._keyed_notices: dict[str, NoticeBlock] = {}  # Notice.key -> the block it updates
        self._handlers: dict[type, Callable[[Any], Any]] | None = None  # built on the first event

    def _event_handlers(self) -> dict[type, Callable[[Any], Any]]:
        from agent import events as ev

        return {
            ev.TurnStarted: self._on_turn_started,
            ev.StepStarted: self._on_step_started,
            ev.TextDelta: self._on_text,
            ev.ReasoningDelta: self._on_reasoning,
            ev.ToolCallStarted: self._on_tool_started,
            ev.ToolCallFinished: self._on_tool_finished,
            ev.Notice: self._on_notice,
            ev.JournalStatus: self._on_journal_status,
            ev.StepRetried: self._on_step_retried,
            ev.UserMessageAdded: self._on_user_message_added,
            ev.ErrorEvent: self._on_error,
            ev.GuardTriggered: self._on_guard,
            ev.ContextUsage: self._on_context_usage,
            ev.TurnFinished: self._on_turn_finished,
            ev.PermissionRequest: self._on_permission_request,
            ev.PlanUpdated: self._on_plan_updated,
            ev.ReminderInjected: self._on_reminder,
            ev.CompactionDone: self._on_compaction,
            ev.ModelCallFinished: self._on_model_call,
            ev.HookStarted: self._on_hook_started,
            ev.HookFinished: self._on_hook_finished,
            ev.SubagentStarted: self._on_subagent_started,
            ev.SubagentProgress: self._on_subagent_progress,
            ev.SubagentCompleted: self._on_subagent_finished,
            ev.SubagentFailed: self._on_subagent_finished,
        }

    async def handle(self, event: Any) -> None:
        """Show one event. Unknown event types become a dim notice (never a crash)."""
        if self._handlers is None:
            self._handlers = self._event_handlers()
        handler = self._handlers.get(type(event))
        if handler is None:
            await self.conversation.add(NoticeBlock(f"(event {getattr(event, 'type', type(event).__name__)})"))
            return
        await handler(event)

    def forget(self, blocks: list[Widget]) -> None:
        """``blocks`` were removed from the conversation (``Conversation._trim``): drop what
        points at them (tool blocks by call id, reminder anchors, keyed notices)."""
        gone = set(blocks)
        self.tools = {key: block for key, block in self.tools.items() if block not in gone}
        self._reminder_anchor = {key: w for key, w in self._reminder_anchor.items() if w not in gone}
        self._keyed_notices = {key: w for key, w in self._keyed_notices.items() if w not in gone}
        if self.last_tool in gone:
            self.last_tool = None

    def reset(self) -> None:
        """Forget the turn state (after /clear)."""
        self.assistant = None
        self.reasoning = None
        self.tools.clear()
        self.last_tool = None
        self.turn_finished = None
        self.guard = None
        self.stop_panel = None
        self._reminder_anchor.clear()
        if self.sidebar is not None:
            self.sidebar.reset_changes()
            self.sidebar.set_plan(None)

    # -- streams -------------------------------------------------------------------------------
    async def end_assistant(self) -> None:
        """Close the assistant block being streamed, if any."""
        if self.assistant is not None:
            block, self.assistant = self.assistant, None
            await block.finish()

    def end_reasoning(self) -> None:
        """Close the reasoning block being streamed, if any."""
        if self.reasoning is not None:
            self.reasoning.finish()
            self.reasoning = None

    async def end_streams(self) -> None:
        """Close both streams (what comes next is a new block, not a continuation)."""
        self.end_reasoning()
        await self.end_assistant()

    # -- events --------------------------------------------------------------------------------
    async def _on_turn_started(self, event: TurnStarted) -> None:
        self.turn_finished = None
        self.guard = None
        self.retire_stop_panel()
        self.status.activity = "working..."
        self.status.effort = getattr(event, "reasoning_effort", None) or ""
        timeline = self.subagent_timeline()
        if timeline is not None:  # the timeline shows the sub-agents of the running turn
            await timeline.clear()

    def retire_stop_panel(self) -> None:
        """Take the Continue / Stop buttons off the last stop panel (a new turn began)."""
        if self.stop_panel is not None:
            self.stop_panel.retire()
            self.stop_panel = None

    async def _on_step_started(self, event: StepStarted) -> None:
        await self.end_streams()

    async def _on_text(self, event: TextDelta) -> None:
        self.end_reasoning()
        if self.assistant is None:
            await self._open_assistant(AssistantBlock())
        await self.assistant.write(event.text)
        # Keep each block small: a long reply continues in a new block (see markdown_split).
        while True:
            block = self.assistant  # its carried fence opener or table header counts as context
            cut = find_cut(block.carry + block.text, SPLIT_AT_CHARS + len(block.carry), HARD_SPLIT_AT_CHARS)
            if cut is None:
                break
            rest = block.cut(cut.index - len(block.carry), in_code=cut.in_code)
            await self.end_assistant()
            await self._open_assistant(AssistantBlock(continuation=not cut.paragraph_break, carry=cut.carry,
                                                      code_continues_above=cut.in_code))
            await self.assistant.write(rest)

    async def _open_assistant(self, block: AssistantBlock) -> None:
        self.assistant = block
        await self.conversation.add(block)

    async def _on_reasoning(self, event: ReasoningDelta) -> None:
        await self.end_assistant()
        if self.reasoning is None:
            self.reasoning = ReasoningBlock()
            await self.conversation.add(self.reasoning)
        self.reasoning.append(event.text)

    async def _on_tool_started(self, event: ToolCallStarted) -> None:
        await self.end_streams()
        block: ToolBlock | ThinkBlock
        view = event.view
        if view is not None and view.body == "thought":
            block = ThinkBlock(event.id, view.text or "")
        else:
            block = ToolBlock(event.id, event.name, event.arguments, view=view, duration_format=self.duration_format)
        self.tools[event.id] = block
        self.last_tool = block
        await self.conversation.add(block)

    async def _on_tool_finished(self, event: ToolCallFinished) -> None:
        block = self.tools.pop(event.id, None)
        if block is None:  # a result without a visible start: show it anyway
            block = ToolBlock(event.id, event.name, None, duration_format=self.duration_format)
            self.last_tool = block
            await self.conversation.add(block)
        block.finish(event.output, event.result)
        if (self.sidebar is not None and isinstance(block, ToolBlock) and block.view.path
                and event.diff and not event.is_error):
            self.sidebar.record_change(block.view.path, *diff_stats(event.diff))
        refresh = getattr(self.app, "refresh_changed_files", None)
        if refresh is not None and self.sidebar is not None:  # a command may have changed files too
            refresh()
        if self.sidebar is not None:
            self.sidebar.refresh_stats()

    async def _on_model_call(self, event: Any) -> None:
        """A model call ended (``ModelCallFinished``): no block; the sidebar's Stats may update."""
        if self.sidebar is not None:
            self.sidebar.refresh_stats()

    async def _on_user_message_added(self, event: Any) -> None:
        """A message the user sent into the running turn reached the model: it shows here, at
        the boundary where it was added."""
        from .widgets.blocks import UserBlock

        await self.end_streams()
        await self.conversation.add(UserBlock(event.text))
        steering = getattr(self.app, "steering", None)
        if steering and event.text in steering:
            steering.remove(event.text)

    async def _on_notice(self, event: Notice) -> None:
        # Notices sharing a key (a retry countdown, "waiting for the model") update one block.
        from rich.text import Text

        keyed = self._keyed_notices
        block = keyed.get(event.key) if event.key else None
        if block is not None and block.is_attached:
            block.message = event.message
            block.update(Text(event.message))
            return
        block = NoticeBlock(event.message)
        if event.key:
            keyed.clear()  # an older status is over once a new one starts
            keyed[event.key] = block
        await self.conversation.add(block)

    async def _on_step_retried(self, event: StepRetried) -> None:
        """A failed attempt's streamed text and reasoning are not part of the reply: remove the
        assistant and reasoning blocks at the end of the conversation (the attempt's, back to the
        previous tool, user or other block; notices in between stay)."""
        self.assistant = None
        self.reasoning = None
        if not event.discard_partial:
            return
        for block in reversed(list(self.conversation.children)):
            if isinstance(block, (AssistantBlock, ReasoningBlock)):
                await block.remove()
            elif not isinstance(block, NoticeBlock):
                break

    async def _on_journal_status(self, event: Any) -> None:
        """A journal write failed (a warning), journaling stopped (also a persistent mark in the
        status bar) or resumed (the mark goes)."""
        self.status.journal_failed = event.state == "failed"
        await self.conversation.add(NoticeBlock(("⚠ " if event.state != "ok" else "") + event.message,
                                                kind="warning" if event.state != "ok" else "notice"))

    async def _on_error(self, event: ErrorEvent) -> None:
        await self.end_streams()
        await self.conversation.add(ErrorBlock(event.message))

    async def _on_guard(self, event: GuardTriggered) -> None:
        await self.end_streams()
        # A guard event precedes the TurnFinished that stops the turn: its stop panel says it,
        # once. Kept here for the panel's title.
        self.guard = event

    async def _on_context_usage(self, event: ContextUsage) -> None:
        self.status.context_window = event.window_tokens
        self.status.context_approximate = event.approximate
        self.status.used_tokens = event.used_tokens

    async def close_open_blocks(self) -> None:
        """End the streamed text and reasoning blocks, and mark every tool block still waiting
        for its result as cancelled (a turn that ended, or a resumed journal that stops there)."""
        await self.end_streams()
        for block in self.tools.values():
            block.mark_cancelled()
        self.tools.clear()

    async def _on_turn_finished(self, event: TurnFinished) -> None:
        self.turn_finished = event
        await self.close_open_blocks()
        if self.sidebar is not None:
            self.sidebar.refresh_stats(now=True)
        if event.stop_reason in CONTINUABLE_STOPS:
            await self._add_stop_panel(event)
        elif event.stop_reason == "budget":  # which limit, and the figures
            await self.conversation.add(StopBlock(event.stop_reason, event.final_text))
        elif event.stop_reason != "done":
            await self.conversation.add(StopBlock(event.stop_reason))
        elif self.guard is not None:  # a guard that did not stop the turn: say it once
            await self.conversation.add(NoticeBlock(f"⚠ {self.guard.guard}: {self.guard.message}", kind="warning"))

    async def _add_stop_panel(self, event: TurnFinished) -> None:
        from .widgets.stop_panel import StopPanel  # first stop only: keeps start-up light

        guard = self.guard
        message = event.final_text or (guard.message if guard else "")
        panel = StopPanel(event.stop_reason, message, guard.guard if guard else None)
        self.retire_stop_panel()
        self.stop_panel = panel
        await self.conversation.add(panel)
        # Offer Continue on Enter unless the user is typing or has queued a prompt.
        from .widgets.prompt_input import PromptInput

        prompts = self.conversation.screen.query(PromptInput)
        if not getattr(self.app, "queued", None) and (not prompts or not prompts.first().text):
            panel.focus_continue()

    async def _on_permission_request(self, event: PermissionRequest) -> None:
        await self.end_streams()
        reply = event.reply

        block = self.tools.get(event.call_id)
        if block is not None:
            block.set_awaiting_approval(True)

        from agent.events import PermissionDecision

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

        attention = getattr(self.app, "attention", None)
        if attention is not None:
            attention.prompt_waiting()
        screen = PermissionScreen(event.tool_name, event.arguments, event.capability, event.preview,
                                  view=event.view, diff=event.diff, note=event.note, sandbox=event.sandbox)
        # Close the prompt if the loop stops waiting (turn cancelled) before the user answers.
        reply.add_done_callback(lambda _future: screen.withdraw())
        await self.app.push_screen(screen, resolve)

    async def _on_plan_updated(self, event: PlanUpdated) -> None:
        # Quiet: a proposed plan opens the plan screen after the pass; an approved one lives in the
        # sidebar checklist (no conversation block).
        if event.approved and self.sidebar is not None:
            self.sidebar.set_plan(event)

    async def _on_reminder(self, event: ReminderInjected) -> None:
        """A small mark under the call whose result carries the reminder (the step's last call,
        whose start was shown just before; its result follows)."""
        mark = ReminderMark(event.text)
        block = self.last_tool
        if block is None or not block.is_attached:
            await self.conversation.add(mark)
            return
        anchor = self._reminder_anchor.get(id(block), block)
        await self.conversation.mount(mark, after=anchor)
        self._reminder_anchor[id(block)] = mark

    async def _on_compaction(self, event: CompactionDone) -> None:
        from .widgets.compaction_mark import CompactionMark  # opens the inspector (tui/context_ui.py)

        await self.end_streams()
        await self.conversation.add(CompactionMark(event))
