"""The Plan mode tools: ``submit_plan`` (planning pass) and ``update_plan`` (execution).

Both have the read capability: they change no workspace file, only the session's plan. They are
not part of ``default_tools``: the runtime registers the pair bound to the session's
``PlanController`` (``PlanController.tools()``) for the whole session, in Plan and Act mode alike,
so the tool list never changes with the mode (DESIGN.md 4); each answers with an error when it
does not apply.

- ``submit_plan(title, steps, risks?, assumptions?)``: refused outside a planning pass; validates
  the plan (3 to 10 steps, each with a description, files and a rationale) and hands it to a
  callback; a bad plan is an error result saying what to fix. A successful call ends the turn
  (``metadata["end_turn"]``, read by the loop).
- ``update_plan(step, status, note?)`` or ``update_plan(steps=[{step, status, note?}, ...])``:
  marks steps of the active plan in progress, done or skipped through a ``PlanController``; an
  error without an active plan or during a planning pass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Literal

from pydantic import Field

from .model import MAX_STEPS, MIN_STEPS, Plan, PlanError, PlanStep
from ..tools.base import Capability, Tool, ToolArgs, ToolContext, ToolError, ToolOutput
from ..tools.view import ToolView, one_line

if TYPE_CHECKING:  # pragma: no cover - typing only
    from .controller import PlanController

StatusArg = Literal["pending", "in_progress", "done", "skipped"]


class PlanStepArgs(ToolArgs):
    """One step as the model submits it."""

    description: str = Field(description="The concrete change this step makes, in one or two sentences.")
    files: list[str] = Field(default_factory=list,
                             description="Paths the step creates or changes, relative to the working directory.")
    rationale: str = Field(description="Why this step is needed, in one line.")


class SubmitPlanArgs(ToolArgs):
    """Arguments of ``submit_plan``."""

    title: str = Field(description="A short title for the plan.")
    steps: list[PlanStepArgs] = Field(
        description=f"{MIN_STEPS} to {MAX_STEPS} steps, in the order they should be done.",
        json_schema_extra={"minItems": MIN_STEPS, "maxItems": MAX_STEPS})
    risks: list[str] = Field(default_factory=list, description="What could go wrong or break.")
    assumptions: list[str] = Field(default_factory=list,
                                   description="Things you assumed but could not verify by reading the code.")


class SubmitPlanTool(Tool):
    """Receive the model's plan; ``on_submit(plan)`` is called with each valid ``Plan`` and may
    raise ``PlanError`` to refuse it (no planning pass runs), which the model sees as the error."""

    name = "submit_plan"
    description = (
        "Submit your plan for the user's review, after exploring the code. Give a title, "
        f"{MIN_STEPS} to {MAX_STEPS} ordered steps (each: description, files it touches, rationale), the risks, "
        "and the assumptions you could not verify. The user will approve, edit or reject it; stop after calling."
    )
    Args = SubmitPlanArgs
    capability = Capability.READ

    def __init__(self, on_submit: Callable[[Plan], None]) -> None:
        self.on_submit = on_submit

    def preview(self, args: SubmitPlanArgs, ctx: ToolContext) -> str:
        """Return the title and the step count."""
        return f"{args.title} ({len(args.steps)} steps)"


    def describe(self, args: SubmitPlanArgs) -> ToolView:
        """The plan's title and step count."""
        count = len(args.steps)
        return ToolView(title=self.name, summary=f"{one_line(args.title)} · {count} step{'s' if count != 1 else ''}",
                        body="plan")

    def run(self, args: SubmitPlanArgs, ctx: ToolContext) -> ToolOutput:
        """Validate and hand over the plan. Raises ``ToolError`` (an error result the model sees)
        for a title-less plan, fewer than 3 or more than 10 steps, an empty description, or when
        ``on_submit`` refuses it (``PlanError``: no planning pass runs)."""
        if not args.title.strip():
            raise ToolError("submit_plan needs a title: a few words naming the change.")
        plan = Plan(
            title=" ".join(args.title.split()),
            steps=[PlanStep(description=" ".join(s.description.split()),
                            files=[f.strip() for f in s.files if f.strip()],
                            rationale=" ".join(s.rationale.split())) for s in args.steps],
            risks=[r.strip() for r in args.risks if r.strip()],
            assumptions=[a.strip() for a in args.assumptions if a.strip()],
        )
        try:
            plan.check_size()
        except PlanError as exc:
            raise ToolError(f"submit_plan: {exc}") from None
        try:
            self.on_submit(plan)
        except PlanError as exc:
            raise ToolError(f"submit_plan: {exc}") from None
        return ToolOutput(
            text=f"Plan submitted: {plan.title!r}, {len(plan.steps)} steps. The user will review it now; "
                 "do not start the work.",
            metadata={"end_turn": True, "steps": len(plan.steps)})


