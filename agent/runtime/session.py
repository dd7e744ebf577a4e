"""``AgentSession``: one conversation bound to a workspace, a model and a provider.

``build_session`` (``build``) is cheap (no litellm import, and the loop, tools and git code are
imported only by ``prepare()``) so the TUI can paint first; ``prepare()`` does the slow part
(litellm import, model info, git snapshot, tool set) and is called by the TUI in a worker after
the first paint, or implicitly by the first ``run_turn``. The session's other concerns live in
mixins beside this module: building the agent and its prompt (``agent_builder``), permission and
Plan/Act modes (``modes``), Plan mode delegation (``plan_mode``), undo and file watching
(``watching``).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ..config.settings import PermissionMode, Settings
from ..providers.base import Provider
from ..providers.model_info import ModelInfo
from ..providers.scripted import ScriptedProvider
from ..session.journal import SessionJournal, new_session_id, sessions_dir
from ..session.records import SystemPromptRecord
from .agent_builder import AgentBuilding
from .mcp_servers import SessionMcp
from .modes import SessionModes
from .observing import SessionObserving
from .plan_mode import PlanDelegation
from .quality import SessionPipeline
from .sandboxing import SessionSandbox
from .watching import SessionWatching

if TYPE_CHECKING:  # the loop, tools and git code load in prepare(), after the TUI's first paint
    from ..context.breakdown import ContextBreakdown
    from ..events import Emit, ToolView, TurnFinished
    from ..git_context import GitSnapshot
    from ..loop.agent import Agent
    from ..plan.controller import PlanController
    from ..session.checkpoints import Checkpoints
    from ..session.file_watch import FileWatcher
    from ..session.resume import LoadedSession


def _with_plan_prompt_origin(messages: list, ids: dict) -> list:
    """``messages`` with the plan-execution prompts of a journal written before user messages
    carried their ``origin`` (``ids``: ``LoadedSession.plan_prompts``) marked as such."""
    from ..messages import UserMessage

    if not ids:
        return list(messages)
    return [m.model_copy(update={"origin": "plan_execution"})
            if isinstance(m, UserMessage) and m.id in ids and m.origin == "user" else m for m in messages]


EMBEDDED_NOTICE = ("Using the embedded SmolLM2-135M: a small local model for trying the app offline, with "
                   "read-only tools and few steps. Real work wants a real model: set OPENAI_API_KEY, "
                   "ANTHROPIC_API_KEY or GEMINI_API_KEY, or pass --model.")


EMBEDDED_TOOLS_NOTICE = ("It reads, greps and globs only: it cannot edit files or run commands, whatever the "
                         "permission mode. Ask it what the code does (\"what does calc.py do?\"); "
                         "[embedded] tools = \"all\" in your config gives it every tool.")


class AgentSession(AgentBuilding, SessionModes, PlanDelegation, SessionWatching, SessionObserving, SessionPipeline,
                   SessionSandbox, SessionMcp):
    """A conversation bound to a workspace, a model and a provider.

    Attributes: ``session_id``, ``model`` (litellm name), ``settings``, ``workspace`` (resolved
    path), ``interactive`` (may ask the user for permission), ``context_window`` (tokens, known
    after ``prepare()``), ``model_info``, ``agent`` (the loop, after ``prepare()``), ``resumed``
    (the ``LoadedSession`` this one continues, or ``None``).

    Resuming (``resumed`` given, see ``build_session``): the session keeps the resumed id and
    journal file (appending; ``journal`` must already be locked), and ``prepare()`` restores the
    conversation and the active plan into the new ``Agent``. The model is ``model`` if given,
    else the resumed session's, else the settings'.

    One prompt prefix per session (DESIGN.md 3, 4): the system prompt is built once, journaled as
    a ``system_prompt`` record (``session.SystemPromptRecord``) and reused verbatim while the
    registered tool set is the same: by a resume (the journaled text, not a rebuild with a new git
    snapshot; journals without the record are rebuilt as before and the record written then) and
    by a model switch. A switch that changes the tool set (``think`` comes or goes with native
    reasoning) builds and journals a new prompt (reason ``tools_changed``): the tools are part of
    the prefix anyway. ``submit_plan`` and ``update_plan`` are always registered (not for the
    embedded model's read-only set), so Plan and Act mode send the same prefix.
    """

    def __init__(self, workspace: Path, settings: Settings, provider: Provider, *,
                 interactive: bool, model: str | None = None, resumed: "LoadedSession | None" = None,
                 journal: SessionJournal | None = None, permission_mode_given: bool = False) -> None:
        self.workspace = Path(workspace).resolve()
        self.settings = settings
        self.provider = provider
        self.interactive = interactive
        self.resumed = resumed
        self.model = model or (resumed.model if resumed else "") or settings.resolved_model()
        self.session_id = resumed.session_id if resumed else new_session_id()
        self._journal = journal  # one per session id, locked for the session's life
        self._restore_pending = resumed is not None
        #: Plan mode (True) or Act mode, as the UI last recorded it (restored on resume).
        self.plan_mode = False
        self._mode_notices: list[str] = []
        #: The system prompt being sent and the tools it was built for (journaled).
        self._system_prompt: SystemPromptRecord | None = resumed.system_prompt if resumed else None
        if resumed is not None:
            self._restore_modes(resumed.modes, keep_permission_mode=permission_mode_given)
        self._checkpoints: "Checkpoints | None" = None
        self._watcher: "FileWatcher | None" = None
        self.model_info: ModelInfo | None = None
        self.agent: "Agent | None" = None
        #: Git state at session start (frozen for the session so the prompt prefix stays stable).
        self.git: "GitSnapshot | None" = None
        self._plans: "PlanController | None" = None  # Plan mode state, created on first use
        self._prepare_lock = threading.Lock()
        self._permission_rules = None  # permissions.rules.PermissionRules, created on first use
        self._dirty_at_start: set[str] | None = None  # git's changed paths when the session started

    # ---------------------------------------------------------------------------------- facts
    @property
    def is_embedded(self) -> bool:
        """True when the model is the embedded offline one."""
        return self.model.startswith("embedded/")

    @property
    def context_window(self) -> int | None:
        """The context window in tokens: ``settings.context_window`` if set, else litellm's."""
        if self.settings.context_window:
            return self.settings.context_window
        return self.model_info.context_window if self.model_info else None

    @property
    def is_prepared(self) -> bool:
        """True once ``prepare()`` has built the loop (the tools, the model facts)."""
        return self.agent is not None

    def tool_view(self, name: str, arguments: object) -> "ToolView":
        """How a call of tool ``name`` with decoded ``arguments`` is shown (the tool's own view;
        for a tool this session does not have now (a model switch dropped ``think``), or
        before ``prepare()``, as the runtime's tool of that name describes it)."""
        if self.agent is not None and name in self.agent.registry:
            return self.agent.registry.view(name, arguments)
        from .tool_views import describe_call

        return describe_call(name, arguments)

    @property
    def output_dir(self) -> Path:
        """Folder for saved full tool outputs, beside the session journal in the user data dir
        (DESIGN.md 5b): ``<sessions_dir>/<session_id>/``, outside the workspace so no repository
        can commit them (created 0700 on the first save)."""
        return self.journal_path.parent / self.session_id

    @property
    def journal_path(self) -> Path:
        """The session's JSONL journal file (a resumed session keeps its file)."""
        if self._journal is not None:
            return self._journal.path
        return sessions_dir(self.workspace) / f"{self.session_id}.jsonl"

    # -------------------------------------------------------------------------------- prepare
    def prepare(self) -> None:
        """Load model info (imports litellm unless the provider is scripted) and build the loop.

        Idempotent and thread-safe; slow the first time (seconds).
        """
        from ..git_context import git_snapshot
        from ..providers.model_info import lookup_model_info
        from ..session.workspace import ensure_app_folder_excluded

        with self._prepare_lock:
            if self.agent is not None:
                return
            self.start_mcp()  # in the background: the servers start while the rest is prepared
            if isinstance(self.provider, ScriptedProvider) and not self.is_embedded:
                info = scripted_info(self.model)
            else:
                info = lookup_model_info(self.model, embedded_context=self.settings.embedded.context_tokens)
            if self.is_embedded:
                self._configure_embedded()
            self.model_info = info
            if self.git is None:
                ensure_app_folder_excluded(self.workspace)
                self.git = git_snapshot(self.workspace)
                self._dirty_at_start = self._git_baseline()
            self.agent = self._build_agent(info)
            if self._restore_pending and self.resumed is not None:
                self._restore_pending = False
                self.agent.history = _with_plan_prompt_origin(self.resumed.messages, self.resumed.plan_prompts)
                self._answer_interrupted_calls()
                if self.resumed.plan is not None:
                    self.plans.plan = self.resumed.plan
                compactions = self.resumed.compactions
                if compactions:
                    self.agent.compactor.restore(compactions[-1])


    def _answer_interrupted_calls(self) -> None:
        """Give each call the dead agent left without a result a journaled stand-in result that
        says it may have run and what changed (``session.interrupted``)."""
        from ..events import ToolResult
        from ..session.interrupted import interrupted_results

        for message in interrupted_results(self.agent.history, self.workspace, self.resumed.last_write):
            self.agent.history.append(message)
            self.journal.append_message(message)
            self.journal.append_tool_result(message, ToolResult(outcome="interrupted"))

    # --------------------------------------------------------------------------------- journal
    @property
    def journal(self) -> SessionJournal:
        """The session's journal (one object per session id; locked on its first write)."""
        if self._journal is None:
            self._journal = SessionJournal(self.journal_path)
        return self._journal


    def journal_position(self) -> int | None:
        """How many records the journal file holds now (as ``read_records`` reads them back: the
        records a resume read plus the ones queued since), or None when that is not known: a
        record was never written (``SessionJournal.lost``) or writes are failing. The TUI tags a
        prompt's block with it, so the blocks before it can be redrawn from the file's first that
        many records (tui/resume_backfill.py)."""
        journal = self._journal
        base = len(self.resumed.records) if self.resumed is not None else 0
        if journal is None:
            return base
        if journal.lost or journal.state != "ok":
            return None
        return base + journal.queued_records

    def close(self) -> None:
        """End the session: stop watching, close the journal and release its lock."""
        self.stop_watching()
        self.close_mcp()
        if self._journal is not None:
            self._journal.close()

    # ---------------------------------------------------------------------------------- turns
    def run_turn(self, prompt: str, emit: "Emit", cancel: threading.Event) -> "TurnFinished":
        """Run one user turn through the quality pipeline (``agent.pipeline``: effort hint, hooks,
        rounds around ``Agent.run_turn``); prepares the session first if needed."""
        emit = self.observed(emit)
        self.prepare()
        assert self.agent is not None
        return self.pipeline.run(self.with_attachments(prompt, emit), emit, cancel)

    def workspace_files(self) -> list[str]:
        """The workspace's files for ``@path`` completion (``git_repo.workspace_files``; runs git:
        call it off the UI thread)."""
        from ..git_repo import workspace_files

        return workspace_files(self.workspace)

    def with_attachments(self, prompt: str, emit: "Emit") -> str:
        """``prompt`` with the files its ``@path`` words name appended as the read tool returns
        them (``loop.mentions``); a ``Notice`` says which were attached. Call after ``prepare()``."""
        assert self.agent is not None
        if "@" not in prompt:
            return prompt
        import json

        from ..events import Notice
        from ..loop.mentions import attach_mentions
        from ..messages import ToolCall, new_id

        agent = self.agent

        def read(path: str) -> str | None:
            if "read" not in agent.registry:
                return None
            call = ToolCall(id=new_id("att"), name="read", arguments=json.dumps({"path": path}))
            output = agent.registry.execute(call, agent.tool_context(call.id))
            return None if output.is_error else output.text

        text, attached = attach_mentions(prompt, read)
        if attached:
            listed = ", ".join(f"{a.path} ({a.lines} line{'s' if a.lines != 1 else ''})" for a in attached)
            emit(Notice(message=f"Attached {listed}"))
        return text

    def run_user_command(self, command: str, emit: "Emit", cancel: threading.Event) -> None:
        """Run a shell line the user typed (``!command``, see ``loop.user_command``) between turns;
        prepares the session first if needed."""
        emit = self.observed(emit)
        self.prepare()
        assert self.agent is not None
        from ..loop.user_command import run_user_command

        run_user_command(self.agent, command, emit, cancel)

    def steer(self, text: str) -> bool:
        """Send ``text`` into the running turn (``Agent.steer``); False when no turn runs."""
        return self.agent.steer(text) if self.agent is not None else False

    def compact(self, focus: str | None, emit: "Emit", cancel: threading.Event) -> None:
        """Compact the context now (``/compact [focus]``, see ``Agent.compact``); a ``Notice`` says
        when there is nothing to compact. Raises ``RuntimeError`` before ``prepare()``."""
        emit = self.observed(emit)
        if self.agent is None:
            raise RuntimeError("the session is not ready")
        if not self.agent.history:
            from ..events import Notice

            emit(Notice(message="Nothing to compact yet."))
            return
        self.agent.compact(focus or None, emit, cancel)

    def context_breakdown(self) -> "ContextBreakdown | None":
        """Tokens per category of the next request (``context.breakdown``), or None before
        ``prepare()``. Thread-safe: the UI runs it in a worker."""
        if self.agent is None:
            return None
        from ..context.breakdown import compute_breakdown

        return compute_breakdown(self.agent, self.context_window)

    # ------------------------------------------------------------------------------ Plan mode


    def startup_notices(self) -> list[str]:
        """Notices to show when the session starts (e.g. the embedded model's limits, lines of a
        resumed journal that were skipped)."""
        notices = self.sandbox_notices() + self.mcp_startup_notices()
        if self.resumed is not None:
            count = len(self.resumed.messages)
            notices.append(f"Resumed session {self.session_id} ({count} message{'' if count == 1 else 's'}).")
            notices += self.resumed.warnings + self._mode_notices
        if not self.is_embedded:
            return notices
        from ..providers.embedded.model import embedded_available

        missing = embedded_available()
        notices += [EMBEDDED_NOTICE] + ([missing] if missing else [])
        if self.settings.embedded.tools != "all" and self.settings.permission_mode != PermissionMode.READ_ONLY:
            notices.append(EMBEDDED_TOOLS_NOTICE)
        return notices

    def set_model(self, name: str) -> None:
        """Switch the model for the next turns, keeping the conversation: history, compacted
        view, files read (``Agent.adopt_conversation``); tools and system prompt are rebuilt.

        Raises ``ValueError`` (one line, nothing changed) when litellm cannot route ``name``
        (``model_name_problem``); a scripted session accepts any name (nothing is sent)."""
        if not isinstance(self.provider, ScriptedProvider):
            from ..providers.model_info import model_name_problem

            problem = model_name_problem(name)
            if problem is not None:
                raise ValueError(problem)
        previous = self.agent
        self.model = name
        with self._prepare_lock:
            self.agent = None
            self.model_info = None
        self.prepare()
        assert self.agent is not None
        if previous is not None:  # else prepare() built the first agent (a resumed history included)
            self.agent.adopt_conversation(previous)

    def clear(self) -> None:
        """Start a new, empty conversation with a new session id (the old journal stays on disk)."""
        with self._prepare_lock:
            if self._journal is not None:
                self._journal.close()
            self._journal = None
            self.session_id = new_session_id()
            self.agent = None
            self._plans = None
            self._pipeline = None  # a new session: hook failure counts and lessons start over
            self.resumed = None
            self._restore_pending = False
            self._checkpoints = None
            self._system_prompt = None  # a new session journals its own
        if self.model_info is not None:
            with self._prepare_lock:
                self.agent = self._build_agent(self.model_info)


def scripted_info(model: str) -> ModelInfo:
    """Model facts for scripted runs without importing litellm: reasoning models by name, the
    context window from litellm's bundled model list (``preflight.bundled_context_window``)."""
    from ..providers.preflight import bundled_context_window

    reasoning = any(key in model for key in ("o1", "o3", "o4", "deepseek-r", "reasoner", "claude-sonnet-4", "claude-opus-4"))
    window = bundled_context_window(model)  # litellm's bundled list, read as a file: the meter has a window
    return ModelInfo(model, window, supports_reasoning=reasoning, supports_tools=True, known=window is not None)
