"""The summary message of a compaction: finding it, reading its pinned part, rebuilding it around
the current pins, naming what it pins, capping the model's summary, and keeping the plan in the
context once (a kept plan-execution prompt points to the pinned plan)."""

from __future__ import annotations

from typing import Callable, Collection

from ...messages import Message, UserMessage
from ..pins import Pins
from ..truncation.truncate import cap_middle
from .summary import CONTINUE_LINE, MODEL_SUMMARY_HEADING, SUMMARY_HEADER, build_summary_text

#: What a kept plan-execution prompt says once the current plan is pinned in the summary (the
#: prompt's own copy of the checklist would show the step states of when it was sent).
PLAN_PROMPT_STAND_IN = ("Carry out the approved plan. Its checklist, with the current state of each step, is "
                        "pinned in the context summary above; mark progress with update_plan as you go.")


def without_stale_plan(kept: list[Message]) -> list[Message]:
    """``kept`` with each plan-execution prompt replaced by ``PLAN_PROMPT_STAND_IN`` (same id,
    origin and mode), so the plan is in the context once, with its current step states."""
    return [m.model_copy(update={"content": PLAN_PROMPT_STAND_IN})
            if isinstance(m, UserMessage) and m.origin == "plan_execution" and m.content != PLAN_PROMPT_STAND_IN
            else m for m in kept]


def refresh_summaries(kept: list[Message], render_pins: Callable[[Collection[str]], str],
                       carried: list[str]) -> tuple[list[Message], UserMessage | None]:
    """``kept`` with an earlier summary message in it rebuilt around the current pins
    (``render_pins(kept ids)``: the plan's step states, the test state and the changed files move
    on after that summary was written); its model summary is kept. Returns the list and the
    rebuilt message (``None`` when none)."""
    out = list(kept)
    for index, message in enumerate(out):
        if not is_summary(message):
            continue
        assert isinstance(message, UserMessage)
        text = message.content
        cut = text.find(MODEL_SUMMARY_HEADING)
        model_summary = text[cut + len(MODEL_SUMMARY_HEADING):].strip("\n") if cut != -1 else ""
        model_summary = model_summary.removesuffix(CONTINUE_LINE).rstrip("\n")
        pinned = "\n\n".join([*carried, render_pins([m.id for m in out[index + 1:]])])
        new = message.model_copy(update={"content": build_summary_text(pinned, model_summary)})
        out[index] = new
        return out, new
    return out, None


def is_summary(message: Message) -> bool:
    return isinstance(message, UserMessage) and (message.origin == "summary"
                                                 or message.content.startswith(SUMMARY_HEADER))


def pinned_part(content: str) -> str:
    """The pinned sections of an earlier summary message (between its header and the model's summary)."""
    text = content[len(SUMMARY_HEADER):] if content.startswith(SUMMARY_HEADER) else content
    end = text.find(MODEL_SUMMARY_HEADING)
    return (text[:end] if end != -1 else text).strip("\n")


def pinned_names(pins: Pins, kept_ids: list[str], carried: list[str]) -> list[str]:
    kept = set(kept_ids)
    names = []
    if carried:
        names.append("earlier pins")
    if pins.task is not None and pins.task.id not in kept:
        names.append("task")
    if any(m.id not in kept for m in pins.instructions):
        names.append("instructions")
    if pins.plan_markdown:
        names.append("plan")
    if pins.tests.unresolved() or pins.tests.recent_errors():
        names.append("unresolved errors")
    if pins.tests.final_state() is not None:
        names.append("test state")
    if pins.changed_files:
        names.append("changed files")
    if pins.lessons:
        names.append("lessons")
    return names


def cap_tokens(text: str, cap: int, count: Callable[[Message], int]) -> str:
    """``text`` middle-cut until it holds at most about ``cap`` tokens (counted as a message)."""
    tokens = count(UserMessage(content=text))
    if tokens <= cap:
        return text
    chars = int(len(text) * cap / tokens * 0.9)
    return cap_middle(text, max(200, chars))
