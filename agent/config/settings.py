"""The settings schema: ``Settings`` (pydantic-settings, ``OPENCLI_`` env prefix, nested sections with
``__``) and its sections, permission modes and the embedded model's name.
"""

from __future__ import annotations

import os
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from .mcp_settings import McpSettings


EMBEDDED_MODEL = "embedded/smollm2-135m"


class ConfigError(Exception):
    """An invalid setting; the message is one line that names the setting and the source."""


class PermissionMode(str, Enum):
    """How tool calls are gated (DESIGN.md 6).

    ask: mutating and exec tools ask; auto-edit: edits allowed, exec asks; full-auto: everything
    runs; read-only: only read tools run.
    """

    ASK = "ask"
    AUTO_EDIT = "auto-edit"
    FULL_AUTO = "full-auto"
    READ_ONLY = "read-only"


#: Strictness order used when a project file or a resumed session tries to set the permission mode.
_STRICTNESS = {PermissionMode.READ_ONLY: 0, PermissionMode.ASK: 1, PermissionMode.AUTO_EDIT: 2,
               PermissionMode.FULL_AUTO: 3}


def is_looser(mode: PermissionMode, than: PermissionMode) -> bool:
    """True when ``mode`` lets more tool calls run without asking than ``than`` does."""
    return _STRICTNESS[mode] > _STRICTNESS[than]


class CompactionSettings(BaseModel):
    """The ``[compaction]`` section."""

    mode: Literal["off", "auto", "manual"] = Field("auto", description="off, auto or manual (/compact only).")
    threshold: float = Field(0.8, gt=0, le=1, description="Fraction of the context window that triggers auto-compaction.")
    warn_at: float = Field(0.6, gt=0, le=1, description="Fraction of the context window at which the meter warns.")
    strip_reasoning_after_turns: int = Field(3, ge=0, description="Prune reasoning older than N user turns; 0 = off. Used only when set and strip_reasoning_after_steps is not.")
    strip_reasoning_after_steps: int | None = Field(None, ge=0, description="Prune reasoning older than N assistant steps at compaction; 0 = off; unset = 3 (unless strip_reasoning_after_turns is set). Wins over strip_reasoning_after_turns.")
    aggregate_developer_loops: bool = Field(True, description="Collapse long edit/exec runs at compaction.")
    max_loop_steps_before_aggregate: int = Field(5, ge=2, description="Run length that triggers aggregation.")
    developer_capabilities: list[str] = Field(["mutating", "exec"], description="Tool capabilities counted as developer-loop steps.")
    keep_last_messages: int = Field(10, ge=0, description="Deprecated: the least number of messages kept verbatim at compaction (the kept part is sized by keep_tail_fraction).")
    keep_tail_fraction: float = Field(0.3, gt=0, le=0.9, description="Share of the context window kept verbatim at compaction (tokens, whole tool pairs; large results in it are stubbed).")
    target_fraction: float = Field(0.5, gt=0, le=0.9, description="After a compaction the request is at most this share of the context window.")
    min_steps_between: int = Field(3, ge=0, description="No auto-compaction within this many model calls of the previous one unless the request is over the window (counted as thrash).")
    error_output_cap_chars: int = Field(2000, ge=0, description="Characters of each error output kept verbatim at compaction (0 = no cap).")
    reserved_output_tokens: int | None = Field(
        None, ge=0, description="Tokens of the window held back for the reply: the largest prompt is the window minus this "
        "(never less than the reply cap, when one is sent). Unset: the reply cap, else min(8192, 20% of the window).")


    def reasoning_steps_kept(self) -> int | None:
        """How many assistant steps keep their reasoning at compaction: ``strip_reasoning_after_steps``
        when set; ``None`` when only ``strip_reasoning_after_turns`` was set (then user turns are
        counted, its older meaning); 3 when neither was set."""
        if self.strip_reasoning_after_steps is not None:
            return self.strip_reasoning_after_steps
        if "strip_reasoning_after_turns" in self.model_fields_set:
            return None
        return 3


