"""Hook isolation (``agent.pipeline.hooks.HookRunner``): a time limit per hook, an exception
becomes a notice and an ``error`` verdict, three failures switch a hook off; Esc stops a hook."""

from __future__ import annotations

import threading
import time

from agent.events import HookFinished, HookStarted, Notice
from agent.pipeline.hooks import HookOutcome, HookRunner

from tests.helpers import Recorder, make_session


def test_hook_time_out_is_stopped_and_reported_as_timeout():
    runner, emit, stopped = HookRunner(), Recorder(), threading.Event()

    def slow(stop: threading.Event) -> HookOutcome:
        stop.wait(30)
        stopped.set()
        return HookOutcome("accept", "too late")

    outcome = runner.run("verify", "after_run", 1, slow, emit=emit, cancel=threading.Event(), timeout_s=0.2)
    assert outcome.verdict == "timeout"
    assert stopped.wait(5), "the hook's stop event was not set"
    finished = emit.of(HookFinished)[0]
    assert (finished.hook, finished.verdict) == ("verify", "timeout") and "0.2 s" in finished.message
    assert any("Hook verify did not finish" in n.message for n in emit.of(Notice))
    assert [type(e) for e in emit if isinstance(e, (HookStarted, HookFinished))] == [HookStarted, HookFinished]


def test_hook_exception_becomes_notice_and_error_verdict():
    runner, emit = HookRunner(), Recorder()

    def broken(stop):
        raise ValueError("boom")

    outcome = runner.run("refine", "after_run", 2, broken, emit=emit, cancel=threading.Event(), timeout_s=5)
    assert outcome.verdict == "error" and "ValueError: boom" in outcome.message
    assert emit.of(HookFinished)[0].round == 2 and emit.of(HookFinished)[0].verdict == "error"
    assert [n.message for n in emit.of(Notice)] == ["Hook refine failed: ValueError: boom"]


def test_hook_failing_three_times_is_switched_off():
    runner, emit, calls = HookRunner(), Recorder(), []

    def broken(stop):
        calls.append(1)
        raise RuntimeError("nope")

    verdicts = [runner.run("user:after_run", "after_run", 1, broken, emit=emit, cancel=threading.Event(),
                           timeout_s=5).verdict for _ in range(4)]
    assert verdicts == ["error", "error", "error", "disabled"]
    assert len(calls) == 3, "a switched-off hook must not run"
    assert any("failed 3 times: switched off for this session" in n.message for n in emit.of(Notice))
    assert emit.of(HookFinished)[-1].verdict == "disabled"


def test_hook_is_stopped_by_esc():
    runner, emit, cancel = HookRunner(), Recorder(), threading.Event()

    def slow(stop):
        stop.wait(30)
        return HookOutcome("accept")

    threading.Timer(0.2, cancel.set).start()
    started = time.monotonic()
    outcome = runner.run("verify", "after_run", 1, slow, emit=emit, cancel=cancel, timeout_s=60)
    assert outcome.verdict == "skipped" and outcome.message == "cancelled"
    assert time.monotonic() - started < 30  # a hang guard, not a speed figure
    assert runner.failures("verify") == 0


def test_pre_run_hook_rewrites_the_task_and_a_failing_one_does_not(tmp_path):
    session, provider = make_session(tmp_path, [{"content": "ok"}], prepare=True)
    pipeline = session.pipeline
    pipeline.pre_run_hooks.append(("expand", lambda task, stop: HookOutcome("accept", "rewrote", value=task + " (in calc.py)"), 5))
    pipeline.pre_run_hooks.append(("broken", lambda task, stop: 1 / 0, 5))
    emit = Recorder()
    turn = session.run_turn("fix add", emit, threading.Event())
    assert turn.stop_reason == "done"
    assert provider.requests[0].messages[-1] == {"role": "user", "content": "fix add (in calc.py)"}
    assert [(e.hook, e.event, e.verdict) for e in emit.of(HookFinished)] == [
        ("expand", "before_run", "accept"), ("broken", "before_run", "error")]


def test_esc_during_verify_stops_the_test_command_and_cancels_the_turn(tmp_path):
    marker = tmp_path / "still-running"
    write = {"tool_calls": [{"name": "write", "arguments": {"path": "a.py", "content": "x = 2\n"}}]}
    session, _ = make_session(tmp_path, [write, {"content": "done"}],
                              verify={"enabled": True, "command": f"sleep 30; touch {marker}"})
    cancel, emit = threading.Event(), Recorder()
    emit.hooks.append((HookStarted, lambda event: threading.Timer(0.5, cancel.set).start()))
    started = time.monotonic()
    turn = session.run_turn("change a.py", emit, cancel)
    assert turn.stop_reason == "cancelled"
    assert time.monotonic() - started < 25  # a hang guard: the command was killed, not waited for
    assert emit.of(HookFinished)[0].verdict == "skipped" and emit.of(HookFinished)[0].message == "cancelled"
    assert not marker.exists()
