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
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.lazy import Lazy
from textual.screen import Screen

from .bridge import AgentEventMessage, AgentRunner, SessionOpened, SessionPrepared, TurnEnded
from .signals import TERMINATING_SIGNALS, end_running_commands, take_default_action
from .theme_loader import (
    DEFAULT_DARK, THEME_VARIABLE_DEFAULTS, THEMES_DIR, counterpart, first_frame_theme, load_themes,
)
from .widgets.conversation import Conversation
from .widgets.prompt_input import PromptInput
from .widgets.sidebar import WIDE_COLUMNS, Sidebar
from .widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from textual.driver import Driver

    from .event_handler import EventHandler
    from .widgets.stop_panel import StopPanel

# Only what the first frame shows is imported above; the event handler, the conversation blocks
# and the commands are imported where first used, after the first paint (benchmarks/first_paint.py).

EMBEDDED_LINE = "Small local model for trying the app offline; real work wants a real model (see /help, /model)."
PLACEHOLDER = "Ask the agent to do something · Enter send · Shift+Enter / Ctrl+J new line · /help"
#: Seconds within which a second Ctrl+C on an idle app quits.
QUIT_WINDOW_S = 2.0


class OpenCLIApp(App):
    """The opencli-tui cockpit for one ``AgentSession``.

    Args: ``session`` (an open ``agent.runtime.AgentSession``) or ``start`` (a callable returning
    ``(session, notices)`` or raising ``tui.startup.StartupError``, run in a thread worker after
    the first paint; on that error the app exits with return code 2 and ``startup_error`` holds
    the line to print), ``notices`` (lines shown at start), ``theme_hint`` (the theme of the first
    frame while the settings load: ``agent.config_files.peek_setting``), ``watch_themes`` (reload theme files live; tests turn it off), ``duration_format`` (seconds ->
    text for tool blocks; snapshot tests freeze it), ``themes_dir`` (where theme files live),
    ``start_in_plan_mode`` (``--plan``: start in Plan mode; see ``plan_mode``).
    Raises ``ValueError`` when neither ``session`` nor ``start`` is given.
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
        # Not priority bindings: a viewer or dialog on top keeps its own PageUp/PageDown.
        Binding("pageup", "scroll_conversation(-1)", "Scroll up", show=False),
        Binding("pagedown", "scroll_conversation(1)", "Scroll down", show=False),
        Binding("ctrl+home", "conversation_start", "First message", show=False),
        Binding("ctrl+end", "conversation_end", "Follow the end", show=False),
    ]

    _last_input = 0.0  # monotonic seconds of the last key, click or paste

    def __init__(self, session: Any = None, notices: list[str] | None = None, *,
                 start: Callable[[], tuple[Any, list[str]]] | None = None, theme_hint: Any = None,
                 watch_themes: bool = True, duration_format: Callable[[float], str] | None = None,
                 themes_dir: Path = THEMES_DIR, start_in_plan_mode: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if session is None and start is None:
            raise ValueError("OpenCLIApp needs a session or a start callable")
        self.session = session
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
        #: Prompts (and commands) submitted before the session was open; run once it is.
        self._early_prompts: list[str] = []
        self._last_ctrl_c = 0.0
        from .plan_mode import PlanModeController

        self.plan_mode = PlanModeController(self, active=start_in_plan_mode)  # Plan/Act (Shift+Tab)
        self._wanted_theme: str | None = None  # settled by the first _load_themes
        self._theme_toggled = False  # Ctrl+T was pressed (wins over the theme setting)
        self._first_frame_theme: str | None = None  # registered by the quick check, not yet validated
        self._choose_first_theme(getattr(session.settings, "theme", None) if session is not None else theme_hint)

    # -- layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            yield Conversation(id="conversation")
            # While the session opens in a worker the sidebar has nothing to show: Textual's Lazy
            # mounts it just after the first paint (~7 ms less before it). With a session given
            # it is there at once, as the code binding the session expects.
            yield Sidebar(id="sidebar") if self.session is not None else Lazy(Sidebar(id="sidebar"))
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
        self.call_after_refresh(self._load_themes)  # validated, after the first paint
        if self.watch_themes:  # after the paint too: importing watchfiles costs ~30 ms
            self.call_after_refresh(self.watch_theme_files)
        status.mode = self.plan_mode.mode
        self.main_screen.query_one(PromptInput).focus()
        self.screen_change_signal.subscribe(self, self._focus_prompt_on_return)
        if self.session is not None:
            await self._bind_session()
        else:  # paint first; the session opens in a worker (tui/startup.py)
            status.activity = "starting..."
            self.call_after_refresh(self._open_session)

    def on_terminate_signal(self, signum: int) -> None:
        """SIGTERM or SIGHUP (``kill``, the terminal closed): kill the commands the bash tool is
        running with their process trees (they run in sessions of their own and would outlive
        the app), then end with 128 + ``signum`` as a shell reports it.

        SIGTERM exits cleanly (the terminal is restored). After SIGHUP the terminal is gone: a
        clean exit would wait forever on writes to it, so the signal's default action ends the
        process at once, as it does for any program (journals are written line by line)."""
        self.runner.cancel()
        end_running_commands()
        if signum == signal.SIGHUP:
            take_default_action(signum)
            return
        self.exit(return_code=128 + signum)

    def _open_session(self) -> None:
        assert self._start is not None
        start = self._start
        self.run_worker(lambda: self._open_session_work(start), thread=True, name="open-session",
                        group="open-session", exit_on_error=False)

    def _open_session_work(self, start: Callable[[], tuple[Any, list[str]]]) -> None:
        from .startup import StartupError

        try:
            session, notices = start()
        except StartupError as exc:
            self.call_from_thread(self._startup_failed, str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - an unexpected fault still ends in one line
            self.call_from_thread(self._startup_failed,
                                  f"opencli-tui: error: could not start: {type(exc).__name__}: {exc}")
            return
        self.post_message(SessionOpened(session, notices))

    def _startup_failed(self, line: str) -> None:
        self.startup_error = line
        self.exit(return_code=2)

    async def on_session_opened(self, message: "SessionOpened") -> None:
        """The start worker opened the session: bind it, then run what was typed meanwhile."""
        if self.closing:  # quit, or the app is shutting down, while the session opened: let go
            message.session.close()
            return
        self.session = message.session
        self.runner.session = message.session
        self.notices.extend(line for line in message.notices if line not in self.notices)
        self.main_screen.query_one(StatusBar).activity = ""
        wanted = str(getattr(self.session.settings, "theme", "") or "")
        if wanted and wanted != self.theme and wanted in self.available_themes and not self._theme_toggled:
            self.theme = wanted  # the validated settings disagree with the peek (rare)
        if self.plan_mode.active:  # toggled on while starting, or --plan: journal it
            self.plan_mode.set_active(True)
        await self._bind_session()
        early, self._early_prompts = self._early_prompts, []
        for text in early:
            await self.handle_input(text)

    async def _bind_session(self) -> None:
        """Show what depends on the session: model and modes in the status bar, the welcome
        block, start-up notices, a resumed conversation; then start ``session.prepare()``."""
        from .event_handler import EventHandler
        from .widgets.blocks import NoticeBlock, WelcomeBlock

        conversation = self.main_screen.query_one(Conversation)
        status = self.main_screen.query_one(StatusBar)
        self.handler = EventHandler(self, conversation, status, self.runner, self.duration_format,
                                    sidebar=self.main_screen.query_one(Sidebar))
        status.model = self.session.model
        status.embedded = self.is_embedded
        status.permission_mode = _mode_text(getattr(self.session.settings, "permission_mode", "ask"))
        if getattr(self.session, "plan_mode", False) and not self.plan_mode.active:  # a resumed session
            self.plan_mode.set_active(True)
        status.mode = self.plan_mode.mode
        workspace = getattr(self.session, "workspace", None)
        if workspace is not None:  # Up/Down reach prompts of earlier sessions of this project
            from .prompt_history_store import load_history

            history = self.main_screen.query_one(PromptInput).prompt_history
            history.entries[:0] = load_history(Path(workspace), history.limit)
            del history.entries[: -history.limit]
        if getattr(self.session, "resumed", None) is not None:  # --continue / --resume ID
            from .session_commands import show_resumed_at_start

            # Draws the welcome block, the resumed conversation and the notices itself.
            await show_resumed_at_start(self)
        else:
            await conversation.add(WelcomeBlock(Path(workspace).name if workspace else ".", self.session.model))
            for line in self._startup_notices():
                await conversation.add(NoticeBlock(line, kind="warning" if self.is_embedded else "notice"))
        self.call_after_refresh(self.runner.prepare)
        if getattr(self, "pick_session_at_start", False):  # `opencli-tui --resume` without an id
            from .session_commands import open_picker

            self.call_after_refresh(open_picker, self)

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
        """True when the session runs the embedded offline model (False while it opens)."""
        return self.session is not None and str(self.session.model).startswith("embedded/")

    def _startup_notices(self) -> list[str]:
        lines = list(self.notices)
        extra = getattr(self.session, "startup_notices", None)
        if callable(extra):
            lines += [line for line in extra() if line not in lines]
        if self.is_embedded and not any("small local model" in line.lower() for line in lines):
            lines.append(EMBEDDED_LINE)
        return lines

    # -- themes --------------------------------------------------------------------------------
    def _choose_first_theme(self, wanted: Any) -> None:
        """Set the theme of the first frame, from ``__init__``. Theme files are read by the quick
        check of ``first_frame_theme``; ``_load_themes`` validates them after the paint."""
        wanted = str(wanted or DEFAULT_DARK)
        self._wanted_theme = wanted
        if wanted in self.available_themes:  # a built-in Textual theme
            self._set_theme_before_run(wanted)
            return
        for name in dict.fromkeys((wanted, DEFAULT_DARK)):
            theme = first_frame_theme(name, self.themes_dir)
            if theme is not None:
                self.register_theme(theme)
                self._first_frame_theme = theme.name
                self._set_theme_before_run(theme.name)
                return
        self._set_theme_before_run("textual-dark")

    def _set_theme_before_run(self, name: str) -> None:
        """Make ``name`` (a registered theme) current before the app runs.

        Assigning ``self.theme`` would call Textual's theme watcher, which queues a full CSS
        re-parse; queued before the first parse, it repeats that parse (~20 ms) right after it,
        with the same result. So the value is set without the watcher, and what the watcher
        does besides (textual 8.2.8, pinned): the theme and dark/light classes, the ANSI filter,
        and the CSS variables the first parse will use."""
        self.set_reactive(OpenCLIApp.theme, name)
        self.stylesheet.set_variables(self.get_css_variables())
        dark = self.current_theme.dark
        classes = {cls: False for cls in self.classes if cls.startswith("-theme-")}
        self.update_classes({**classes, f"-theme-{name}": True, "-dark-mode": dark, "-light-mode": not dark},
                            update=False)
        self._refresh_truecolor_filter(self.ansi_theme)

    def _load_themes(self) -> None:
        """Load and validate every theme file, register the good ones and report the bad ones.

        Runs after the first paint and again whenever a theme file changes. The first run also
        settles the theme: the wanted one when valid, else our default with a notice."""
        themes, problems = load_themes(self.themes_dir)
        for theme in themes:
            self.register_theme(theme)
        for problem in problems:
            self.notify(problem, title="Theme file skipped", severity="warning", timeout=8)
        wanted, self._wanted_theme = self._wanted_theme, None
        if wanted is None:  # a reload: show the changed colours
            self.refresh_css(animate=False)
            return
        valid = {theme.name for theme in themes}
        quick, self._first_frame_theme = self._first_frame_theme, None
        rejected = quick is not None and quick not in valid  # reported among the problems
        fallback = DEFAULT_DARK if DEFAULT_DARK in valid else "textual-dark"
        if wanted not in self.available_themes or (rejected and wanted == quick):
            if not rejected:
                self.notify(f"Unknown theme {wanted!r}; using {fallback}.", severity="warning")
            self.theme = fallback
        elif self.theme != wanted:
            self.theme = wanted
        if rejected:
            self.unregister_theme(quick)

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
        if self._wanted_theme is not None:  # pressed before the theme files were validated
            self._load_themes()
        self._theme_toggled = True  # the user's choice now; the settings no longer override it
        other = counterpart(self.theme, self.current_theme.dark)
        if other not in self.available_themes:
            other = "textual-light" if self.current_theme.dark else "textual-dark"
        self.theme = other

    # -- prompt --------------------------------------------------------------------------------
    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        await self.handle_input(message.text)

    async def handle_input(self, text: str) -> None:
        """Run what the user entered: a slash command, a Plan-mode task or a prompt."""
        from .commands import parse_command, run_command, unescape_prompt

        if self.session is None:  # still opening (a fraction of a second): run it once open
            self._early_prompts.append(text)
            return
        workspace = getattr(self.session, "workspace", None)
        if workspace is not None:
            from .prompt_history_store import append_history

            append_history(Path(workspace), text)
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
        from .widgets.blocks import UserBlock

        conversation = self.main_screen.query_one(Conversation)
        await conversation.add(UserBlock(text))
        conversation.follow()
        self.runner.start_turn(text)
        self.main_screen.query_one(StatusBar).activity = "working..."

    async def show_notice(self, message: str, kind: str = "notice") -> None:
        """Add a one-line notice to the conversation (kind: notice, warning, reminder, queued)."""
        from .widgets.blocks import NoticeBlock

        if self.closing:
            return
        await self.main_screen.query_one(Conversation).add(NoticeBlock(message, kind=kind))

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

    # -- agent messages ------------------------------------------------------------------------
    @property
    def closing(self) -> bool:
        """True once the app is ending (exit requested, e.g. by SIGTERM, or its screens torn
        down): agent messages that arrive late are dropped instead of mounting blocks into a
        conversation that is going away (Textual would raise ``MountError``)."""
        return self.return_code is not None or not self.is_running or not self.screen_stack

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
        if self.closing:
            return
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
        """Switch the session's model in a worker (it checks the name and loads model info), then
        say so; a name litellm cannot route is refused with its reason and nothing changes."""
        status = self.main_screen.query_one(StatusBar)
        status.prepared = False

        def switch() -> None:
            try:
                self.session.set_model(name)
            except ValueError as exc:
                self.call_from_thread(self.show_notice, f"Model not switched: {exc}", "warning")
                return
            self.call_from_thread(self._model_switched, name)

        self.runner.run_session_op(switch)

    async def _model_switched(self, name: str) -> None:
        status = self.main_screen.query_one(StatusBar)
        status.model = name
        status.embedded = name.startswith("embedded/")
        status.used_tokens = None
        await self.show_notice(f"Model switched to {name}.")

    # -- actions -------------------------------------------------------------------------------
    def action_help(self) -> None:
        """Show the help screen."""
        from .commands import command_rows
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
        if not self._session_ready():
            return
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
        """Show or hide the sidebar (not yet there in the first instant: nothing to do)."""
        for sidebar in self.main_screen.query(Sidebar):
            sidebar.toggle()

    def action_toggle_last_tool(self) -> None:
        """Expand or collapse the most recent tool block."""
        from .widgets.tool_block import ToolBlock

        blocks = self.main_screen.query(ToolBlock)
        if blocks:
            last = blocks.last()
            last.expanded = not last.expanded
            if last.expanded:
                self.main_screen.query_one(Conversation).scroll_to_widget(last, animate=False)


def _breakpoint_class(width: int) -> str:
    """The ``HORIZONTAL_BREAKPOINTS`` class for a screen ``width`` columns wide (as Textual picks it)."""
    return max((point for point in OpenCLIApp.HORIZONTAL_BREAKPOINTS if width >= point[0]), default=(0, ""))[1]


def _mode_text(mode: Any) -> str:
    return str(getattr(mode, "value", mode))
