"""The Textual app: layout, keys and glue. Events are drawn by ``event_handler``, the agent runs
through ``bridge``, commands live in ``commands``, themes come from ``theme_loader``.

Start it with ``OpenCLIApp(session=build_session(...), notices=[...]).run()``. The first paint
waits for nothing slow: ``session.prepare()`` (imports litellm) starts in a worker right after it.

While a turn runs the prompt box stays editable; Enter queues the prompt and it is sent when the
turn ends (one notice says so).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen

from .bridge import AgentEventMessage, AgentRunner, SessionPrepared, TurnEnded
from .commands import command_rows, parse_command, run_command, unescape_prompt
from .event_handler import EventHandler
from .theme_loader import DEFAULT_DARK, THEME_VARIABLE_DEFAULTS, THEMES_DIR, counterpart, load_themes
from .widgets.blocks import ErrorBlock, NoticeBlock, UserBlock, WelcomeBlock
from .widgets.conversation import Conversation
from .widgets.prompt_input import PromptInput
from .widgets.sidebar import WIDE_COLUMNS, Sidebar
from .widgets.status_bar import StatusBar
from .widgets.tool_block import ToolBlock

if TYPE_CHECKING:
    from textual.driver import Driver

    from .widgets.stop_panel import StopPanel

EMBEDDED_LINE = "Small local model for trying the app offline; real work wants a real model (see /help, /model)."
PLACEHOLDER = "Ask the agent to do something · Enter send · Shift+Enter / Ctrl+J new line · /help"
#: Seconds within which a second Ctrl+C on an idle app quits.
QUIT_WINDOW_S = 2.0


class OpenCLIApp(App):
    """The opencli-tui cockpit for one ``AgentSession``.

    Args: ``session`` (an ``agent.runtime.AgentSession``), ``notices`` (lines shown at start),
    ``watch_themes`` (reload theme files live; tests turn it off), ``duration_format`` (seconds ->
    text for tool blocks; snapshot tests freeze it), ``themes_dir`` (where theme files live),
    ``start_in_plan_mode`` (``--plan``: start in Plan mode; see ``plan_mode``).
    """

    CSS_PATH = str(Path(__file__).with_name("app.tcss"))  # absolute: subclasses elsewhere work too
    TITLE = "opencli-tui"
    #: The sidebar shows by default on screens at least this wide (CSS class ``-wide``).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (WIDE_COLUMNS, "-wide")]
    BINDINGS = [
        Binding("escape", "cancel_turn", "Cancel", show=False),
        Binding("ctrl+c", "interrupt", "Cancel / quit", show=False, priority=True),
        Binding("ctrl+t", "toggle_theme", "Theme", show=False),
        Binding("ctrl+o", "toggle_last_tool", "Expand tool", show=False),
        Binding("ctrl+b", "toggle_sidebar", "Sidebar", show=False),
        Binding("f1", "help", "Help", show=False),
        Binding("f2", "context_breakdown", "Context", show=False),
        Binding("shift+tab", "toggle_plan_mode", "Plan/Act", show=False, priority=True),
        Binding("ctrl+g", "hide_plan_hint", "Hide hint", show=False),
        Binding("ctrl+r", "cycle_permission_mode", "Permission mode", show=False),
    ]

    _last_input = 0.0  # monotonic seconds of the last key, click or paste

    def __init__(self, session: Any, notices: list[str] | None = None, *, watch_themes: bool = True,
                 duration_format: Callable[[float], str] | None = None,
                 themes_dir: Path = THEMES_DIR, start_in_plan_mode: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.session = session
        self.notices = list(notices or [])
        self.watch_themes = watch_themes
        self.themes_dir = themes_dir
        self.runner = AgentRunner(self, session)
        self.duration_format = duration_format
        self.handler: EventHandler | None = None
        self.queued: list[str] = []
        self._last_ctrl_c = 0.0
        from .plan_mode import PlanModeController

        self.plan_mode = PlanModeController(self, active=start_in_plan_mode)  # Plan/Act (Shift+Tab)
        # Themes are registered and chosen before the first stylesheet pass (setting the theme
        # after mount re-parses and re-applies all CSS: ~30 ms more before the first paint).
        self._theme_notes: list[dict[str, Any]] = []
        self._load_themes(first=True)

    # -- layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            yield Conversation(id="conversation")
            yield Sidebar(id="sidebar")
        yield PromptInput(id="prompt", placeholder=PLACEHOLDER)
        yield StatusBar(id="status")

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Fallbacks for our CSS variables, so built-in Textual themes work too."""
        return dict(THEME_VARIABLE_DEFAULTS)

    async def on_event(self, event) -> None:
        """Note user input (keys, mouse presses, pastes reach the app first) so the idle garbage
        collection waits for a quiet moment; then handle the event as usual."""
        from textual import events

        if isinstance(event, (events.Key, events.MouseDown, events.Paste)):
            self._last_input = time.monotonic()
        await super().on_event(event)

    def _idle_collect(self) -> None:
        from .bridge import collect_when_idle

        collect_when_idle(time.monotonic() - self._last_input, self.runner.running)

    def get_driver_class(self) -> "type[Driver]":
        """Textual's terminal driver, with bracketed pastes kept whole: pasted text holding escape
        codes (coloured output) arrives as one paste, never as keys (tui/widgets/bracketed_paste.py)."""
        from .widgets.bracketed_paste import paste_safe_driver_class

        return paste_safe_driver_class(super().get_driver_class())

    async def on_mount(self) -> None:
        self._last_input = time.monotonic()
        self.set_interval(5.0, self._idle_collect)
        conversation = self.main_screen.query_one(Conversation)
        status = self.main_screen.query_one(StatusBar)
        self.handler = EventHandler(self, conversation, status, self.runner, self.duration_format,
                                    sidebar=self.main_screen.query_one(Sidebar))
        for note in self._theme_notes:  # from _load_themes(first=True) in __init__
            self.notify(**note)
        self._theme_notes.clear()
        status.model = self.session.model
        status.embedded = self.is_embedded
        status.permission_mode = _mode_text(getattr(self.session.settings, "permission_mode", "ask"))
        if getattr(self.session, "plan_mode", False) and not self.plan_mode.active:  # a resumed session
            self.plan_mode.set_active(True)
        status.mode = self.plan_mode.mode
        workspace = getattr(self.session, "workspace", None)
        await conversation.add(WelcomeBlock(Path(workspace).name if workspace else ".", self.session.model))
        for line in self._startup_notices():
            await conversation.add(NoticeBlock(line, kind="warning" if self.is_embedded else "notice"))
        if getattr(self.session, "resumed", None) is not None:  # --continue / --resume ID
            from .session_commands import show_resumed_at_start

            await show_resumed_at_start(self)  # redraws from session.resumed (set by build_session)
        self.main_screen.query_one(PromptInput).focus()
        self.screen_change_signal.subscribe(self, self._focus_prompt_on_return)
        self.call_after_refresh(self.runner.prepare)
        if getattr(self, "pick_session_at_start", False):  # `opencli-tui --resume` without an id
            from .session_commands import open_picker

            self.call_after_refresh(open_picker, self)
        if self.watch_themes:
            self.watch_theme_files()

    def _focus_prompt_on_return(self, screen: Screen) -> None:
        """Back on the main screen after a viewer, help or other screen closed: focus the prompt
        (typing must not go to a tool block), unless a stop panel is waiting for its answer."""
        from .widgets.stop_panel import StopPanel

        if screen is not self.main_screen or len(self.screen_stack) != 1:
            return
        focused = screen.focused
        if focused is not None and any(isinstance(n, StopPanel) for n in (focused, *focused.ancestors)):
            return
        prompt = screen.query_one(PromptInput)
        if prompt.focusable:
            prompt.focus()

    @property
    def main_screen(self) -> Screen:
        """The screen with the conversation, also while another screen (viewer, help) is on top."""
        return self.screen_stack[0]

    @property
    def is_embedded(self) -> bool:
        """True when the session runs the embedded offline model."""
        return str(self.session.model).startswith("embedded/")

    def _startup_notices(self) -> list[str]:
        lines = list(self.notices)
        extra = getattr(self.session, "startup_notices", None)
        if callable(extra):
            lines += [line for line in extra() if line not in lines]
        if self.is_embedded and not any("small local model" in line.lower() for line in lines):
            lines.append(EMBEDDED_LINE)
        return lines

    # -- themes --------------------------------------------------------------------------------
    def _load_themes(self, first: bool = False) -> None:
        themes, problems = load_themes(self.themes_dir)
        for theme in themes:
            self.register_theme(theme)
        notes = [dict(message=problem, title="Theme file skipped", severity="warning", timeout=8)
                 for problem in problems]
        if first:
            wanted = str(getattr(self.session.settings, "theme", DEFAULT_DARK) or DEFAULT_DARK)
            if wanted not in self.available_themes:
                if wanted != DEFAULT_DARK:
                    notes.append(dict(message=f"Unknown theme {wanted!r}; using {DEFAULT_DARK}.",
                                      severity="warning"))
                wanted = DEFAULT_DARK if DEFAULT_DARK in self.available_themes else "textual-dark"
            self.theme = wanted
        else:
            self.refresh_css(animate=False)
        if first:  # called from __init__: notified in on_mount
            self._theme_notes.extend(notes)
        else:
            for note in notes:
                self.notify(**note)

    @work(exclusive=True, group="theme-watch")
    async def watch_theme_files(self) -> None:
        """Reload the theme files whenever one changes (runs until the app exits)."""
        try:
            from watchfiles import awatch
        except ImportError:  # optional nicety
            return
        if not self.themes_dir.is_dir():
            return
        async for _changes in awatch(self.themes_dir, debounce=200, recursive=False):
            self._load_themes()

    def action_toggle_theme(self) -> None:
        """Switch between the dark and the light theme."""
        other = counterpart(self.theme, self.current_theme.dark)
        if other not in self.available_themes:
            other = "textual-light" if self.current_theme.dark else "textual-dark"
        self.theme = other

    # -- prompt --------------------------------------------------------------------------------
    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        text = message.text
        command = parse_command(text)
        if command is not None:
            await run_command(self, *command)
            return
        if await self.plan_mode.on_prompt(unescape_prompt(text)):  # Plan mode plans it
            return
        await self.send_prompt(unescape_prompt(text))

    async def send_prompt(self, text: str) -> None:
        """Send ``text`` to the agent now, or queue it while a turn runs."""
        if self.runner.running:
            self.queued.append(text)
            first_line = text.splitlines()[0] if text.splitlines() else text
            await self.show_notice(f"Queued (sent when the current turn ends): {first_line[:80]}",
                                   kind="queued")
            return
        conversation = self.main_screen.query_one(Conversation)
        await conversation.add(UserBlock(text))
        conversation.follow()
        self.runner.start_turn(text)
        self.main_screen.query_one(StatusBar).activity = "working..."

    async def show_notice(self, message: str, kind: str = "notice") -> None:
        """Add a one-line notice to the conversation (kind: notice, warning, reminder, queued)."""
        await self.main_screen.query_one(Conversation).add(NoticeBlock(message, kind=kind))

    # -- agent messages ------------------------------------------------------------------------
    async def on_agent_event_message(self, message: AgentEventMessage) -> None:
        assert self.handler is not None
        await self.handler.handle(message.event)

    async def on_turn_ended(self, message: TurnEnded) -> None:
        assert self.handler is not None
        if message.error:
            await self.main_screen.query_one(Conversation).add(ErrorBlock(f"The agent stopped on an internal error: {message.error}"))
        if self.handler.turn_finished is None:  # the loop did not report its end: close what is open
            await self.handler.end_streams()
            for block in self.handler.tools.values():
                block.mark_cancelled()
            self.handler.tools.clear()
        self.runner.turn_ended()
        self.main_screen.query_one(StatusBar).activity = ""
        await self.plan_mode.turn_ended(message)  # a planning pass ended: open the plan screen
        if self.queued:
            await self.send_prompt(self.queued.pop(0))

    async def on_stop_panel_closed(self, message: "StopPanel.Closed") -> None:
        """Continue (send the panel's prompt) or Stop after a step-limit or loop-guard stop."""
        if self.handler is not None and self.handler.stop_panel is message.panel:
            self.handler.stop_panel = None
        self.main_screen.query_one(PromptInput).focus()
        if message.prompt:
            await self.send_prompt(message.prompt)

    def on_session_prepared(self, message: SessionPrepared) -> None:
        status = self.main_screen.query_one(StatusBar)
        status.model = self.session.model
        status.context_window = message.context_window
        status.prepared = True
        self.main_screen.query_one(Sidebar).set_git(getattr(self.session, "git", None))
        from .session_commands import start_watching

        start_watching(self)  # external changes and git state refresh the sidebar
        if message.error:
            self.call_later(self.show_notice, f"Could not load model info: {message.error}", "warning")

    # -- commands used by commands.py ---------------------------------------------------------
    async def new_conversation(self) -> None:
        """Start a new conversation: clear the pane and the session (in a worker)."""
        assert self.handler is not None
        await self.main_screen.query_one(Conversation).clear_blocks()
        self.handler.reset()
        self.queued.clear()
        status = self.main_screen.query_one(StatusBar)
        status.used_tokens = None
        self.runner.run_session_op(self.session.clear)
        await self.show_notice("New conversation.")

    async def switch_model(self, name: str) -> None:
        """Switch the session's model (model info loads in a worker) and say so."""
        status = self.main_screen.query_one(StatusBar)
        status.model = name
        status.embedded = name.startswith("embedded/")
        status.prepared = False
        status.used_tokens = None
        self.runner.run_session_op(lambda: self.session.set_model(name))
        await self.show_notice(f"Model switched to {name}.")

    # -- actions -------------------------------------------------------------------------------
    def action_help(self) -> None:
        """Show the help screen."""
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(command_rows()))

    def action_context_breakdown(self) -> None:
        """F2: show what fills the context window (tui/context_ui.py)."""
        from .context_ui import open_breakdown

        open_breakdown(self)

    async def action_cancel_turn(self) -> None:
        """Esc: cancel the running turn (a second Esc while it stops just says so)."""
        if self.runner.cancelling:
            self.notify("Still stopping the current step... (Ctrl+Q quits)", timeout=3)
        elif self.runner.cancel():
            self.main_screen.query_one(StatusBar).activity = "cancelling..."

    async def action_interrupt(self) -> None:
        """Ctrl+C: cancel a running turn; copy a selection; clear the prompt; twice quits."""
        prompt = self.main_screen.query_one(PromptInput)
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

    def on_unmount(self) -> None:
        # Thread workers cannot be killed: stop the turn so the process can exit promptly.
        self.runner.cancel()
        from .session_commands import stop_watching

        stop_watching(self)

    def action_cycle_permission_mode(self) -> None:
        """Ctrl+R: next permission mode (ask, auto-edit, full-auto, read-only), effective at once."""
        from .session_commands import cycle_permission_mode

        cycle_permission_mode(self)

    def on_watch_event(self, message: Any) -> None:
        """The file watcher saw a change (tui/session_commands.WatchEvent): refresh the sidebar."""
        from .session_commands import on_watch_event

        on_watch_event(self, message)

    async def action_quit(self) -> None:
        """Quit, cancelling a running turn first so its worker ends quickly."""
        self.runner.cancel()
        self.exit()

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
        """Show or hide the sidebar."""
        self.main_screen.query_one(Sidebar).toggle()

    def action_toggle_last_tool(self) -> None:
        """Expand or collapse the most recent tool block."""
        blocks = self.main_screen.query(ToolBlock)
        if blocks:
            last = blocks.last()
            last.expanded = not last.expanded
            if last.expanded:
                self.main_screen.query_one(Conversation).scroll_to_widget(last, animate=False)


def _mode_text(mode: Any) -> str:
    return str(getattr(mode, "value", mode))
