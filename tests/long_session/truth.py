"""The ground truth of a run: what must be pinned in a given main request.

``pins_at(run, index)`` lists the ``Pin`` items the *script* (not the code under test) says must
be present verbatim in main request ``index``: the original task, every later user instruction,
the current plan with each step's state (in the checklist notation of the plan's markdown,
``[ ]`` pending, ``[~]`` in progress, ``[x]`` done, ``[-]`` skipped), the files changed so far
(by the tools and by bash), the last unresolved error per test command, the final test state.
A fact becomes visible in the request after the step that created it; a segment's prompt in the
segment's first request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .runner import SessionRun
from .script import PytestRun


@dataclass(frozen=True)
class Pin:
    """A fact that must survive compaction: ``kind`` (task, instruction, plan_step, files_changed,
    unresolved_error, final_test_state), a ``label`` for tables, and the ``needles`` that must all
    occur verbatim (a needle starting with a digit must not follow a digit: "2 failed" is not
    found in "12 failed")."""

    kind: str
    label: str
    needles: tuple[str, ...]


def contains(text: str, needle: str) -> bool:
    """``needle`` in ``text``; one that starts with a digit must not follow a digit."""
    if needle[:1].isdigit():
        return re.search(r"(?<!\d)" + re.escape(needle), text) is not None
    return needle in text


def _facts(run: SessionRun) -> list[tuple[int, str, Any]]:
    """``(visible_from_main_index, kind, value)`` for every scripted fact that happened."""
    facts: list[tuple[int, str, Any]] = []
    first_prompt = True
    for seg_run in run.segments:
        seg = seg_run.segment
        if seg.kind in ("reopen", "compact"):
            continue
        start = seg_run.first_index
        if seg.prompt and seg.instruction:
            facts.append((start, "task" if first_prompt else "instruction", seg.prompt))
            first_prompt = False
        if seg.plan is not None:
            facts.append((start, "plan", seg.plan))
        consumed = len(seg.steps) - seg_run.unused_replies
        for j, step in enumerate(seg.steps[:consumed]):
            visible = start + j + 1
            for path in step.changed:
                facts.append((visible, "changed", path))
            for test in step.test_runs:
                facts.append((visible, "test", test))
            if step.plan is not None:
                facts.append((visible, "plan", step.plan))
    return sorted(facts, key=lambda f: f[0])


def unresolved_label(command: str) -> str:
    """The pin label of the unresolved error of a test ``command`` (the interpreter path dropped)."""
    return f"unresolved: {command.split(' -m ', 1)[-1][:60]}"


def pins_at(run: SessionRun, index: int) -> list[Pin]:
    """The pinned items the ground truth requires in main request ``index``.

    Test state follows each test's latest result: a command's last run is an unresolved error
    while some test that failed in it has not passed in any later run (a passing subset run
    resolves only the tests it ran). The final test state is the latest run of the widest
    command seen so far, with its counts.
    """
    pins: list[Pin] = []
    plan = None
    changed: list[str] = []
    last_run: dict[str, tuple[int, PytestRun]] = {}
    passed_after: dict[str, int] = {}  # test name -> order of its latest passing run
    widest: PytestRun | None = None
    order = 0
    for visible, kind, value in _facts(run):
        if visible > index:
            break
        if kind == "task":
            pins.append(Pin("task", "original task", (value,)))
        elif kind == "instruction":
            pins.append(Pin("instruction", f"instruction: {value[:48]}", (value,)))
        elif kind == "plan":
            plan = value
        elif kind == "changed" and value not in changed:
            changed.append(value)
        elif kind == "test":
            order += 1
            last_run[value.command] = (order, value)
            for name in value.covers - set(value.failed):
                passed_after[name] = order
            if widest is None or len(value.covers) >= len(widest.covers):
                widest = value
    if plan is not None:
        box = {"pending": " ", "in_progress": "~", "done": "x", "skipped": "-"}
        for number, (description, status) in enumerate(plan, start=1):
            pins.append(Pin("plan_step", f"plan step {number} with its current state", (f"[{box[status]}] {description}",)))
    for path in changed:
        pins.append(Pin("files_changed", f"changed: {path}", (path,)))
    for command, (when, test) in last_run.items():
        open_failures = [name for name in test.failed if passed_after.get(name, 0) <= when]
        if open_failures:
            pins.append(Pin("unresolved_error", unresolved_label(command), (f"{len(test.failed)} failed", open_failures[0])))
    if widest is not None:
        pins.append(Pin("final_test_state", "final test state", (widest.counts_line.split(",")[0],)))
    return pins
