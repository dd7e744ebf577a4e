"""The session's life in ``OpenCLIApp``: opening it in a worker after the first paint, binding it to
the widgets, its start-up notices, a new conversation and a model switch.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from textual.screen import Screen

from .bridge import SessionOpened, SessionPrepared
from .widgets.conversation import Conversation
from .widgets.prompt_input import PromptInput
from .widgets.sidebar import Sidebar
from .widgets.status_bar import StatusBar

if TYPE_CHECKING:

    pass

#: Modules the event loop imports to bind a session (the conversation's blocks and handler):
#: imported by the start worker before it posts ``SessionOpened``, off the event loop.
IMPORTED_BEFORE_BIND = ("tui.event_handler", "tui.widgets.blocks", "tui.markdown_split", "tui.resume_view")
#: ... and those it imports next (theme and file watching, MCP, the sandbox's status): imported in
#: a thread once the bound session has been drawn (``_session_drawn``). On the event loop they
#: stopped it 60-80 ms at a time (``benchmarks/idle_cpu.py``'s start-up lag; a thread's import
#: gives the GIL back every few milliseconds); imported while the event loop draws a resumed
#: conversation, they delayed its last message by about 0.1 s (``benchmarks/long_chat.py``).
IMPORTED_AFTER_BIND = ("watchfiles", "anyio._backends._asyncio", "agent.mcp.manager", "agent.sandbox.confine")


def import_quietly(names: tuple[str, ...]) -> None:
    """Import ``names`` (module names) now; one that fails is left for its real import to report."""
    import importlib

    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - ImportError and the like: reported where it is used
            pass


EMBEDDED_LINE = "Small local model for trying the app offline; real work wants a real model (see /help, /model)."


#: Guards the start worker's pause of full garbage collections (begun in its thread, ended on
#: the event loop or by the app's end).
_START_GC_LOCK = threading.Lock()


class SessionLifecycleMixin:
    """The session part of ``OpenCLIApp``."""

    def _open_session(self) -> None:
        assert self._start is not None
        start = self._start
        self.run_worker(lambda: self._open_session_work(start), thread=True, name="open-session",
                        group="open-session", exit_on_error=False)

    def _open_session_work(self, start: Callable[[], tuple[Any, list[str]]]) -> None:
        from agent.gc_pause import pause_full_collections

        from .startup import StartupError

        # No automatic full garbage collection until the session is drawn: reading a long
        # journal creates its records faster than generation 2's threshold counts, and each full
        # pass re-scans them all (65-86 ms, twice, on the way to a 5000-message session's last
        # message). ``_end_start_gc_pause`` resumes it, freezing what was loaded.
        with _START_GC_LOCK:
            if not getattr(self, "_start_gc_ended", False):  # (False: the app ended before this ran)
                self._start_gc_paused = True
                pause_full_collections()
        try:
            session, notices = start()
        except StartupError as exc:
            self.call_from_thread(self._startup_failed, str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - an unexpected fault still ends in one line
            self.call_from_thread(self._startup_failed,
                                  f"opencli-tui: error: could not start: {type(exc).__name__}: {exc}")
            return
        import_quietly(IMPORTED_BEFORE_BIND)
        if not self.post_message(SessionOpened(session, notices)):  # the app has ended meanwhile
            self._end_start_gc_pause()
            session.close()

    def _end_start_gc_pause(self, *, final: bool = False) -> None:
        """End the start worker's pause of full garbage collections (once; later calls do
        nothing): the loaded session's objects are frozen, out of later full passes' sight.
        ``final`` (the app ends): a start worker that has not paused yet will not pause."""
        with _START_GC_LOCK:
            if final:
                self._start_gc_ended = True
            if not getattr(self, "_start_gc_paused", False):
                return
            self._start_gc_paused = False
        from agent.gc_pause import resume_full_collections

        resume_full_collections()

    def _session_drawn(self) -> None:
        """The bound session's first frame is on the screen: collections resume, and the modules
        the event loop needs next are imported in a thread (``IMPORTED_AFTER_BIND``)."""
        self._end_start_gc_pause()
        if not self.closing:
            self.run_worker(lambda: import_quietly(IMPORTED_AFTER_BIND), thread=True, name="imports-after-bind",
                            group="imports-after-bind", exit_on_error=False)

    def _startup_failed(self, line: str) -> None:
        self._end_start_gc_pause()
        self.load_themes_after_paint()  # the app may still show a frame or two
        self.startup_error = line
        self.exit(return_code=2)

    async def on_session_opened(self, message: "SessionOpened") -> None:
        """The start worker opened the session: bind it, then run what was typed meanwhile."""
        if self.closing:  # quit, or the app is shutting down, while the session opened: let go
            self._end_start_gc_pause()
            message.session.close()
            return
        self.session = message.session
        self.runner.session = message.session
        self.notices.extend(line for line in message.notices if line not in self.notices)
        self.main_screen.query_one(StatusBar).activity = ""
        wanted = str(self.session.settings.theme or "")
        if wanted and wanted != self.theme and wanted in self.available_themes and not self._theme_toggled:
            self.theme = wanted  # the validated settings disagree with the peek (rare)
        if self.plan_mode.active:  # toggled on while starting, or --plan: journal it
            self.plan_mode.set_active(True)
        await self._bind_session()
        self.call_after_refresh(self._session_drawn)
        self.load_themes_after_paint()
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
        from .resume_view import journal_loader

        conversation.make_loader = journal_loader(self)  # a long conversation's oldest blocks go
        conversation.on_trimmed = self.handler.forget
        status.model = self.session.model
        status.embedded = self.is_embedded
        self.attention.mode = self.session.settings.notify
        from agent.config.custom_commands import load_custom_commands

        from .command_table import COMMANDS_BY_NAME, set_custom_commands

        set_custom_commands(load_custom_commands(self.session.workspace, frozenset(COMMANDS_BY_NAME)))
        status.permission_mode = mode_text(self.session.settings.permission_mode)
        status.show_sandbox(self.session)
        from .widgets.context_meter import ContextMeter

        for meter in status.query(ContextMeter):
            meter.load_settings(self.session.settings.compaction)
        if self.session.plan_mode and not self.plan_mode.active:  # a resumed session
            self.plan_mode.set_active(True)
        status.mode = self.plan_mode.mode
        workspace = self.session.workspace
        if workspace is not None:  # Up/Down reach prompts of earlier sessions of this project
            from .prompt_history_store import load_history

            history = self.main_screen.query_one(PromptInput).prompt_history
            history.entries[:0] = load_history(Path(workspace), history.limit)
            del history.entries[: -history.limit]
        if self.session.resumed is not None:  # --continue / --resume ID
            from .resume_view import show_resumed_at_start

            # Draws the welcome block, the resumed conversation and the notices itself.
            await show_resumed_at_start(self)
        else:
            await conversation.add(WelcomeBlock(Path(workspace).name if workspace else ".", self.session.model))
            conversation.header = conversation.children[-1]
            for line in self._startup_notices():
                await conversation.add(NoticeBlock(line, kind="warning" if self.is_embedded else "notice"))
        self.call_after_refresh(self.runner.prepare)
        if getattr(self, "pick_session_at_start", False):  # `opencli-tui --resume` without an id
            from .resume_view import open_picker

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

    def _startup_notices(self) -> list[str]:
        lines = list(self.notices)
        if self.session is not None:
            lines += [line for line in self.session.startup_notices() if line not in lines]
        if self.is_embedded and not any("small local model" in line.lower() for line in lines):
            lines.append(EMBEDDED_LINE)
        return lines

    def on_session_prepared(self, message: SessionPrepared) -> None:
        if self.closing:
            return
        status = self.main_screen.query_one(StatusBar)
        status.model = self.session.model
        status.context_window = message.context_window
        status.prepared = True
        self.main_screen.query_one(Sidebar).set_git(self.session.git)
        self.main_screen.query_one(Sidebar).stats_source = getattr(self.session, "stats", None)  # Stats tab
        from .watching import start_watching

        start_watching(self)  # external changes and git state refresh the sidebar
        self.refresh_changed_files()
        self.refresh_workspace_files()
        if message.error:
            self.call_later(self.show_notice, f"Could not load model info: {message.error}", "warning")
        from .mcp_ui import ask_mcp_approvals

        ask_mcp_approvals(self)  # the project's MCP servers that wait for the user's approval

    def refresh_changed_files(self) -> None:
        """Ask git (in a thread worker; a newer request replaces a running one) which files
        changed, and show them in the sidebar's Changed files."""
        session = self.session
        if session is None or not session.is_prepared or self.closing:
            return

        def ask_git() -> None:
            changes = session.changed_files()
            if changes is not None and not self.closing:
                self.call_from_thread(self._show_git_changes, changes)

        self.run_worker(ask_git, thread=True, exclusive=True, group="changed-files", exit_on_error=False)

    def refresh_workspace_files(self) -> None:
        """List the workspace's files for ``@path`` completion in a thread worker."""
        session = self.session
        if session is None or not session.is_prepared or self.closing:
            return

        def list_files() -> None:
            files = session.workspace_files()
            if not self.closing:
                self.call_from_thread(self._set_workspace_files, files)

        self.run_worker(list_files, thread=True, exclusive=True, group="workspace-files", exit_on_error=False)

    def _set_workspace_files(self, files: list[str]) -> None:
        if not self.closing:
            self.main_screen.query_one(PromptInput).workspace_files = files

    def _show_git_changes(self, changes: object) -> None:
        if not self.closing:
            self.main_screen.query_one(Sidebar).set_git_changes(changes)

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


def mode_text(mode: Any) -> str:
    return str(getattr(mode, "value", mode))
