"""Plan mode for a session: the ``PlanController`` of the conversation and the planning pass and
plan execution run on the session's agent.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the loop, tools and git code load in prepare(), after the TUI's first paint
    from ..events import Emit, TurnFinished
    from ..plan.controller import PlanController, PlanResult
    from ..plan.model import Plan


class PlanDelegation:
    """The Plan mode part of ``AgentSession``."""

    @property
    def plans(self) -> "PlanController":
        """Plan mode state of this conversation: ``proposed`` and approved ``plan`` (``plan.controller``)."""
        if self._plans is None:
            from ..plan.controller import PlanController

            self._plans = PlanController(self.workspace)
        return self._plans

    @property
    def plan(self) -> "Plan | None":
        """The approved plan being carried out, or ``None``."""
        return self.plans.plan

    def plan_turn(self, task: str, emit: "Emit", cancel: threading.Event) -> "PlanResult":
        """Run the read-only planning pass for ``task`` (``PlanController.plan_pass``) and return
        the proposed plan, or why there is none. Changes nothing in the workspace. The pipeline adds
        the effort hint and runs no post-run hook."""
        emit = self.observed(emit)
        self.prepare()
        assert self.agent is not None
        return self.pipeline.plan(self.with_attachments(task, emit), emit, cancel)

    def execute_plan(self, plan: "Plan", emit: "Emit", cancel: threading.Event) -> "TurnFinished":
        """Approve ``plan`` (possibly edited) and carry it out in an Act turn that marks progress
        with ``update_plan`` (``PlanController.execute``) through the pipeline (its post-run hooks
        included). Raises ``PlanError`` for an empty plan."""
        emit = self.observed(emit)
        self.prepare()
        assert self.agent is not None
        return self.pipeline.run_plan(plan, emit, cancel)

    def discard_plan(self) -> None:
        """Drop the proposed and the active plan (journaled when the session has started)."""
        self.plans.discard(self.agent)
