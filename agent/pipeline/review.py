"""The model's own review hooks: ``refine`` (one call, no tools: the task and the round's diff,
answered ``ACCEPT`` or with points for another round) and ``reflexion`` (after a failed round, a
lesson of at most 3 lines, pinned for the next rounds and journaled as a ``LessonRecord``).

Both are single requests of their own purpose (``refine``, ``reflexion``) through the agent's
provider, retried like main calls; the scripted provider answers them from its main replies.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable

from ..events import Emit
from ..loop.side_call import side_call
from ..messages import Usage
from ..providers.base import ModelRequest
from .hooks import HookOutcome, one_line

if TYPE_CHECKING:
    from ..loop.agent import Agent

#: Lines a lesson may have.
MAX_LESSON_LINES = 3
#: Characters of the final reply of a round shown to a review.
MAX_REPLY_CHARS = 4000

REFINE_SYSTEM = (
    "You review a coding agent's finished work. You get the user's task, the agent's final answer and "
    "the diff of its changes. If the change does what the task asks, correctly and without unrelated "
    "edits, answer with the single word ACCEPT. Otherwise answer with a short numbered list of concrete "
    "points to fix (file, what is wrong, what to do); nothing else.")
REFLEXION_SYSTEM = (
    "A coding agent's attempt failed. Write the lesson for its next attempt: at most 3 short lines, "
    "concrete (what went wrong and what to do differently), no preamble.")
#: Receives the usage of each review call (the pipeline adds it to the turn's).
UsageSink = Callable[[Usage], None]

#: The feedback of a refine review that asks for another round (``{points}``).
REFINE_FEEDBACK = "A review of your changes against the task asks for another round:\n\n{points}"


def _ask(agent: "Agent", purpose: str, system: str, user: str, effort: str | None,
         cancel: threading.Event, on_usage: UsageSink | None, emit: Emit) -> str:
    """One request of ``purpose`` without tools (``loop.side_call``: measured and counted in the
    session's spending); returns the reply's text and hands the reported usage to ``on_usage``.
    Raises ``ProviderError`` when the call fails after its retries."""
    request = ModelRequest(model=agent.model, purpose=purpose,  # type: ignore[arg-type]
                           messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                           api_base=agent.config.api_base, temperature=agent.config.temperature,
                           reasoning_effort=effort)
    reply = side_call(agent, request, emit, cancel)
    if reply.usage is not None and on_usage is not None:
        on_usage(reply.usage)
    return (reply.content or "").strip()


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} chars cut ...]"


def refine(agent: "Agent", task: str, final_text: str, diff: str, effort: str | None,
           stop: threading.Event, on_usage: UsageSink | None = None, emit: Emit = lambda event: None) -> HookOutcome:
    """Ask the model to review ``diff`` against ``task``: ``accept`` when it answers ``ACCEPT``,
    else ``retry`` with its points as the feedback (``value["feedback"]``)."""
    user = (f"## Task\n{task}\n\n## The agent's final answer\n{_cut(final_text, MAX_REPLY_CHARS) or '(none)'}\n\n"
            f"## Diff of the changes\n{diff or '(no diff available)'}")
    answer = _ask(agent, "refine", REFINE_SYSTEM, user, effort, stop, on_usage, emit)
    if not answer or answer.split()[0].strip(".:!*").upper() == "ACCEPT":
        return HookOutcome("accept", "accepted")
    return HookOutcome("retry", one_line(answer, 120), detail=answer,
                       value={"feedback": REFINE_FEEDBACK.format(points=answer)})


def reflexion(agent: "Agent", task: str, failure: str, final_text: str, effort: str | None,
              stop: threading.Event, on_usage: UsageSink | None = None,
              emit: Emit = lambda event: None) -> HookOutcome:
    """Ask the model for a lesson about a failed round (``failure``: the feedback of the hook
    that failed it). ``accept`` with the lesson, at most ``MAX_LESSON_LINES`` lines, in ``value``;
    ``skipped`` when the model gave none."""
    user = (f"## Task\n{task}\n\n## The agent's last answer\n{_cut(final_text, MAX_REPLY_CHARS) or '(none)'}\n\n"
            f"## Why the attempt failed\n{_cut(failure, MAX_REPLY_CHARS)}")
    answer = _ask(agent, "reflexion", REFLEXION_SYSTEM, user, effort, stop, on_usage, emit)
    lines = [line.strip() for line in answer.splitlines() if line.strip()][:MAX_LESSON_LINES]
    if not lines:
        return HookOutcome("skipped", "the model wrote no lesson")
    lesson = "\n".join(lines)
    return HookOutcome("accept", one_line(lesson, 160), detail=lesson, value=lesson)
