"""Sub-agents behind the ``task`` tool: parallel runs with results in call order, the limit on
how many run at once, the time limit and the turn cap reported as such, Esc cancelling them all,
read-only tools only, their journals and the link from the parent's, resuming the parent, and
scripted replies numbered per sub-agent (``"for": "subagent", "task": N``)."""

from __future__ import annotations

import json
import stat
import threading
import time

from agent.events import (
    SubagentCompleted,
    SubagentFailed,
    SubagentProgress,
    SubagentStarted,
    ToolCallFinished,
)
from agent.messages import ToolResultMessage
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session
from agent.session.records import SubagentRecord, read_records
from agent.session.resume import load_session
from tests.helpers import Recorder, make_session

FILES = {"calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"}
#: A hang guard for the turns below (seconds), not a speed assertion.
HANG_S = 60.0


def task(description: str, prompt: str = "", **extra) -> dict:
    return {"name": "task", "arguments": {"description": description, "prompt": prompt or f"Do: {description}", **extra}}


def sub(n: int | None, **reply) -> dict:
    return {"for": "subagent", **({"task": n} if n is not None else {}), **reply}


class GatedProvider(ScriptedProvider):
    """A scripted provider whose sub-agent requests can be held: ``hold(n, event)`` makes
    sub-agent ``n`` wait for ``event`` (or its own cancel) before its reply; ``in_flight`` /
    ``peak`` count sub-agent requests being answered at once; ``delay_s`` slows each of them."""

    def __init__(self, replies, delay_s: float = 0.0, **kwargs) -> None:
        super().__init__(replies, **kwargs)
        self.holds: dict[int, threading.Event] = {}
        self.delay_s = delay_s
        self.in_flight = 0
        self.peak = 0
        self._count_lock = threading.Lock()

    def hold(self, n: int, event: threading.Event) -> None:
        self.holds[n] = event

    def stream(self, request, cancel):
        if request.purpose != "subagent":
            yield from super().stream(request, cancel)
            return
        with self._count_lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            gate = self.holds.get(request.task_index)
            end = time.monotonic() + HANG_S
            while gate is not None and not gate.is_set() and not cancel.is_set() and time.monotonic() < end:
                time.sleep(0.01)
            if self.delay_s:
                cancel.wait(self.delay_s)
            if cancel.is_set():
                return
            yield from super().stream(request, cancel)
        finally:
            with self._count_lock:
                self.in_flight -= 1


def gated_session(tmp_path, replies, delay_s: float = 0.0, **settings):
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    for name, text in FILES.items():
        (ws / name).write_text(text)
    from agent.config.settings import Settings

    settings.setdefault("model", "openai/gpt-4.1")
    settings.setdefault("permission_mode", "full-auto")
    provider = GatedProvider(replies, delay_s=delay_s)
    return build_session(ws, Settings(**settings), provider=provider, interactive=False), provider


def run(session, rec=None, prompt="go", cancel=None):
    rec = rec if rec is not None else Recorder()
    box = {}
    cancel = cancel or threading.Event()
    worker = threading.Thread(target=lambda: box.setdefault("result", session.run_turn(prompt, rec, cancel)))
    worker.start()
    worker.join(HANG_S)
    assert not worker.is_alive(), "the turn hung"
    return box["result"], rec


def task_results(session) -> list[ToolResultMessage]:
    return [m for m in session.agent.history if isinstance(m, ToolResultMessage) and m.name == "task"]


