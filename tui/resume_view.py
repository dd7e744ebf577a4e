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

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from agent.config.settings import PermissionMode
from agent.events import ReasoningDelta, ReminderInjected, TextDelta, ToolCallFinished, ToolCallStarted

from . import resume_backfill
from .session_commands import forget_undone
from .watching import stop_watching

if TYPE_CHECKING:
    from agent.events import CompactionDone
    from agent.messages import ToolResultMessage
    from agent.session.resume import LoadedSession

    from .app import OpenCLIApp
    from .event_handler import EventHandler
    from .session_api import UISession
    from .widgets.blocks import GapLine

#: Messages of a followed sub-agent's journal redrawn as blocks (tui/subagent_follow.py; older
#: ones are summarised in one notice). A resumed session draws its last screenful and the rest
#: when scrolled to (tui/resume_backfill.py).
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
    message that started an approved plan becomes the live "Plan approved" notice. Only about the
    last ``resume_backfill.FIRST_FRAME_MESSAGES`` are drawn now, under a ``GapLine`` standing for
    the others, which an ``EarlierMessages`` loader (``Conversation.earlier``) draws: up to
    ``FIRST_SHOWN_MESSAGES`` in all right after the first frame, the rest when the view reaches
    it. A session of at most ``FIRST_SHOWN_MESSAGES`` messages is drawn whole at once.

    The screen is not laid out or painted until the blocks are all there (``App.batch_update``):
    a resumed session showed in pieces, oldest first, each piece laid out and painted (issue 18).
    """
    with app.batch_update():
        await _rebuild(app)


async def _rebuild(app: "OpenCLIApp") -> None:
    """``rebuild_conversation``'s work, drawn in one frame."""
    from .widgets.blocks import NoticeBlock, WelcomeBlock
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
    status.show_sandbox(session)
    app.plan_mode.active = session.plan_mode  # the resumed session's Plan/Act mode
    app.plan_mode.sync_status()
    await conversation.add(WelcomeBlock(session.workspace.name, session.model))
    resumed = session.resumed
    messages = list(resumed.messages) if resumed is not None else []
    count = f"{len(messages)} message{'' if len(messages) == 1 else 's'}"
    shown = min(resume_backfill.FIRST_SHOWN_MESSAGES, len(messages))
    # Some are left for the gap: the first frame gets only the last few (else all of them).
    drawn_first = min(shown, resume_backfill.FIRST_FRAME_MESSAGES) if len(messages) > shown else shown
    first = resume_backfill.first_shown(resumed.records, drawn_first) if resumed else 0
    await conversation.add(NoticeBlock(f"Resumed session {session.session_id} ({count})"))
    if resumed is None:
        conversation.header = conversation.children[-1]
        return
    for warning in resumed.warnings:
        await conversation.add(NoticeBlock(warning, kind="warning"))
    conversation.header = conversation.children[-1]  # a long conversation's gap goes under it
    records = resumed.records
    first_record = resume_backfill.records_before(resume_backfill.message_positions(records), first)
    if first > 0:  # the earlier messages are drawn when scrolled to
        from .widgets.blocks import GapLine

        gap = GapLine()
        await conversation.add(gap)
        conversation.earlier = resume_backfill.EarlierMessages(app, resumed, gap, first_record,
                                                               replay=backfill_replay(session))
    replay = _Replay(session, resumed, handler, 0, first_record=first_record)
    await replay.skip(records[:replay.first_record])
    for record in records[replay.first_record:]:
        await replay.record(record)
    await handler.close_open_blocks()  # calls without a saved result: the session stopped there
    conversation.scroll_end(animate=False)
    if first > 0:  # then the rest of the first ``shown``, once these are on the screen
        conversation.run_worker(conversation.fill_view(more=shown - (len(messages) - first)), group="earlier")


def journal_loader(app: "OpenCLIApp") -> "Callable[[GapLine, int], resume_backfill.EarlierMessages]":
    """What the pane calls when it removes its oldest blocks (``Conversation.make_loader``): a
    loader for the first ``end_record`` records of the current session's journal. A resumed
    session's records already read are used when they hold them all; otherwise the journal file
    is read back (``load_session``) when the gap is first scrolled to."""

    def make(gap: "GapLine", end_record: int) -> resume_backfill.EarlierMessages:
        session = app.session
        resumed = session.resumed
        source: resume_backfill.JournalSource
        if resumed is not None and end_record <= len(resumed.records):
            source = resumed
        else:
            path = Path(session.journal_path)

            def source() -> "LoadedSession":
                from agent.session.resume import load_session

                return load_session(path)
        return resume_backfill.EarlierMessages(app, source, gap, end_record, backfill_replay(session))

    return make