class EmbeddedSettings(BaseModel):
    """The ``[embedded]`` section: the offline local model."""

    tools: Literal["read-only", "all"] = Field("read-only", description="read-only (read, grep, glob) or all: which tools the small local model gets.")
    max_turns: int = Field(6, ge=1, description="Cap on tool steps for the small local model.")
    context_tokens: int = Field(4096, ge=512, description="llama.cpp context size (tokens).")
    max_reply_tokens: int = Field(256, ge=16, description="Cap on tokens generated per reply.")


class ReminderSettings(BaseModel):
    """The ``[reminders]`` section: event-driven reminders appended to tool results."""

    enabled: bool = Field(True, description="false turns reminders (and their system-prompt block) off.")
    rules: list[dict[str, Any]] | None = Field(
        None, description="Replaces the default rules: [{id, trigger: after_edit|after_git|external_change, text}].")


class PermissionRuleSettings(BaseModel):
    """The ``[permissions]`` section: rules applied before asking (``agent.permissions.rules``).

    A rule is a bash command prefix in words (``pytest``, ``git status``) or a tool
    (``tool:edit``; for tools other than bash the bare name works too). Deny beats allow; a bash
    line is allowed only when every command in it matches an allow rule. A project
    ``.opencli.toml`` may add deny rules but not allow rules.
    """

    allow: list[str] = Field(default_factory=list, description="Rules that run without asking (e.g. [\"pytest\", \"git status\"]).")
    deny: list[str] = Field(default_factory=list, description="Rules that are always refused (e.g. [\"rm -rf\", \"git push\"]).")


class BashSettings(BaseModel):
    """The ``[bash]`` section: what commands run by the bash tool see (``agent.secrets.env``)."""

    env_allow: list[str] = Field(default_factory=list, description=(
        "Environment variables passed to commands although their names look secret (by default the "
        "provider keys and names containing KEY, SECRET, TOKEN or PASSWORD are removed), e.g. [\"GITHUB_TOKEN\"]. "
        "User config, env or flags only."))


class RetentionSettings(BaseModel):
    """The ``[retention]`` section: old sessions (journal and saved outputs) deleted at start,
    oldest first, never the current or a locked (open) session."""

    max_age_days: float = Field(30.0, ge=0, description="Delete sessions last written more than this many days ago (0 = keep all ages).")
    max_total_mb: float = Field(2048.0, ge=0, description="Delete the oldest sessions while all of the user's sessions take more than this (MB; 0 = no size cap).")


class BudgetSettings(BaseModel):
    """``[budget]``: the session's spending limit, sub-agents included; reaching it stops the
    turn before its next step (``stop_reason`` ``budget``, exit code 6)."""

    max_cost_usd: float | None = Field(None, ge=0, description="Stop once the session's model calls cost this many US dollars (litellm's prices; calls of unpriced models add nothing). Unset = no limit.")
    max_tokens: int | None = Field(None, ge=0, description="Stop once the session's model calls used this many tokens (prompt + completion). Unset = no limit.")
class VerifySettings(BaseModel):
    """The ``[verify]`` section: the post-run test hook (``agent.pipeline.verify``)."""

    enabled: bool = Field(False, description="Run the project's tests after a run that changed files (also --verify).")
    command: str | None = Field(None, description="The test command; unset detects pytest, npm test, cargo test, go test or make test.")
    max_rounds: int = Field(2, ge=1, description="Rounds in all (the first included) before the turn ends as verify_failed.")
    timeout_s: float = Field(600.0, gt=0, description="Time limit of one test run (seconds).")


