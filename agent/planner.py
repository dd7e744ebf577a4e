"""Plan mode: the plan as data, the read-only planning pass, and the execution context.

Plan mode sits above the ReAct loop (DESIGN.md 4, issue 4):

One prompt prefix for both modes (DESIGN.md 4): the system prompt and the tool list are the same
in Plan and Act mode for the whole session, so switching modes keeps the provider's prompt cache.
``submit_plan`` and ``update_plan`` are always registered and offered (``plan_tools``; they answer
with an error outside a planning pass / without an active plan), and the mode and its rules are
stated in a **mode message** (``messages.ModeMessage``) at the start of the turn's user message:
``plan_mode_message`` for a planning pass, ``act_mode_message`` for the first Act turn after one.
It rides in the user message, not in a message of its own, so history never holds two user
messages in a row; it is a field of the message record, so the user's own text (what the UI
shows and compaction pins) stays apart.

1. **Planning pass** (``PlanController.plan_pass``): one turn of the normal loop whose user
   message starts with the Plan mode message (explore, then ``submit_plan``). Every tool is
   offered; the loop refuses every call that is not read-capability
   (``LoopConfig.allowed_capabilities``), so nothing in the workspace can change. The turn ends as
   soon as ``submit_plan`` succeeds; a model that answers in text instead has its markdown
   checklist parsed (``parse_markdown_plan``).
2. **Approval** happens outside (the TUI's modal, or ``--yes`` headless); the plan is a pydantic
   ``Plan`` the UI may edit and hand back.
3. **Execution** (``PlanController.execute``): a normal Act turn whose user message carries the
   approved plan verbatim as a checklist (after the Act mode message); the agent marks steps in
   progress / done / skipped with ``update_plan``. Each change emits ``PlanUpdated``; an edit to a
   file no step declared is recorded in ``Plan.undeclared_files``.

Every change of the plan is journaled as ``{"kind": "plan", "event": ..., "plan": {...}}`` so a
resumed or compacted session can re-inject it verbatim (``plan_from_journal``). The ``approved``
record also carries ``message_id``, the id of the user message that follows it (the
``execution_prompt``), so a resumed UI can show that message as the short
``approved_notice`` line, as the live UI did, rather than the instruction text
(``plan_prompts_from_journal``; older journals lack the field and are matched by position).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Literal

from pydantic import BaseModel, Field, model_validator

from .events import (
    AgentEvent, Emit, Notice, PlanStepState, PlanUpdated, ToolCallFinished, ToolCallStarted, TurnFinished,
)
from .messages import ModeMessage, UserOrigin
from .tools.base import Capability

if TYPE_CHECKING:  # pragma: no cover - typing only
    from .loop.agent import Agent
    from .tools.base import Tool

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
    """

    id: str = ""
    description: str
    files: list[str] = Field(default_factory=list)
    rationale: str = ""
    status: StepStatus = "pending"
    note: str = ""


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
            lines.append(f"{number}. [{_BOX[step.status]}] {_one_line(step.description)}")
            if step.files:
                lines.append("   Files: " + ", ".join(f"`{f}`" for f in step.files))
            if step.rationale.strip():
                lines.append(f"   Why: {_one_line(step.rationale)}")
            if step.note.strip():
                lines.append(f"   Note: {_one_line(step.note)}")
        for heading, items in (("Risks", self.risks), ("Assumptions (unverified)", self.assumptions),
                               ("Files changed outside the plan", self.undeclared_files)):
            if items:
                lines += ["", f"## {heading}"] + [f"- {_one_line(item)}" for item in items]
        return "\n".join(lines) + "\n"


_BOX = {"pending": " ", "in_progress": "~", "done": "x", "skipped": "-"}
_BOX_STATUS = {" ": "pending", "": "pending", "x": "done", "X": "done", "~": "in_progress", ">": "in_progress",
               "/": "in_progress", "-": "skipped"}


def _one_line(text: str) -> str:
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


# ============================================================================ markdown fallback
_HEADING = re.compile(r"^\s{0,3}(?P<level>#{1,6})\s+(?P<text>.*?)\s*#*\s*$")
_LABEL = re.compile(r"^\s{0,3}(?:\*\*|__)?(?P<key>[A-Za-z][A-Za-z ()]{1,40}?)(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*"
                    r"(?P<value>.*)$")