class StepUpdateArgs(ToolArgs):
    """One step update."""

    step: int | str = Field(description="The step's id as shown in the plan (its number).")
    status: StatusArg = Field(description="pending, in_progress, done or skipped.")
    note: str | None = Field(None, description="A short note: what you did, or why you skipped it.")


class UpdatePlanArgs(ToolArgs):
    """Arguments of ``update_plan``: one step (``step``, ``status``, ``note``) or several (``steps``)."""

    step: int | str | None = Field(None, description="The step's id as shown in the plan (its number).")
    status: StatusArg | None = Field(None, description="pending, in_progress, done or skipped.")
    note: str | None = Field(None, description="A short note: what you did, or why you skipped it.")
    steps: list[StepUpdateArgs] | None = Field(
        None, description="Several updates at once, each {step, status, note}; instead of step/status.")


class UpdatePlanTool(Tool):
    """Mark steps of the active plan; bound to a ``PlanController``."""

    name = "update_plan"
    description = (
        "Mark progress on the approved plan: set a step in_progress when you start it, done when it is "
        "finished (with a short note), or skipped (with the reason). Changes no file."
    )
    Args = UpdatePlanArgs
    capability = Capability.READ

    def __init__(self, controller: "PlanController") -> None:
        self.controller = controller

    def preview(self, args: UpdatePlanArgs, ctx: ToolContext) -> str:
        """Return e.g. ``step 2 -> done``."""
        return "; ".join(f"step {ref} -> {status}" for ref, status, _ in _updates(args))


    def describe(self, args: UpdatePlanArgs) -> ToolView:
        """The updates: ``step 2 → done``, several joined by ``; ``."""
        try:
            updates = _updates(args)
        except ToolError:
            updates = []
        summary = "; ".join(f"step {ref} → {status}" for ref, status, _ in updates)
        return ToolView(title=self.name, summary=summary, body="plan")

    def run(self, args: UpdatePlanArgs, ctx: ToolContext) -> ToolOutput:
        """Apply the updates (all or none). Raises ``ToolError`` when neither ``step``/``status``
        nor ``steps`` is given, no plan is active, or a step is unknown."""
        updates = _updates(args)
        if not updates:
            raise ToolError("update_plan needs step and status (e.g. {\"step\": 2, \"status\": \"done\"}), "
                            "or steps: a list of such objects.")
        try:
            return ToolOutput(text=self.controller.apply_updates(updates))
        except PlanError as exc:
            raise ToolError(f"update_plan: {exc}") from None


def _updates(args: UpdatePlanArgs) -> list[tuple[int | str, str, str | None]]:
    out: list[tuple[int | str, str, str | None]] = []
    if args.step is not None or args.status is not None:
        if args.step is None or args.status is None:
            raise ToolError("update_plan needs both step and status.")
        out.append((args.step, args.status, args.note))
    for item in args.steps or []:
        out.append((item.step, item.status, item.note))
    return out
