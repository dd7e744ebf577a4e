"""What Plan mode says to the model: the mode messages (Plan / Act) at the start of a turn's user
message, the instruction to carry out an approved plan, and the notice the UI shows for it.

The system prompt and the tool list are the same in both modes, so switching keeps the
provider's prompt cache; the mode and its rules ride in the user message (a field of its record,
so the user's own text stays apart).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..messages import AssistantMessage, ModeMessage, ToolResultMessage, UserMessage

from .model import MAX_STEPS, MIN_STEPS, Plan

# ============================================================================= mode messages
PLAN_MODE_MESSAGE = """\
<mode>
# Plan mode
The user wants a plan before anything changes. You are in Plan mode: the workspace is read-only.
Only these tools run: {tools}. Any other call is refused.{bash}
1. Explore first: find and read the code the task involves. Do not guess what files contain.{think}
2. Then call submit_plan once, with: a short title; {min_steps} to {max_steps} steps in order, each one
   concrete change with its description, the files it creates or changes (paths relative to the
   working directory) and a one-line rationale; the risks; and the assumptions you could not verify.
3. Stop after submit_plan. The user reviews the plan and approves, edits or rejects it; do not
   start the work. If you cannot call submit_plan, answer with the plan as a markdown numbered
   list (a `Files:` and a `Why:` line under each step) followed by `## Risks` and `## Assumptions`.
</mode>"""

#: Added to the Plan mode message when bash runs under the read-only OS sandbox.
PLAN_BASH_NOTE = """
bash is read-only here: it runs in an OS sandbox where nothing outside a private temp folder can
be written and the network is off. Use it to inspect (git log, ls, pytest --collect-only, the
project's scripts); a command that must change something belongs in the plan as a step."""

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
    tools, and bash under the read-only sandbox, in registration order): ``PLAN_MODE_MESSAGE``
    filled in (the think hint only when ``think`` is among them, ``PLAN_BASH_NOTE`` when bash
    is)."""
    names = list(tool_names)
    think = " Use think to weigh options; it changes nothing." if "think" in names else ""
    bash = PLAN_BASH_NOTE if "bash" in names else ""
    return ModeMessage(mode="plan", text=PLAN_MODE_MESSAGE.format(tools=", ".join(names), think=think, bash=bash,
                                                                  min_steps=MIN_STEPS, max_steps=MAX_STEPS))


def act_mode_message() -> ModeMessage:
    """Return the mode message of the first Act turn after Plan mode (``ACT_MODE_MESSAGE``)."""
    return ModeMessage(mode="act", text=ACT_MODE_MESSAGE)


def stated_mode(messages: Iterable[Any]) -> str | None:
    """Return the mode the last mode message among ``messages`` states (``"plan"`` or ``"act"``),
    or ``None`` when none does (a conversation that never entered Plan mode; Act is the default
    the system prompt describes)."""
    records = messages if isinstance(messages, Sequence) else list(messages)
    for message in reversed(records):
        # Only a user message has a ``mode`` field: asking every record for it raised and caught
        # an AttributeError per assistant message (8 ms per turn at 5 000 messages).
        if isinstance(message, UserMessage):
            mode = message.mode
        elif isinstance(message, (AssistantMessage, ToolResultMessage)):
            continue
        else:
            mode = getattr(message, "mode", None)
        if isinstance(mode, ModeMessage):
            return mode.mode
    return None


def execution_prompt(plan: Plan, *, edited: bool = False) -> str:
    """Return the user message that starts executing ``plan`` (its markdown checklist verbatim)."""
    return EXECUTION_PROMPT.format(plan=plan.to_markdown(), edited=" (they edited it)" if edited else "")


#: The line a UI shows where the user discarded a proposed plan.
DISCARDED_NOTICE = "Plan discarded; nothing was changed."


def approved_notice(plan: Plan) -> str:
    """Return the one line a UI shows where the user approved ``plan`` (instead of the
    ``execution_prompt`` sent to the model): ``Plan approved: TITLE (N steps). Carrying it out;
    the sidebar shows progress.``"""
    count = len(plan.steps)
    return (f"Plan approved: {plan.title} ({count} step{'' if count == 1 else 's'}). Carrying it out; "
            "the sidebar shows progress.")