_ITEM = re.compile(r"^(?P<indent>\s*)(?P<marker>\d{1,2}[.)]|[-*+])\s+(?:\[(?P<box>[ xX~>/-])\]\s*)?(?P<text>.*)$")
_FIELD = re.compile(r"^(?:[-*+]\s+)?(?:\*\*|__|\*|_)?(?P<key>files?|paths?|why|rationale|reason|note)"
                    r"(?:\*\*|__|\*|_)?\s*:\s*(?:\*\*|__)?\s*(?P<value>.*)$", re.IGNORECASE)
_INLINE_FILES = re.compile(r"\s*[(\[]?\s*(?:files?|paths?)\s*:\s*(?P<files>[^)\]]+?)\s*[)\]]?\s*$", re.IGNORECASE)
_INLINE_WHY = re.compile(r"\s*(?:[—–-]+|;|\.)?\s*(?:\*\*|_)?(?:why|rationale|because)(?:\*\*|_)?\s*:\s*(?P<why>.+)$",
                         re.IGNORECASE)
_BACKTICKED = re.compile(r"`([^`\s]+)`")
_PATHLIKE = re.compile(r"(?:/|\.[A-Za-z0-9]{1,8}$)")
_STEP_SECTION_WORDS = ("step", "plan", "task", "todo", "checklist", "change")


def _section_for(heading: str) -> str:
    """The section a heading or label opens: risks, assumptions, undeclared (short headings naming
    them) or steps (anything else)."""
    low = heading.lower()
    if len(low.split()) > 5:
        return "steps"
    if "risk" in low:
        return "risks"
    if "assumption" in low:
        return "assumptions"
    if "outside the plan" in low or "undeclared" in low:
        return "undeclared"
    return "steps"


def _clean(text: str) -> str:
    text = text.strip()
    text = re.sub(r"^(\*\*|__)(.+?)\1", r"\2", text)
    return _one_line(text)


def _split_files(value: str) -> list[str]:
    parts = re.split(r",|;|\s+and\s+|\s{2,}", value)
    out = []
    for part in parts:
        path = normalize_path(part)
        if path and path.lower() not in ("none", "n/a", "-", "(none)"):
            out.append(path)
    return out


@dataclass
class _Entry:
    indent: int
    strong: bool  # numbered or checkbox item
    status: str
    text: str
    files: list[str] = dataclasses.field(default_factory=list)
    why: list[str] = dataclasses.field(default_factory=list)
    note: str = ""
    details: list[str] = dataclasses.field(default_factory=list)


def parse_markdown_plan(text: str) -> Plan | None:
    """Read a plan from free text: the fallback when the model answers with a markdown checklist
    instead of calling ``submit_plan``.

    Understood: a title (the first heading that is not a section name, or a ``Title:`` line,
    ``Plan:`` prefix dropped); steps as numbered or checkbox items (plain bullets only when there are
    none), with ``Files:`` / ``Why:`` / ``Note:`` lines or nested bullets under them, inline
    ``(files: a.py, b.py)`` and backticked paths; ``Risks`` and ``Assumptions`` sections (headings,
    bold or ``Label:`` lines). Checkboxes give the status (``[x]`` done, ``[~]`` in progress, ``[-]``
    skipped). Returns ``None`` when no step is found. Never raises.
    """
    title = ""
    section = "none"
    entries: list[_Entry] = []
    lists: dict[str, list[str]] = {"risks": [], "assumptions": [], "undeclared": []}
    current: _Entry | None = None
    in_fence = False
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.strip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence or not line.strip():
            continue
        heading = _HEADING.match(line)
        if heading:
            head = _clean(heading.group("text"))
            kind = _section_for(head)
            low = head.lower().rstrip(":")
            top = not title and not entries and low not in _STEP_SECTION_WORDS + ("steps",)
            if top and (kind == "steps" or len(heading.group("level")) == 1):
                title = re.sub(r"^(?:implementation\s+)?plan\s*[:\-–—]\s*", "", head, flags=re.IGNORECASE)
                kind = "steps"
            section, current = kind, None
            continue
        item = _ITEM.match(line)
        field = _FIELD.match(line.strip())
        if current is not None and field and (item is None or len(item.group("indent")) > current.indent
                                              or item.group("marker") in "-*+"):
            _add_field(current, field.group("key").lower(), field.group("value"))
            continue
        if item is None:
            label = _LABEL.match(line)
            if label and len(line) - len(line.lstrip()) < 2:
                key = label.group("key").strip().lower()
                value = _clean(label.group("value"))
                if key == "title" and not title:
                    title = value
                    continue
                if any(word in key for word in ("risk", "assumption")) or key in _STEP_SECTION_WORDS + ("steps",):
                    section, current = _section_for(key), None
                    if value and section in lists and value.lower() not in ("none", "n/a"):
                        lists[section].append(value)
                    continue
            if current is not None and line[:1].isspace():
                current.details.append(_clean(line))
            else:
                current = None
            continue
        indent = len(item.group("indent").expandtabs(4))
        body = _clean(item.group("text"))
        if section in lists:
            if body:
                lists[section].append(body)
            continue
        if current is not None and indent > current.indent:
            current.details.append(body)
            continue
        strong = item.group("marker")[0].isdigit() or item.group("box") is not None
        current = _Entry(indent=indent, strong=strong, status=_BOX_STATUS.get(item.group("box") or "", "pending"),
                         text=body)
        entries.append(current)
    chosen = [e for e in entries if e.strong] or entries
    steps = [_entry_to_step(e) for e in chosen]
    steps = [s for s in steps if s.description]
    if not steps:
        return None
    return Plan(title=title or "Plan", steps=steps, risks=lists["risks"], assumptions=lists["assumptions"],
                undeclared_files=[normalize_path(p) for p in lists["undeclared"]])