def test_parallel_subagent_results_keep_the_call_order_whatever_order_they_finish_in(tmp_path):
    session, provider = gated_session(tmp_path, [
        {"tool_calls": [task("find add"), task("find sub")]},
        {"content": "Both found."},
        sub(1, content="add is in calc.py:1"),
        sub(2, content="sub is in calc.py:5"),
    ])
    second_done = threading.Event()
    provider.hold(1, second_done)  # the first sub-agent answers only after the second finished
    rec = Recorder()
    rec.hooks.append((SubagentCompleted, lambda e: e.index == 2 and second_done.set()))
    result, rec = run(session, rec)
    assert result.stop_reason == "done"
    assert [e.index for e in rec.of(SubagentCompleted)] == [2, 1]
    assert [m.content for m in task_results(session)] == ["add is in calc.py:1", "sub is in calc.py:5"]
    finished = [e for e in rec.of(ToolCallFinished) if e.name == "task"]
    assert [e.output for e in finished] == ["add is in calc.py:1", "sub is in calc.py:5"]
    final_request = [r for r in provider.requests if r.purpose == "main"][-1].messages
    tool_ids = [m["tool_call_id"] for m in final_request if m["role"] == "tool"]
    calls = [c["id"] for m in final_request if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert tool_ids == calls  # answered in the calls' order


def test_at_most_four_subagents_run_at_once_with_six_asked(tmp_path):
    replies = [{"tool_calls": [task(f"part {n}") for n in range(1, 7)]}, {"content": "done"}]
    replies += [sub(n, content=f"result {n}") for n in range(1, 7)]
    session, provider = gated_session(tmp_path, replies, delay_s=0.3)
    result, rec = run(session)
    assert result.stop_reason == "done"
    assert provider.peak == 4
    assert len(rec.of(SubagentStarted)) == 6
    assert [m.content for m in task_results(session)] == [f"result {n}" for n in range(1, 7)]


def test_max_parallel_setting_limits_the_subagents_running_at_once(tmp_path):
    replies = [{"tool_calls": [task(f"part {n}") for n in range(1, 4)]}, {"content": "done"}]
    replies += [sub(n, content=f"result {n}") for n in range(1, 4)]
    session, provider = gated_session(tmp_path, replies, delay_s=0.2, subagents={"max_parallel": 1})
    result, _ = run(session)
    assert result.stop_reason == "done" and provider.peak == 1


def test_subagent_over_its_time_limit_is_reported_as_a_timeout_not_a_result(tmp_path):
    session, provider = gated_session(tmp_path, [
        {"tool_calls": [task("slow search"), task("quick look")]},
        {"content": "One timed out."},
        sub(1, content="never sent"),
        sub(2, content="quick answer"),
    ], subagents={"time_limit_s": 0.5})
    provider.hold(1, threading.Event())  # never released: only the time limit ends it
    result, rec = run(session)
    assert result.stop_reason == "done"
    first, second = task_results(session)
    assert first.is_error and "time limit of 0.5 s" in first.content and "not a result" in first.content
    assert not second.is_error and second.content == "quick answer"
    failed = rec.of(SubagentFailed)
    assert [(e.index, e.stop_reason) for e in failed] == [(1, "timeout")]
    assert [e.index for e in rec.of(SubagentCompleted)] == [2]


def test_subagent_at_its_turn_cap_is_an_error_result_that_says_so(tmp_path):
    grep = {"name": "grep", "arguments": {"pattern": "def"}}
    glob = {"name": "glob", "arguments": {"pattern": "*.py"}}
    session, _ = make_session(tmp_path, [
        {"tool_calls": [task("explore", max_turns=1)]},
        {"content": "It ran out of steps."},
        sub(1, content="Looking at the definitions.", tool_calls=[grep]),
        sub(1, tool_calls=[glob]),
    ], files=FILES)
    result, rec = run(session)
    assert result.stop_reason == "done"
    (answer,) = task_results(session)
    assert answer.is_error
    assert "turn cap (max_turns = 1)" in answer.content and "not a result" in answer.content
    assert "Looking at the definitions." in answer.content  # its notes, marked unfinished
    (failed,) = rec.of(SubagentFailed)
    assert failed.stop_reason == "max_turns"
    (finished,) = [e for e in rec.of(ToolCallFinished) if e.name == "task"]
    assert finished.is_error and finished.outcome == "error"


def test_turn_cap_of_a_call_cannot_exceed_the_configured_one(tmp_path):
    grep = {"name": "grep", "arguments": {"pattern": "def"}}
    replies = [{"tool_calls": [task("explore", max_turns=50)]}, {"content": "ok"}]
    replies += [sub(1, tool_calls=[grep])] * 3
    session, _ = make_session(tmp_path, replies, files=FILES, subagents={"max_turns": 2})
    result, rec = run(session)
    (answer,) = task_results(session)
    assert "max_turns = 2" in answer.content
    # the model is not told to ask for more steps than the settings allow
    assert "higher max_turns" not in answer.content and "2 steps is the most a sub-agent may take" in answer.content


def test_esc_cancels_every_running_subagent_and_every_call_gets_a_result(tmp_path):
    replies = [{"tool_calls": [task("a"), task("b"), task("c")]}]
    replies += [sub(n, content=f"result {n}") for n in range(1, 4)]
    session, provider = gated_session(tmp_path, replies, subagents={"max_parallel": 2})
    for n in range(1, 4):
        provider.hold(n, threading.Event())
    cancel = threading.Event()
    rec = Recorder()
    started: list[int] = []

    def on_started(event):
        started.append(event.index)
        if len(started) == 2:  # both slots busy: press Esc
            cancel.set()

    rec.hooks.append((SubagentStarted, on_started))
    result, rec = run(session, rec, cancel=cancel)
    assert result.stop_reason == "cancelled"
    answers = task_results(session)
    assert len(answers) == 3 and all(m.is_error for m in answers)
    assert all("cancelled" in m.content.lower() for m in answers)
    assert {e.stop_reason for e in rec.of(SubagentFailed)} == {"cancelled"}
    assert sorted(e.index for e in rec.of(SubagentFailed)) == [1, 2, 3]
    outcomes = [e.outcome for e in rec.of(ToolCallFinished) if e.name == "task"]
    assert outcomes == ["cancelled"] * 3


def test_subagent_asking_for_write_is_refused_and_nothing_starts(tmp_path):
    session, _ = make_session(tmp_path, [
        {"tool_calls": [task("edit it", tools=["read", "write"])]},
        {"content": "Refused."},
    ], files=FILES)
    result, rec = run(session)
    (answer,) = task_results(session)
    assert answer.is_error and "Refused" in answer.content and "write" in answer.content
    assert "read-only" in answer.content
    assert not rec.of(SubagentStarted)


def test_subagent_gets_read_only_tools_and_no_task_tool(tmp_path):
    write = {"name": "write", "arguments": {"path": "calc.py", "content": "gone"}}
    session, provider = make_session(tmp_path, [
        {"tool_calls": [task("try to write")]},
        {"content": "ok"},
        sub(1, tool_calls=[write]),
        sub(1, content="I cannot write."),
    ], files=FILES)
    run(session)
    child_requests = [r for r in provider.requests if r.purpose == "subagent"]
    offered = {t["function"]["name"] for t in child_requests[0].tools}
    assert offered <= {"read", "grep", "glob", "think"} and {"read", "grep", "glob"} <= offered
    assert "task" not in offered and "write" not in offered and "bash" not in offered
    refusal = [m for m in child_requests[1].messages if m["role"] == "tool"][0]["content"]
    assert refusal.startswith("Refused: 'write' is not available in a sub-agent (read-only)")
    assert (tmp_path / "ws" / "calc.py").read_text() == FILES["calc.py"]
    assert "sub-agent" in child_requests[0].messages[0]["content"]


def test_subagent_journal_is_written_and_linked_from_the_parent_journal(tmp_path):
    grep = {"name": "grep", "arguments": {"pattern": "def add"}}
    session, _ = make_session(tmp_path, [
        {"tool_calls": [task("find add")]},
        {"content": "found"},
        sub(1, tool_calls=[grep]),
        sub(1, content="calc.py:1"),
    ], files=FILES)
    result, rec = run(session)
    links = [r for r in read_records(session.journal_path) if isinstance(r, SubagentRecord)]
    assert [r.event for r in links] == ["started", "finished"]
    assert links[1].stop_reason == "done" and links[1].index == 1 and links[1].description == "find add"
    path = links[0].journal_path(session.journal_path)
    (started,) = rec.of(SubagentStarted)
    assert str(path) == started.journal_path
    assert path.parent == session.output_dir / "subagents"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    child = load_session(path)
    roles = [m.role for m in child.messages]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert child.messages[0].content == "Do: find add" and child.messages[-1].content == "calc.py:1"
    assert child.system_prompt is not None and "sub-agent" in child.system_prompt.text


def test_parent_resumes_after_subagents_with_a_valid_history(tmp_path):
    session, _ = make_session(tmp_path, [
        {"tool_calls": [task("find add"), task("find sub")]},
        {"content": "found both"},
        sub(1, content="calc.py:1"),
        sub(2, content="calc.py:5"),
    ], files=FILES)
    run(session)
    session_id = session.session_id
    session.close()
    provider = ScriptedProvider([{"content": "resumed fine"}])
    resumed = build_session(tmp_path / "ws", session.settings, provider=provider, interactive=False, resume=session_id)
    result, _ = run(resumed, prompt="and now?")
    assert result.stop_reason == "done" and result.final_text == "resumed fine"
    tools = [m for m in provider.requests[0].messages if m["role"] == "tool"]
    assert [m["content"] for m in tools] == ["calc.py:1", "calc.py:5"]
    resumed.close()


def test_subagent_requests_say_who_sends_them_and_the_replay_log_says_it(tmp_path):
    log = tmp_path / "requests.jsonl"
    ws = tmp_path / "ws"
    ws.mkdir()
    from agent.config.settings import Settings

    provider = ScriptedProvider([{"tool_calls": [task("a"), task("b")]}, {"content": "ok"},
                                 sub(2, content="two"), sub(None, content="any")], log_path=log)
    session = build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="full-auto"), provider=provider,
                            interactive=False)
    run(session)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted((line["purpose"], line.get("task")) for line in lines) == [
        ("main", None), ("main", None), ("subagent", 1), ("subagent", 2)]
    assert [m.content for m in task_results(session)] == ["any", "two"]


