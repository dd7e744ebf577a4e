"""The plan screen: the proposed plan as an editable checklist, to approve or cancel.

``PlanScreen(plan, editor_runner=...)`` works on a copy of ``plan`` and dismisses with the edited
``Plan`` (approve) or ``None`` (cancel). It shows the title, numbered steps (status mark,
description, files, rationale), the risks and the unverified assumptions.

Keys (shown at the bottom): Up/Down or k/j select a step; Enter or e edits its text (Enter in the
box keeps, Esc drops the change); a adds a step after the selected one; d or Delete deletes it;
Alt+Up / Alt+Down or K / J move it; s marks it skipped (again: pending); Ctrl+Enter or A
approves; Ctrl+E opens the plan in the user's editor; Esc cancels the plan after asking
(``ConfirmScreen``: y or Enter discards, n or Esc goes back to the plan with the edits intact;
only an empty, unedited plan goes without the question). While a step's text is being edited,
Esc only drops that edit. The Cancel button discards at once (a deliberate click). The ↑ / ↓
buttons move a step with the mouse; a click selects one.

The editor round trip writes ``plan.to_markdown()`` to a temporary ``.md`` file, calls
``editor_runner(path)`` (the app suspends while the editor runs; tests replace the runner) and
reads the file back with ``parse_markdown_plan``; an empty file cancels the plan.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from agent.plan.model import Plan, PlanStep
from agent.plan.markdown import parse_markdown_plan

from .confirm import ConfirmScreen

#: Status marks, shared with the sidebar checklist.
STATUS_MARKS = {"pending": "○", "in_progress": "◐", "done": "✓", "skipped": "–"}


def step_text(number: int, step: PlanStep) -> Text:
    """One step as shown in the screen: number, mark, description, then files and rationale."""
    skipped = step.status == "skipped"
    text = Text()
    text.append(f"{number:>2}. ", style="bold")
    text.append(f"{STATUS_MARKS.get(step.status, '○')} ")
    text.append(step.description or "(empty)", style="strike dim" if skipped else "")
    if skipped:
        text.append("  (skipped)", style="italic dim")
    if step.files:
        text.append("\n     files: ", style="dim")
        text.append(", ".join(step.files))
    if step.rationale.strip():
        text.append(f"\n     why: {step.rationale}", style="dim italic")
    return text


class StepRow(Horizontal):
    """One step of the plan screen: its text (or the edit box) and the ↑ / ↓ buttons."""

    class Picked(Message):
        """The row was clicked."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, index: int, step: PlanStep, *, selected: bool = False) -> None:
        super().__init__(classes="plan-step -selected" if selected else "plan-step")
        self.index = index
        self.step = step

    def compose(self) -> ComposeResult:
        yield Static(step_text(self.index + 1, self.step), classes="plan-step-text", markup=False)
        up = Button("↑", id=f"plan-up-{self.index}", classes="plan-move", compact=True)
        down = Button("↓", id=f"plan-down-{self.index}", classes="plan-move", compact=True)
        up.can_focus = down.can_focus = False
        yield up
        yield down

    def on_click(self, event: events.Click) -> None:
        if not isinstance(event.widget, Button):  # the ↑ / ↓ buttons move, they do not select
            self.post_message(self.Picked(self.index))


