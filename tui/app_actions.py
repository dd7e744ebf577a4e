"""Key actions of ``OpenCLIApp`` (scrolling, cancel, Ctrl+C, toggles, help) and the requests widgets
post to open a screen (context breakdown, compaction inspector, output viewer).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .widgets.conversation import Conversation
from .widgets.prompt_input import PromptInput
from .widgets.sidebar import Sidebar
from .widgets.status_bar import StatusBar

if TYPE_CHECKING:

    from .widgets.compaction_mark import CompactionMark
    from .widgets.context_meter import ContextMeter
    from .widgets.tool_block import ToolBlock

#: Seconds within which a second Ctrl+C on an idle app quits.
QUIT_WINDOW_S = 2.0


class ActionsMixin:
    """The key actions and widget requests of ``OpenCLIApp``."""

    # -- scrolling the conversation from the keyboard -----------------------------------------
    def action_scroll_conversation(self, pages: int) -> None:
        """PageUp / PageDown: scroll the conversation by a screen, wherever the focus is on the
        main screen (the prompt included)."""
        self.main_screen.query_one(Conversation).page(pages)

    def action_conversation_start(self) -> None:
        """Ctrl+Home: the first block of the conversation."""
        self.main_screen.query_one(Conversation).to_start()

    def action_conversation_end(self) -> None:
        """Ctrl+End: the end of the conversation, following new content again."""
        self.main_screen.query_one(Conversation).follow()

    # -- actions -------------------------------------------------------------------------------
    def action_help(self) -> None:
        """Show the help screen."""
        from .command_table import command_rows
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(command_rows()))

    def _session_ready(self) -> bool:
        """True once the session is open; before that (a fraction of a second after start)
        keys that need it say so and do nothing."""
        if self.session is None:
            self.notify("Still starting: one moment.", timeout=2)
            return False
        return True

    def action_context_breakdown(self) -> None:
        """F2: show what fills the context window (tui/context_ui.py)."""
        if not self._session_ready():
            return
        from .context_ui import open_breakdown

        open_breakdown(self)

    async def action_cancel_turn(self) -> None:
        """Esc: cancel the running turn (a second Esc while it stops just says so)."""
        if self.runner.cancelling:
            self.notify("Still stopping the current step... (Ctrl+Q quits)", timeout=3)
        elif self.runner.cancel():
            self.main_screen.query_one(StatusBar).activity = "cancelling..."

    async def action_interrupt(self) -> None:
        """Ctrl+C: copy the text selected with the mouse (in the conversation, the sidebar...);
        else cancel a running turn; copy the prompt's selection; clear the prompt; twice quits.
        A mouse selection comes first: it was made just before, to be copied (a turn's cancel
        is one Ctrl+C further). The copy goes through Textual's ``copy_to_clipboard`` (OSC 52)."""
        prompt = self.main_screen.query_one(PromptInput)
        selected = self.screen.get_selected_text()
        if selected:
            self.copy_to_clipboard(selected)
            self.screen.clear_selection()
            lines = selected.count("\n") + 1
            self.notify(f"Copied {len(selected)} characters ({lines} line{'' if lines == 1 else 's'}).",
                        timeout=3)
            return
        if self.runner.running and not self.runner.cancelling:
            await self.action_cancel_turn()
            return
        if self.focused is prompt and prompt.selected_text:
            prompt.action_copy()
            return
        if self.focused is prompt and prompt.text:
            prompt.clear()
            return
        now = time.monotonic()
        if now - self._last_ctrl_c < QUIT_WINDOW_S:
            await self.action_quit()
            return
        self._last_ctrl_c = now
        self.notify("Press Ctrl+C again to quit.", timeout=QUIT_WINDOW_S)

    # -- requests from widgets -----------------------------------------------------------------
    def on_context_meter_breakdown_requested(self, message: "ContextMeter.BreakdownRequested") -> None:
        """A click on the context meter: the context breakdown."""
        from .context_ui import open_breakdown

        open_breakdown(self)

    def on_compaction_mark_inspect_requested(self, message: "CompactionMark.InspectRequested") -> None:
        """A compaction mark was opened: the compaction inspector at that compaction."""
        from .context_ui import open_inspector

        open_inspector(self, message.tokens_before, message.tokens_after)

    def on_tool_block_view_output_requested(self, message: "ToolBlock.ViewOutputRequested") -> None:
        """``v`` on a tool block: its saved full output, or its result text, in the viewer."""
        from .screens.output_viewer import OutputViewerScreen, in_memory_file  # first use only

        if message.path is not None:
            self.push_screen(OutputViewerScreen(message.path, title=message.title))
            return
        path, release = in_memory_file(message.text)
        self.push_screen(OutputViewerScreen(path, title=message.title, on_close=release))

    async def action_steer(self) -> None:
        """Ctrl+S: send the queued prompts into the running turn; the agent adds them at its next
        step boundary (every tool call answered) and the conversation shows them there."""
        if not self.runner.running or not self.queued or self.session is None:
            return
        sent = [text for text in self.queued if self.session.steer(text)]
        if not sent:
            return
        self.queued = [text for text in self.queued if text not in sent]
        self.steering += sent
        count = len(sent)
        await self.show_notice(f"Sending {count} message{'s' if count != 1 else ''} into the running turn: "
                               "the agent reads it after its current step.", kind="queued")

    def action_cycle_permission_mode(self) -> None:
        """Ctrl+R: next permission mode (ask, auto-edit, full-auto, read-only), effective at once."""
        if not self._session_ready():
            return
        from .session_commands import cycle_permission_mode

        cycle_permission_mode(self)

    def action_toggle_plan_mode(self) -> None:
        """Shift+Tab: switch Plan / Act mode (on another screen: focus the previous widget)."""
        if self.screen is not self.main_screen:
            self.screen.focus_previous()
            return
        self.plan_mode.toggle()

    def action_hide_plan_hint(self) -> None:
        """Ctrl+G: hide the suggestion to use Plan mode."""
        self.plan_mode.hide_hint()

    def action_toggle_sidebar(self) -> None:
        """Show or hide the sidebar (not yet there in the first instant: nothing to do)."""
        for sidebar in self.main_screen.query(Sidebar):
            sidebar.toggle()

    def action_next_sidebar_tab(self) -> None:
        """F4: show the sidebar if hidden, else bring its next tab forward (Plan → Files → Stats)."""
        for sidebar in self.main_screen.query(Sidebar):
            if not sidebar.shown:
                sidebar.toggle()
            else:
                sidebar.next_tab()

    def action_toggle_last_tool(self) -> None:
        """Expand or collapse the most recent tool block."""
        from .widgets.tool_block import ToolBlock

        blocks = self.main_screen.query(ToolBlock)
        if blocks:
            last = blocks.last()
            last.expanded = not last.expanded
            if last.expanded:
                self.main_screen.query_one(Conversation).scroll_to_widget(last, animate=False)

    # -- sub-agents ----------------------------------------------------------------------------
    def action_subagents(self) -> None:
        """F3: focus the first card of the sub-agent timeline (a notice when there is none)."""
        from .widgets.subagent_timeline import SubagentTimeline

        timelines = self.main_screen.query(SubagentTimeline)
        if not timelines or not timelines.first().focus_first():
            self.notify("No sub-agents in this turn.", timeout=2)

    async def on_subagent_timeline_open(self, message) -> None:
        """A timeline card was chosen: its conversation, read-only (tui/screens/subagent_view.py),
        kept up to date while the sub-agent runs (tui/subagent_follow.py)."""
        from .screens.subagent_view import SubagentViewScreen
        from .subagent_follow import follow_journal
        from .widgets.subagent_timeline import SubagentCard

        path = message.journal_path
        cards = [card for card in self.main_screen.query(SubagentCard) if card.journal_path == path]

        def running() -> bool:  # a live viewer for a running sub-agent (tui/subagent_follow.py)
            return bool(path) and any(card.running for card in cards)

        screen = SubagentViewScreen(message.title, path)
        await self.push_screen(screen)
        self.run_worker(follow_journal(self, screen, path, running), group="subagent-view")
