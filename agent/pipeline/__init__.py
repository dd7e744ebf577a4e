"""The quality pipeline around the ReAct loop (DESIGN.md 8): ``Pipeline.run(task, emit, cancel)``.

One user turn becomes: the effort hint (``effort``) -> pre-run hooks (may rewrite the task) -> the
loop (``PlanController.run_turn``, untouched) -> post-run hooks whose verdict is read (``verify``,
``review``: refine and reflexion, user ``after_run`` hooks); a ``retry`` verdict starts another
round in the same conversation with the hook's feedback as a user message of origin ``hook``,
bounded by ``max_rounds``. Every hook runs isolated (``hooks.HookRunner``: own time limit, an
exception becomes a notice, three failures switch it off). User ``before_tool`` / ``after_tool``
hooks reach the loop through its ``tool_gate`` (``user_hooks.UserToolGate``).

Modules: ``hooks`` (isolation), ``effort``, ``detect`` (the test command of a repository),
``verify``, ``review`` (refine, reflexion), ``shell`` (running a hook command), ``user_hooks``,
``changes`` (what a round changed), ``rounds`` (the pipeline itself).
"""

from .rounds import Pipeline

__all__ = ["Pipeline"]