class PlanScreen(ModalScreen["Plan | None"]):
    """Review, edit and approve a plan; dismisses with the edited ``Plan`` or ``None`` (cancel).

    ``editor_runner(path)`` opens ``path`` in the user's editor and returns when it is closed.
    """

    AUTO_FOCUS = None
    BINDINGS = [
        Binding("up,k", "select(-1)", "Previous", show=False),
        Binding("down,j", "select(1)", "Next", show=False),
        Binding("enter,e", "edit", "Edit", show=False),
        Binding("a", "add", "Add", show=False),
        Binding("d,delete", "delete", "Delete", show=False),
        Binding("alt+up,K", "move(-1)", "Move up", show=False),
        Binding("alt+down,J", "move(1)", "Move down", show=False),
        Binding("s", "skip", "Skip", show=False),
        Binding("ctrl+enter,A", "approve", "Approve", show=False),
        Binding("ctrl+e", "open_editor", "Editor", show=False),
        Binding("escape", "cancel", "Cancel", show=False),
    ]

    DEFAULT_CSS = """
    PlanScreen { align: center middle; }
    #plan-dialog { width: 100; max-width: 95%; height: auto; max-height: 94%; padding: 0 1;
                   border: thick $primary; background: $panel; }
    #plan-title { text-style: bold; padding: 0 1; }
    #plan-steps { height: auto; max-height: 22; }
    .plan-step { height: auto; padding: 0 1 0 0; border-left: blank; }
    .plan-step.-selected { background: $primary 20%; border-left: outer $accent; }
    .plan-step-text { width: 1fr; height: auto; }
    .plan-move { width: 3; min-width: 3; margin-left: 1; }
    #plan-edit { margin: 0 0 0 4; }
    #plan-extra { height: auto; padding: 0 1; margin-top: 1; }
    #plan-keys { color: $text-muted; padding: 0 1; margin-top: 1; }
    #plan-buttons { height: auto; align-horizontal: right; margin-top: 1; }
    #plan-buttons Button { margin-left: 1; }
    """

    def __init__(self, plan: Plan, *, editor_runner: Callable[[Path], None] | None = None) -> None:
        super().__init__()
        self.plan = plan.model_copy(deep=True)
        self.proposed = plan.model_copy(deep=True)  # as proposed, to tell whether it was edited
        self.selected = 0
        self.editor_runner = editor_runner
        self.editing: int | None = None
        self._new_step: int | None = None  # index of an added step still being typed

    # -- layout ----------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Vertical(id="plan-dialog"):
            yield Static(self._title_text(), id="plan-title", markup=False)
            yield VerticalScroll(id="plan-steps", can_focus=False)
            yield Static(self._extra_text(), id="plan-extra", markup=False)
            yield Static(Text("↑↓ select · enter edit · a add · d delete · alt+↑↓ / K J move · s skip · "
                              "ctrl+e editor"), id="plan-keys", markup=False)
            with Horizontal(id="plan-buttons"):
                for label, button_id, variant in (("Approve (A)", "plan-approve", "success"),
                                                  ("Editor (ctrl+e)", "plan-editor", "default"),
                                                  ("Cancel (esc)", "plan-cancel", "error")):
                    button = Button(label, id=button_id, variant=variant, compact=True)
                    button.can_focus = False
                    yield button

    async def on_mount(self) -> None:
        await self.rebuild()

    def _title_text(self) -> Text:
        text = Text("Plan: ", style="bold")
        text.append(self.plan.title or "Plan", style="bold")
        text.append(f"  ({len(self.plan.steps)} steps; nothing has changed yet)", style="dim")
        return text

    def _extra_text(self) -> Text:
        text = Text()
        for heading, items in (("Risks", self.plan.risks), ("Assumptions (unverified)", self.plan.assumptions)):
            if items:
                if text:
                    text.append("\n")
                text.append(heading, style="bold")
                for item in items:
                    text.append(f"\n • {item}")
        return text

    async def rebuild(self) -> None:
        """Redraw the step rows (after any change) and keep the selected one in view."""
        container = self.query_one("#plan-steps", VerticalScroll)
        await container.remove_children()
        if self.plan.steps:
            self.selected = max(0, min(self.selected, len(self.plan.steps) - 1))
        rows = [StepRow(i, step, selected=i == self.selected) for i, step in enumerate(self.plan.steps)]
        if rows:
            await container.mount_all(rows)
        else:
            await container.mount(Static(Text("No steps: press a to add one.", style="italic"), markup=False))
        self.query_one("#plan-title", Static).update(self._title_text())
        self.query_one("#plan-extra", Static).update(self._extra_text())
        if rows:
            container.scroll_to_widget(rows[self.selected], animate=False)

    def _rows(self) -> list[StepRow]:
        return list(self.query(StepRow))

    def _mark_selected(self) -> None:
        for row in self._rows():
            row.set_class(row.index == self.selected, "-selected")
        rows = self._rows()
        if rows:
            self.query_one("#plan-steps", VerticalScroll).scroll_to_widget(rows[self.selected], animate=False)

    # -- editing ---------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While a step's text is being edited, only Esc (drop the edit) works."""
        if self.editing is not None:
            return action == "cancel"
        return True

    def action_select(self, delta: int) -> None:
        """Select the previous (-1) or next (1) step."""
        if self.plan.steps:
            self.selected = max(0, min(self.selected + delta, len(self.plan.steps) - 1))
            self._mark_selected()

    async def action_edit(self) -> None:
        """Edit the selected step's text in a box (Enter keeps, Esc drops the change)."""
        if not self.plan.steps:
            return
        self.editing = self.selected
        row = self._rows()[self.selected]
        box = Input(self.plan.steps[self.selected].description, id="plan-edit",
                    placeholder="What this step changes; Enter keeps, Esc drops")
        await row.query_one(".plan-step-text", Static).remove()
        await row.mount(box, before=0)
        box.focus()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.editing is None:
            return
        text = " ".join(event.value.split())
        index, self.editing = self.editing, None
        if text:
            self.plan.steps[index].description = text
        elif self._new_step == index:  # an added step left empty is dropped
            del self.plan.steps[index]
            self.selected = max(index - 1, 0)
        self._new_step = None
        await self.rebuild()

    async def action_add(self) -> None:
        """Add a step after the selected one and edit its text."""
        index = self.selected + 1 if self.plan.steps else 0
        ids = {s.id for s in self.plan.steps}
        new_id = next(str(n) for n in range(len(ids) + 1, 10 * len(ids) + 100) if str(n) not in ids)
        self.plan.steps.insert(index, PlanStep(id=new_id, description=""))
        self.selected = index
        self._new_step = index
        await self.rebuild()
        await self.action_edit()

    async def action_delete(self) -> None:
        """Delete the selected step."""
        if self.plan.steps:
            del self.plan.steps[self.selected]
            await self.rebuild()

    async def action_move(self, delta: int) -> None:
        """Move the selected step up (-1) or down (1)."""
        await self._move(self.selected, delta)

    async def _move(self, index: int, delta: int) -> None:
        target = index + delta
        if 0 <= index < len(self.plan.steps) and 0 <= target < len(self.plan.steps):
            steps = self.plan.steps
            steps[index], steps[target] = steps[target], steps[index]
            self.selected = target
            await self.rebuild()

    async def action_skip(self) -> None:
        """Mark the selected step skipped (or pending again)."""
        if self.plan.steps:
            step = self.plan.steps[self.selected]
            step.status = "pending" if step.status == "skipped" else "skipped"
            await self.rebuild()

    # -- closing -----------------------------------------------------------------------------------
    def action_approve(self) -> None:
        """Approve the plan as edited (needs at least one step)."""
        if not any(s.status != "skipped" for s in self.plan.steps):
            self.notify("The plan has no step to carry out: add one, or cancel.", severity="warning")
            return
        self.dismiss(self.plan)

    @property
    def edited(self) -> bool:
        """True when the plan differs from the proposed one (text, steps, order, skips, editor)."""
        return self.plan != self.proposed

    async def action_cancel(self) -> None:
        """Esc: drop the edit in progress; otherwise ask before discarding the plan (an empty,
        unedited plan is discarded without the question)."""
        if await self._drop_edit():
            return
        if not self.plan.steps and not self.edited:
            self.dismiss(None)
            return
        question = ("Discard this plan and your edits to it?" if self.edited
                    else "Discard this plan? Nothing of it will be carried out.")
        self.app.push_screen(ConfirmScreen(question, yes_label="Discard (y)",
                                           no_label="Back to the plan (n)"),
                             self._discard_answered)

    def _discard_answered(self, discard: bool | None) -> None:
        if discard:
            self.dismiss(None)

    async def _drop_edit(self) -> bool:
        """Drop the step edit in progress (an added step goes with it); False when none was."""
        if self.editing is None:
            return False
        index, self.editing = self.editing, None
        if self._new_step == index:
            del self.plan.steps[index]
            self.selected = max(index - 1, 0)
            self._new_step = None
        await self.rebuild()
        return True

    async def action_open_editor(self) -> None:
        """Edit the whole plan as markdown in the user's editor; an empty file cancels the plan."""
        if self.editor_runner is None:
            return
        fd, name = tempfile.mkstemp(prefix="opencli-plan-", suffix=".md")
        path = Path(name)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(self.plan.to_markdown())
            try:
                self.editor_runner(path)
            except OSError as exc:
                self.notify(f"Could not start the editor: {exc}", severity="error")
                return
            text = path.read_text(encoding="utf-8")
        finally:
            path.unlink(missing_ok=True)
        if not text.strip():
            self.dismiss(None)
            return
        parsed = parse_markdown_plan(text)
        if parsed is None:
            self.notify("No steps found in the edited file; the plan was kept as it was.", severity="warning")
            return
        self.plan = parsed
        self.selected = 0
        await self.rebuild()

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        button_id = event.button.id or ""
        if button_id == "plan-approve":
            self.action_approve()
        elif button_id == "plan-cancel":  # a deliberate click: no question
            if not await self._drop_edit():
                self.dismiss(None)
        elif button_id == "plan-editor":
            await self.action_open_editor()
        elif button_id.startswith(("plan-up-", "plan-down-")):
            index = int(button_id.rsplit("-", 1)[1])
            await self._move(index, -1 if button_id.startswith("plan-up-") else 1)

    def on_step_row_picked(self, message: StepRow.Picked) -> None:
        if self.editing is None:
            self.selected = message.index
            self._mark_selected()
