"""Settings of the loop: ``LoopConfig`` (per agent) and ``TurnOptions`` (per turn), and the texts of
the results and stops the loop writes itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..config.settings import CompactionSettings, PermissionMode
from ..tools.base import Capability
from .retry import RetryPolicy

INTERRUPTED_TEXT = "Interrupted by user: this tool call was not run (or was stopped). Do not retry unless asked."
MAX_TURNS_TEXT = ("Stopped after {n} steps with tool calls (max_turns = {n}). Send a message to continue, "
                  "or split the task into smaller ones; --max-turns raises the limit.")


@dataclass
class LoopConfig:
    """Per-agent loop settings: ``max_turns`` (steps with tool calls), ``permission_mode``,
    ``interactive`` (may ask the user), tool limits (characters, seconds), sampling."""

    max_turns: int = 50
    permission_mode: PermissionMode = PermissionMode.ASK
    interactive: bool = False
    max_output_chars: int = 20000
    bash_timeout_s: float = 120.0
    #: Secret-looking environment variables commands may still see (``[bash] env_allow``).
    bash_env_allow: tuple[str, ...] = ()
    #: Time limit of one call per tool name (seconds); ``"default"`` for the others.
    tool_time_limits: dict[str, float] = field(default_factory=lambda: {"default": 60.0})
    api_base: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    send_reasoning_back: bool = False
    #: Start sending reasoning back once a reply carries reasoning content (``send_reasoning =
    #: "auto"``): the provider streams it, so it may need it back (DeepSeek thinking with tools).
    learn_reasoning_back: bool = False
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    #: Plan mode (``agent.plan``): when set, only tools with these capabilities run; any other
    #: call (a registered tool of another capability, or an unknown name) gets an error result
    #: listing what may be used. Every tool is still offered (one tool list for the session).
    #: ``restricted_mode_name`` names the mode in that message.
    allowed_capabilities: frozenset[Capability] | None = None
    restricted_mode_name: str = "this mode"
    #: The ``[compaction]`` settings (``loop.compactor``): mode, threshold, keep_last...
    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    #: Allow/deny rules and "allow for this session" answers (``permissions.rules``); None = none.
    permission_rules: Any = None
    #: The ``agent.sandbox.SandboxPolicy`` bash commands run under (None = unsandboxed), and the
    #: read-only one of the planning pass (None: no sandbox, so Plan mode has no bash).
    sandbox: Any = None
    plan_sandbox: Any = None


@dataclass(frozen=True)
class TurnOptions:
    """Settings of one turn, passed to ``Agent.run_turn`` (the planning pass restricts its turn).

    ``allowed_capabilities``: when set, calls of tools with another capability are refused (every
    tool stays offered, so the tool list never changes), instead of ``LoopConfig``'s;
    ``restricted_mode_name`` names the mode in the refusal. ``reasoning_effort``: the effort hint
    (``low``, ``medium``, ``high``) every request of the turn carries, or None to send none.
    """

    allowed_capabilities: frozenset[Capability] | None = None
    restricted_mode_name: str = ""
    reasoning_effort: str | None = None
    #: The sandbox of this turn's commands instead of ``LoopConfig.sandbox`` (the planning
    #: pass's read-only one); with it, tools that run sandboxed (``sandboxed = True``) may run
    #: whatever ``allowed_capabilities`` says.
    sandbox: Any = None