def _add_field(entry: _Entry, key: str, value: str) -> None:
    if key.startswith(("file", "path")):
        entry.files += _split_files(value)
    elif key == "note":
        entry.note = _clean(value)
    else:
        entry.why.append(_clean(value))


def _entry_to_step(entry: _Entry) -> PlanStep:
    text = entry.text
    files = list(entry.files)
    why = list(entry.why)
    inline_why = _INLINE_WHY.search(text)
    if inline_why:
        why.insert(0, _clean(inline_why.group("why")))
        text = text[: inline_why.start()]
    inline_files = _INLINE_FILES.search(text)
    if inline_files:
        files += _split_files(inline_files.group("files"))
        text = text[: inline_files.start()]
    text = text.strip().rstrip(" -—–:")
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text)
    details = []
    for detail in entry.details:
        found = [p for p in _BACKTICKED.findall(detail) if _PATHLIKE.search(p)]
        if found and not entry.files:
            files += [normalize_path(p) for p in found]
        details.append(detail)
    if not files:
        files = [normalize_path(p) for p in _BACKTICKED.findall(text) if _PATHLIKE.search(p)]
    rationale = " ".join(why) or " ".join(details)
    return PlanStep(description=_one_line(text), files=list(dict.fromkeys(files)), rationale=rationale,
                    status=entry.status, note=entry.note)  # type: ignore[arg-type]


# ============================================================================= mode messages
PLAN_MODE_MESSAGE = """\
<mode>
# Plan mode
The user wants a plan before anything changes. You are in Plan mode: the workspace is read-only.
Only these tools run: {tools}. Any other call is refused.
1. Explore first: find and read the code the task involves. Do not guess what files contain.{think}
2. Then call submit_plan once, with: a short title; {min_steps} to {max_steps} steps in order, each one
   concrete change with its description, the files it creates or changes (paths relative to the
   working directory) and a one-line rationale; the risks; and the assumptions you could not verify.
3. Stop after submit_plan. The user reviews the plan and approves, edits or rejects it; do not
   start the work. If you cannot call submit_plan, answer with the plan as a markdown numbered
   list (a `Files:` and a `Why:` line under each step) followed by `## Risks` and `## Assumptions`.
</mode>"""

ACT_MODE_MESSAGE = """\
<mode>
# Act mode
Plan mode is over: every tool may be used again, as the permission mode allows. submit_plan works
only in Plan mode.
</mode>"""

EXECUTION_PROMPT = """\
The user approved the plan below{edited}. Carry it out now, step by step.

{plan}
Track progress with update_plan: mark a step in_progress when you start it and done when it is
finished, with a short note on what you did; mark it skipped, with a note saying why, if it turns
out to be unnecessary. Steps already marked skipped were skipped by the user: do not do them.
Keep to the files each step lists; if you must change another file, say why."""


