"""Long scripted sessions in eight shapes, each with the ground truth it scripted.

``make_script(shape, steps, window)`` returns a ``Script``: how to build the workspace (a real
scratch git repository), the segments to run (user turns, a planning pass and its execution, a
reopen of the session from its journal) and, per scripted model reply (a *step*: one model call),
the facts that reply creates: files changed (by ``edit``/``write`` and by ``bash``: ``sed -i``,
``printf > f``), test runs with their expected outcome, plan states. ``steps`` is the number of
scripted model replies (main requests), approximately; ``window`` is the context window in tokens.

Scripts are valid against the real tools: reads name files that exist, every ``edit``'s
``old_string`` occurs exactly once at that point, test outcomes are computed by evaluating the
scripted module versions in-process (``repos.BuggyRepo``), and the runner checks each real result
against what was expected (``Step.expect``).

Shapes (``SHAPES``): ``one_long_turn``, ``many_short_turns``, ``plan_then_execute``,
``resume_midway``, ``reasoning``, ``huge_outputs``, ``failing_tests``, ``late_constraint``.
"""

from __future__ import annotations

import shlex
import sys
from typing import Callable

from .repos import VALUES_PER_MODULE, BuggyRepo, dev_repo
from .script import MODEL, PYTEST, Expect, PytestRun, Script, Segment, Step, bash, call, reply  # noqa: F401 (re-exported)

SHAPES = ("one_long_turn", "many_short_turns", "plan_then_execute", "resume_midway", "reasoning",
          "huge_outputs", "failing_tests", "late_constraint")


