"""Building the session's ``Agent``: the tool set, the loop config, the system prompt (built once,
journaled and reused while the tool set is the same), the embedded provider's settings, and git's
changed files at session start (the baseline for the files commands changed).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..config.settings import PermissionMode
from ..providers.model_info import ModelInfo
from ..session.records import GitBaselineRecord, SessionRecord, SystemPromptRecord

if TYPE_CHECKING:  # the loop, tools and git code load in prepare(), after the TUI's first paint
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
        registry = ToolRegistry(tools)
        max_turns = min(s.max_turns, s.embedded.max_turns) if self.is_embedded else s.max_turns
        config = LoopConfig(
            max_turns=max_turns,
            permission_mode=PermissionMode(s.permission_mode),
            interactive=self.interactive,
            max_output_chars=s.max_tool_output,
            bash_timeout_s=s.bash_timeout,
            tool_time_limits=dict(s.tool_time_limits),
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
            baseline = self.resumed.git_baseline
            if baseline is not None:
                return set(baseline.dirty)
        if self.git is None or not self.git.is_repo:
            return None
        dirty = dirty_paths(self.workspace)
        if dirty is not None:
            self.journal.append(GitBaselineRecord(dirty=sorted(dirty), time=time.time()))
        return dirty

    def files_changed_by_commands(self) -> list[str]:
        """Files git lists as changed now that it did not list at session start (what bash and
        other commands changed; the tools' own changes are known from their calls), sorted;
        ``[]`` outside a repository or when git fails. Paths relative to the repository root."""
        from ..git_context import dirty_paths

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
        self.journal.append(record)
        self._system_prompt = record
        return record.text