def plan_mode_message(tool_names: Iterable[str]) -> ModeMessage:
    """Return the mode message of a planning pass that may use ``tool_names`` (the read-capability
    tools, in registration order): ``PLAN_MODE_MESSAGE`` filled in (the think hint only when
    ``think`` is among them)."""
    names = list(tool_names)
    think = " Use think to weigh options; it changes nothing." if "think" in names else ""
    return ModeMessage(mode="plan", text=PLAN_MODE_MESSAGE.format(tools=", ".join(names), think=think,
                                                                  min_steps=MIN_STEPS, max_steps=MAX_STEPS))


def act_mode_message() -> ModeMessage:
    """Return the mode message of the first Act turn after Plan mode (``ACT_MODE_MESSAGE``)."""
    return ModeMessage(mode="act", text=ACT_MODE_MESSAGE)


def stated_mode(messages: Iterable[Any]) -> str | None:
    """Return the mode the last mode message among ``messages`` states (``"plan"`` or ``"act"``),
    or ``None`` when none does (a conversation that never entered Plan mode; Act is the default
    the system prompt describes)."""
    last = None
    for message in messages:
        mode = getattr(message, "mode", None)
        if isinstance(mode, ModeMessage):
            last = mode.mode
    return last


def execution_prompt(plan: Plan, *, edited: bool = False) -> str:
    """Return the user message that starts executing ``plan`` (its markdown checklist verbatim)."""
    return EXECUTION_PROMPT.format(plan=plan.to_markdown(), edited=" (they edited it)" if edited else "")


def approved_notice(plan: Plan) -> str:
    """Return the one line a UI shows where the user approved ``plan`` (instead of the
    ``execution_prompt`` sent to the model): ``Plan approved: TITLE (N steps). Carrying it out;
    the sidebar shows progress.``"""
    count = len(plan.steps)
    return (f"Plan approved: {plan.title} ({count} step{'' if count == 1 else 's'}). Carrying it out; "
            "the sidebar shows progress.")