# ------------------------------------------------------------------- the dev-work vocabulary
class DevWork:
    """Emits varied, valid steps against ``dev_repo(modules)`` and tracks what they change.

    Each ``next()`` returns one ``Step``; the kinds rotate (a bash output of a few KB, a cat of a
    log, a read, an edit of the file just read, a real pytest run, ``sed -i``/``printf >`` changes)
    so no two consecutive calls are identical (the stuck-loop guard stays quiet).
    """

    KINDS = ("seq", "cat", "read", "edit", "pytest", "wc", "sed", "printf")

    def __init__(self, modules: int, *, kinds: tuple[str, ...] = KINDS, big: int = 0) -> None:
        self.modules = modules
        self.kinds = kinds
        self.big = big
        self.k = 0
        self.edits: dict[int, int] = {}  # module -> next constant to edit
        #: When set, every step works on this module (a plan step names its file).
        self.pin_module: int | None = None
        self.all_tests = frozenset(f"test_mod_{m:02d}_values_are_ints" for m in range(modules))

    def _module(self) -> int:
        if self.pin_module is not None:
            return self.pin_module
        return (self.k // len(self.kinds)) % self.modules

    def next(self, *, content: str | None = None, reasoning: str | None = None) -> Step:
        kind = self.kinds[self.k % len(self.kinds)]
        k, m = self.k, self._module()
        self.k += 1
        text = dict(content=content, reasoning=reasoning)
        if kind == "seq":
            return Step(reply(bash(f"seq 1 {700 + k}"), **text), expect=Expect(contains=(str(700 + k),)))
        if kind == "cat":
            return Step(reply(bash(f"cat data/log_{k % 12}.txt"), **text), expect=Expect(contains=("processed batch",)))
        if kind == "read":
            return Step(reply(call("read", path=f"pkg/mod_{m:02d}.py"), **text),
                        expect=Expect(contains=(f"VALUE_{m:02d}_00",)))
        if kind == "edit":
            j = self.edits.get(m, 0)
            if j >= VALUES_PER_MODULE:  # every constant of this module done: read instead
                return Step(reply(call("read", path=f"pkg/mod_{m:02d}.py", offset=1 + k % 20), **text))
            self.edits[m] = j + 1
            name = f"VALUE_{m:02d}_{j:02d}"
            return Step(reply(call("edit", path=f"pkg/mod_{m:02d}.py", old_string=f"{name} = 0\n",
                                   new_string=f"{name} = {j + 1}\n"), **text),
                        changed=(f"pkg/mod_{m:02d}.py",))
        if kind == "pytest":
            run = PytestRun(PYTEST, self.all_tests, (), len(self.all_tests))
            return Step(reply(bash(PYTEST), **text), test_runs=(run,), expect=Expect(contains=(run.counts_line,)))
        if kind == "wc":
            return Step(reply(bash(f"wc -l data/*.txt pkg/*.py | tail -n {3 + k % 5}"), **text))
        if kind == "sed":
            return Step(reply(bash(f"sed -i 's/^LEVEL = .*/LEVEL = \"level-{k}\"/' pkg/settings.py && "
                                   f"cat pkg/settings.py"), **text),
                        changed=("pkg/settings.py",), expect=Expect(contains=(f"level-{k}",)))
        if kind == "printf":
            return Step(reply(bash(f"mkdir -p notes && printf 'checked up to step %d\\n' {k} > notes/progress_{(k // 8) % 4}.txt "
                                   f"&& cat notes/progress_{(k // 8) % 4}.txt"), **text),
                        changed=(f"notes/progress_{(k // 8) % 4}.txt",), expect=Expect(contains=(f"checked up to step {k}",)))
        if kind == "huge_seq":
            return Step(reply(bash(f"seq 1 {20000 + k}"), **text), expect=Expect(truncated=True))
        if kind == "huge_py":
            code = f"for i in range({3000 + k}): print(f'row {{i:05d}} status=ok payload=' + 'x' * (i % 40))"
            return Step(reply(bash(f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"), **text),
                        expect=Expect(truncated=True))
        if kind == "huge_cat":
            return Step(reply(bash(f"cat data/big_{k % max(1, self.big)}.log"), **text), expect=Expect(truncated=True))
        if kind == "page":
            return Step(reply(call("read", path=f"data/big_{k % max(1, self.big)}.log", offset=1 + (97 * k) % 4600, limit=300),
                              **text), expect=Expect(contains=("processed batch",)))
        raise ValueError(kind)


def _final(text: str) -> Step:
    return Step(reply(content=text))


# ------------------------------------------------------------------------------------ shapes
def one_long_turn(steps: int, window: int) -> Script:
    """One user task, ``steps - 1`` tool steps, then a final answer, all in one turn: first an
    investigation of bash calls only (60% of the steps: ``seq``, ``cat`` of logs, real pytest,
    ``wc``; the shape the issue saw never compact), then read -> edit -> test work."""
    modules = max(3, steps // 40 + 2)
    explore = DevWork(modules, kinds=("seq", "cat", "pytest", "wc"))
    work = DevWork(modules)
    work.k = 1000  # other arguments than the investigation's
    task = (f"Task: in pkg/mod_*.py set every VALUE constant to its index plus one, check the logs in data/ "
            f"as you go, and keep the test suite passing.")
    tool_steps = max(1, steps - 1)
    body = [explore.next() for _ in range(tool_steps * 3 // 5)]
    body += [work.next() for _ in range(tool_steps - len(body))]
    return Script("one_long_turn", steps, window, dev_repo(modules),
                  [Segment("turn", task, body + [_final("Done: constants set, suite passing.")])])


def many_short_turns(steps: int, window: int) -> Script:
    """Many user turns of 1-3 tool steps each plus a final answer per turn."""
    modules = max(3, steps // 40 + 2)
    work = DevWork(modules)
    segments = []
    used, t = 0, 0
    while used < steps:
        size = 1 + t % 3
        prompt = f"Turn {t + 1}: continue with the next item of the checklist (part {t + 1})."
        if t == 0:
            prompt = "Task: walk through the repository item by item as I ask; keep the suite passing."
        body = [work.next() for _ in range(size)] + [_final(f"Item {t + 1} done.")]
        segments.append(Segment("turn", prompt, body))
        used += len(body)
        t += 1
    return Script("many_short_turns", steps, window, dev_repo(modules), segments)


def plan_then_execute(steps: int, window: int) -> Script:
    """A read-only planning pass ending in ``submit_plan``, approval, and an execution turn that
    works through the plan and checks each step off with ``update_plan``."""
    n_plan = max(3, min(10, steps // 8))
    modules = n_plan
    work = DevWork(modules, kinds=("read", "edit", "pytest", "seq", "edit", "cat"))
    task = "Task: plan, then carry out, setting the VALUE constants of every pkg module to their final values."
    descriptions = [f"Set the constants of pkg/mod_{m:02d}.py" for m in range(n_plan)]
    plan_args = {"title": "Set the constants",
                 "steps": [{"description": d, "files": [f"pkg/mod_{m:02d}.py"], "rationale": f"module {m:02d} is due"}
                           for m, d in enumerate(descriptions)],
                 "risks": ["tests import every module"]}
    planning = Segment("plan", task, [
        Step(reply(call("read", path="pkg/mod_00.py"))),
        Step(reply(call("glob", pattern="pkg/*.py"))),
        Step(reply(call("submit_plan", **plan_args)), expect=Expect(contains=("Plan submitted",))),
    ])
    states = [[d, "pending"] for d in descriptions]
    body: list[Step] = []
    budget = max(n_plan * 3, steps - len(planning.steps) - 1)
    per = max(3, budget // n_plan)
    for i in range(n_plan):
        states[i][1] = "in_progress"
        body.append(Step(reply(call("update_plan", step=i + 1, status="in_progress"), call("read", path=f"pkg/mod_{i:02d}.py")),
                         plan=tuple(map(tuple, states))))
        work.pin_module = i  # the work of this plan step is on its own file
        for _ in range(per - 2):
            body.append(work.next())
        states[i][1] = "done"
        body.append(Step(reply(call("update_plan", step=i + 1, status="done", note=f"module {i:02d} set")),
                         plan=tuple(map(tuple, states))))
    body.append(_final("All plan steps are done."))
    execute = Segment("execute", "", body, instruction=False, plan=tuple((d, "pending") for d in descriptions))
    return Script("plan_then_execute", steps, window, dev_repo(modules), [planning, execute])


def resume_midway(steps: int, window: int) -> Script:
    """Half the work in one turn, the session closed and continued from its journal
    (``--continue``), then the second half in a new turn."""
    modules = max(3, steps // 40 + 2)
    work = DevWork(modules)
    half = max(2, steps // 2)
    first = [work.next() for _ in range(half - 1)] + [_final("First half done; stopping here.")]
    second = [work.next() for _ in range(max(1, steps - half - 1))] + [_final("Second half done.")]
    task = "Task: set the VALUE constants in pkg/mod_*.py to their index plus one; we will stop halfway."
    return Script("resume_midway", steps, window, dev_repo(modules), [
        Segment("turn", task, first), Segment("reopen"),
        Segment("turn", "Continue where you stopped: finish the remaining constants.", second)])


def reasoning(steps: int, window: int) -> Script:
    """One long turn whose replies carry reasoning: ``reasoning_content`` on every other step,
    ``<think>...</think>`` in the content on every third."""
    modules = max(3, steps // 40 + 2)
    work = DevWork(modules)
    body = []
    for k in range(max(1, steps - 1)):
        thought = (f"Step {k}: the previous output looked fine; the next thing to check is the module "
                   f"constants and whether the suite still passes after the change. " * 3).strip()
        content = f"<think>{thought}</think>Working on step {k}." if k % 3 == 0 else None
        body.append(work.next(content=content, reasoning=thought if k % 2 == 0 else None))
    task = "Task: set the VALUE constants in pkg/mod_*.py to their index plus one, thinking each step through."
    return Script("reasoning", steps, window, dev_repo(modules), [Segment("turn", task, body + [_final("Done.")])])


def huge_outputs(steps: int, window: int) -> Script:
    """One turn whose tools print thousands of lines (truncated and saved by the tools), mixed with
    paged reads of a 5000-line file and small edits."""
    modules = 3
    work = DevWork(modules, kinds=("huge_seq", "read", "edit", "huge_py", "page", "huge_cat", "pytest"), big=2)
    body = [work.next() for _ in range(max(1, steps - 1))]
    task = "Task: find the slow batches in the big logs under data/ and set the module constants meanwhile."
    return Script("huge_outputs", steps, window, dev_repo(modules, big_logs=2),
                  [Segment("turn", task, body + [_final("Slow batches listed.")])])


def late_constraint(steps: int, window: int) -> Script:
    """A task turn that bumps setup.py's version with ``sed -i``, then a later user message adding
    a constraint (do not touch setup.py) that must survive every compaction, then more work."""
    modules = max(3, steps // 40 + 2)
    work = DevWork(modules)
    first_n = max(3, steps // 3)
    first = [Step(reply(bash("sed -i 's/version=\"0.1.0\"/version=\"0.2.0\"/' setup.py && cat setup.py")),
                  changed=("setup.py",), expect=Expect(contains=('version="0.2.0"',)))]
    first += [work.next() for _ in range(first_n - 2)] + [_final("Version bumped and first modules done.")]
    rest = [work.next() for _ in range(max(1, steps - first_n - 1))] + [_final("Remaining modules done; setup.py untouched.")]
    return Script("late_constraint", steps, window, dev_repo(modules), [
        Segment("turn", "Task: bump the version in setup.py to 0.2.0, then set the VALUE constants in pkg/mod_*.py.", first),
        Segment("turn", "New constraint: do not touch setup.py from now on. Continue with the remaining modules.", rest)])



def failing_tests(steps: int, window: int) -> Script:
    """A real buggy repo; per bug, a cycle of 8 steps: the full suite fails (real tracebacks), read,
    a wrong fix, the module's tests still fail, read again, the right fix, a passing ``-k`` subset
    run (which resolves nothing wider), the module's file passing. The suite passes at the end.

    The first cycle is its own turn, ended right after the passing subset run and followed by a
    manual compaction (``/compact``): one boundary, at least, where the full suite's failure is
    unresolved and older than a passing subset run. The rest is one long second turn.
    """
    buggy = max(2, -(-(steps - 3) // 8))  # 8 steps per bug, 3 more: at least ``steps``
    repo = BuggyRepo(buggy)
    every = list(range(repo.n))

    def test_step(modules: list[int], keyword: str | None = None) -> Step:
        run = repo.run(modules, keyword)
        return Step(reply(bash(run.command)), test_runs=(run,),
                    expect=Expect(errors=bool(run.failed), contains=(run.counts_line,)))

    def cycle(j: int) -> list[Step]:
        path = f"calc/mod_{j:02d}.py"
        out = [test_step(every), Step(reply(call("read", path=path)))]
        out.append(Step(reply(call("edit", path=path, old_string=repo.line(j, "bug"), new_string=repo.line(j, "wrong"))),
                        changed=(path,)))
        repo.version[j] = "wrong"
        out += [test_step([j]), Step(reply(call("read", path=path)))]
        out.append(Step(reply(call("edit", path=path, old_string=repo.line(j, "wrong"), new_string=repo.line(j, "right"))),
                        changed=(path,)))
        repo.version[j] = "right"
        out += [test_step([j], "basic"), test_step([j])]
        return out

    first = cycle(0)
    second = [first.pop()]  # the module's file run opens the second turn
    first.append(_final("The basic test of calc/mod_00.py passes now; the rest of the suite is next."))
    for j in range(1, buggy):
        second += cycle(j)
    second += [test_step(every), _final("All tests pass now.")]
    repo.version = ["bug" if j < buggy else "right" for j in range(repo.n)]  # the repo as set up
    task = "Task: the test suite fails; find and fix the bugs in calc/ until `pytest` passes."
    return Script("failing_tests", steps, window, repo.setup, [
        Segment("turn", task, first), Segment("compact"),
        Segment("turn", "Continue: make the whole suite pass, one module at a time.", second)])


_MAKERS: dict[str, Callable[[int, int], Script]] = {
    "one_long_turn": one_long_turn, "many_short_turns": many_short_turns, "plan_then_execute": plan_then_execute,
    "resume_midway": resume_midway, "reasoning": reasoning, "huge_outputs": huge_outputs,
    "failing_tests": failing_tests, "late_constraint": late_constraint,
}


def make_script(shape: str, steps: int, window: int) -> Script:
    """Return the script of ``shape`` with about ``steps`` model calls for a ``window``-token window."""
    if shape not in _MAKERS:
        raise ValueError(f"unknown shape {shape!r} (one of {', '.join(SHAPES)})")
    return _MAKERS[shape](steps, window)
