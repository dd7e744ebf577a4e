"""Plan mode above the ReAct loop: the read-only planning pass and the execution of an approved plan.

1. **Planning pass** (``PlanController.plan_pass``): one turn of the normal loop whose user
   message starts with the Plan mode message (explore, then ``submit_plan``). Every tool is
   offered; the turn's ``TurnOptions`` restrict calls to read-capability tools, so nothing in the
   workspace can change. The turn ends as soon as ``submit_plan`` succeeds; a model that answers
   in text instead has its markdown checklist parsed (``parse_markdown_plan``).
2. **Approval** happens outside (the TUI's modal, or ``--yes`` headless); the plan is a pydantic
   ``Plan`` the UI may edit and hand back.
3. **Execution** (``PlanController.execute``): a normal Act turn whose user message carries the
   approved plan verbatim as a checklist (after the Act mode message); the agent marks steps in
   progress / done / skipped with ``update_plan``. Each change emits ``PlanUpdated``; an edit to a
   file no step declared is recorded in ``Plan.undeclared_files``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..events import AgentEvent, Emit, Notice, ToolCallFinished, ToolCallStarted, TurnFinished
from ..loop.config import TurnOptions
from ..messages import UserOrigin
from ..session.records import PlanRecord
from ..tools.base import Capability

from .markdown import parse_markdown_plan
from .model import PLAN_TOOL_NAMES, STEP_STATUSES, Plan, PlanError, normalize_path, one_line
from .prompts import act_mode_message, execution_prompt, plan_mode_message, stated_mode

if TYPE_CHECKING:  # pragma: no cover - typing only
    from ..loop.agent import Agent
    from ..tools.base import Tool


# ============================================================================ pass and execution

def record_plan(agent: "Agent", event: str, plan: Plan | None, *, message_id: str | None = None) -> None:
    """Journal a ``PlanRecord`` for every change of the plan (when the agent has a journal), so a
    resumed or compacted session re-injects it verbatim; an ``approved`` record also names the
    ``message_id`` of the execution prompt that follows it."""
    if agent.journal is not None:
        agent.journal.append(PlanRecord(event=event, plan=plan, time=time.time(), message_id=message_id or None))

@dataclass(frozen=True)
class PlanResult:
    """What a planning pass produced.

    - ``plan``: the proposed plan, or ``None``.
    - ``turn``: the planning turn's ``TurnFinished`` (its ``stop_reason`` says how the pass ended).
    - ``source``: ``"submit_plan"``, ``"markdown"`` (parsed from the model's text) or ``"none"``.
    - ``message``: why there is no plan (the model's text, or how the turn stopped); empty otherwise.
    """

    plan: Plan | None
    turn: TurnFinished
    source: Literal["submit_plan", "markdown", "none"]
    message: str = ""


class PlanController:
    """The Plan mode state of one conversation and the two runs that use it.

    Attributes: ``proposed`` (the last plan a planning pass produced, not yet approved), ``plan``
    (the approved plan being executed; ``None`` when no plan is active), ``planning`` (true while
    a planning pass runs). The plans are replaced, never mutated in place, so a UI thread may
    read them while a run goes on. Methods take the session's ``Agent`` each time (it is rebuilt
    when the model changes); ``tools()`` are the plan tools bound to this controller, which the
    runtime registers for the whole session.
    """

    def __init__(self, workspace: Path) -> None:
        self.workspace = Path(workspace)
        self.proposed: Plan | None = None
        self.plan: Plan | None = None
        self._lock = threading.Lock()
        self._agent: Agent | None = None
        self._emit: Emit | None = None
        self._submitted: list[Plan] | None = None  # a list while a planning pass runs

    @property
    def planning(self) -> bool:
        """True while a planning pass runs (``submit_plan`` is accepted only then)."""
        return self._submitted is not None

    def tools(self) -> list["Tool"]:
        """New ``submit_plan`` and ``update_plan`` tools bound to this controller (both read
        capability; see ``plan.tools``)."""
        from .tools import SubmitPlanTool, UpdatePlanTool

        return [SubmitPlanTool(self.submit), UpdatePlanTool(self)]

    def submit(self, plan: Plan) -> None:
        """Take a plan ``submit_plan`` validated. Raises ``PlanError`` (the model's error result)
        when no planning pass runs: in Act mode the model should do the work, not propose it."""
        with self._lock:
            if self._submitted is None:
                raise PlanError("there is no planning pass: submit_plan works only in Plan mode. This turn is "
                                "in Act mode: carry out the request with the other tools.")
            self._submitted.append(plan)

    # ------------------------------------------------------------------------ planning pass
    def plan_pass(self, agent: "Agent", task: str, emit: Emit, cancel: threading.Event, *,
                  reasoning_effort: str | None = None) -> PlanResult:
        """Run the read-only planning pass for ``task`` on ``agent`` (its history and journal).

        The request keeps the session's system prompt and tool list (every tool offered); the
        turn's user message starts with ``plan_mode_message`` naming the read-capability tools,
        and the loop refuses any other call by capability (``LoopConfig.allowed_capabilities``).
        Where the OS sandbox is available (``LoopConfig.plan_sandbox``), bash runs too, under
        the read-only sandbox, and the mode message says so.
        Ends when ``submit_plan`` succeeds or the model answers in text (then the markdown
        fallback is tried). When a plan results it is stored as ``proposed``, journaled (event
        ``proposed``) and emitted as ``PlanUpdated(approved=False)`` after the turn's
        ``TurnFinished``. Never raises for model or tool failures. ``reasoning_effort``: the turn's
        effort hint (``TurnOptions.reasoning_effort``).
        """
        ensure_plan_tools(agent, self)
        read_only = frozenset({Capability.READ})
        sandbox = agent.config.plan_sandbox  # read-only OS sandbox: bash may run (None: no bash)
        usable = [t.name for t in agent.registry.tools()
                  if (t.capability in read_only or (sandbox is not None and getattr(t, "sandboxed", False)))
                  and t.name != "update_plan"]
        options = TurnOptions(allowed_capabilities=read_only, restricted_mode_name="Plan mode",
                              reasoning_effort=reasoning_effort, sandbox=sandbox)
        with self._lock:
            self._submitted = []
        try:
            turn = agent.run_turn(task, emit, cancel, mode=plan_mode_message(usable), options=options)
        finally:
            with self._lock:
                submitted, self._submitted = self._submitted or [], None
        if submitted:
            result = PlanResult(plan=submitted[-1], turn=turn, source="submit_plan")
        elif turn.stop_reason == "done" and (parsed := parse_markdown_plan(turn.final_text)) is not None:
            result = PlanResult(plan=parsed, turn=turn, source="markdown")
            emit(Notice(message="The model answered in text; its plan was read from the markdown checklist."))
        elif turn.stop_reason == "done":
            message = turn.final_text.strip() or "The model ended the planning pass without a plan."
            return PlanResult(plan=None, turn=turn, source="none", message=message)
        else:
            return PlanResult(plan=None, turn=turn, source="none",
                              message=f"Planning stopped ({turn.stop_reason}) before a plan was submitted. "
                                      f"{turn.final_text}".strip())
        assert result.plan is not None
        self.proposed = result.plan.model_copy(deep=True)  # the caller may edit result.plan in place
        record_plan(agent, "proposed", result.plan)
        emit(result.plan.to_event(approved=False))
        return result

    # --------------------------------------------------------------------------- execution
    def execute(self, agent: "Agent", plan: Plan, emit: Emit, cancel: threading.Event, *,
                options: TurnOptions | None = None) -> TurnFinished:
        """Approve ``plan`` (possibly edited by the user) and run it as a normal Act turn.

        The plan is copied with ids renumbered 1..n and becomes ``self.plan`` (its skipped steps
        marked ``skipped_by_user``); it is journaled
        (event ``approved``); the turn's user message is ``execution_prompt(plan)`` (after the
        Act mode message, see ``run_turn``), with the id the ``approved`` record names in its
        ``message_id``. ``PlanUpdated`` is emitted right after ``TurnStarted`` and after each
        change. ``options``: the turn's ``TurnOptions``. Raises ``PlanError`` when the plan has no step.
        """
        from ..messages import new_id

        if not plan.steps:
            raise PlanError("the plan has no steps to carry out.")
        edited = self.proposed is not None and _content(plan) != _content(self.proposed)
        approved = plan.renumbered()
        for step in approved.steps:  # what is skipped at approval, the user skipped
            step.skipped_by_user = step.status == "skipped"
        with self._lock:
            self.plan = approved
            self.proposed = None
        message_id = new_id()
        record_plan(agent, "approved", approved, message_id=message_id)
        return self.run_turn(agent, execution_prompt(approved, edited=edited), emit, cancel, announce=True,
                             message_id=message_id, origin="plan_execution", options=options)

    def run_turn(self, agent: "Agent", prompt: str, emit: Emit, cancel: threading.Event, *,
                 announce: bool = False, message_id: str | None = None,
                 origin: UserOrigin = "user", options: TurnOptions | None = None) -> TurnFinished:
        """Run a normal (Act) turn (``options``: its ``TurnOptions``). When the conversation the model sees last stated Plan mode,
        the user message starts with ``act_mode_message`` (the tools and system prompt never
        change, so the mode is said in the conversation). While a plan is active, edits to
        undeclared files are recorded. ``announce`` emits the plan right after ``TurnStarted``;
        ``message_id`` (optional) is the id given to the turn's user message; ``origin`` says who
        wrote it (``plan_execution``: the instruction to carry out the approved plan)."""
        extra: dict[str, Any] = {"message_id": message_id} if message_id else {}
        if origin != "user":
            extra["origin"] = origin
        if options is not None:
            extra["options"] = options
        if stated_mode(agent.context_view()) == "plan":
            extra["mode"] = act_mode_message()
        if self.plan is None:
            return agent.run_turn(prompt, emit, cancel, **extra)
        ensure_plan_tools(agent, self)
        watcher = _EditWatcher(self, agent, emit, announce)
        self._agent, self._emit = agent, watcher
        try:
            return agent.run_turn(prompt, watcher, cancel, **extra)
        finally:
            self._agent, self._emit = None, None

    def discard(self, agent: "Agent | None" = None) -> None:
        """Drop the proposed and the active plan (the user cancelled); journaled as ``discarded``."""
        had = self.plan is not None or self.proposed is not None
        with self._lock:
            self.plan = None
            self.proposed = None
        if had and agent is not None:
            record_plan(agent, "discarded", None)

    # ----------------------------------------------------------------------------- updates
    def apply_updates(self, updates: list[tuple[int | str, str, str | None]]) -> str:
        """Apply ``(step ref, status, note or None)`` updates to the active plan, all or none.

        Emits ``PlanUpdated`` and journals the plan (event ``updated``). Returns a one-paragraph
        summary for the model (what changed, progress, the next step). Raises ``PlanError`` during
        a planning pass (the new plan goes to ``submit_plan``; the active one is updated only while
        it is carried out), when no plan is active, a step ref is unknown or a status is invalid.
        """
        with self._lock:
            if self._submitted is not None:
                raise PlanError("Plan mode is drafting a new plan: submit it with submit_plan. The steps of an "
                                "approved plan are marked only while carrying it out (Act mode).")
            if self.plan is None:
                raise PlanError("no plan is active: update_plan only works while carrying out an approved plan.")
            plan = self.plan.model_copy(deep=True)
            changed = []
            for ref, status, note in updates:
                if status not in STEP_STATUSES:
                    raise PlanError(f"status must be one of {', '.join(STEP_STATUSES)}, not {status!r}.")
                step = plan.steps[plan.index_of(ref)]
                if step.skipped_by_user and status != "skipped":
                    raise PlanError(f"step {step.id} was skipped by the user, so it stays skipped: only the "
                                    "user can bring it back. Leave it and go on with the other steps.")
                step.status = status  # type: ignore[assignment]
                if note is not None and note.strip():
                    step.note = one_line(note)
                changed.append(f"step {step.id} -> {status}")
            self.plan = plan
        self._publish(plan, "updated")
        return f"Updated: {', '.join(changed)}. {_progress_text(plan)}"

    def note_edit(self, path: str) -> None:
        """Record that the agent changed ``path``; when no step declares it, add it to
        ``undeclared_files``, journal and emit the plan. No-op without an active plan."""
        rel = normalize_path(path, self.workspace)
        with self._lock:
            plan = self.plan
            if plan is None or not rel or plan.declares(rel) or rel in plan.undeclared_files:
                return
            plan = plan.model_copy(deep=True)
            plan.undeclared_files.append(rel)
            self.plan = plan
        self._publish(plan, "undeclared_file")

    def _publish(self, plan: Plan, event: str) -> None:
        if self._agent is not None:
            record_plan(self._agent, event, plan)
        if self._emit is not None:
            self._emit(plan.to_event())


class _EditWatcher:
    """Wraps a turn's ``emit``: passes every event on, announces the plan after ``TurnStarted``,
    and reports successful mutating-tool calls with a ``path`` argument to ``note_edit``."""

    def __init__(self, controller: PlanController, agent: "Agent", emit: Emit, announce: bool) -> None:
        self.controller = controller
        self.agent = agent
        self.emit = emit
        self.announce = announce
        self._paths: dict[str, str] = {}

    def __call__(self, event: AgentEvent) -> None:
        self.emit(event)
        if self.announce and event.type == "turn_started":
            self.announce = False
            if self.controller.plan is not None:
                self.emit(self.controller.plan.to_event())
        elif isinstance(event, ToolCallStarted):
            tool = self.agent.registry.get(event.name)
            args = event.arguments
            if tool is not None and tool.capability == Capability.MUTATING and isinstance(args, dict) \
                    and isinstance(args.get("path"), str):
                self._paths[event.id] = args["path"]
        elif isinstance(event, ToolCallFinished):
            path = self._paths.pop(event.id, None)
            if path is not None and not event.is_error:
                self.controller.note_edit(path)


def ensure_plan_tools(agent: "Agent", controller: PlanController) -> None:
    """Register the plan tools bound to ``controller`` on ``agent`` unless they are there.

    The runtime registers them when it builds the agent, so this is a no-op there (the tool list
    stays the session's); it matters for an agent built with another tool set (the embedded
    model's read-only tools, tests), whose list then grows once. Tools of that name bound to
    another controller are replaced."""
    from ..tools.registry import ToolRegistry

    submit = agent.registry.get("submit_plan")
    update = agent.registry.get("update_plan")
    if getattr(getattr(submit, "on_submit", None), "__self__", None) is controller \
            and getattr(update, "controller", None) is controller:
        return
    previous = agent.registry
    kept = [t for t in previous.tools() if t.name not in PLAN_TOOL_NAMES and t not in previous._source_tools()]
    agent.registry = ToolRegistry(kept + controller.tools())
    if previous.source is not None:  # the MCP servers' tools stay a source (they come and go)
        agent.registry.attach_source(previous.source)


def _content(plan: Plan) -> list[Any]:
    """What a user edit can change (ids and statuses aside from skipping are bookkeeping)."""
    return [plan.title, [(s.description, s.files, s.rationale, s.status) for s in plan.steps],
            plan.risks, plan.assumptions]


def _progress_text(plan: Plan) -> str:
    done, skipped, total = plan.progress()
    text = f"Progress: {done} of {total} done" + (f", {skipped} skipped" if skipped else "") + "."
    nxt = next((s for s in plan.steps if s.status in ("in_progress", "pending")), None)
    if nxt is None:
        return text + " Every step is done or skipped."
    return text + f" Next: step {nxt.id} ({one_line(nxt.description)[:80]})."