def _numbered_run(tmp_path, name):
    grep = {"name": "grep", "arguments": {"pattern": "def"}}
    replies = [{"tool_calls": [task("one"), task("two"), task("three")]}, {"content": "ok"},
               sub(3, content="three done"), sub(2, tool_calls=[grep]), sub(1, content="one done"),
               sub(2, content="two done", usage={"prompt_tokens": 5, "completion_tokens": 2})]
    session, provider = gated_session(tmp_path / name, replies)
    result, rec = run(session)
    events = [e.to_json_dict() for e in rec if isinstance(e, (ToolCallFinished, SubagentFailed))]
    for event in events:
        event.pop("duration_s", None)
    subagent = sorted((r.task_index, json.dumps(r.messages)) for r in provider.requests if r.purpose == "subagent")
    return [m.content for m in task_results(session)], events, subagent


def test_numbered_subagent_replies_make_parallel_runs_identical(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = _numbered_run(tmp_path, "a")
    second = _numbered_run(tmp_path, "b")
    assert first[0] == ["one done", "two done", "three done"]
    assert first[0] == second[0] and first[1] == second[1]
    assert [(i, m.replace("/b/", "/a/")) for i, m in second[2]] == first[2]


def test_progress_events_carry_steps_tokens_and_the_last_tool(tmp_path):
    grep = {"name": "grep", "arguments": {"pattern": "def"}}
    session, _ = make_session(tmp_path, [
        {"tool_calls": [task("look")]}, {"content": "ok"},
        sub(1, tool_calls=[grep], usage={"prompt_tokens": 100, "completion_tokens": 20}),
        sub(1, content="done", usage={"prompt_tokens": 150, "completion_tokens": 10}),
    ], files=FILES)
    _, rec = run(session)
    progress = rec.of(SubagentProgress)
    assert [p.tokens for p in progress if p.step == 2][0] == 120  # the first call's, when step 2 starts
    assert progress[-1].step == 2 and progress[-1].tokens == 280 and progress[-1].last_tool == "grep"
    (done,) = rec.of(SubagentCompleted)
    assert done.usage.prompt_tokens == 250 and done.usage.completion_tokens == 30 and done.summary == "done"


def test_the_same_task_asked_a_third_time_with_the_same_result_is_not_run(tmp_path):
    same = task("find add", "Where is add defined?")
    replies = [{"tool_calls": [same]}, {"tool_calls": [same]}, {"tool_calls": [same]}, {"content": "ok"}]
    replies += [sub(None, content="calc.py:1")] * 3
    session, _ = make_session(tmp_path, replies, files=FILES)
    result, rec = run(session)
    assert result.stop_reason == "done"
    answers = task_results(session)
    assert [m.content for m in answers[:2]] == ["calc.py:1", "calc.py:1"]
    assert answers[2].is_error and answers[2].content.startswith("Not run:")
    assert len(rec.of(SubagentStarted)) == 2


def test_planning_pass_may_use_subagents(tmp_path):
    steps = [{"description": f"Step {n} on calc.py", "files": ["calc.py"], "rationale": "the task"} for n in (1, 2, 3)]
    plan = {"title": "Fix add", "steps": steps, "risks": ["none"]}
    session, _ = make_session(tmp_path, [
        {"tool_calls": [task("find add")]},
        {"tool_calls": [{"name": "submit_plan", "arguments": plan}]},
        sub(1, content="calc.py:1"),
    ], files=FILES)
    rec = Recorder()
    result = session.plan_turn("fix add", rec, threading.Event())
    assert result.plan is not None, [e.output for e in rec.of(ToolCallFinished)]
    (answer,) = task_results(session)
    assert not answer.is_error and answer.content == "calc.py:1"


def test_a_long_subagent_answer_is_truncated_with_its_full_text_saved(tmp_path):
    from pathlib import Path

    long_answer = "".join(f"finding {n}: calc.py line {n}\n" for n in range(400))
    session, _ = make_session(tmp_path, [{"tool_calls": [task("list everything")]}, {"content": "ok"},
                                         sub(1, content=long_answer)], files=FILES, max_tool_output=2000)
    _, rec = run(session)
    (finished,) = [e for e in rec.of(ToolCallFinished) if e.name == "task"]
    assert finished.truncated and not finished.is_error and len(finished.output) < 4000
    assert Path(finished.saved_path).read_text() == long_answer.strip()


def test_a_subagent_whose_provider_reports_no_usage_still_counts_its_tokens(tmp_path):
    """Without reported usage the figures are the local estimates ``model_call_finished`` carries,
    never 0 for a sub-agent that read and answered."""
    session, _ = make_session(tmp_path, [
        {"tool_calls": [task("look")]}, {"content": "ok"},
        sub(1, tool_calls=[{"name": "grep", "arguments": {"pattern": "def"}}]), sub(1, content="done"),
    ], files=FILES)
    _, rec = run(session)
    (done,) = rec.of(SubagentCompleted)
    assert done.usage.prompt_tokens > 0 and rec.of(SubagentProgress)[-1].tokens > 0
