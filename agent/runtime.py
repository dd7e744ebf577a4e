"""Wiring: one ``AgentSession`` per conversation, built from settings for a workspace.

``build_session`` is cheap (no litellm import, and the loop, tools and git code are imported only
by ``prepare()``) so the TUI can paint first; ``prepare()`` does the slow part (litellm import,
model info, git snapshot, tool set) and is called by the TUI in a worker after the first paint,
or implicitly by the first ``run_turn``.
"""

from __future__ import annotations

import threading
from pathlib import Path

from typing import TYPE_CHECKING

from .config import PermissionMode, Settings
from .providers.base import Provider
from .providers.model_info import ModelInfo
from .providers.scripted import ScriptedProvider, load_replay_file
from .session import new_session_id, sessions_dir

if TYPE_CHECKING:  # the loop, tools and git code load in prepare(), after the TUI's first paint
    from .events import Emit, TurnFinished
    from .git_context import GitSnapshot
    from .loop import Agent
    from .planner import Plan, PlanController, PlanResult

EMBEDDED_NOTICE = ("Using the embedded SmolLM2-135M: a small local model for trying the app offline, with "
                   "read-only tools and few steps. Real work wants a real model: set OPENAI_API_KEY, "
                   "ANTHROPIC_API_KEY or GEMINI_API_KEY, or pass --model.")


class AgentSession:
    """A conversation bound to a workspace, a model and a provider.

    Attributes: ``session_id``, ``model`` (litellm name), ``settings``, ``workspace`` (resolved
    path), ``interactive`` (may ask the user for permission), ``context_window`` (tokens, known
    after ``prepare()``), ``model_info``, ``agent`` (the loop, after ``prepare()``).
    """

    def __init__(self, workspace: Path, settings: Settings, provider: Provider, *,
                 interactive: bool, model: str | None = None) -> None:
        self.workspace = Path(workspace).resolve()
        self.settings = settings
        self.provider = provider
        self.interactive = interactive
        self.model = model or settings.resolved_model()
        self.session_id = new_session_id()
        self.model_info: ModelInfo | None = None
        self.agent: "Agent | None" = None
        #: Git state at session start (frozen for the session so the prompt prefix stays stable).
        self.git: "GitSnapshot | None" = None
        self._plans: "PlanController | None" = None  # Plan mode state, created on first use
        self._prepare_lock = threading.Lock()

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
        """The session's JSONL journal file."""
        return sessions_dir(self.workspace) / f"{self.session_id}.jsonl"

    # -------------------------------------------------------------------------------- prepare
    def prepare(self) -> None:
        """Load model info (imports litellm unless the provider is scripted) and build the loop.

        Idempotent and thread-safe; slow the first time (seconds).
        """
        from .git_context import git_snapshot
        from .providers.model_info import lookup_model_info
        from .workspace import ensure_app_folder_excluded

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
            self.agent = self._build_agent(info)

    def _configure_embedded(self) -> None:
        """Load litellm and pass the ``[embedded]`` settings to the embedded provider."""
        from .providers.embedded import register_embedded_provider
        from .providers.litellm_loader import load_litellm

        load_litellm()
        register_embedded_provider(context_tokens=self.settings.embedded.context_tokens,
                                   max_reply_tokens=self.settings.embedded.max_reply_tokens)

    def _build_agent(self, info: ModelInfo) -> "Agent":
        from .git_context import render_snapshot
        from .loop import Agent, LoopConfig
        from .prompts import build_system_prompt
        from .reminders import ReminderEngine, rules_from_config, system_prompt_rules
        from .retry import RetryPolicy
        from .session import SessionJournal
        from .tools.registry import ToolRegistry, default_tools

        s = self.settings
        read_only_tools = self.is_embedded and s.embedded.tools != "all"
        tools = default_tools(include_think=not info.supports_reasoning, read_only=read_only_tools)
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
        )
        journal = SessionJournal(self.journal_path)
        journal.append({"kind": "session", "session_id": self.session_id, "model": self.model,
                        "workspace": str(self.workspace)})
        rules = rules_from_config(s.reminders.rules) if s.reminders.enabled else []
        prompt = build_system_prompt(self.workspace, registry.names(),
                                     git_snapshot=render_snapshot(self.git) if self.git else "",
                                     reminder_rules=system_prompt_rules(rules) if rules else "")
        return Agent(provider=self.provider, registry=registry, system_prompt=prompt, model=self.model,
                     workspace=self.workspace, output_dir=self.output_dir, session_id=self.session_id,
                     config=config, journal=journal, context_window=lambda: self.context_window,
                     reminders=ReminderEngine(rules))

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
            from .planner import PlanController

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
        """Notices to show when the session starts (e.g. the embedded model's limits)."""
        if not self.is_embedded:
            return []
        from .providers.embedded import embedded_available

        missing = embedded_available()
        return [EMBEDDED_NOTICE] + ([missing] if missing else [])

    def set_model(self, name: str) -> None:
        """Switch the model for the next turns, keeping the conversation (tools are rebuilt)."""
        history = self.agent.history if self.agent else []
        self.model = name
        with self._prepare_lock:
            self.agent = None
            self.model_info = None
        self.prepare()
        assert self.agent is not None
        self.agent.history = history

    def clear(self) -> None:
        """Start a new, empty conversation with a new session id (the old journal stays on disk)."""
        with self._prepare_lock:
            if self.agent is not None and self.agent.journal is not None:
                self.agent.journal.close()
            self.session_id = new_session_id()
            self.agent = None
            self._plans = None
        if self.model_info is not None:
            with self._prepare_lock:
                self.agent = self._build_agent(self.model_info)


def _scripted_info(model: str) -> ModelInfo:
    """Model facts for scripted runs without importing litellm: reasoning models by name."""
    reasoning = any(key in model for key in ("o1", "o3", "o4", "deepseek-r", "reasoner", "claude-sonnet-4", "claude-opus-4"))
    return ModelInfo(model, None, supports_reasoning=reasoning, supports_tools=True, known=False)


def build_session(workspace: Path, settings: Settings, *, provider: Provider | None = None,
                  replay: Path | None = None, replay_log: Path | None = None,
                  interactive: bool = True) -> AgentSession:
    """Return an ``AgentSession`` for ``workspace``.

    Provider choice: ``provider`` if given; else a ``ScriptedProvider`` from the ``replay`` file
    (``replay_log`` records its requests); else litellm. Raises ``ReplayError`` for a bad replay
    file. Cheap: litellm is not imported here.
    """
    if provider is None:
        if replay is not None:
            provider = ScriptedProvider(load_replay_file(replay), log_path=replay_log)
        else:
            from .providers.litellm_provider import LiteLLMProvider

            provider = LiteLLMProvider(timeout_s=settings.request_timeout)
    return AgentSession(workspace, settings, provider, interactive=interactive)