class PipelineSettings(BaseModel):
    """The ``[pipeline]`` section: the review hooks around the loop and their limits."""

    refine: bool = Field(False, description="After a run that changed files, the model reviews its diff (one call, no tools) and may ask for a round.")
    reflexion: bool = Field(False, description="After a failed round, the model writes a lesson of at most 3 lines for the next round.")
    max_rounds: int = Field(2, ge=1, description="Rounds in all that refine and user after_run hooks may ask for.")
    hook_timeout_s: float = Field(120.0, gt=0, description="Time limit of one refine or reflexion call (seconds).")


class UserHook(BaseModel):
    """One user hook: a shell ``command`` run with the event as JSON on stdin, within ``timeout_s``."""

    command: str = Field(min_length=1)
    timeout_s: float = Field(30.0, gt=0)


class HookSettings(BaseModel):
    """The ``[hooks]`` section (user config only): shell commands per event."""

    before_tool: list[UserHook] = Field(default_factory=list, description="Before a tool call runs; a non-zero exit blocks it, its stderr is the reason the model sees.")
    after_tool: list[UserHook] = Field(default_factory=list, description="After a tool call has its result.")
    after_run: list[UserHook] = Field(default_factory=list, description="After a run; exit 2 asks for another round with its stderr as feedback.")


class ReasoningSettings(BaseModel):
    """The ``[reasoning]`` section: the effort hint sent with each turn's requests."""

    effort: Literal["auto", "low", "medium", "high"] = Field("auto", description="auto picks per turn: planning and refine high, short read-only questions low, else medium.")
    send_effort: Literal["auto", "on", "off"] = Field("auto", description="auto: only to models litellm says take it; on: always; off: never.")
class SubagentSettings(BaseModel):
    """``[subagents]``: limits of the sub-agents the ``task`` tool starts."""

    max_turns: int = Field(15, ge=1, description="Steps with tool calls a sub-agent may take (a call's max_turns may only lower it).")
    time_limit_s: float = Field(600.0, gt=0, description="Wall-clock limit of one sub-agent (seconds).")
    max_parallel: int = Field(4, ge=1, le=16, description="Sub-agents running at once; more task calls in one reply wait for a free slot.")
class SandboxSettings(BaseModel):
    """The ``[sandbox]`` section: the OS sandbox of bash commands (``agent.sandbox``)."""

    mode: Literal["auto", "off", "read-only", "workspace-write"] = Field("auto", description=(
        "auto: Plan mode runs bash read-only and Act mode confines it to the workspace where the OS sandbox "
        "(Linux Landlock) is available, else unsandboxed; off: never; read-only / workspace-write: always that "
        "mode (an unavailable sandbox then refuses commands)."))
    network: bool | None = Field(None, description=(
        "Whether sandboxed commands may use the network (TCP/UDP); unset: denied in read-only, allowed in "
        "workspace-write."))
    writable: list[str] = Field(default_factory=list, description=(
        "Extra folders writable in workspace-write mode, e.g. [\"~/.cache/pip\", \"~/.npm\"]. User config, env or flags only."))
    unix_sockets: bool = Field(False, description=(
        "Let sandboxed commands open Unix sockets (docker, ssh-agent, dbus: a daemon acts outside the sandbox). "
        "User config, env or flags only."))


