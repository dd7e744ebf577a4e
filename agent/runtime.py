"""Wiring: one ``AgentSession`` per conversation, built from settings for a workspace.

``build_session`` is cheap (no litellm import, and the loop, tools and git code are imported only
by ``prepare()``) so the TUI can paint first; ``prepare()`` does the slow part (litellm import,
model info, git snapshot, tool set) and is called by the TUI in a worker after the first paint,
or implicitly by the first ``run_turn``.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from typing import TYPE_CHECKING, Callable, Literal

from .config.settings import PermissionMode, Settings
from .providers.base import Provider
from .providers.model_info import ModelInfo
from .providers.scripted import ScriptedProvider, load_replay_file
from .session.journal import SessionJournal, SystemPromptRecord, new_session_id, sessions_dir

if TYPE_CHECKING:  # the loop, tools and git code load in prepare(), after the TUI's first paint
    from .session.checkpoints import Checkpoints
    from .session.file_watch import FileWatcher
    from .session.resume import LoadedSession
    from .events import Emit, TurnFinished
    from .git_context import GitSnapshot
    from .loop.agent import Agent
    from .plan.model import Plan
    from .plan.controller import PlanController, PlanResult

def _with_plan_prompt_origin(messages: list, records: list[dict]) -> list:
    """``messages`` with the plan-execution prompts of a journal written before user messages
    carried their ``origin`` marked as such (``planner.plan_prompts_from_journal``)."""
    from .messages import UserMessage
    from .plan.journal import plan_prompts_from_journal

    ids = plan_prompts_from_journal(records)
    if not ids:
        return list(messages)
    return [m.model_copy(update={"origin": "plan_execution"})
            if isinstance(m, UserMessage) and m.id in ids and m.origin == "user" else m for m in messages]


EMBEDDED_NOTICE = ("Using the embedded SmolLM2-135M: a small local model for trying the app offline, with "
                   "read-only tools and few steps. Real work wants a real model: set OPENAI_API_KEY, "
                   "ANTHROPIC_API_KEY or GEMINI_API_KEY, or pass --model.")


class AgentSession:
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
            self._restore_modes(resumed.records, keep_permission_mode=permission_mode_given)
        self._checkpoints: "Checkpoints | None" = None
        self._watcher: "FileWatcher | None" = None
        self.model_info: ModelInfo | None = None
        self.agent: "Agent | None" = None
        #: Git state at session start (frozen for the session so the prompt prefix stays stable).
        self.git: "GitSnapshot | None" = None
        self._plans: "PlanController | None" = None  # Plan mode state, created on first use
        self._prepare_lock = threading.Lock()
        self._permission_rules = None  # agent/permission_rules.PermissionRules, created on first use
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
    def output_dir(self) -> Path:
        """Folder for saved full tool outputs: ``<workspace>/.opencli/tmp/<session_id>``."""
        return self.workspace / ".opencli" / "tmp" / self.session_id

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
        from .git_context import dirty_paths, git_snapshot
        from .providers.model_info import lookup_model_info
        from .session.workspace import ensure_app_folder_excluded

        with self._prepare_lock:
            if self.agent is not None:
                return
            if isinstance(self.provider, ScriptedProvider) and not self.is_embedded:
                info = _scripted_info(self.model)
            else:
                info = lookup_model_info(self.model, embedded_context=self.settings.embedded.context_tokens)
            if self.is_embedded:
                self._configure_embedded()
            self.model_info = info
            if self.git is None:
                ensure_app_folder_excluded(self.workspace)
                self.git = git_snapshot(self.workspace)
                self._dirty_at_start = self._git_baseline(dirty_paths)
            self.agent = self._build_agent(info)
            if self._restore_pending and self.resumed is not None:
                self._restore_pending = False
                self.agent.history = _with_plan_prompt_origin(self.resumed.messages, self.resumed.records)
                if self.resumed.plan is not None:
                    self.plans.plan = self.resumed.plan
                compactions = [r for r in self.resumed.records if r.get("kind") == "compaction"]
                if compactions:
                    self.agent.compactor.restore(compactions[-1])

    def _configure_embedded(self) -> None:
        """Load litellm and pass the ``[embedded]`` settings to the embedded provider."""
        from .providers.embedded.provider import register_embedded_provider
        from .providers.litellm_loader import load_litellm

        load_litellm()
        register_embedded_provider(context_tokens=self.settings.embedded.context_tokens,
                                   max_reply_tokens=self.settings.embedded.max_reply_tokens)

    def _build_agent(self, info: ModelInfo) -> "Agent":
        from .git_context import render_snapshot
        from .loop.agent import Agent
        from .loop.config import LoopConfig
        from .loop.system_prompt import build_system_prompt
        from .loop.reminders import ReminderEngine, rules_from_config, system_prompt_rules
        from .loop.retry import RetryPolicy
        from .tools.registry import ToolRegistry, default_tools

        s = self.settings
        read_only_tools = self.is_embedded and s.embedded.tools != "all"
        think = {"on": True, "off": False}.get(s.think_tool, not info.supports_reasoning)
        tools = default_tools(include_think=think, read_only=read_only_tools)
        if not read_only_tools:  # one tool list for Plan and Act mode (the embedded set stays small)
            tools += self.plans.tools()
        registry = ToolRegistry(tools)
        max_turns = min(s.max_turns, s.embedded.max_turns) if self.is_embedded else s.max_turns
        config = LoopConfig(
            max_turns=max_turns,
            permission_mode=PermissionMode(s.permission_mode),
            interactive=self.interactive,
            max_output_chars=s.max_tool_output,
            bash_timeout_s=s.bash_timeout,
            api_base=s.api_base,
            temperature=0.0 if self.is_embedded and s.temperature is None else s.temperature,
            max_tokens=s.embedded.max_reply_tokens if self.is_embedded else None,
            send_reasoning_back=self.model.startswith("deepseek/"),
            retry=RetryPolicy(max_retries=s.max_retries),
            compaction=s.compaction,
            permission_rules=self.permission_rules,
        )
        first = self._journal is None or not self._journal.locked
        journal = self.journal
        event = "resumed" if self._restore_pending else ("started" if first else "rebuilt")
        journal.append({"kind": "session", "event": event, "session_id": self.session_id, "model": self.model,
                        "workspace": str(self.workspace), "time": time.time()})
        rules = rules_from_config(s.reminders.rules) if s.reminders.enabled else []
        prompt = self._system_prompt_text(registry.names(), lambda: build_system_prompt(
            self.workspace, registry.names(), git_snapshot=render_snapshot(self.git) if self.git else "",
            reminder_rules=system_prompt_rules(rules) if rules else ""))
        agent = Agent(provider=self.provider, registry=registry, system_prompt=prompt, model=self.model,
                      workspace=self.workspace, output_dir=self.output_dir, session_id=self.session_id,
                      config=config, journal=journal, context_window=lambda: self.context_window,
                      reminders=ReminderEngine(rules))
        agent.checkpoints = self.checkpoints
        agent.budget.load_tokenizer()  # while the session is prepared, not on the first request
        # The active plan survives compaction verbatim (pinned by code, not by the summariser).
        agent.compactor.plan_source = lambda: self.plan.to_markdown() if self.plan else None
        agent.compactor.changed_files_source = self.files_changed_by_commands
        return agent

    def _git_baseline(self, dirty_paths: "Callable[[Path], set[str] | None]") -> set[str] | None:
        """The paths git listed as changed when the session started (they are not the session's
        doing): read back from a resumed journal's ``git_baseline`` record, else taken now and
        journaled. ``None`` outside a repository."""
        if self.resumed is not None:
            baselines = [r for r in self.resumed.records if r.get("kind") == "git_baseline"]
            if baselines and isinstance(baselines[-1].get("dirty"), list):
                return {str(p) for p in baselines[-1]["dirty"]}
        if self.git is None or not self.git.is_repo:
            return None
        dirty = dirty_paths(self.workspace)
        if dirty is not None:
            self.journal.append({"kind": "git_baseline", "dirty": sorted(dirty), "time": time.time()})
        return dirty

    def files_changed_by_commands(self) -> list[str]:
        """Files git lists as changed now that it did not list at session start (what bash and
        other commands changed; the tools' own changes are known from their calls), sorted;
        ``[]`` outside a repository or when git fails. Paths relative to the repository root."""
        from .git_context import dirty_paths

        start = getattr(self, "_dirty_at_start", None)
        if start is None:
            return []
        now = dirty_paths(self.workspace)
        return sorted((now or set()) - start)

    def _system_prompt_text(self, tools: list[str], build: Callable[[], str]) -> str:
        """Return the system prompt to send with ``tools`` (registered names, in order): the
        current one (journaled, or read back from a resumed journal) when it was built for the
        same tools, else ``build()``, journaled as a new ``system_prompt`` record."""
        current = self._system_prompt
        if current is not None and list(current.tools) == tools:
            return current.text
        if current is not None:
            reason = "tools_changed"
        else:
            reason = "resumed_without_prompt" if self._restore_pending else "started"
        record = SystemPromptRecord(text=build(), tools=tuple(tools), model=self.model, reason=reason,
                                    time=time.time())
        self.journal.append(record.to_record())
        self._system_prompt = record
        return record.text

    @property
    def permission_rules(self):
        """The ``[permissions]`` allow/deny rules plus this session's "allow for this session"
        answers (agent/permission_rules.PermissionRules); kept when the model changes. Rules come
        from this run's settings; a resumed session adds back its journaled answers (never its
        old rules or mode), and each new answer is journaled as a ``permission_grant`` record."""
        if self._permission_rules is None:
            from .permissions.rules import PermissionRules

            rules = PermissionRules.from_settings(self.settings)
            if self.resumed is not None:
                rules.restore(self.resumed.grants)
            rules.on_grant = lambda grant: self.journal.append({**grant.to_record(), "time": time.time()})
            self._permission_rules = rules
        return self._permission_rules

    def set_permission_mode(self, mode: "PermissionMode | str") -> PermissionMode:
        """Switch the permission mode now (the running loop's config and the settings), journal
        it, and return it."""
        mode = PermissionMode(mode)
        self.settings.permission_mode = mode
        if self.agent is not None:
            self.agent.config.permission_mode = mode
        self.record_modes()
        return mode

    def record_modes(self, *, plan_mode: bool | None = None) -> None:
        """Journal the permission mode and Plan/Act mode (``plan_mode`` updates the latter), so a
        resumed session starts in the same modes."""
        if plan_mode is not None:
            self.plan_mode = plan_mode
        self.journal.append({"kind": "mode", "permission_mode": PermissionMode(self.settings.permission_mode).value,
                             "plan_mode": self.plan_mode, "time": time.time()})

    def _restore_modes(self, records: list[dict], *, keep_permission_mode: bool = False) -> None:
        """Apply the last ``mode`` record of a resumed journal: Plan/Act always; the permission
        mode only when it is not looser than the one this run started with (a resume never grants
        more than the command line or config did) and ``keep_permission_mode`` is False (an
        explicit ``--permission-mode`` on the resuming command wins). A restored permission mode
        that differs from the launch's is said in ``startup_notices``."""
        from .config.settings import is_looser

        modes = [r for r in records if r.get("kind") == "mode"]
        if not modes:
            return
        last = modes[-1]
        self.plan_mode = bool(last.get("plan_mode", False))
        try:
            recorded = PermissionMode(last.get("permission_mode"))
        except ValueError:
            return
        launched = PermissionMode(self.settings.permission_mode)
        if keep_permission_mode or recorded == launched:
            return
        if not is_looser(recorded, launched):
            self.settings.permission_mode = recorded
            self._mode_notices.append(f"Permission mode {recorded.value} restored from the session (this run "
                                      f"started with {launched.value}; Ctrl+R changes it).")

    # ------------------------------------------------------------------- journal, undo, watch
    @property
    def journal(self) -> SessionJournal:
        """The session's journal (one object per session id; locked on its first write)."""
        if self._journal is None:
            self._journal = SessionJournal(self.journal_path)
        return self._journal

    @property
    def checkpoints(self) -> "Checkpoints":
        """Per-turn file checkpoints of this session (agent/checkpoints.py)."""
        if self._checkpoints is None:
            from .session.checkpoints import Checkpoints

            self._checkpoints = Checkpoints(self.workspace, self.session_id)
        return self._checkpoints

    def undo(self) -> list[str]:
        """Restore the files changed by the last turn that changed any (``Checkpoints.undo_last_turn``)
        and return one line per file (plus a note when bash ran). Journaled as an ``undo`` event.
        Call between turns, not while one runs. The conversation is kept; the model learns of the
        restored files through the external-change reminder."""
        lines = self.checkpoints.undo_last_turn()
        self.journal.append({"kind": "event", "event": "undo", "files": lines, "time": time.time()})
        return lines

    def start_watching(self, on_files_changed: "Callable[[list[str]], None] | None" = None,
                       on_git_changed: "Callable[[], None] | None" = None) -> None:
        """Watch the files the agent has read and the git index/HEAD in a daemon thread
        (agent/file_watch.py). A change of a read file queues an external-change reminder for the
        next tool result, then ``on_files_changed(paths)`` is called with those files only
        (watcher thread; paths as the agent read them); a git index/HEAD change calls ``on_git_changed()``. Idempotent; prepares first."""
        from .session.file_watch import FileWatcher, find_git_dir, stamped_paths

        self.prepare()
        if self._watcher is not None:
            return

        def files_changed(paths: list[str]) -> None:
            agent = self.agent
            # Only files whose content really changed outside the agent (its own writes are not
            # reported: the file stamps filter them) reach the caller.
            changed = agent.on_file_changed() if agent is not None else []
            if changed and on_files_changed is not None:
                on_files_changed(changed)

        def watched() -> list[Path]:  # called from the watcher thread
            agent = self.agent
            if agent is None:
                return []
            with agent.stamps_lock:
                return stamped_paths(agent.file_stamps, self.workspace)

        self._watcher = FileWatcher(watched, on_files_changed=files_changed, on_git_changed=on_git_changed,
                                    git_dir=find_git_dir(self.workspace))
        self._watcher.start()

    def stop_watching(self) -> None:
        """Stop the file watcher (if any) and wait briefly for its thread."""
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    def close(self) -> None:
        """End the session: stop watching, close the journal and release its lock."""
        self.stop_watching()
        if self._journal is not None:
            self._journal.close()

    # ---------------------------------------------------------------------------------- turns
    def run_turn(self, prompt: str, emit: "Emit", cancel: threading.Event) -> "TurnFinished":
        """Run one user turn (see ``Agent.run_turn``); prepares the session first if needed."""
        self.prepare()
        assert self.agent is not None
        return self.plans.run_turn(self.agent, prompt, emit, cancel)

    # ------------------------------------------------------------------------------ Plan mode
    @property
    def plans(self) -> "PlanController":
        """Plan mode state of this conversation: ``proposed`` and approved ``plan`` (agent/planner.py)."""
        if self._plans is None:
            from .plan.controller import PlanController

            self._plans = PlanController(self.workspace)
        return self._plans

    @property
    def plan(self) -> "Plan | None":
        """The approved plan being carried out, or ``None``."""
        return self.plans.plan

    def plan_turn(self, task: str, emit: "Emit", cancel: threading.Event) -> "PlanResult":
        """Run the read-only planning pass for ``task`` (``PlanController.plan_pass``) and return
        the proposed plan, or why there is none. Changes nothing in the workspace."""
        self.prepare()
        assert self.agent is not None
        return self.plans.plan_pass(self.agent, task, emit, cancel)

    def execute_plan(self, plan: "Plan", emit: "Emit", cancel: threading.Event) -> "TurnFinished":
        """Approve ``plan`` (possibly edited) and carry it out in an Act turn that marks progress
        with ``update_plan`` (``PlanController.execute``). Raises ``PlanError`` for an empty plan."""
        self.prepare()
        assert self.agent is not None
        return self.plans.execute(self.agent, plan, emit, cancel)

    def discard_plan(self) -> None:
        """Drop the proposed and the active plan (journaled when the session has started)."""
        self.plans.discard(self.agent)

    def startup_notices(self) -> list[str]:
        """Notices to show when the session starts (e.g. the embedded model's limits, lines of a
        resumed journal that were skipped)."""
        notices = []
        if self.resumed is not None:
            count = len(self.resumed.messages)
            notices.append(f"Resumed session {self.session_id} ({count} message{'' if count == 1 else 's'}).")
            notices += self.resumed.warnings + self._mode_notices
        if not self.is_embedded:
            return notices
        from .providers.embedded.model import embedded_available

        missing = embedded_available()
        return notices + [EMBEDDED_NOTICE] + ([missing] if missing else [])

    def set_model(self, name: str) -> None:
        """Switch the model for the next turns, keeping the conversation: history, compacted
        view, files read (``Agent.adopt_conversation``); tools and system prompt are rebuilt.

        Raises ``ValueError`` (one line, nothing changed) when litellm cannot route ``name``
        (``model_name_problem``); a scripted session accepts any name (nothing is sent)."""
        if not isinstance(self.provider, ScriptedProvider):
            from .providers.model_info import model_name_problem

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
            self.resumed = None
            self._restore_pending = False
            self._checkpoints = None
            self._system_prompt = None  # a new session journals its own
        if self.model_info is not None:
            with self._prepare_lock:
                self.agent = self._build_agent(self.model_info)


def _scripted_info(model: str) -> ModelInfo:
    """Model facts for scripted runs without importing litellm: reasoning models by name."""
    reasoning = any(key in model for key in ("o1", "o3", "o4", "deepseek-r", "reasoner", "claude-sonnet-4", "claude-opus-4"))
    return ModelInfo(model, None, supports_reasoning=reasoning, supports_tools=True, known=False)


def build_session(workspace: Path, settings: Settings, *, provider: Provider | None = None,
                  replay: Path | None = None, replay_log: Path | None = None,
                  interactive: bool = True, resume: "str | Literal['latest'] | None" = None,
                  model: str | None = None, permission_mode_given: bool = False) -> AgentSession:
    """Return an ``AgentSession`` for ``workspace``.

    Provider choice: ``provider`` if given; else a ``ScriptedProvider`` from the ``replay`` file
    (``replay_log`` records its requests); else litellm. Raises ``ReplayError`` for a bad replay
    file. Cheap: litellm is not imported here.

    ``resume``: a session id (or unique prefix) or ``"latest"`` continues that session of this
    project: same id and journal file (locked now), conversation and plan restored by
    ``prepare()``, model restored unless ``model`` (the ``--model`` flag) is given, permission
    mode restored (never looser) unless ``permission_mode_given`` (the flag was given). Raises
    ``resume.SessionNotFoundError`` (unknown id, no session) and ``session.SessionLockedError``
    (another instance has the session open); ``OSError`` if the journal cannot be read.
    """
    resumed = journal = None
    if resume is not None:
        from .session.resume import find_session, load_session

        path = find_session(workspace, resume)
        journal = SessionJournal(path)
        journal.lock()  # refuse now, before any work, when another instance has it
        try:
            resumed = load_session(path)
        except BaseException:
            journal.close()
            raise
    if provider is None:
        if replay is not None:
            provider = ScriptedProvider(load_replay_file(replay), log_path=replay_log)
        else:
            from .providers.litellm_provider import LiteLLMProvider

            provider = LiteLLMProvider(timeout_s=settings.request_timeout)
    return AgentSession(workspace, settings, provider, interactive=interactive, model=model, resumed=resumed,
                        journal=journal, permission_mode_given=permission_mode_given)
