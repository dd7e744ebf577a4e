"""refine and reflexion rounds with the scripted provider: what the model is sent, how its answer
is read, the lesson pinned for the next round and journaled (restored on resume)."""

from __future__ import annotations

import threading

from agent.events import HookFinished
from agent.session.records import LessonRecord
from agent.session.resume import load_session

from tests.helpers import Recorder, make_session


def write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write", "arguments": {"path": path, "content": content}}]}


def test_refine_points_start_a_round_and_accept_ends_it(tmp_path):
    session, provider = make_session(tmp_path, [
        write("greet.py", "def hello():\n    return 'hi'\n"), {"content": "Added greet.py."},
        {"content": "1. greet.py: the task asks for greet(), not hello(); rename it."},
        write("greet.py", "def greet():\n    return 'hi'\n"), {"content": "Renamed."},
        {"content": "ACCEPT"},
    ], pipeline={"refine": True})
    emit = Recorder()
    turn = session.run_turn("add a greet() function in greet.py", emit, threading.Event())
    assert turn.stop_reason == "done" and turn.final_text == "Renamed."
    purposes = [r.purpose for r in provider.requests]
    assert purposes == ["main", "main", "refine", "main", "main", "refine"]
    review = provider.requests[2]
    assert review.tools == [] and review.messages[0]["role"] == "system" and "ACCEPT" in review.messages[0]["content"]
    asked = review.messages[1]["content"]
    assert "add a greet() function in greet.py" in asked and "+def hello():" in asked and "Added greet.py." in asked
    round_two = provider.requests[3].messages[-1]
    assert round_two["role"] == "user" and "rename it" in round_two["content"]
    assert [(h.hook, h.verdict, h.round) for h in emit.of(HookFinished)] == [("refine", "retry", 1), ("refine", "accept", 2)]
    assert (tmp_path / "ws" / "greet.py").read_text().startswith("def greet")


def test_refine_is_not_asked_when_the_run_changed_nothing(tmp_path):
    session, provider = make_session(tmp_path, [{"content": "It prints hi."}], pipeline={"refine": True})
    session.run_turn("what does it print?", Recorder(), threading.Event())
    assert [r.purpose for r in provider.requests] == ["main"]


def test_reflexion_lesson_is_pinned_for_the_next_round_and_journaled(tmp_path):
    lesson = "Read the task's function name before writing.\nRun the tests after each edit.\nKeep it small."
    session, provider = make_session(tmp_path, [
        write("greet.py", "def hello(): ...\n"), {"content": "Done."},
        {"content": "1. Use the name greet."},
        {"content": lesson + "\nA fourth line that is cut."},
        write("greet.py", "def greet(): ...\n"), {"content": "Done again."},
        {"content": "ACCEPT"},
    ], pipeline={"refine": True, "reflexion": True})
    emit = Recorder()
    turn = session.run_turn("add greet() in greet.py", emit, threading.Event())
    assert turn.stop_reason == "done"
    assert [r.purpose for r in provider.requests] == ["main", "main", "refine", "reflexion", "main", "main", "refine"]
    asked = provider.requests[3].messages[1]["content"]
    assert "add greet() in greet.py" in asked and "Use the name greet." in asked
    pinned = provider.requests[4].messages[-1]["content"]
    assert "Lessons from earlier failed rounds" in pinned
    assert "- Read the task's function name before writing.\n- Run the tests after each edit.\n- Keep it small." in pinned
    assert "fourth line" not in pinned
    reflexion = next(h for h in emit.of(HookFinished) if h.hook == "reflexion")
    assert reflexion.verdict == "accept" and reflexion.detail == lesson
    path = session.journal_path
    session.close()
    records = load_session(path).of_kind(LessonRecord)
    assert [(r.text, r.round, r.hook) for r in records] == [(lesson, 1, "refine")]


def test_resumed_session_pins_its_lessons_in_the_next_round(tmp_path):
    from agent.config.settings import Settings
    from agent.providers.scripted import ScriptedProvider
    from agent.runtime.build import build_session

    session, _ = make_session(tmp_path, [
        write("a.py", "x = 1\n"), {"content": "Done."}, {"content": "1. Use y."}, {"content": "Name it y."},
        write("a.py", "y = 1\n"), {"content": "Done."}, {"content": "ACCEPT"},
    ], pipeline={"refine": True, "reflexion": True})
    session.run_turn("set y in a.py", Recorder(), threading.Event())
    session_id = session.session_id
    session.close()
    provider = ScriptedProvider([write("b.py", "z = 1\n"), {"content": "Done."}, {"content": "1. More."},
                                 {"content": "Check names."}, {"content": "Fine."}, {"content": "ACCEPT"}])
    resumed = build_session(tmp_path / "ws", Settings(model="openai/gpt-4.1", permission_mode="full-auto",
                                                      pipeline={"refine": True, "reflexion": True}),
                            provider=provider, interactive=False, resume=session_id)
    resumed.prepare()
    assert resumed.pipeline.lessons == ["Name it y."]
    resumed.run_turn("add b.py", Recorder(), threading.Event())
    pinned = provider.requests[4].messages[-1]["content"]
    assert "- Name it y.\n- Check names." in pinned
    resumed.close()


