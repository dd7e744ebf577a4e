"""``Pipeline``: one user turn as rounds of the loop with hooks around them (the package docstring).

A round is one ``Agent.run_turn`` (through the ``PlanController``, so Plan/Act and plan progress
work as before); its ``TurnFinished`` is held back and the pipeline emits one for the whole turn,
with the usage of every round, so a UI and the headless JSON see one turn. Later rounds do not
emit ``TurnStarted`` again; their user message (origin ``hook``) is the feedback of the hook that
asked for them, plus the lessons reflexion wrote. The step limit (``max_turns``) is shared by the
rounds: a later round gets what the earlier ones left.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Protocol

from ..cancel import was_interrupted
from ..context.pins import LESSONS_HEADING
from ..events import AgentEvent, Emit, GuardTriggered, Notice, TurnFinished, TurnStarted
from ..loop.config import MAX_TURNS_TEXT, TurnOptions
from ..messages import AssistantMessage, Usage
from ..session.records import LessonRecord
from .changes import RoundChanges
from .effort import EffortKeeper, TurnKind, accepts_effort, choose_effort
from .hooks import HookOutcome, HookRunner
from .review import refine, reflexion
from .user_hooks import UserToolGate, hook_key, hook_name, run_user_hook
from .verify import VerifyHook, VerifyPermission

if TYPE_CHECKING:
    from ..config.settings import Settings
    from ..loop.agent import Agent
    from ..plan.controller import PlanController, PlanResult
    from ..plan.model import Plan

#: Lessons kept for the next rounds (the newest).
MAX_LESSONS = 3
#: Seconds added to a hook's own limit before the runner stops waiting for it.
LIMIT_MARGIN_S = 10.0

#: A pre-run hook: ``(task, stop) -> HookOutcome``; an ``accept`` whose ``value`` is a non-empty
#: string rewrites the task.
PreRunHook = Callable[[str, threading.Event], HookOutcome]


class PipelineHost(Protocol):
    """What the pipeline needs of the session (``runtime.AgentSession``)."""

    settings: "Settings"
    agent: "Agent | None"
    model_info: Any
    resumed: Any
    workspace: Any
    verify_granted: bool

    @property
    def plans(self) -> "PlanController": ...


class _RoundEmit:
    """The emit a round runs with: holds back its ``TurnFinished``, drops ``TurnStarted`` after
    the first round (and adds the effort to the first), states the turn's whole step limit in a
    later round's ``max_turns`` stop, and shows each event to the round's change watcher."""

    def __init__(self, emit: Emit, effort: str | None, max_turns: int) -> None:
        self.emit = emit
        self.effort = effort
        self.max_turns = max_turns
        self.round_no = 1
        self.changes: RoundChanges | None = None

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, TurnFinished):
            return
        if isinstance(event, TurnStarted):
            if self.round_no > 1:
                return
            event = event.model_copy(update={"reasoning_effort": self.effort})
        if isinstance(event, GuardTriggered) and event.guard == "max_turns" and self.round_no > 1:
            event = event.model_copy(update={"message": MAX_TURNS_TEXT.format(n=self.max_turns)})
        if self.changes is not None:
            self.changes.observe(event)
        self.emit(event)


class Pipeline:
    """The quality pipeline of one session (module and package docstrings).

    ``run(task, emit, cancel)`` runs an Act turn, ``run_plan(plan, ...)`` the execution of an
    approved plan, ``plan(task, ...)`` the planning pass (effort hint only: no post-run hooks).
    ``pre_run_hooks`` holds ``(name, hook, timeout_s)`` entries. ``effort`` is the hint of the
    running or last turn (None: none sent). Never raises for hook failures.
    """

    def __init__(self, host: PipelineHost) -> None:
        self.host = host
        self.runner = HookRunner()
        self.pre_run_hooks: list[tuple[str, PreRunHook, float]] = []
        self.effort: str | None = None
        self.round = 1
        #: The built-in hooks that asked for a round in the running turn and have not accepted since:
        #: hook -> (feedback, one-line summary). A round that changed nothing does not skip them.
        self._asked: dict[str, tuple[str, str]] = {}
        self._keeper = EffortKeeper()
        self._review_usage = Usage()  # the refine and reflexion calls of the running turn
        self._usage_lock = threading.Lock()
        self._permission = VerifyPermission(granted_by_flag=bool(getattr(host, "verify_granted", False)))
        self._verify = VerifyHook(host.settings.verify, host.workspace, self._permission)
        resumed = getattr(host, "resumed", None)
        self.lessons: list[str] = [r.text for r in resumed.of_kind(LessonRecord)] if resumed is not None else []

    # --------------------------------------------------------------------------------- effort
    def effort_for(self, kind: TurnKind, task: str) -> str | None:
        """The effort hint for a turn of ``kind`` on ``task``, or None when the model takes none."""
        agent = self.host.agent
        assert agent is not None
        settings = self.host.settings.reasoning
        info = self.host.model_info
        from ..providers.scripted import ScriptedProvider

        scripted = isinstance(agent.provider, ScriptedProvider)
        if not accepts_effort(agent.model, bool(getattr(info, "supports_reasoning", False)), settings.send_effort,
                              ask_litellm=not scripted):
            return None
        return self._keeper.settle(agent.model, choose_effort(kind, task, settings.effort), agent.compactor.mark)

    # ----------------------------------------------------------------------------------- runs
    def plan(self, task: str, emit: Emit, cancel: threading.Event) -> "PlanResult":
        """The planning pass with its effort hint (``PlanController.plan_pass``)."""
        agent = self.host.agent
        assert agent is not None
        self._install_gate(agent)  # the user's tool hooks see the Plan pass's calls too
        self.effort = self.effort_for("plan", task)
        tagged = _RoundEmit(emit, self.effort, agent.config.max_turns)

        def forward(event: AgentEvent) -> None:
            if isinstance(event, TurnFinished):
                emit(event)
            else:
                tagged(event)

        return self.host.plans.plan_pass(agent, task, forward, cancel, reasoning_effort=self.effort)

    def run(self, task: str, emit: Emit, cancel: threading.Event) -> TurnFinished:
        """Run ``task`` as an Act turn through the pipeline; returns the emitted ``TurnFinished``."""
        agent = self.host.agent
        assert agent is not None
        plans = self.host.plans
        return self._rounds(task, lambda prompt, options, em: plans.run_turn(agent, prompt, em, cancel, options=options),
                            emit, cancel)

    def run_plan(self, plan: "Plan", emit: Emit, cancel: threading.Event) -> TurnFinished:
        """Carry out an approved ``plan`` (``PlanController.execute``) through the pipeline."""
        agent = self.host.agent
        assert agent is not None
        plans = self.host.plans
        task = plan.to_markdown()
        return self._rounds(task, lambda prompt, options, em: plans.execute(agent, plan, em, cancel, options=options),
                            emit, cancel)

    # --------------------------------------------------------------------------------- rounds
    def _rounds(self, task: str, first: Callable[[str, TurnOptions, Emit], TurnFinished], emit: Emit,
                cancel: threading.Event) -> TurnFinished:
        agent = self.host.agent
        assert agent is not None
        self._install_gate(agent)
        self.round = 1
        self._asked = {}
        with self._usage_lock:
            self._review_usage = Usage()
        task = self._pre_run(task, emit, cancel)
        self.effort = self.effort_for("act", task)
        options = TurnOptions(reasoning_effort=self.effort)
        total = agent.config.max_turns
        held = _RoundEmit(emit, self.effort, total)
        used, usage, prompt = 0, Usage(), task
        while True:
            held.round_no = self.round
            held.changes = changes = RoundChanges(self.host.workspace)
            if self.host.settings.verify.enabled or self.host.settings.pipeline.refine:
                changes.start()  # git's picture before the round (only a hook that reads it pays for it)
            start = len(agent.history)
            agent.config.max_turns = max(0, total - used)
            try:
                if self.round == 1:
                    turn = first(prompt, options, held)
                else:
                    turn = self.host.plans.run_turn(agent, prompt, held, cancel, origin="hook", options=options)
            finally:
                agent.config.max_turns = total
            used += sum(1 for m in agent.history[start:] if isinstance(m, AssistantMessage) and m.tool_calls)
            usage = usage + turn.usage
            if turn.stop_reason == "max_turns" and self.round > 1:  # the limit of the whole turn, not the remainder
                turn = turn.model_copy(update={"final_text": MAX_TURNS_TEXT.format(n=total)})
            if turn.stop_reason != "done":
                return self._finish(turn, usage, emit)
            asked = self._post_run(task, turn, changes, emit, cancel)
            if cancel.is_set():
                reason = "interrupted" if was_interrupted(cancel) else "cancelled"
                return self._finish(turn.model_copy(update={"stop_reason": reason}), usage, emit)
            if asked is None:
                return self._finish(turn, usage, emit)
            hook, feedback, summary = asked
            self._asked[hook] = (feedback, summary)
            limit = self.host.settings.verify.max_rounds if hook == "verify" else self.host.settings.pipeline.max_rounds
            if self.round >= limit:
                if hook == "verify":
                    rounds = f"{self.round} round{'s' if self.round != 1 else ''}"
                    text = f"verify still fails after {rounds} (`{self._verify.command()}`: {summary})"
                    return self._finish(turn.model_copy(update={"stop_reason": "verify_failed", "final_text": text}),
                                        usage, emit)
                emit(Notice(message=f"{hook} asked for another round, but max_rounds = {limit} is reached: the run "
                                    "ends here."))
                return self._finish(turn, usage, emit)
            self._reflect(task, feedback, turn.final_text, hook, emit, cancel)
            if cancel.is_set():
                reason = "interrupted" if was_interrupted(cancel) else "cancelled"
                return self._finish(turn.model_copy(update={"stop_reason": reason}), usage, emit)
            prompt = self._round_prompt(feedback)
            self.round += 1

    def _add_usage(self, usage: Usage) -> None:
        """Count a review call's usage in the turn's (called from the hook's thread)."""
        with self._usage_lock:
            self._review_usage = self._review_usage + usage

    def _finish(self, turn: TurnFinished, usage: Usage, emit: Emit) -> TurnFinished:
        """Emit and return the turn's one ``TurnFinished``: the usage of every round and review call."""
        with self._usage_lock:
            usage = usage + self._review_usage
        final = turn.model_copy(update={"usage": usage})
        emit(final)
        return final

    def _round_prompt(self, feedback: str) -> str:
        if not self.lessons:
            return feedback
        pinned = "\n".join(f"- {line}" for lesson in self.lessons[-MAX_LESSONS:] for line in lesson.splitlines())
        return f"{feedback}\n\n{LESSONS_HEADING}\n{pinned}"

    # ---------------------------------------------------------------------------------- hooks
    def _install_gate(self, agent: "Agent") -> None:
        hooks = self.host.settings.hooks
        if hooks.before_tool or hooks.after_tool:
            if not isinstance(agent.tool_gate, UserToolGate):
                agent.tool_gate = UserToolGate(hooks, self.host.workspace, self.runner, lambda: self.round)
        else:
            agent.tool_gate = None

    def _pre_run(self, task: str, emit: Emit, cancel: threading.Event) -> str:
        for name, hook, timeout_s in self.pre_run_hooks:
            outcome = self.runner.run(name, "before_run", 1, lambda stop, h=hook, t=task: h(t, stop),
                                      emit=emit, cancel=cancel, timeout_s=timeout_s)
            if outcome.verdict == "accept" and isinstance(outcome.value, str) and outcome.value.strip():
                task = outcome.value
        return task

    def _post_run(self, task: str, turn: TurnFinished, changes: RoundChanges, emit: Emit,
                  cancel: threading.Event) -> tuple[str, str, str] | None:
        """Run the post-run hooks in order (verify, refine, user after_run); the first that asks
        for a round wins: ``(hook, feedback, one-line summary)``; None when all accept."""
        agent = self.host.agent
        assert agent is not None
        settings = self.host.settings
        changed: bool | None = None

        def has_changes() -> bool:
            nonlocal changed
            if changed is None:
                changed = changes.changed()
            return changed

        if settings.verify.enabled:
            # after a failing verify round, "nothing changed" is no pass: the tests run again
            outcome = self._run_verify(agent, has_changes() or "verify" in self._asked, emit, cancel)
            if outcome.verdict == "accept":
                self._asked.pop("verify", None)
            if outcome.verdict in ("retry", "fail"):  # fail: the last round; _rounds ends it as verify_failed
                return "verify", outcome.value["feedback"], outcome.message.split(" · round")[0]
        if cancel.is_set():
            return None
        if settings.pipeline.refine and has_changes():
            effort = self.effort_for("refine", task)
            diff = changes.diff_text()
            outcome = self.runner.run("refine", "after_run", self.round,
                                      lambda stop: refine(agent, task, turn.final_text, diff, effort, stop,
                                                          self._add_usage, emit),
                                      emit=emit, cancel=cancel, timeout_s=settings.pipeline.hook_timeout_s)
            if outcome.verdict == "accept":
                self._asked.pop("refine", None)
            if outcome.verdict == "retry":
                return "refine", outcome.value["feedback"], outcome.message
        elif settings.pipeline.refine and "refine" in self._asked:  # its points stand: nothing changed since
            feedback, summary = self._asked["refine"]
            stands = HookOutcome("retry", f"{summary.split(' · no file changed')[0]} · no file changed since: the "
                                 "points stand", value={"feedback": feedback})
            outcome = self.runner.run("refine", "after_run", self.round, lambda stop: stands, emit=emit,
                                      cancel=cancel, timeout_s=settings.pipeline.hook_timeout_s)
            if outcome.verdict == "retry":
                return "refine", feedback, outcome.message
        hooks = settings.hooks.after_run
        payload = {"event": "after_run", "task": task, "final_text": turn.final_text, "stop_reason": turn.stop_reason,
                   "round": self.round}
        for hook in hooks:
            if cancel.is_set():
                return None
            name = hook_name("after_run")
            outcome = self.runner.run(name, "after_run", self.round,
                                      lambda stop, h=hook: run_user_hook(h, payload, self.host.workspace,
                                                                         block_on_failure=False, stop=stop),
                                      emit=emit, cancel=cancel, timeout_s=hook.timeout_s + LIMIT_MARGIN_S,
                                      key=hook_key("after_run", hook))
            if outcome.verdict == "retry":
                return name, outcome.value["feedback"], outcome.message
        return None

    def _run_verify(self, agent: "Agent", changed: bool, emit: Emit, cancel: threading.Event) -> HookOutcome:
        settings = self.host.settings.verify
        command = self._verify.command()
        refusal = ""
        if changed and command:
            notice = self._verify.project_notice()
            if notice:
                emit(Notice(message=notice))
            refusal = self._permission.check(agent, command, emit, cancel)
        limit = settings.max_rounds

        def body(stop: threading.Event) -> HookOutcome:
            if not changed:
                return HookOutcome("skipped", "no file changed")
            if not command:
                return HookOutcome("skipped", "no test command found: set verify.command")
            if refusal:
                return HookOutcome("skipped", f"not run: {refusal}")
            outcome = self._verify.run(agent, command, stop)
            if outcome.verdict == "retry" and self.round >= limit:  # still failing, and no rounds left
                return HookOutcome("fail", f"{outcome.message} · round {self.round} of {limit} · no rounds left",
                                   outcome.detail, outcome.value)
            if outcome.verdict == "retry":
                return HookOutcome("retry", f"{outcome.message} · round {self.round} of {limit}", outcome.detail,
                                   outcome.value)
            return outcome

        return self.runner.run("verify", "after_run", self.round, body, emit=emit, cancel=cancel,
                               timeout_s=settings.timeout_s + LIMIT_MARGIN_S)

    def _reflect(self, task: str, failure: str, final_text: str, hook: str, emit: Emit,
                 cancel: threading.Event) -> None:
        """After a failed round: ask for a lesson (``pipeline.reflexion``), keep and journal it."""
        agent = self.host.agent
        if not self.host.settings.pipeline.reflexion or agent is None:
            return
        effort = self.effort_for("reflexion", task)
        outcome = self.runner.run("reflexion", "after_run", self.round,
                                  lambda stop: reflexion(agent, task, failure, final_text, effort, stop,
                                                         self._add_usage, emit),
                                  emit=emit, cancel=cancel, timeout_s=self.host.settings.pipeline.hook_timeout_s)
        if outcome.verdict == "accept" and isinstance(outcome.value, str):
            self.lessons.append(outcome.value)
            if agent.journal is not None:
                agent.journal.append(LessonRecord(text=outcome.value, round=self.round, hook=hook, time=time.time()))
