"""Resuming a session in the TUI: ``/resume``, the session picker, and redrawing a resumed
conversation.

- ``resume(app, ref)``: ``/resume ID`` resumes directly, ``/resume`` opens the picker; resuming
  builds a new session with ``build_session(..., resume=id)``, swaps it into the app (the old one
  is closed: its journal lock released) and rebuilds the conversation blocks.
- ``show_resumed_at_start(app)``: the app was started on a resumed session (``--continue``,
  ``--resume ID``): redraw its conversation as ``/resume`` does. Tool blocks are redrawn with
  what the journal kept of the live result (``resumed_tool_result``), with the view the tool
  gives (``session.tool_view``): edit/write blocks show their diff as they did live, and the
  reminder marks under them come back. The instruction that started an approved plan is shown as
  the live "Plan approved: ..." line, not as a user prompt (``LoadedSession.plan_prompts``). The
  "Resumed session" line is shown once.
- The picker lists the project's other sessions that have a conversation (empty launches are left
  out by ``agent.session.resume.list_sessions``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.config.settings import PermissionMode
from agent.events import ReasoningDelta, ReminderInjected, TextDelta, ToolCallFinished, ToolCallStarted

from .session_commands import forget_undone
from .watching import stop_watching

if TYPE_CHECKING:
    from agent.messages import ToolResultMessage
    from agent.session.resume import LoadedSession

    from .app import OpenCLIApp
    from .event_handler import EventHandler
    from .session_api import UISession

#: Messages of a resumed session redrawn as blocks (older ones are summarised in one notice).
MAX_REBUILT_MESSAGES = 400


async def resume(app: "OpenCLIApp", ref: str = "") -> None:
    """``/resume [ID]``: resume session ``ref`` now, or open the picker when no id is given."""
    if app.runner.running:
        await app.show_notice("A turn is running: press Esc to stop it, then /resume.", kind="warning")
        return
    if ref:
        await resume_session(app, ref)
        return
    open_picker(app)


def open_picker(app: "OpenCLIApp") -> None:
    """Push the session picker listing this project's other sessions that have a conversation
    (empty ones are left out); resume the one chosen."""
    from agent.session.resume import list_sessions

    from .screens.session_picker import SessionPickerScreen

    current = app.session.session_id
    infos = [i for i in list_sessions(app.session.workspace) if i.id != current]

    async def chosen(session_id: str | None) -> None:
        if session_id:
            await resume_session(app, session_id)

    app.push_screen(SessionPickerScreen(infos), chosen)


async def resume_session(app: "OpenCLIApp", ref: str) -> bool:
    """Resume session ``ref`` (an id or a unique prefix) in place of the current one. Returns
    True on success; a problem (unknown id, locked by another instance) becomes a notice."""
    from agent.runtime.build import build_session

    old = app.session
    try:
        new = build_session(old.workspace, old.settings, provider=old.provider, interactive=True, resume=ref)
    except Exception as exc:  # noqa: BLE001 - SessionNotFoundError, SessionLockedError, OSError
        await app.show_notice(f"Cannot resume {ref}: {exc}", kind="warning")
        return False
    stop_watching(app)
    old.close()
    # This app's "allow for this session" answers are not carried over: the resumed session has
    # the config rules plus its own journaled answers (restored by the runtime).
    app.session = new
    app.runner.session = new
    await rebuild_conversation(app)
    app.runner.prepare()  # restores the history into a new loop; posts SessionPrepared
    return True


async def show_resumed_at_start(app: "OpenCLIApp") -> None:
    """At start-up on a resumed session: redraw its conversation, then the start-up notices."""
    from .widgets.blocks import NoticeBlock
    from .widgets.conversation import Conversation

    if app.session.resumed is None:
        return
    await rebuild_conversation(app)
    conversation = app.main_screen.query_one(Conversation)
    for line in app._startup_notices():
        if not shown_by_rebuild(app.session, line):
            await conversation.add(NoticeBlock(line, kind="warning" if app.is_embedded else "notice"))
    conversation.scroll_end(animate=False)


def shown_by_rebuild(session: "UISession", line: str) -> bool:
    """True when the start-up notice ``line`` (``session.startup_notices()``) is already shown by
    ``rebuild_conversation`` at the top of the resumed conversation: the "Resumed session ID (N
    messages)." line and the warnings about skipped journal lines."""
    resumed = session.resumed
    if resumed is None:
        return False
    return line.startswith(f"Resumed session {session.session_id} (") or line in resumed.warnings


