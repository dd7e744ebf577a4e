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

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .messages import Usage


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    def to_json_dict(self) -> dict[str, Any]:
        """Return the JSON-ready dict printed by the headless JSON output (``type`` first)."""
        return self.model_dump(mode="json")


class TurnStarted(_Event):
    """A user turn began. ``model`` is the litellm model name; ``reasoning_effort`` the turn's
    effort hint (``low``, ``medium``, ``high``), or None when none is sent."""

    type: Literal["turn_started"] = "turn_started"
    session_id: str
    model: str
    prompt: str = ""
    reasoning_effort: str | None = None


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


#: What the body of a call shows: the tool's ``output``; the ``diff`` of a file change; a
#: ``thought`` (drawn like reasoning); a ``plan`` (the plan tools: the sidebar shows the steps).
ToolBody = Literal["output", "diff", "thought", "plan"]


class ToolView(BaseModel):
    """How one tool call is shown.

    - ``title``: the header's label (the tool's name unless the tool says otherwise).
    - ``summary``: one line about this call (the command, the path, "step 2 → done"), not cut to a
      width: the UI cuts it where it has room.
    - ``body``: the kind of the body (``ToolBody``).
    - ``command``: the shell command line the call runs (exec tools), shown as ``$ command``.
    - ``path``: the workspace-relative file the call changes (file-changing tools), as given.
    - ``text``: the text of a ``thought`` body.
    """

    model_config = ConfigDict(frozen=True)

    title: str
    summary: str = ""
    body: ToolBody = "output"
    command: str | None = None
    path: str | None = None
    text: str | None = None


class ToolCallStarted(_Event):
    """The loop is about to handle one tool call.

    ``arguments`` is the decoded JSON object, or the raw string when it was not valid JSON;
    ``view`` how the call is shown, described by its tool (None when nobody described it).
    """

    type: Literal["tool_call_started"] = "tool_call_started"
    id: str
    name: str
    arguments: Any = None
    view: ToolView | None = None


#: How a tool call ended: ``ok``; ``error`` (the tool failed, or the call was refused or
#: stopped by a guard); ``denied`` (the user, the permission mode or a deny rule did not allow
#: it); ``cancelled`` (the user cancelled the turn before or while it ran); ``interrupted`` (the
#: process was told to stop, SIGTERM/SIGHUP).
ToolOutcome = Literal["ok", "error", "denied", "cancelled", "interrupted"]


class ToolResult(BaseModel):
    """The typed result of one tool call, beyond the text the model sees: from the loop to the
    event, the journal's tool-details record and the widget.

    ``exit_code`` is set by exec tools; ``duration_s`` is the run time in seconds (time waiting
    for the user's approval left out; None when unknown, e.g. older journals); ``output_lines`` /
    ``output_bytes`` count the full output when the tool counted it (None otherwise);
    ``truncated`` / ``saved_path``: the text was cut and the full output saved at that absolute
    path; ``diff``: the unified diff of a file change; ``display``: the output for the UI when it
    differs from the model's (ANSI colours kept); ``reminders``: the reminder texts appended to
    the result, in order.
    """

    model_config = ConfigDict(frozen=True)

    outcome: ToolOutcome = "ok"
    exit_code: int | None = None
    duration_s: float | None = None
    output_lines: int | None = None
    output_bytes: int | None = None
    truncated: bool = False
    saved_path: str | None = None
    diff: str | None = None
    display: str | None = None
    reminders: tuple[str, ...] = ()

    @property
    def is_error(self) -> bool:
        """Any outcome but ``ok``: the model's result is marked as an error."""
        return self.outcome != "ok"


#: The fields of ``ToolResult``, which ``ToolCallFinished`` also takes flat.
TOOL_RESULT_FIELDS: tuple[str, ...] = tuple(ToolResult.model_fields)


