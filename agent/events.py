"""The event stream the UI and the headless printer consume.

Events are frozen pydantic models. Each has a snake_case ``type`` that is part of the public
headless JSON interface (DESIGN.md 5a): fields may be added, never removed or renamed.
``to_json_dict()`` returns what ``--output-format json`` prints for one event.

UI-only requests (``PermissionRequest``) carry a ``concurrent.futures.Future`` through which the
UI answers; they are never printed as JSON.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, Callable, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from .messages import Usage


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    def to_json_dict(self) -> dict[str, Any]:
        """Return the JSON-ready dict printed by the headless JSON output (``type`` first)."""
        return self.model_dump(mode="json")


class TurnStarted(_Event):
    """A user turn began. ``model`` is the litellm model name."""

    type: Literal["turn_started"] = "turn_started"
    session_id: str
    model: str
    prompt: str = ""


class TextDelta(_Event):
    """A piece of the assistant's visible text (chunking varies between runs)."""

    type: Literal["text_delta"] = "text_delta"
    text: str


class ReasoningDelta(_Event):
    """A piece of the model's reasoning content."""

    type: Literal["reasoning_delta"] = "reasoning_delta"
    text: str


class StepStarted(_Event):
    """A model call (a step) is about to be made. ``step`` counts from 1 within the turn."""

    type: Literal["step_started"] = "step_started"
    step: int


class ToolCallStarted(_Event):
    """The loop is about to handle one tool call.

    ``arguments`` is the decoded JSON object, or the raw string when it was not valid JSON.
    """

    type: Literal["tool_call_started"] = "tool_call_started"
    id: str
    name: str
    arguments: Any = None


class ToolCallFinished(_Event):
    """A tool call has a result.

    ``output`` is the text the model sees; ``saved_path`` is the absolute path of the full output
    when it was truncated (else null); ``duration_s`` is wall time in seconds; ``exit_code`` is set
    by exec tools; ``diff`` is a unified diff for tools that changed a file; ``display`` is the
    output for the UI when it differs from ``output`` (ANSI colours kept), else null.
    """

    type: Literal["tool_call_finished"] = "tool_call_finished"
    id: str
    name: str
    output: str
    is_error: bool = False
    truncated: bool = False
    saved_path: str | None = None
    duration_s: float = 0.0
    exit_code: int | None = None
    diff: str | None = None
    display: str | None = None


class ReminderInjected(_Event):
    """A reminder was appended to a tool result."""

    type: Literal["reminder_injected"] = "reminder_injected"
    text: str


class PlanStepState(BaseModel):
    """One checklist step: text and status (pending, in_progress, done, skipped), plus the step's
    ``id`` (what ``update_plan`` names), the agent's ``note`` and the ``files`` it declares."""

    model_config = ConfigDict(frozen=True)
    text: str
    status: Literal["pending", "in_progress", "done", "skipped"] = "pending"
    id: str = ""
    note: str = ""
    files: list[str] = Field(default_factory=list)


class PlanUpdated(_Event):
    """The plan checklist changed.

    ``approved`` is false for a plan the planning pass proposed and the user has not approved yet;
    ``undeclared_files`` lists files the agent changed that no step declared (the sidebar flags them).
    """

    type: Literal["plan_updated"] = "plan_updated"
    steps: list[PlanStepState]
    title: str = ""
    approved: bool = True
    undeclared_files: list[str] = Field(default_factory=list)


class ContextUsage(_Event):
    """How full the context window is, in tokens. ``approximate`` when estimated locally.

    After a model call (``approximate`` false) the provider's prompt-cache figures for that call
    come along when it reported them: ``cached_prompt_tokens`` (input read from the cache),
    ``cache_creation_tokens`` (input written to it) and ``cache_hit_rate`` (reads / prompt
    tokens, 0.0 to 1.0); ``None`` otherwise (see ``messages.Usage``).
    """

    type: Literal["context_usage"] = "context_usage"
    used_tokens: int
    window_tokens: int
    approximate: bool = True
    cached_prompt_tokens: int | None = None
    cache_creation_tokens: int | None = None
    cache_hit_rate: float | None = None


class CompactionDone(_Event):
    """A compaction rewrote the context view (counts are messages)."""

    type: Literal["compaction_done"] = "compaction_done"
    tokens_before: int
    tokens_after: int
    summarized: int = 0
    pruned: int = 0
    aggregated: int = 0
    #: Kept tool results cut to head + tail + a pointer to their saved full output.
    stubbed: int = 0
    #: This compaction came within ``min_steps_between`` model calls of the previous one.
    thrash: bool = False
    #: Names of the items pinned by code in the summary message (task, plan, test state...).
    pinned: list[str] = Field(default_factory=list)


class GuardTriggered(_Event):
    """A loop guard stopped or warned the run: max_turns, stuck, ping_pong, repeated_failure."""

    type: Literal["guard_triggered"] = "guard_triggered"
    guard: Literal["max_turns", "stuck", "ping_pong", "repeated_failure"]
    message: str


class Notice(_Event):
    """Something the user should see that is not an error (a retry, a model-info fallback)."""

    type: Literal["notice"] = "notice"
    message: str


class ErrorEvent(_Event):
    """An error, in one line."""

    type: Literal["error"] = "error"
    message: str


StopReason = Literal["done", "max_turns", "stuck", "cancelled", "error"]


class TurnFinished(_Event):
    """The turn ended. ``usage`` sums every model call of the turn."""

    type: Literal["turn_finished"] = "turn_finished"
    stop_reason: StopReason
    final_text: str = ""
    usage: Usage = Field(default_factory=Usage)
    session_id: str = ""


class PermissionDecision(BaseModel):
    """The user's answer to a permission request: allow, or deny with an optional reason.

    ``scope`` (for an allow): ``once`` (this call only), ``session_tool`` (every later call of this
    tool in the session) or ``session_prefix`` (later bash lines whose every command starts with
    ``prefix``, see ``permissions.rules``). Deny rules in the config still win.
    """

    allow: bool
    reason: str = ""
    scope: Literal["once", "session_tool", "session_prefix"] = "once"
    prefix: str | None = None


class PermissionRequest(_Event):
    """UI-only: the loop waits on ``reply`` for the user's decision about one tool call."""

    type: Literal["permission_request"] = "permission_request"
    call_id: str
    tool_name: str
    arguments: Any = None
    capability: str = ""
    preview: str = ""
    reply: Future = Field(default_factory=Future, exclude=True, repr=False)


AgentEvent = Union[
    TurnStarted,
    TextDelta,
    ReasoningDelta,
    StepStarted,
    ToolCallStarted,
    ToolCallFinished,
    ReminderInjected,
    PlanUpdated,
    ContextUsage,
    CompactionDone,
    GuardTriggered,
    Notice,
    ErrorEvent,
    TurnFinished,
    PermissionRequest,
]

Emit = Callable[[AgentEvent], None]