# ============================================================================ pass and execution
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
        capability; see agent/tools/plan_tools.py)."""
        from .tools.plan_tools import SubmitPlanTool, UpdatePlanTool

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
    def plan_pass(self, agent: "Agent", task: str, emit: Emit, cancel: threading.Event) -> PlanResult:
        """Run the read-only planning pass for ``task`` on ``agent`` (its history and journal).

        The request keeps the session's system prompt and tool list (every tool offered); the
        turn's user message starts with ``plan_mode_message`` naming the read-capability tools,
        and the loop refuses any other call by capability (``LoopConfig.allowed_capabilities``).
        Ends when ``submit_plan`` succeeds or the model answers in text (then the markdown
        fallback is tried). When a plan results it is stored as ``proposed``, journaled (event
        ``proposed``) and emitted as ``PlanUpdated(approved=False)`` after the turn's
        ``TurnFinished``. Never raises for model or tool failures.
        """
        ensure_plan_tools(agent, self)
        read_only = frozenset({Capability.READ})
        usable = [t.name for t in agent.registry.tools() if t.capability in read_only and t.name != "update_plan"]
        config = dataclasses.replace(agent.config, allowed_capabilities=read_only, restricted_mode_name="Plan mode")
        with self._lock:
            self._submitted = []
        try:
            with _turn_setup(agent, config=config):
                turn = agent.run_turn(task, emit, cancel, mode=plan_mode_message(usable))
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
        _journal(agent, "proposed", result.plan)
        emit(result.plan.to_event(approved=False))
        return result

    # --------------------------------------------------------------------------- execution
    def execute(self, agent: "Agent", plan: Plan, emit: Emit, cancel: threading.Event) -> TurnFinished:
        """Approve ``plan`` (possibly edited by the user) and run it as a normal Act turn.

        The plan is copied with ids renumbered 1..n and becomes ``self.plan``; it is journaled
        (event ``approved``); the turn's user message is ``execution_prompt(plan)`` (after the
        Act mode message, see ``run_turn``), with the id the ``approved`` record names in its
        ``message_id``. ``PlanUpdated`` is emitted right after ``TurnStarted`` and after each
        change. Raises ``PlanError`` when the plan has no step.
        """
        from .messages import new_id

        if not plan.steps:
            raise PlanError("the plan has no steps to carry out.")
        edited = self.proposed is not None and _content(plan) != _content(self.proposed)
        approved = plan.renumbered()
        with self._lock:
            self.plan = approved
            self.proposed = None
        message_id = new_id()
        _journal(agent, "approved", approved, message_id=message_id)
        return self.run_turn(agent, execution_prompt(approved, edited=edited), emit, cancel, announce=True,
                             message_id=message_id, origin="plan_execution")

    def run_turn(self, agent: "Agent", prompt: str, emit: Emit, cancel: threading.Event, *,
                 announce: bool = False, message_id: str | None = None,
                 origin: UserOrigin = "user") -> TurnFinished:
        """Run a normal (Act) turn. When the conversation the model sees last stated Plan mode,
        the user message starts with ``act_mode_message`` (the tools and system prompt never
        change, so the mode is said in the conversation). While a plan is active, edits to
        undeclared files are recorded. ``announce`` emits the plan right after ``TurnStarted``;
        ``message_id`` (optional) is the id given to the turn's user message; ``origin`` says who
        wrote it (``plan_execution``: the instruction to carry out the approved plan)."""
        extra: dict[str, Any] = {"message_id": message_id} if message_id else {}
        if origin != "user":
            extra["origin"] = origin
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
            _journal(agent, "discarded", None)

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
                step.status = status  # type: ignore[assignment]
                if note is not None and note.strip():
                    step.note = _one_line(note)
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
            _journal(self._agent, event, plan)
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
    from .tools.registry import ToolRegistry

    submit = agent.registry.get("submit_plan")
    update = agent.registry.get("update_plan")
    if getattr(getattr(submit, "on_submit", None), "__self__", None) is controller \
            and getattr(update, "controller", None) is controller:
        return
    kept = [t for t in agent.registry.tools() if t.name not in PLAN_TOOL_NAMES]
    agent.registry = ToolRegistry(kept + controller.tools())


@contextmanager
def _turn_setup(agent: "Agent", **attributes: Any) -> Iterator[None]:
    """Temporarily replace attributes of ``agent`` (the loop config of a planning pass) for one turn."""
    saved = {name: getattr(agent, name) for name in attributes}
    for name, value in attributes.items():
        setattr(agent, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(agent, name, value)


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
    return text + f" Next: step {nxt.id} ({_one_line(nxt.description)[:80]})."


def _journal(agent: "Agent", event: str, plan: Plan | None, *, message_id: str | None = None) -> None:
    """Append a ``{"kind": "plan"}`` record to the agent's journal (when it has one); an
    ``approved`` record also names the ``message_id`` of the execution prompt that follows."""
    if agent.journal is not None:
        record: dict[str, Any] = {"kind": "plan", "event": event,
                                  "plan": plan.model_dump(mode="json") if plan is not None else None,
                                  "time": time.time()}
        if message_id:
            record["message_id"] = message_id
        agent.journal.append(record)


def plan_from_journal(records: Iterable[dict[str, Any]]) -> Plan | None:
    """Return the active plan recorded in a session journal (``session.read_journal`` records):
    the last approved/updated plan, or ``None`` when there is none, it was discarded, or the last
    plan record is only a proposal. Invalid plan records are skipped."""
    active: Plan | None = None
    for record in records:
        if record.get("kind") != "plan":
            continue
        event = record.get("event")
        if event == "discarded":
            active = None
        elif event in ("approved", "updated", "undeclared_file") and isinstance(record.get("plan"), dict):
            try:
                active = Plan.model_validate(record["plan"])
            except ValueError:
                continue
    return active


def plan_prompts_from_journal(records: Iterable[dict[str, Any]]) -> dict[str, Plan]:
    """Return ``{user message id: approved Plan}`` for the user messages of a journal (records as
    ``session.read_journal`` yields them) that are the instruction to carry out an approved plan.

    Recognised by the journal, not by the text: an ``approved`` plan record names the message in
    its ``message_id``; an older record without that field claims the next message record when
    it is a user message (the execution turn journals it right after the plan). Invalid plan
    records are skipped."""
    found: dict[str, Plan] = {}
    waiting: Plan | None = None  # an approved record without message_id, before its message
    for record in records:
        kind = record.get("kind")
        if kind == "plan" and record.get("event") == "approved":
            waiting = None
            try:
                plan = Plan.model_validate(record.get("plan"))
            except ValueError:
                continue
            message_id = record.get("message_id")
            if isinstance(message_id, str) and message_id:
                found[message_id] = plan
            else:
                waiting = plan
        elif kind == "message" and waiting is not None:
            message = record.get("message")
            if isinstance(message, dict) and message.get("role") == "user" and isinstance(message.get("id"), str):
                found[message["id"]] = waiting
            waiting = None
    return found
