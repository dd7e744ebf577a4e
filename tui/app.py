"""The Textual app: layout, keys and glue. Events are drawn by ``event_handler``, the agent runs
through ``bridge``, commands live in ``commands``, themes come from ``theme_loader``.

``opencli-tui`` starts it with ``OpenCLIApp(start=..., theme_hint=...)``: the first frame is
painted before any settings or session exist (``start``, tui/startup.open_session, runs in a
thread worker right after it: pydantic and the agent core cost 150 ms or more to import), then
``session.prepare()`` (imports litellm) runs in another worker. Tests may pass ``session=`` (an
open session) instead; it is bound during mount. benchmarks/first_paint.py measures the result.

While a turn runs the prompt box stays editable; Enter queues the prompt and it is sent when the
turn ends (one notice says so).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.lazy import Lazy
from textual.screen import Screen

from .app_actions import ActionsMixin
from .app_session import SessionLifecycleMixin
from .app_themes import ThemesMixin
from .bridge import AgentEventMessage, AgentRunner, TurnEnded
from .signals import EXIT_INTERRUPTED, TERMINATING_SIGNALS, end_running_commands, interrupt_and_wait
from .theme_loader import THEMES_DIR
from .widgets.conversation import Conversation
from .widgets.prompt_input import PromptInput
from .widgets.sidebar import WIDE_COLUMNS, Sidebar
from .widgets.status_bar import StatusBar
from .widgets.subagent_timeline import SubagentTimeline

if TYPE_CHECKING:
    from textual.driver import Driver

    from .event_handler import EventHandler
    from .session_api import UISession
    from .widgets.stop_panel import StopPanel

# Only what the first frame shows is imported above; the event handler, the conversation blocks
# and the commands are imported where first used, after the first paint (benchmarks/first_paint.py).

PLACEHOLDER = "Ask the agent to do something · Enter send · Shift+Enter / Ctrl+J new line · /help"


class OpenCLIApp(ThemesMixin, SessionLifecycleMixin, ActionsMixin, App):
    """The opencli-tui cockpit for one ``AgentSession``.

    Args: ``session`` (an open ``agent.runtime.session.AgentSession``) or ``start`` (a callable returning
    ``(session, notices)`` or raising ``tui.startup.StartupError``, run in a thread worker after
    the first paint; on that error the app exits with return code 2 and ``startup_error`` holds
    the line to print), ``notices`` (lines shown at start), ``theme_hint`` (the theme of the first
    frame while the settings load: ``agent.config.files.peek_setting``), ``watch_themes`` (reload theme files live; tests turn it off), ``duration_format`` (seconds ->
    text for tool blocks; snapshot tests freeze it), ``themes_dir`` (where theme files live),
    ``start_in_plan_mode`` (``--plan``: start in Plan mode; see ``plan_mode``).
    Raises ``ValueError`` when neither ``session`` nor ``start`` is given.

    Its parts live beside it: the session's life (``app_session``), themes (``app_themes``), key
    actions and the screens widgets ask for (``app_actions``).
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
        Binding("ctrl+s", "steer", "Send queued into the turn", show=False),
        # Not priority bindings: a viewer or dialog on top keeps its own PageUp/PageDown.
        Binding("pageup", "scroll_conversation(-1)", "Scroll up", show=False),
        Binding("pagedown", "scroll_conversation(1)", "Scroll down", show=False),
        Binding("ctrl+home", "conversation_start", "First message", show=False),
        Binding("ctrl+end", "conversation_end", "Follow the end", show=False),
        Binding("f3", "subagents", "Sub-agents", show=False),
        Binding("f4", "next_sidebar_tab", "Sidebar tab", show=False),
    ]

    _last_input = 0.0  # monotonic seconds of the last key, click or paste

    def __init__(self, session: "UISession | None" = None, notices: list[str] | None = None, *,
                 start: Callable[[], tuple[Any, list[str]]] | None = None, theme_hint: Any = None,
                 watch_themes: bool = True, duration_format: Callable[[float], str] | None = None,
                 themes_dir: Path = THEMES_DIR, start_in_plan_mode: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if session is None and start is None:
            raise ValueError("OpenCLIApp needs a session or a start callable")
        self.session: "UISession | None" = session
        self._start = start
        #: The one line to print when ``start`` failed (the app exits with return code 2).
        self.startup_error: str | None = None
        self.notices = list(notices or [])
        self.watch_themes = watch_themes
        self.themes_dir = themes_dir
        self.runner = AgentRunner(self, session)
        self.duration_format = duration_format
        self.handler: EventHandler | None = None
        self.queued: list[str] = []
        #: Queued prompts sent into the running turn (Ctrl+S), until the turn adds them.
        self.steering: list[str] = []
        self._progress: Any = None  # the NoticeBlock of show_progress, while its work runs
        from .attention import Attention, driver_writer

        #: Calls the user back (bell / OSC 9) when a long turn ends or a prompt waits unseen.
        self.attention = Attention(driver_writer(self), session.settings.notify if session is not None else "bell")
        #: Prompts (and commands) submitted before the session was open; run once it is.
        self._early_prompts: list[str] = []
        self._last_ctrl_c = 0.0
        from .plan_mode import PlanModeController

        self.plan_mode = PlanModeController(self, active=start_in_plan_mode)  # Plan/Act (Shift+Tab)
        self._wanted_theme: str | None = None  # settled by the first _load_themes
        self._themes_scheduled = False  # load_themes_after_paint was called
        self._theme_toggled = False  # Ctrl+T was pressed (wins over the theme setting)
        self._first_frame_theme: str | None = None  # registered by the quick check, not yet validated
        self._choose_first_theme(session.settings.theme if session is not None else theme_hint)

    # -- layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            yield Conversation(id="conversation")
            # While the session opens in a worker the sidebar has nothing to show: Textual's Lazy
            # mounts it just after the first paint (~7 ms less before it). With a session given
            # it is there at once, as the code binding the session expects.
            yield Sidebar(id="sidebar") if self.session is not None else Lazy(Sidebar(id="sidebar"))
        yield SubagentTimeline(id="subagents", duration_format=self.duration_format)  # hidden until sub-agents run
        yield PromptInput(id="prompt", placeholder=PLACEHOLDER)
        yield StatusBar(id="status")


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

    def get_default_screen(self) -> Screen:
        """The main screen, created with the breakpoint class Textual would add on the first
        Resize (``-wide`` or ``-narrow``): added then, it restyles and re-lays out everything
        (~25 ms) just after the first layout."""
        return Screen(id="_default", classes=_breakpoint_class(self.size.width))

    async def on_mount(self) -> None:
        self._last_input = time.monotonic()
        if not self.is_headless:  # a real terminal: see on_terminate_signal
            for signum in TERMINATING_SIGNALS:
                asyncio.get_running_loop().add_signal_handler(signum, self.on_terminate_signal, signum)
        self.set_interval(5.0, self._idle_collect)
        status = self.main_screen.query_one(StatusBar)
        status.mode = self.plan_mode.mode
        self.main_screen.query_one(PromptInput).focus()
        self.screen_change_signal.subscribe(self, self._focus_prompt_on_return)
        if self.session is not None:
            self.load_themes_after_paint()
            await self._bind_session()
        else:  # paint first; the session opens in a worker (tui/startup.py)
            status.activity = "starting..."
            # The session first: the theme files are validated once it is open and drawn
            # (``on_session_opened``), so a resumed conversation does not wait for them (issue 18).
            self.call_after_refresh(self._open_session)

    def on_terminate_signal(self, signum: int) -> None:
        """SIGTERM or SIGHUP (``kill``, the terminal closed): interrupt the running turn and give
        it a few seconds to end (its commands' trees are killed, the journal gets the turn's end
        with stop reason ``interrupted``), kill any command still running, then end with 143.

        SIGTERM exits cleanly (the terminal is restored). After SIGHUP the terminal is gone: a
        clean exit would wait forever on writes to it, so the process ends at once with 143."""
        worker = self.runner._turn_worker
        if self.runner.running:
            interrupt_and_wait(self.runner.cancel_event,
                               lambda: worker is not None and not worker.is_finished)
            self.runner.cancel()
        end_running_commands()
        if signum == signal.SIGHUP:
            os._exit(EXIT_INTERRUPTED)
        self.exit(return_code=EXIT_INTERRUPTED)

    @property
    def main_screen(self) -> Screen:
        """The screen with the conversation, also while another screen (viewer, help) is on top."""
        return self.screen_stack[0]

    @property
    def is_embedded(self) -> bool:
        """True when the session runs the embedded offline model (False while it opens)."""
        return self.session is not None and str(self.session.model).startswith("embedded/")


    # -- prompt --------------------------------------------------------------------------------
    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        await self.handle_input(message.text)

    async def handle_input(self, text: str) -> None:
        """Run what the user entered: a slash command, a Plan-mode task or a prompt."""
        from .command_table import parse_command, shell_line, unescape_prompt
        from .commands import run_command

        if self.session is None:  # still opening (a fraction of a second): run it once open
            self._early_prompts.append(text)
            return
        workspace = self.session.workspace
        if workspace is not None:
            from .prompt_history_store import append_history

            append_history(Path(workspace), text)
        command = parse_command(text)
        if command is not None:
            await run_command(self, *command)
            return
        shell = shell_line(text)
        if shell is not None:
            await self.run_shell_line(shell)
            return
        if await self.plan_mode.on_prompt(unescape_prompt(text)):  # Plan mode plans it
            return
        await self.send_prompt(unescape_prompt(text))

    async def run_shell_line(self, command: str) -> None:
        """``!command``: run it now through the bash tool (a turn or job running: say so); its block
        shows in the conversation and the model reads it with the next prompt."""
        if not command:
            await self.show_notice("Type a command after the !, e.g. !git status", kind="warning")
            return
        session = self.session
        if self.runner.running or not self.runner.start_job(
                lambda emit, cancel: session.run_user_command(command, emit, cancel), name="user-command"):
            await self.show_notice("A turn is running: run the command when it ends.", kind="warning")
            return
        self.main_screen.query_one(StatusBar).activity = "running your command..."

    async def send_prompt(self, text: str) -> None:
        """Send ``text`` to the agent now, or queue it while a turn runs."""
        if self.runner.running:
            self.queued.append(text)
            first_line = text.splitlines()[0] if text.splitlines() else text
            await self.show_notice(f"Queued (sent when the current turn ends; Ctrl+S sends it into this "
                                   f"turn now): {first_line[:80]}", kind="queued")
            return
        from .widgets.blocks import UserBlock

        conversation = self.main_screen.query_one(Conversation)
        await conversation.add(UserBlock(text, journal_at=self.session.journal_position()))
        conversation.follow()
        self.runner.start_turn(text)
        self.attention.turn_started_now()
        # Until the session is prepared (litellm still importing) the turn waits: say so honestly.
        self.main_screen.query_one(StatusBar).activity = (
            "working..." if self.runner.prepared else "connecting to the model...")

    async def show_notice(self, message: str, kind: str = "notice") -> None:
        """Add a one-line notice to the conversation (kind: notice, warning, reminder, queued)."""
        from .widgets.blocks import NoticeBlock

        if self.closing:
            return
        await self.main_screen.query_one(Conversation).add(NoticeBlock(message, kind=kind))

    async def show_progress(self, message: str) -> None:
        """Add a notice that lasts while the turn or job now starting runs ("Compacting the
        context...", "Planning..."): it is taken away when that work ends, which its own result
        (the compaction mark, the plan) then shows."""
        from .widgets.blocks import NoticeBlock

        if self.closing:
            return
        await self._end_progress()
        self._progress = NoticeBlock(message)
        await self.main_screen.query_one(Conversation).add(self._progress)

    async def _end_progress(self) -> None:
        block, self._progress = self._progress, None
        if block is not None and block.is_attached:
            await block.remove()

    # -- agent messages ------------------------------------------------------------------------
    @property
    def closing(self) -> bool:
        """True once the app is ending (exit requested, e.g. by SIGTERM, or its screens torn
        down): agent messages that arrive late are dropped instead of mounting blocks into a
        conversation that is going away (Textual would raise ``MountError``)."""
        return self.return_code is not None or not self.is_running or not self.screen_stack

    def on_app_focus(self) -> None:
        self.attention.focused = True

    def on_app_blur(self) -> None:
        self.attention.focused = False

    async def on_agent_event_message(self, message: AgentEventMessage) -> None:
        assert self.handler is not None
        if self.closing:
            return
        await self.handler.handle(message.event)

    async def on_turn_ended(self, message: TurnEnded) -> None:
        assert self.handler is not None
        if self.closing:
            self.runner.turn_ended()
            return
        if message.error:
            from .widgets.blocks import ErrorBlock

            await self.main_screen.query_one(Conversation).add(ErrorBlock(f"The agent stopped on an internal error: {message.error}"))
        if self.handler.turn_finished is None:  # the loop did not report its end: close what is open
            await self.handler.close_open_blocks()
        self.runner.turn_ended()
        self.main_screen.query_one(StatusBar).activity = ""
        self.attention.turn_ended()
        self.refresh_workspace_files()  # the turn may have made files to mention
        await self._end_progress()
        if self.steering:  # the turn stopped before taking them: they run as turns of their own
            self.queued[:0], self.steering = self.steering, []
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


    def on_unmount(self) -> None:
        # Thread workers cannot be killed: stop the turn so the process can exit promptly.
        self.runner.cancel()
        self._end_start_gc_pause(final=True)  # ended before the session was drawn
        from .watching import stop_watching

        stop_watching(self)


    def on_watch_event(self, message: Any) -> None:
        """The file watcher saw a change (tui/watching.WatchEvent): refresh the sidebar."""
        from .watching import on_watch_event

        on_watch_event(self, message)

    async def action_quit(self) -> None:
        """Quit, cancelling a running turn first so its worker ends quickly."""
        self.runner.cancel()
        self.exit()


def _breakpoint_class(width: int) -> str:
    """The ``HORIZONTAL_BREAKPOINTS`` class for a screen ``width`` columns wide (as Textual picks it)."""
    return max((point for point in OpenCLIApp.HORIZONTAL_BREAKPOINTS if width >= point[0]), default=(0, ""))[1]


