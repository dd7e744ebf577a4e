"""Building the session's ``Agent``: the tool set, the loop config, the system prompt (built once,
journaled and reused while the tool set is the same), the embedded provider's settings, and git's
changed files at session start (the baseline for the files commands changed).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable

from ..config.settings import PermissionMode
from ..providers.model_info import ModelInfo
from ..session.records import GitBaselineRecord, SessionRecord, SystemPromptRecord


@dataclass(frozen=True)
class WorkspaceChanges:
    """The workspace's changes as git sees them (``AgentBuilding.changed_files``): ``files``
    (``git_repo.ChangedFile``, workspace-relative) changed since the session started, and
    ``at_start``, the paths already changed when it started."""

    files: list["ChangedFile"]
    at_start: frozenset[str]


if TYPE_CHECKING:  # the loop, tools and git code load in prepare(), after the TUI's first paint
    from ..git_repo import ChangedFile
    from ..loop.agent import Agent


class AgentBuilding:
    """The agent-building part of ``AgentSession``."""

    def _configure_embedded(self) -> None:
        """Load litellm and pass the ``[embedded]`` settings to the embedded provider."""
        from ..providers.embedded.provider import register_embedded_provider
        from ..providers.litellm_loader import load_litellm

        load_litellm()
        register_embedded_provider(context_tokens=self.settings.embedded.context_tokens,
                                   max_reply_tokens=self.settings.embedded.max_reply_tokens)

    def _build_agent(self, info: ModelInfo) -> "Agent":
        from ..git_context import render_snapshot
        from ..loop.agent import Agent
        from ..loop.config import LoopConfig
        from ..loop.reminders import ReminderEngine
        from ..config.reminder_rules import rules_from_config, system_prompt_rules
        from ..loop.retry import RetryPolicy
        from ..loop.system_prompt import build_system_prompt
        from ..tools.registry import ToolRegistry, default_tools

        s = self.settings
        read_only_tools = self.is_embedded and s.embedded.tools != "all"
        think = {"on": True, "off": False}.get(s.think_tool, not info.supports_reasoning)
        tools = default_tools(include_think=think, read_only=read_only_tools)
        if not read_only_tools:  # one tool list for Plan and Act mode (the embedded set stays small)
            tools += self.plans.tools()
        if not read_only_tools:  # sub-agents: read-only workers the model can hand work to
            from ..subagents import SubagentRunner
            from ..tools.task import TaskTool

            tools.append(TaskTool(s.subagents, runner=SubagentRunner(s.subagents)))
        registry = ToolRegistry(tools)
        max_turns = min(s.max_turns, s.embedded.max_turns) if self.is_embedded else s.max_turns
        config = LoopConfig(
            max_turns=max_turns,
            permission_mode=PermissionMode(s.permission_mode),
            interactive=self.interactive,
            max_output_chars=s.max_tool_output,
            bash_timeout_s=s.bash_timeout,
            bash_env_allow=tuple(s.bash.env_allow),
            tool_time_limits=dict(s.tool_time_limits),
            api_base=s.api_base,
            temperature=0.0 if self.is_embedded and s.temperature is None else s.temperature,
            max_tokens=s.embedded.max_reply_tokens if self.is_embedded else None,
            send_reasoning_back=self._sends_reasoning_back(info),
            learn_reasoning_back=s.send_reasoning == "auto",
            retry=RetryPolicy(max_retries=s.max_retries, max_retry_time_s=s.max_retry_time),
            compaction=s.compaction,
            permission_rules=self.permission_rules,
            sandbox=self.act_sandbox(),
            plan_sandbox=self.plan_sandbox(),
        )
        first = self._journal is None or not self._journal.locked
        journal = self.journal
        event = "resumed" if self._restore_pending else ("started" if first else "rebuilt")
        journal.append(SessionRecord(event=event, session_id=self.session_id, model=self.model,
                                     workspace=str(self.workspace), time=time.time()))
        rules = rules_from_config(s.reminders.rules) if s.reminders.enabled else []
        prompt = self._system_prompt_text(registry.names(), lambda: build_system_prompt(
            self.workspace, registry.names(), git_snapshot=render_snapshot(self.git) if self.git else "",
            reminder_rules=system_prompt_rules(rules) if rules else ""))
        agent = Agent(provider=self.provider, registry=registry, system_prompt=prompt, model=self.model,
                      workspace=self.workspace, output_dir=self.output_dir, session_id=self.session_id,
                      config=config, journal=journal, context_window=lambda: self.context_window,
                      reminders=ReminderEngine(rules))
        if not read_only_tools and self.mcp.statuses():  # MCP servers' tools, after the built-in ones
            registry.attach_source(self.mcp)
        agent.checkpoints = self.checkpoints
        agent.spending, agent.turn_number = self.session_spending(), self.logged_turns()
        agent.budget.load_tokenizer()  # while the session is prepared, not on the first request
        # The active plan survives compaction verbatim (pinned by code, not by the summariser).
        agent.compactor.plan_source = lambda: self.plan.to_markdown() if self.plan else None
        agent.compactor.changed_files_source = self.files_changed_by_commands
        return agent

    def _sends_reasoning_back(self, info: ModelInfo) -> bool:
        """Whether reasoning goes back to the provider from the first request: ``send_reasoning``
        on/off; auto: the model is a ``deepseek/`` one, the model info says it reasons and its
        provider takes reasoning back as ``reasoning_content`` (not Anthropic's or Gemini's own
        thinking formats), or the resumed conversation holds reasoning content (the provider
        streamed it)."""
        from ..providers.model_info import reasoning_content_travels

        setting = self.settings.send_reasoning
        if setting != "auto":
            return setting == "on"
        if self.model.startswith("deepseek/") or (info.supports_reasoning and reasoning_content_travels(self.model)):
            return True
        resumed = getattr(self, "resumed", None)
        return resumed is not None and any(getattr(m, "reasoning_content", None) for m in resumed.messages)

    def _git_baseline(self) -> set[str] | None:
        """The paths git listed as changed when the session started (they are not the session's
        doing): read back from a resumed journal's ``git_baseline`` record, else taken now and
        journaled. ``None`` outside a repository."""
        if self.resumed is not None:
            baseline = self.resumed.git_baseline
            if baseline is not None:
                return set(baseline.dirty)
        if self.git is None or not self.git.is_repo:
            return None
        from ..git_repo import changed_paths

        dirty = changed_paths(self.workspace)
        if dirty is not None:
            self.journal.append(GitBaselineRecord(dirty=sorted(dirty), time=time.time()))
        return dirty

    def files_changed_by_commands(self) -> list[str]:
        """Files git lists as changed now that it did not list at session start (what bash and
        other commands changed; the tools' own changes are known from their calls), sorted;
        ``[]`` outside a repository or when git fails. Paths relative to the repository root."""
        from ..git_repo import changed_paths

        start = getattr(self, "_dirty_at_start", None)
        if start is None:
            return []
        now = changed_paths(self.workspace)
        return sorted((now or set()) - start)

    def changed_files(self) -> "WorkspaceChanges | None":
        """What git lists as changed in the workspace now, for the sidebar (``git_repo``): the
        files not listed at session start, workspace-relative, with line counts against HEAD,
        and the workspace-relative paths that were already changed at start (their share of the
        change is unknown to git). None outside a repository, before ``prepare()``, or when git
        fails or times out (2 s). Runs git: call it off the UI thread."""
        from ..git_repo import changed_files, repository_root

        start = getattr(self, "_dirty_at_start", None)
        if start is None:
            return None
        root = repository_root(self.workspace)
        files = changed_files(self.workspace)
        if root is None or files is None:
            return None

        def inside(path: str) -> str | None:
            try:
                return (root / path).relative_to(self.workspace).as_posix()
            except ValueError:
                return None

        kept = [replace(f, path=rel) for f in files if f.path not in start and (rel := inside(f.path))]
        return WorkspaceChanges(files=kept, at_start=frozenset(p for p in map(inside, start) if p))

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
        self.journal.append(record)
        self._system_prompt = record
        return record.text
