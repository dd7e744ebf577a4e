"""The sidebar's plan checklist, drawn from the latest approved ``PlanUpdated`` event.

``plan_checklist_text(event, width)`` returns the body: one entry per step with its status mark
(pending ○, in progress ◐, done ✓, skipped –), the step in progress highlighted, the agent's
note dimmed under it, and files the agent edited that no step declared flagged at the end
("⚠ edited outside the plan: path"). ``plan_section_title(event)`` is the section's title with
the progress count. Plain text only (no markup).
"""

from __future__ import annotations

import textwrap
from typing import Any, Mapping

from rich.text import Text

#: Status marks (the plan screen uses the same ones).
MARKS = {"pending": "○", "in_progress": "◐", "done": "✓", "skipped": "–"}
#: Lines a step's text may take in the sidebar before it is cut with an ellipsis.
MAX_STEP_LINES = 2


def plan_section_title(event: Any) -> str:
    """``Plan · 2/5 done`` (skipped steps count as finished: ``2/5 done, 1 skipped``)."""
    steps = list(getattr(event, "steps", []) or [])
    done = sum(s.status == "done" for s in steps)
    skipped = sum(s.status == "skipped" for s in steps)
    title = f"Plan · {done}/{len(steps)} done"
    if skipped:
        title += f", {skipped} skipped"
    return title


def _wrap(text: str, width: int, lines: int) -> list[str]:
    wrapped = textwrap.wrap(" ".join(text.split()), max(width, 4)) or [""]
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][: max(width - 1, 1)].rstrip() + "…"
    return wrapped


def plan_checklist_text(event: Any, width: int, colours: Mapping[str, str] | None = None) -> Text:
    """The checklist body for a ``PlanUpdated`` ``event`` at ``width`` cells (see the module
    docstring). ``colours`` maps theme variables (``accent``, ``success``, ``warning``) to colours."""
    colours = colours or {}
    accent = colours.get("accent", "cyan")
    text = Text()
    title = (getattr(event, "title", "") or "").strip()
    if title:
        for line in _wrap(title, width, 2):
            text.append(line + "\n", style="italic")
    steps = list(getattr(event, "steps", []) or [])
    indent = 4
    for number, step in enumerate(steps, start=1):
        status = step.status
        mark = MARKS.get(status, "○")
        lines = _wrap(step.text, width - indent, MAX_STEP_LINES)
        if status == "in_progress":
            style, mark_style = f"bold {accent}", f"bold {accent}"
        elif status == "done":
            style, mark_style = "", colours.get("success", "green")
        elif status == "skipped":
            style, mark_style = "dim strike", "dim"
        else:
            style, mark_style = "", "dim"
        text.append(f"{mark} ", style=mark_style)
        text.append(f"{number}".ljust(indent - 2), style="dim" if status != "in_progress" else style)
        text.append(lines[0], style=style)
        for more in lines[1:]:
            text.append("\n" + " " * indent + more, style=style)
        note = (getattr(step, "note", "") or "").strip()
        if note:
            for line in _wrap(note, width - indent, 2):
                text.append("\n" + " " * indent + line, style="dim italic")
        text.append("\n")
    for path in getattr(event, "undeclared_files", []) or []:
        line = f"⚠ edited outside the plan: {path}"
        if len(line) > width:  # the path on its own line, so it is not cut
            line = f"⚠ edited outside the plan:\n  {path}"
        text.append(line + "\n", style=colours.get("warning", "yellow"))
    text.rstrip()
    return text
