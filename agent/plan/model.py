"""The plan as data: ``Plan`` (title, numbered ``PlanStep`` items with files, rationale and status,
risks, assumptions, undeclared files), its size bounds and its markdown form.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from ..events import PlanStepState, PlanUpdated


StepStatus = Literal["pending", "in_progress", "done", "skipped"]
STEP_STATUSES: tuple[str, ...] = ("pending", "in_progress", "done", "skipped")
#: How many steps a submitted plan must have (the user may edit it beyond these bounds).
MIN_STEPS = 3
MAX_STEPS = 10
#: Names of the plan tools, registered for the whole session (``plan_tools``).
PLAN_TOOL_NAMES = ("submit_plan", "update_plan")


class PlanError(ValueError):
    """A plan, or a change to it, that cannot be accepted. The message is written for the model
    (or the user) and says what to do instead."""


# ===================================================================================== the plan
class PlanStep(BaseModel):
    """One step of a plan.

    - ``id``: stable identifier (``"1"``, ``"2"``, ...; assigned when empty; renumbered on approval).
    - ``description``: the concrete change, one or two sentences.
    - ``files``: paths the step creates or changes, relative to the workspace (may be empty).
    - ``rationale``: why the step is needed.
    - ``status``: pending, in_progress, done or skipped.
    - ``note``: a short note from the agent (what it did, why it skipped).
    - ``skipped_by_user``: the user skipped the step before approving the plan; only the user
      can bring it back (``update_plan`` refuses to change it).
    """

    id: str = ""
    description: str
    files: list[str] = Field(default_factory=list)
    rationale: str = ""
    status: StepStatus = "pending"
    note: str = ""
    skipped_by_user: bool = False


class Plan(BaseModel):
    """A plan as data: a title, ordered steps, risks, unverified assumptions.

    The model is mutable so a UI can edit it in place (change text, add, delete, reorder, mark a
    step skipped) and hand it back; steps added with an empty ``id`` get one on validation and all
    ids are renumbered on approval (``renumbered``). Size limits (3 to 10 steps) apply to what the
    model submits (``check_size``), not to the user's edits. ``undeclared_files`` lists files the
    agent changed during execution that no step declared.
    """

    title: str = "Plan"
    steps: list[PlanStep]
    risks: list[str] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)
    undeclared_files: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _assign_ids(self) -> "Plan":
        used = {s.id for s in self.steps if s.id}
        counter = 0
        seen: set[str] = set()
        for step in self.steps:
            if not step.id or step.id in seen:
                counter += 1
                while str(counter) in used or str(counter) in seen:
                    counter += 1
                step.id = str(counter)
            seen.add(step.id)
        return self

    # ----------------------------------------------------------------------------- checks
    def check_size(self) -> None:
        """Raise ``PlanError`` unless the plan has 3 to 10 steps, each with a description."""
        n = len(self.steps)
        if n < MIN_STEPS:
            raise PlanError(f"a plan needs {MIN_STEPS} to {MAX_STEPS} steps; this one has {n}. Split the work "
                            "into smaller steps (one concrete change each) and submit the plan again.")
        if n > MAX_STEPS:
            raise PlanError(f"a plan needs {MIN_STEPS} to {MAX_STEPS} steps; this one has {n}. Merge related "
                            "steps (one step may touch several files) and submit the plan again.")
        for number, step in enumerate(self.steps, start=1):
            if not step.description.strip():
                raise PlanError(f"step {number} has an empty description; say what the step changes.")

    # ------------------------------------------------------------------------- derived copies
    def renumbered(self) -> "Plan":
        """Return a deep copy whose step ids are ``"1"`` .. ``"n"`` in the current order."""
        copy = self.model_copy(deep=True)
        for number, step in enumerate(copy.steps, start=1):
            step.id = str(number)
        return copy

    def index_of(self, ref: int | str) -> int:
        """Return the index of the step named by ``ref``: its id, else its 1-based number.

        ``"step 2"`` and ``"#2"`` are accepted. Raises ``PlanError`` naming the valid ids.
        """
        text = str(ref).strip()
        text = re.sub(r"^(?:step\s*|#)", "", text, flags=re.IGNORECASE).strip()
        for index, step in enumerate(self.steps):
            if step.id == text:
                return index
        if text.isdigit() and 1 <= int(text) <= len(self.steps):
            return int(text) - 1
        ids = ", ".join(s.id for s in self.steps)
        raise PlanError(f"there is no step {str(ref)!r}; the plan's steps are: {ids}.")

    def progress(self) -> tuple[int, int, int]:
        """Return ``(done, skipped, total)`` step counts."""
        done = sum(s.status == "done" for s in self.steps)
        skipped = sum(s.status == "skipped" for s in self.steps)
        return done, skipped, len(self.steps)

    @property
    def finished(self) -> bool:
        """True when every step is done or skipped."""
        return all(s.status in ("done", "skipped") for s in self.steps)

    def declared_files(self) -> list[str]:
        """Every file any step declares, normalised, in order, without duplicates."""
        out: dict[str, None] = {}
        for step in self.steps:
            for raw in step.files:
                path = normalize_path(raw)
                if path:
                    out[path] = None
        return list(out)

    def declares(self, path: str) -> bool:
        """True when some step declares ``path`` (workspace-relative, posix).

        A declared entry matches the same path, a folder prefix (``src/`` or ``src``), a glob
        (``tests/*.py``), or, when it has no folder part, the same file name anywhere.
        """
        target = normalize_path(path)
        if not target:
            return True
        for declared in self.declared_files():
            if declared == target or target.startswith(declared.rstrip("/") + "/"):
                return True
            if any(c in declared for c in "*?[") and fnmatch.fnmatch(target, declared):
                return True
            if "/" not in declared and PurePosixPath(target).name == declared:
                return True
        return False

    # ---------------------------------------------------------------------------- rendering
    def step_states(self) -> list[PlanStepState]:
        """The steps as event data (``text`` is the description)."""
        return [PlanStepState(id=s.id, text=s.description, status=s.status, note=s.note, files=list(s.files))
                for s in self.steps]

    def to_event(self, *, approved: bool = True) -> PlanUpdated:
        """Return the ``PlanUpdated`` event describing this plan (``approved`` false while proposed)."""
        return PlanUpdated(steps=self.step_states(), title=self.title, approved=approved,
                           undeclared_files=list(self.undeclared_files))

    def to_markdown(self) -> str:
        """Return the plan as a markdown checklist (what the model and headless output see).

        Format: ``# title``; numbered steps ``1. [ ] description`` with ``Files:``, ``Why:`` and
        ``Note:`` lines (checkbox ``[ ]`` pending, ``[~]`` in progress, ``[x]`` done, ``[-]``
        skipped); then ``## Risks``, ``## Assumptions (unverified)`` and, when any, ``## Files changed
        outside the plan``. ``parse_markdown_plan`` reads it back.
        """
        lines = [f"# {self.title.strip() or 'Plan'}", ""]
        for number, step in enumerate(self.steps, start=1):
            lines.append(f"{number}. [{_BOX[step.status]}] {one_line(step.description)}")
            if step.files:
                lines.append("   Files: " + ", ".join(f"`{f}`" for f in step.files))
            if step.rationale.strip():
                lines.append(f"   Why: {one_line(step.rationale)}")
            if step.note.strip():
                lines.append(f"   Note: {one_line(step.note)}")
        for heading, items in (("Risks", self.risks), ("Assumptions (unverified)", self.assumptions),
                               ("Files changed outside the plan", self.undeclared_files)):
            if items:
                lines += ["", f"## {heading}"] + [f"- {one_line(item)}" for item in items]
        return "\n".join(lines) + "\n"


_BOX = {"pending": " ", "in_progress": "~", "done": "x", "skipped": "-"}


def one_line(text: str) -> str:
    return " ".join(text.split())


def normalize_path(raw: str, workspace: Path | None = None) -> str:
    """Return ``raw`` as a workspace-relative posix path: backticks, quotes, ``./`` and a trailing
    line reference (``:12``, ``:12-30``, ``#L5``) removed; an absolute path inside ``workspace``
    made relative. Returns ``""`` for an empty entry."""
    text = raw.strip().strip("`'\"").strip()
    text = re.sub(r"(?::\d+(?:-\d+)?|#L\d+(?:-L?\d+)?)$", "", text)
    if workspace is not None and text.startswith("/"):
        try:
            text = Path(text).resolve().relative_to(Path(workspace).resolve()).as_posix()
        except (ValueError, OSError):
            pass
    while text.startswith("./"):
        text = text[2:]
    return text