class ToolCallFinished(_Event):
    """A tool call has a result: ``output`` is the text the model sees, ``result`` the typed rest.

    The result's fields may also be given flat (``is_error=True`` without an outcome means
    ``error``) and read flat (``event.exit_code``). The headless JSON keeps the flat fields
    (``is_error``, ``truncated``, ``saved_path``: absolute or null, ``duration_s``, ``exit_code``,
    ``diff``, ``display``) and adds ``outcome``, ``output_lines``, ``output_bytes`` and
    ``reminders``.
    """

    type: Literal["tool_call_finished"] = "tool_call_finished"
    id: str
    name: str
    output: str
    result: ToolResult = ToolResult()

    @model_validator(mode="before")
    @classmethod
    def _flat_fields(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not (set(data) & {*TOOL_RESULT_FIELDS, "is_error"}):
            return data
        data = dict(data)
        flat = {key: data.pop(key) for key in TOOL_RESULT_FIELDS if key in data}
        is_error = bool(data.pop("is_error", False))
        if is_error and flat.get("outcome", "ok") == "ok":
            flat["outcome"] = "error"
        base = data.get("result")
        base = base.model_dump() if isinstance(base, ToolResult) else dict(base or {})
        data["result"] = ToolResult(**{**base, **flat})
        return data

    @property
    def is_error(self) -> bool:
        return self.result.is_error

    @property
    def outcome(self) -> ToolOutcome:
        return self.result.outcome

    @property
    def truncated(self) -> bool:
        return self.result.truncated

    @property
    def saved_path(self) -> str | None:
        return self.result.saved_path

    @property
    def duration_s(self) -> float:
        return self.result.duration_s or 0.0

    @property
    def exit_code(self) -> int | None:
        return self.result.exit_code

    @property
    def diff(self) -> str | None:
        return self.result.diff

    @property
    def display(self) -> str | None:
        return self.result.display

    def to_json_dict(self) -> dict[str, Any]:
        r = self.result
        return {"type": self.type, "id": self.id, "name": self.name, "output": self.output,
                "is_error": r.is_error, "truncated": r.truncated, "saved_path": r.saved_path,
                "duration_s": self.duration_s, "exit_code": r.exit_code, "diff": r.diff, "display": r.display,
                "outcome": r.outcome, "output_lines": r.output_lines, "output_bytes": r.output_bytes,
                "reminders": list(r.reminders)}


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
    """A loop guard stopped or warned the run: max_turns, stuck, ping_pong, repeated_failure,
    budget (the session's ``--max-cost`` / ``--max-tokens`` was reached; the message names the
    limit and the figures)."""

    type: Literal["guard_triggered"] = "guard_triggered"
    guard: Literal["max_turns", "stuck", "ping_pong", "repeated_failure", "budget"]
    message: str


class UserMessageAdded(_Event):
    """A message the user sent while the turn ran was added to the conversation at a step
    boundary (every tool call answered): the model reads it with its next request."""

    type: Literal["user_message_added"] = "user_message_added"
    text: str


class Notice(_Event):
    """Something the user should see that is not an error (a retry, a model-info fallback).

    ``key``: notices that share one are successive states of one status (a retry countdown, a
    wait for the model); a UI shows the latest in place of the earlier ones. ``waiting_s``: set on
    "waiting for the model" notices, the seconds without a chunk from the model so far.
    ``retry_in_s``: set on retry countdowns, the seconds left before the next attempt.
    """

    type: Literal["notice"] = "notice"
    message: str
    key: str | None = None
    waiting_s: float | None = None
    retry_in_s: float | None = None


class StepRetried(_Event):
    """A model call failed and is tried again. ``attempt``: the number of the attempt that starts
    now (2 for the first retry); ``reason``: why the previous one failed, one line;
    ``discard_partial``: the failed attempt had already emitted text or reasoning deltas, which are
    not part of the reply: drop them (the retry streams the reply again from its start)."""

    type: Literal["step_retried"] = "step_retried"
    attempt: int
    reason: str
    discard_partial: bool = False


class JournalStatus(_Event):
    """The session journal's writes changed state: ``state`` ``retrying`` (a write failed; the
    records are kept and retried: a warning), ``failed`` (journaling cannot resume for now: the
    TUI marks it persistently) or ``ok`` (writes resumed); ``message`` says what happened."""

    type: Literal["journal_status"] = "journal_status"
    state: Literal["ok", "retrying", "failed"]
    message: str


class ErrorEvent(_Event):
    """An error, in one line."""

    type: Literal["error"] = "error"
    message: str


#: ``interrupted``: the process was asked to end (SIGTERM / SIGHUP) while the turn ran.
#: ``verify_failed``: the verify hook still failed after its rounds (``agent.pipeline``).
#: ``budget``: the session's spending limit (``--max-cost``, ``--max-tokens``) was reached.
StopReason = Literal["done", "max_turns", "stuck", "cancelled", "error", "interrupted", "verify_failed", "budget"]


class TurnFinished(_Event):
    """The turn ended. ``usage`` sums every model call of the turn."""

    type: Literal["turn_finished"] = "turn_finished"
    stop_reason: StopReason
    final_text: str = ""
    usage: Usage = Field(default_factory=Usage)
    session_id: str = ""


class ModelCallFinished(_Event):
    """One request to the model ended (every attempt counts: a retry is a new call).

    ``turn`` (1-based in the session) and ``step`` (1-based in the turn; 0 outside a step, e.g.
    ``/compact``); ``purpose``: ``main``, ``summary``, ``refine``, ``reflexion`` or ``subagent``;
    tokens as the provider reported them, else estimated locally (``usage_estimated`` true);
    ``cached_prompt_tokens`` only when the provider reported it; ``latency_s``: seconds from
    sending the request to the end of its stream; ``ttft_s``: seconds to the first streamed
    chunk (None when none came); ``cost_usd``: from litellm's prices, None for a model whose
    price is unknown; ``outcome``: ``ok``, ``error`` or ``cancelled``; ``error``: why it failed.
    """

    type: Literal["model_call_finished"] = "model_call_finished"
    turn: int
    step: int
    model: str
    purpose: str = "main"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int | None = None
    latency_s: float = 0.0
    ttft_s: float | None = None
    cost_usd: float | None = None
    outcome: Literal["ok", "error", "cancelled"] = "ok"
    usage_estimated: bool = False
    error: str = ""
#: How a hook run ended: ``accept`` (the run is fine), ``retry`` (another round, with ``message`` as
#: the feedback), ``block`` (a ``before_tool`` hook refused the call), ``error`` (the hook raised or
#: failed), ``timeout`` (its time limit passed), ``disabled`` (an after-hook switched off after
#: repeated failures; a ``before_tool`` hook is never switched off: it fails closed),
#: ``fail`` (the last round still failed: no rounds left), ``skipped`` (nothing to do, e.g.
#: verify after a run that changed no file and no earlier failing round).
HookVerdict = Literal["accept", "retry", "fail", "block", "error", "timeout", "disabled", "skipped"]


class HookStarted(_Event):
    """A pipeline hook began (``agent.pipeline``). ``hook``: ``verify``, ``refine``, ``reflexion`` or
    ``user:<event>``; ``event``: ``before_run``, ``after_run``, ``before_tool`` or ``after_tool``;
    ``round``: the turn's round, from 1; ``agent``: whose call a tool hook is about, "main" or the
    sub-agent's id (its ``task`` call id)."""

    type: Literal["hook_started"] = "hook_started"
    hook: str
    event: str
    round: int
    agent: str = "main"


class HookFinished(_Event):
    """A pipeline hook ended with ``verdict`` after ``duration_s`` seconds. ``message``: one line,
    or the feedback handed back for the next round; ``detail``: more text (e.g. the failing test
    output, truncated), or "". ``verdict`` ``fail``: the last round still failed (no rounds left);
    ``timeout`` / ``error``: the hook (or the verify command) could not give a verdict. ``agent``
    as for ``HookStarted``."""

    type: Literal["hook_finished"] = "hook_finished"
    hook: str
    event: str
    round: int
    verdict: HookVerdict
    duration_s: float
    message: str
    detail: str = ""
    agent: str = "main"


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
    """UI-only: the loop waits on ``reply`` for the user's decision about one tool call.

    ``preview`` is the tool's one-line preview; ``view`` how the call is shown; ``diff`` the
    unified diff a file change would make (computed by the tool without writing), else None.
    """

    type: Literal["permission_request"] = "permission_request"
    call_id: str
    tool_name: str
    arguments: Any = None
    capability: str = ""
    preview: str = ""
    view: ToolView | None = None
    diff: str | None = None
    #: Why this call asks although the tool was allowed for the session (risky commands), or "".
    note: str = ""
    #: How the command will run: "runs sandboxed (workspace-write)", "runs unsandboxed", or ""
    #: for tools that run no command.
    sandbox: str = ""
    reply: Future = Field(default_factory=Future, exclude=True, repr=False)


# --- sub-agents (the ``task`` tool, ``agent.subagents``) -------------------------------------------
class SubagentStarted(_Event):
    """A sub-agent began: ``task_id`` is the id of the parent's ``task`` call, ``index`` the
    1-based order in which the parent asked for sub-agents in the session, ``description`` the
    call's short title, ``journal_path`` the absolute path of the sub-agent's own journal."""

    type: Literal["subagent_started"] = "subagent_started"
    task_id: str
    index: int
    description: str
    journal_path: str


class SubagentProgress(_Event):
    """A running sub-agent made progress: ``step`` (its model calls so far, from 1), ``tokens``
    (prompt + completion tokens reported so far) and ``last_tool`` (the name of its latest tool
    call, "" before the first)."""

    type: Literal["subagent_progress"] = "subagent_progress"
    task_id: str
    index: int
    step: int
    tokens: int
    last_tool: str = ""


class SubagentCompleted(_Event):
    """A sub-agent ended with its result: ``duration_s`` (wall-clock seconds), ``usage`` (its own
    model calls), ``stop_reason`` (``done``) and ``summary`` (its final text, as the parent's tool
    result carries it)."""

    type: Literal["subagent_completed"] = "subagent_completed"
    task_id: str
    index: int
    duration_s: float
    usage: Usage = Field(default_factory=Usage)
    stop_reason: str = "done"
    summary: str = ""


class SubagentFailed(_Event):
    """A sub-agent ended without a result: ``stop_reason`` is ``max_turns``, ``timeout``,
    ``cancelled``, ``error``, ``stuck`` or ``budget``; ``message`` says what happened in one line;
    ``duration_s`` (wall-clock seconds) and ``usage`` as for ``SubagentCompleted``."""

    type: Literal["subagent_failed"] = "subagent_failed"
    task_id: str
    index: int
    duration_s: float
    usage: Usage = Field(default_factory=Usage)
    stop_reason: str
    message: str = ""


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
    JournalStatus,
    StepRetried,
    ErrorEvent,
    TurnFinished,
    PermissionRequest,
    ModelCallFinished,
    HookStarted,
    HookFinished,
    SubagentStarted,
    SubagentProgress,
    SubagentCompleted,
    SubagentFailed,
]

Emit = Callable[[AgentEvent], None]
