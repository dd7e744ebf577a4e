"""Plan mode in the TUI: the Plan/Act toggle, the planning pass, approval and execution.

``PlanModeController`` (``app.plan_mode``) holds the mode and drives the three steps of Plan mode:

1. In Plan mode (Shift+Tab toggles it; ``--plan`` starts in it) Enter on a prompt, or ``/plan
   TASK`` from either mode, runs ``session.plan_turn`` in the runner's thread worker; its events
   stream into the conversation as in any turn.
2. When the pass ends with a plan, ``PlanScreen`` opens on it (edit, approve, cancel, editor);
   without one, the reason is shown as a notice.
3. Approval hands the edited plan to ``session.execute_plan`` in a worker (a normal Act run); the
   sidebar's plan section follows its ``PlanUpdated`` events. Cancel calls ``session.discard_plan()``.

In Act mode a request that looks large (``large_request_reason``) gets a one-line hint above the
prompt suggesting Plan mode; it is never acted on automatically. Ctrl+G or a click hides it.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from rich.text import Text
from textual.widgets import Static

if TYPE_CHECKING:
    from agent.plan.model import Plan
    from agent.plan.controller import PlanResult

    from .app import OpenCLIApp
    from .bridge import TurnEnded

#: Words that suggest a change large enough to plan first (matched as whole words, any case).
LARGE_WORDS = ("refactor", "refactoring", "migrate", "migration", "redesign", "rewrite", "overhaul",
               "restructure", "rearchitect", "re-architect")
#: Phrases (any case) that suggest a sweeping change.
LARGE_PHRASES = ("replace all", "rename all", "change all", "update all", "across the codebase",
                 "across the code base", "every file", "all files")
#: More words than this make a request look large.
LARGE_WORD_COUNT = 100
#: This many distinct file paths named make a request look large.
LARGE_FILE_COUNT = 3

_PATH = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,7}\b")
_URL = re.compile(r"\b\w+://\S+")


def named_files(text: str) -> list[str]:
    """The distinct file paths ``text`` names (``src/app.py``, ``README.md``), URLs left out."""
    found = _PATH.findall(_URL.sub(" ", text))
    return list(dict.fromkeys(p for p in found if not re.fullmatch(r"[\d.]+", p) and not p.startswith(("e.g", "i.e"))))


def large_request_reason(text: str) -> str | None:
    """Why ``text`` looks like a request worth planning first, or None.

    Large: it uses a word such as refactor, migrate, redesign or a phrase such as "replace all";
    it has more than ``LARGE_WORD_COUNT`` words; or it names ``LARGE_FILE_COUNT`` or more files.
    The reason is a short phrase ("mentions “refactor”", "names 4 files", "is 130 words long").
    """
    low = text.lower()
    for word in LARGE_WORDS:
        if re.search(rf"\b{re.escape(word)}\b", low):
            return f"mentions “{word}”"
    for phrase in LARGE_PHRASES:
        if re.search(rf"\b{re.escape(phrase)}\b", low):
            return f"mentions “{phrase}”"
    words = len(text.split())
    if words > LARGE_WORD_COUNT:
        return f"is {words} words long"
    files = named_files(text)
    if len(files) >= LARGE_FILE_COUNT:
        return f"names {len(files)} files"
    return None


def editor_command(env: Mapping[str, str] | None = None) -> list[str]:
    """The editor command as argv: ``$VISUAL``, then ``$EDITOR``, then ``vi``; split like a shell
    would, so ``code -w`` works."""
    env = os.environ if env is None else env
    for name in ("VISUAL", "EDITOR"):
        value = (env.get(name) or "").strip()
        if value:
            try:
                argv = shlex.split(value)
            except ValueError:
                argv = value.split()
            if argv:
                return argv
    return ["vi"]


def suspended_editor_runner(app: Any) -> Callable[[Path], None]:
    """Return the default editor launcher: suspend ``app``, run ``editor_command() + [path]`` and
    wait for it. Raises ``OSError`` when the editor cannot start; tests replace it."""

    def run(path: Path) -> None:
        argv = editor_command() + [str(path)]
        with app.suspend():
            subprocess.run(argv, check=False)

    return run


class PlanHint(Static):
    """The one-line suggestion to use Plan mode, shown above the prompt; a click hides it."""

    DEFAULT_CSS = """
    PlanHint { height: auto; margin: 0 1; padding: 0 1; color: $text-muted; background: $surface; }
    """

    def __init__(self, reason: str) -> None:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("⚑ ", style="bold")
        text.append(f"This request {reason}: Plan mode explores read-only and lets you approve a plan first. ")
        text.append("shift+tab", style="bold")
        text.append(" Plan mode · ")
        text.append("ctrl+g", style="bold")
        text.append(" hide")
        super().__init__(text, markup=False, id="plan-hint")
        self.reason = reason

    def on_click(self) -> None:
        self.remove()


class PlanModeController:
    """Plan/Act mode and the plan workflow of one ``OpenCLIApp`` (see the module docstring).

    Attributes: ``active`` (True in Plan mode), ``editor_runner`` (``Path -> None``: opens the
    plan file in the user's editor; tests replace it), ``hints`` (show the large-request hint).
    """

    def __init__(self, app: "OpenCLIApp", *, active: bool = False) -> None:
        self.app = app
        self.active = active
        self.hints = True
        self.editor_runner: Callable[[Path], None] = suspended_editor_runner(app)

    # -- mode ------------------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        """``"Plan"`` or ``"Act"``."""
        return "Plan" if self.active else "Act"

    def sync_status(self) -> None:
        """Show the mode in the status bar."""
        from .widgets.status_bar import StatusBar

        self.app.main_screen.query_one(StatusBar).mode = self.mode

    def set_active(self, active: bool) -> None:
        """Enter (True) or leave Plan mode (journaled with the session, so a resume restores it).

        Journaled when it differs from what the session holds (not from this controller's flag):
        so ``--plan`` and a toggle made while the session was opening are recorded once it is
        open, and a mode just restored from the journal is not written again."""
        session = self.app.session
        self.active = active
        self.sync_status()
        if session is not None and active != session.plan_mode:
            session.record_modes(plan_mode=active)
        if active:
            self.hide_hint()

    def toggle(self) -> None:
        """Switch between Plan and Act mode."""
        self.set_active(not self.active)
        self.app.notify(f"{self.mode} mode" + (": Enter plans the task (read-only) before anything changes."
                                                if self.active else ": Enter sends the task to the agent."),
                        timeout=3)

    # -- hint ------------------------------------------------------------------------------------
    def hint(self) -> PlanHint | None:
        """The hint widget when shown."""
        hints = self.app.main_screen.query(PlanHint)
        return hints.first() if hints else None

    def hide_hint(self) -> None:
        """Hide the large-request hint (no-op when hidden)."""
        hint = self.hint()
        if hint is not None:
            hint.remove()

    async def show_hint(self, reason: str) -> None:
        """Show the large-request hint above the prompt (replacing an older one)."""
        from .widgets.prompt_input import PromptInput

        self.hide_hint()
        await self.app.main_screen.mount(PlanHint(reason), before=self.app.main_screen.query_one(PromptInput))

    # -- prompts -----------------------------------------------------------------------------------
    async def on_prompt(self, text: str) -> bool:
        """Handle a prompt typed by the user: plan it in Plan mode (returns True: handled);
        in Act mode show the hint when it looks large and return False (send it as usual)."""
        if self.active:
            await self.plan_task(text)
            return True
        self.hide_hint()
        reason = large_request_reason(text) if self.hints else None
        if reason is not None:
            await self.show_hint(reason)
        return False

    async def plan_task(self, task: str) -> None:
        """Run the read-only planning pass for ``task`` in a worker; the plan screen opens when
        it ends (``turn_ended``)."""
        from .widgets.blocks import UserBlock
        from .widgets.conversation import Conversation
        from .widgets.status_bar import StatusBar

        task = task.strip()
        if not task:
            await self.app.show_notice("Usage: /plan TASK (plans the task read-only; nothing changes until "
                                       "you approve)", kind="warning")
            return
        if self.app.runner.running:
            await self.app.show_notice("A turn is running: press Esc to stop it, then plan.", kind="warning")
            return
        self.hide_hint()
        conversation = self.app.main_screen.query_one(Conversation)
        await conversation.add(UserBlock(task))
        await self.app.show_progress("Planning (read-only: nothing in the workspace changes)...")
        conversation.follow()
        session = self.app.session
        self.app.runner.start_turn(task, run=lambda emit, cancel: session.plan_turn(task, emit, cancel))
        self.app.attention.turn_started_now()
        self.app.main_screen.query_one(StatusBar).activity = "planning..."

    # -- results -----------------------------------------------------------------------------------
    async def turn_ended(self, message: "TurnEnded") -> None:
        """After a turn: when it was a planning pass, open the plan screen or say why there is no plan."""
        from agent.plan.controller import PlanResult

        result = getattr(message, "value", None)
        if not isinstance(result, PlanResult):
            return
        if result.plan is None:
            await self.app.show_notice(f"No plan: {result.message}", kind="warning")
            return
        self.open_plan(result.plan)

    def open_plan(self, plan: "Plan") -> None:
        """Open the plan screen on ``plan``; approval executes it, cancel discards it."""
        from .screens.plan_screen import PlanScreen

        screen = PlanScreen(plan, editor_runner=lambda path: self.editor_runner(path))
        self.app.push_screen(screen, self._closed)

    async def _closed(self, plan: "Plan | None") -> None:
        if plan is None:
            self.app.session.discard_plan()
            from agent.plan.prompts import DISCARDED_NOTICE

            await self.app.show_notice(DISCARDED_NOTICE)
            return
        await self.approve(plan)

    async def approve(self, plan: "Plan") -> None:
        """Carry out the approved ``plan``: a normal Act run in a worker (back to Act mode)."""
        from .widgets.conversation import Conversation
        from .widgets.status_bar import StatusBar

        if self.app.runner.running:
            await self.app.show_notice("A turn is still running: the plan was not started.", kind="warning")
            return
        from agent.plan.prompts import approved_notice

        self.set_active(False)
        await self.app.show_notice(approved_notice(plan))  # a resumed view shows the same line
        self.app.main_screen.query_one(Conversation).follow()
        session = self.app.session
        self.app.runner.start_turn(plan.title, run=lambda emit, cancel: session.execute_plan(plan, emit, cancel))
        self.app.main_screen.query_one(StatusBar).activity = "working..."