class Settings(BaseSettings):
    """All settings. Every field can be set in TOML, as ``OPENCLI_<NAME>`` or by a CLI flag."""

    model_config = SettingsConfigDict(
        env_prefix="OPENCLI_",
        env_nested_delimiter="__",
        extra="ignore",
        validate_default=True,
    )

    model: str | None = Field(None, description="litellm model name; unset picks one from the API keys present, else the embedded model.")
    api_base: str | None = Field(None, description="Base URL of an OpenAI-compatible server (user file, env or flag only).")
    max_turns: int = Field(50, ge=1, description="Stop after this many steps that asked for tools.")
    permission_mode: PermissionMode = Field(PermissionMode.ASK, description="ask, auto-edit, full-auto or read-only.")
    max_tool_output: int = Field(20000, ge=0, description="Cap on bash/grep/glob output sent to the model (characters; 0 = no cap).")
    context_window: int | None = Field(None, ge=1, description="Override of the model's context window (tokens).")
    bash_timeout: float = Field(120.0, gt=0, description="Default time limit of the bash tool (seconds).")
    tool_time_limits: dict[str, Annotated[float, Field(ge=0)]] = Field(
        default_factory=lambda: {"default": 60.0, "grep": 120.0, "glob": 120.0},
        description="Time limit of one call per tool name (seconds; 0 = none); `default` for tools not listed. bash uses its own timeout.")
    request_timeout: float = Field(600.0, gt=0, description="Time limit of one model call (seconds).")
    max_retries: int = Field(4, ge=0, description="Retries of a transient provider error.")
    max_retry_time: float = Field(120.0, ge=0, description="Seconds from a model call's first failure after which no retry starts (waits and retried attempts included); then the turn stops with the error.")
    first_token_timeout: float = Field(60.0, gt=0, description="Seconds to wait for the first streamed chunk of a model call before it fails as a (retryable) timeout.")
    stream_idle_timeout: float = Field(60.0, gt=0, description="Seconds of silence between two streamed chunks after which a model call fails as a (retryable) timeout.")
    wait_notice_after: float = Field(10.0, gt=0, description="Seconds of silence from the model after which 'waiting for the model (N s)' is shown (TUI and headless stderr), then every 5 s.")
    send_reasoning: Literal["auto", "on", "off"] = Field(
        "auto", description="Send the model's reasoning back with the history. auto: when litellm says the model reasons, for deepseek/ models, and from the first reply that carries reasoning content.")
    theme: str = Field("opencli-dark", description="Textual theme name (themes/*.toml or a built-in).")
    notify: Literal["bell", "osc9", "off"] = Field(
        "bell", description="When the terminal is not focused and a turn of over 10 s ends or a permission prompt "
                            "waits: ring the bell, send an OSC 9 desktop notification, or nothing (TUI only).")
    temperature: float | None = Field(None, ge=0, le=2, description="Sampling temperature; unset uses the provider's default.")
    think_tool: Literal["auto", "on", "off"] = Field(
        "auto", description="auto: offer the no-op think tool only to models without native reasoning (litellm's model info); on / off force it.")
    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
    embedded: EmbeddedSettings = Field(default_factory=EmbeddedSettings)
    reminders: ReminderSettings = Field(default_factory=ReminderSettings)
    permissions: PermissionRuleSettings = Field(default_factory=PermissionRuleSettings)
    bash: BashSettings = Field(default_factory=BashSettings)
    retention: RetentionSettings = Field(default_factory=RetentionSettings)
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    verify: VerifySettings = Field(default_factory=VerifySettings)
    pipeline: PipelineSettings = Field(default_factory=PipelineSettings)
    hooks: HookSettings = Field(default_factory=HookSettings)
    reasoning: ReasoningSettings = Field(default_factory=ReasoningSettings)
    subagents: SubagentSettings = Field(default_factory=SubagentSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)

    @field_validator("max_tool_output", "context_window", "max_turns", mode="before")
    @classmethod
    def _int_like(cls, value: Any) -> Any:
        if isinstance(value, str):
            stripped = value.strip().replace("_", "")
            if stripped.lstrip("-").isdigit():
                return int(stripped)
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Files are merged by load_settings (below env, above defaults); see _build.
        return (init_settings, env_settings)

    def resolved_model(self) -> str:
        """Return the model to use: the configured one, else one chosen from the API keys in the
        environment (OpenAI, Anthropic, Gemini), else the embedded offline model."""
        if self.model:
            return self.model
        if os.environ.get("OPENAI_API_KEY"):
            return "openai/gpt-4.1"
        if os.environ.get("ANTHROPIC_API_KEY"):
            return "anthropic/claude-sonnet-4-5"
        if os.environ.get("GEMINI_API_KEY"):
            return "gemini/gemini-2.5-flash"
        return EMBEDDED_MODEL