def backfill_replay(session: "UISession"):  # type: ignore[no-untyped-def]
    """The ``replay`` an ``EarlierMessages`` loader draws a batch with: ``(handler, loaded,
    first_record)`` -> a ``_Replay`` in backfill mode whose first record is ``first_record`` of
    the journal ``loaded``."""

    def make(handler: "EventHandler", loaded: "LoadedSession", first_record: int) -> "_Replay":
        return _Replay(session, loaded, handler, -1, backfill=True, offset=first_record)

    return make


class _Replay:
    """Feeds a resumed journal's records, in order, to the live event handler as the events they
    stand for, so the resumed screen is built by the same code as the live one: messages become
    text, reasoning and tool events; plan records the sidebar checklist and the approval and
    discard lines; compaction records their marks; a turn that ended otherwise than done its stop
    line; an undo its line and the sidebar's changed files. Records before the first shown
    message (the first ``hidden`` messages, and every record before index ``first_record``)
    only update the sidebar. With ``backfill`` (a batch of earlier messages drawn under the
    header, tui/resume_backfill.py) records draw blocks only: the sidebar and the sub-agent
    timeline are left as the first pass made them."""

    def __init__(self, session: "UISession", resumed: "LoadedSession", handler: "EventHandler", hidden: int,
                 *, first_record: int = 0, backfill: bool = False, offset: int = 0) -> None:
        self.session, self.resumed, self.handler = session, resumed, handler
        self.hidden = hidden
        #: Records before this index are not drawn either (the records between the last hidden
        #: message and the first shown one belong to an earlier batch, tui/resume_backfill.py).
        self.first_record = first_record
        self.index = offset - 1  # index (in the journal) of the record being read; ``offset``: the first's
        #: Drawing a batch of earlier messages (tui/resume_backfill.py): blocks only; the sidebar
        #: and the sub-agent timeline already show what the records did.
        self.backfill = backfill
        self.seen = 0  # message records read so far
        self.turn_over = True  # a user message after a turn's end starts a new turn (the timeline clears)

    @property
    def shown(self) -> bool:
        return self.seen > self.hidden and self.index >= self.first_record

    async def skip(self, records: list[object]) -> None:
        """``record`` for each of ``records``, which come before ``first_record`` (so none is
        drawn), in one loop: 5 000 messages above the drawn ones cost one call each otherwise.
        Only plan records and undo events act (on the sidebar)."""
        from agent.session.records import EventRecord, MessageRecord, PlanRecord

        for record in records:
            self.index += 1
            if isinstance(record, MessageRecord):
                self.seen += 1
            elif isinstance(record, PlanRecord):
                await self.plan(record)
            elif isinstance(record, EventRecord):
                if record.is_undo and not self.backfill:
                    _forget_in_sidebar(self.handler, list(record.files or []))
                if record.is_turn_finished:
                    self.turn_over = True

    async def record(self, record: object) -> None:
        from agent.session.records import CompactionRecord, EventRecord, MessageRecord, PlanRecord, SubagentRecord

        self.index += 1
        if isinstance(record, MessageRecord):
            self.seen += 1
            if self.shown:
                await self.message(record.message)
        elif isinstance(record, PlanRecord):
            await self.plan(record)
        elif not self.shown:
            if isinstance(record, EventRecord) and record.is_undo and not self.backfill:
                _forget_in_sidebar(self.handler, list(record.files or []))
        elif isinstance(record, CompactionRecord):
            await self.handler.handle(compaction_event(record))
        elif isinstance(record, EventRecord) and record.is_undo:
            from .widgets.blocks import NoticeBlock

            lines = list(record.files or [])
            await self.handler.end_streams()
            await self.handler.conversation.add(NoticeBlock("Undo: " + "; ".join(lines)))
            if not self.backfill:
                _forget_in_sidebar(self.handler, lines)
        elif isinstance(record, EventRecord) and record.is_turn_finished and record.stop_reason not in (None, "done"):
            await self._stop(record.stop_reason)
        elif isinstance(record, SubagentRecord) and not self.backfill:
            await self.subagent(record)
        if isinstance(record, EventRecord) and record.is_turn_finished:
            self.turn_over = True

    async def _stop(self, stop_reason: str) -> None:
        from agent.events import TurnFinished

        handler = self.handler
        guard, handler.guard = handler.guard, None
        await handler.handle(TurnFinished(stop_reason=stop_reason, final_text="", session_id=self.session.session_id))
        handler.guard = guard
        handler.retire_stop_panel()  # a resumed stop is history: no Continue button on it

    async def message(self, message: object) -> None:
        from agent.loop.user_command_text import parse_user_command
        from agent.plan.prompts import approved_notice

        from .widgets.blocks import NoticeBlock, UserBlock

        handler, conversation = self.handler, self.handler.conversation
        role = message.role
        if role == "user" and message.id in self.resumed.plan_prompts:
            await handler.end_streams()  # live, the approval showed this line, not the instruction
            await conversation.add(NoticeBlock(approved_notice(self.resumed.plan_prompts[message.id])))
        elif role == "user" and getattr(message, "origin", "user") == "summary":
            return  # a compaction's summary: its mark stands for it
        elif role == "user" and (command := parse_user_command(message.content)) is not None:
            await self._user_command(message.id, *command)
        elif role == "user":
            await handler.end_streams()
            await conversation.add(UserBlock(message.content, journal_at=self.index))
            timeline = handler.subagent_timeline()
            if self.turn_over and timeline is not None:  # it shows the sub-agents of the last turn
                await timeline.clear()
            self.turn_over = False
        elif role == "assistant":
            await handler.end_streams()
            if message.reasoning_content:
                await handler.handle(ReasoningDelta(text=message.reasoning_content))
            if message.content:
                await handler.handle(TextDelta(text=message.content))
            for call in message.tool_calls:
                arguments = call.parsed_arguments()
                await handler.handle(ToolCallStarted(id=call.id, name=call.name, arguments=arguments,
                                                     view=self.session.tool_view(call.name, arguments)))
        elif role == "tool":
            await _show_reminders(handler, self.resumed, message)
            await handler.handle(resumed_tool_result(self.resumed, message))

    async def _user_command(self, message_id: str, command: str, output: str, exit_code: int | None) -> None:
        """A ``!command`` the user ran: its bash block (collapsed, as live), not the user
        message that put its output to the model."""
        from agent.events import ToolResult

        handler = self.handler
        await handler.end_streams()
        call_id, arguments = f"user_{message_id}", {"command": command}
        await handler.handle(ToolCallStarted(id=call_id, name="bash", arguments=arguments,
                                             view=self.session.tool_view("bash", arguments)))
        await handler.handle(ToolCallFinished(id=call_id, name="bash", output=output,
                                              result=ToolResult(exit_code=exit_code)))

    async def subagent(self, record: object) -> None:
        """A sub-agent's link record puts its card on the timeline, as its live events did; the
        card opens its journal."""
        timeline = self.handler.subagent_timeline()
        if timeline is None:
            return
        finished = record.event == "finished"
        await timeline.restore(record.task_id, record.index, record.description,
                               str(record.journal_path(self.resumed.path)),
                               (record.stop_reason or "error") if finished else None,
                               record.duration_s, record.tokens, getattr(record, "summary", None))

    async def plan(self, record: object) -> None:
        """An approved or updated plan fills the sidebar checklist as its live event did; a
        discarded one empties it and, when shown, says so as the live screen did."""
        from agent.plan.prompts import DISCARDED_NOTICE

        from .widgets.blocks import NoticeBlock

        handler = self.handler
        if self.backfill:  # the sidebar shows the latest plan already; only the line is drawn
            if record.event == "discarded" and not record.sets_plan:
                await handler.end_streams()
                await handler.conversation.add(NoticeBlock(DISCARDED_NOTICE))
        elif record.sets_plan:
            await handler.handle(record.plan.to_event(approved=True))
        elif record.event == "discarded":
            if handler.sidebar is not None:
                handler.sidebar.set_plan(None)
            if self.shown:
                await handler.end_streams()
                await handler.conversation.add(NoticeBlock(DISCARDED_NOTICE))


def compaction_event(record: object) -> "CompactionDone":
    """The ``CompactionDone`` event a journaled compaction was emitted as (message counts from
    its id lists), for its mark in a resumed conversation."""
    from agent.events import CompactionDone

    pinned = record.pinned
    names = [str(name) for name in pinned] if isinstance(pinned, list) else []
    return CompactionDone(tokens_before=record.tokens_before, tokens_after=record.tokens_after,
                          summarized=len(record.ids("summarized")), pruned=len(record.ids("pruned")),
                          aggregated=len(record.ids("aggregated")), stubbed=len(record.ids("stubbed")),
                          thrash=record.thrash, pinned=names)


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