async def rebuild_conversation(app: "OpenCLIApp") -> None:
    """Clear the conversation pane and redraw the session's resumed messages as blocks (user
    prompts, assistant text, reasoning, tool calls with their results and reminder marks); the
    message that started an approved plan becomes the live "Plan approved" notice."""
    from agent.plan.prompts import approved_notice

    from .widgets.blocks import NoticeBlock, UserBlock, WelcomeBlock
    from .widgets.conversation import Conversation
    from .widgets.status_bar import StatusBar

    session = app.session
    conversation = app.main_screen.query_one(Conversation)
    handler = app.handler
    assert handler is not None
    await conversation.clear_blocks()
    handler.reset()
    app.queued.clear()
    status = app.main_screen.query_one(StatusBar)
    status.model = session.model
    status.used_tokens = None
    status.prepared = False
    status.permission_mode = PermissionMode(session.settings.permission_mode).value
    app.plan_mode.active = session.plan_mode  # the resumed session's Plan/Act mode
    app.plan_mode.sync_status()
    await conversation.add(WelcomeBlock(session.workspace.name, session.model))
    resumed = session.resumed
    messages = list(resumed.messages) if resumed is not None else []
    hidden = max(0, len(messages) - MAX_REBUILT_MESSAGES)
    count = f"{len(messages)} message{'' if len(messages) == 1 else 's'}"
    await conversation.add(NoticeBlock(f"Resumed session {session.session_id} ({count}"
                                       + (f"; the first {hidden} are not shown)" if hidden else ")")))
    for warning in (resumed.warnings if resumed is not None else []):
        await conversation.add(NoticeBlock(warning, kind="warning"))
    undos = _undo_marks(resumed)
    plan_prompts = resumed.plan_prompts if resumed is not None else {}
    for index, message in enumerate(messages[hidden:], start=hidden):
        while undos and undos[0][0] <= index:  # an /undo made between these messages
            _forget_in_sidebar(handler, undos.pop(0)[1])
        role = message.role
        if role == "user" and message.id in plan_prompts:
            await handler.end_streams()  # live, the approval showed this line, not the instruction
            await conversation.add(NoticeBlock(approved_notice(plan_prompts[message.id])))
        elif role == "user":
            await handler.end_streams()
            await conversation.add(UserBlock(message.content))
        elif role == "assistant":
            await handler.end_streams()
            if message.reasoning_content:
                await handler.handle(ReasoningDelta(text=message.reasoning_content))
            if message.content:
                await handler.handle(TextDelta(text=message.content))
            for call in message.tool_calls:
                arguments = call.parsed_arguments()
                await handler.handle(ToolCallStarted(id=call.id, name=call.name, arguments=arguments,
                                                     view=session.tool_view(call.name, arguments)))
        elif role == "tool":
            await _show_reminders(handler, resumed, message)
            await handler.handle(resumed_tool_result(resumed, message))
    for _, lines in undos:
        _forget_in_sidebar(handler, lines)
    await handler.close_open_blocks()  # calls without a saved result: the session stopped there
    conversation.scroll_end(animate=False)


async def _show_reminders(handler: "EventHandler", resumed: "LoadedSession", message: "ToolResultMessage") -> None:
    """Show the reminder marks journaled with the tool result ``message`` (``tool_details``
    ``reminders``) under its call's block, as the live ``ReminderInjected`` events did."""
    reminders = resumed.result_for(message).reminders
    if not reminders:
        return
    block = handler.tools.get(message.tool_call_id)
    if block is not None:
        handler.last_tool = block  # the marks go under this call's block
    for text in reminders:
        await handler.handle(ReminderInjected(text=text))


def _undo_marks(resumed: "LoadedSession | None") -> list[tuple[int, list[str]]]:
    """The undo events of a resumed journal as ``(messages before it, file lines)``, in order
    (``LoadedSession.undo_marks``): the changed files the redrawn edit blocks add to the sidebar
    are dropped again at that point."""
    return resumed.undo_marks() if resumed is not None else []


def _forget_in_sidebar(handler: "EventHandler", lines: list[str]) -> None:
    sidebar = handler.sidebar
    if sidebar is not None:
        forget_undone(sidebar, lines)


def resumed_tool_result(resumed: "LoadedSession", message: "ToolResultMessage") -> ToolCallFinished:
    """The ``ToolCallFinished`` a resumed tool result ``message`` (a ``ToolResultMessage``) is
    redrawn from: its text and error flag, plus what the live event carried and the journal kept
    (``LoadedSession.result_for``: the typed result, with its outcome, duration, exit code, diff,
    display, truncation and saved output). A journal without those details gives the block without them."""
    return ToolCallFinished(id=message.tool_call_id, name=message.name, output=message.content,
                            result=resumed.result_for(message))
