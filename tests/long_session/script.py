"""The data of a scripted session: facts, steps, segments, scripts, and reply helpers.

A *step* is one scripted model reply (one main request) and the facts its tool calls create; a
``Segment`` is a unit the runner performs (a turn, a planning pass, its execution, a reopen, a
``/compact``); a ``Script`` is a whole session with the setup of its scratch repository.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

MODEL = "openai/gpt-4.1"
#: The test command prefix: the interpreter running this harness, plugins off (fast, deterministic).
PYTEST = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {shlex.quote(sys.executable)} -m pytest -q --tb=short"

# ------------------------------------------------------------------------------------ facts
@dataclass(frozen=True)
class PytestRun:
    """One scripted test command and its expected outcome.

    ``covers``: the test function names the command selects; ``failed``: those expected to fail
    (in pytest's order); ``passed``/``deselected``: counts as pytest prints them.
    """

    command: str
    covers: frozenset[str]
    failed: tuple[str, ...]
    passed: int
    deselected: int = 0

    @property
    def counts_line(self) -> str:
        """The start of pytest's summary line, ``"3 failed, 9 passed"`` or ``"12 passed"``."""
        parts = []
        if self.failed:
            parts.append(f"{len(self.failed)} failed")
        if self.passed:
            parts.append(f"{self.passed} passed")
        return ", ".join(parts)


@dataclass
class Expect:
    """What the real tool results of one step must show (the script's own validity)."""

    errors: bool = False              # some call of the step is expected to return an error result
    contains: tuple[str, ...] = ()    # substrings some result of the step must contain
    truncated: bool = False           # some result is expected to be truncated by the tool


@dataclass
class Step:
    """One scripted model reply and the facts its tool calls create."""

    reply: dict[str, Any]
    changed: tuple[str, ...] = ()             # workspace paths changed by this step's calls
    test_runs: tuple[PytestRun, ...] = ()
    plan: tuple[tuple[str, str], ...] | None = None   # (description, status) per step after this reply
    expect: Expect = field(default_factory=Expect)


SegmentKind = Literal["turn", "plan", "execute", "reopen", "compact"]


@dataclass
class Segment:
    """A unit the runner performs: ``turn`` (``run_turn(prompt)``), ``plan`` (``plan_turn(prompt)``),
    ``execute`` (``execute_plan`` of the plan the last ``plan`` proposed), ``reopen`` (close the
    session and continue it from its journal, ``--continue``). ``instruction``: the prompt is a user
    instruction that must stay pinned (the first one is the task)."""

    kind: SegmentKind
    prompt: str = ""
    steps: list[Step] = field(default_factory=list)
    instruction: bool = True
    plan: tuple[tuple[str, str], ...] | None = None   # the approved plan's states (execute)


@dataclass
class Script:
    """A whole scripted session: ``setup(workspace)`` builds the scratch repository."""

    shape: str
    steps: int
    window: int
    setup: Callable[[Path], None]
    segments: list[Segment]
    model: str = MODEL

    @property
    def replies(self) -> int:
        """Number of scripted main replies."""
        return sum(len(s.steps) for s in self.segments)


# ------------------------------------------------------------------------------- tool calls
def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def reply(*calls: dict[str, Any], content: str | None = None, reasoning: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if content is not None:
        out["content"] = content
    if reasoning is not None:
        out["reasoning_content"] = reasoning
    if calls:
        out["tool_calls"] = list(calls)
    return out


def bash(command: str) -> dict[str, Any]:
    return call("bash", command=command)