def test_review_calls_count_in_the_turn_usage(tmp_path):
    usage = {"prompt_tokens": 100, "completion_tokens": 10}
    session, _ = make_session(tmp_path, [
        {**write("a.py", "x = 1\n"), "usage": usage}, {"content": "Done.", "usage": usage},
        {"content": "ACCEPT", "usage": {"prompt_tokens": 40, "completion_tokens": 1}},
    ], pipeline={"refine": True})
    turn = session.run_turn("set x in a.py", Recorder(), threading.Event())
    assert (turn.usage.prompt_tokens, turn.usage.completion_tokens) == (240, 21)


def test_planning_pass_runs_no_post_run_hook(tmp_path):
    steps = [{"description": f"step {n}", "files": ["a.py"], "rationale": "r"} for n in (1, 2, 3)]
    session, provider = make_session(tmp_path, [
        {"tool_calls": [{"name": "submit_plan", "arguments": {"title": "T", "steps": steps, "risks": ["x"],
                                                                "assumptions": ["y"]}}]},
    ], files={"a.py": "x = 1\n"}, pipeline={"refine": True}, verify={"enabled": True, "command": "false"})
    emit = Recorder()
    planned = session.plan_turn("plan a change to a.py", emit, threading.Event())
    assert planned.plan is not None
    assert emit.of(HookFinished) == [] and [r.purpose for r in provider.requests] == ["main"]


def test_reflexion_lessons_are_pinned_at_compaction(tmp_path):
    from agent.context.pins import collect_pins

    session, _ = make_session(tmp_path, [
        write("a.py", "x = 1\n"), {"content": "Done."}, {"content": "1. Use y."}, {"content": "Name it y.\nRe-read the task."},
        write("a.py", "y = 1\n"), {"content": "Done."}, {"content": "ACCEPT"},
    ], pipeline={"refine": True, "reflexion": True})
    session.run_turn("set y in a.py", Recorder(), threading.Event())
    pins = collect_pins(session.agent.history)
    assert pins.lessons == ["Name it y.", "Re-read the task."]
    assert "## Lessons from failed rounds (keep them in mind)\n- Name it y.\n- Re-read the task." in pins.render()
    assert pins.task is not None and pins.task.content == "set y in a.py" and pins.instructions == []


def test_refine_and_reflexion_calls_are_measured_and_count_toward_the_budget(tmp_path):
    """A review call is a model call like any other: it gets a ``model_call_finished`` of its own
    purpose and its tokens go into the session's spending (what ``--max-tokens`` counts)."""
    from agent.events import ModelCallFinished

    usage = {"prompt_tokens": 100, "completion_tokens": 10}
    session, provider = make_session(tmp_path, [
        {**write("greet.py", "def hello(): ...\n"), "usage": usage}, {"content": "Done.", "usage": usage},
        {"content": "1. Use the name greet.", "usage": {"prompt_tokens": 1000, "completion_tokens": 50}},
        {"content": "Check the name first.", "usage": {"prompt_tokens": 2000, "completion_tokens": 20}},
        {**write("greet.py", "def greet(): ...\n"), "usage": usage}, {"content": "Done again.", "usage": usage},
        {"content": "ACCEPT", "usage": {"prompt_tokens": 1000, "completion_tokens": 5}},
    ], pipeline={"refine": True, "reflexion": True})
    emit = Recorder()
    turn = session.run_turn("add greet() in greet.py", emit, threading.Event())
    assert turn.stop_reason == "done"
    calls = emit.of(ModelCallFinished)
    assert [c.purpose for c in calls] == ["main", "main", "refine", "reflexion", "main", "main", "refine"]
    assert [c.prompt_tokens for c in calls if c.purpose != "main"] == [1000, 2000, 1000]
    assert session.agent.spending.tokens == 4 * 110 + 1050 + 2020 + 1005
