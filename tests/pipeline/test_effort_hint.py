"""The effort hint: chosen per turn by kind of work, carried on every request of the turn, sent only
to models that take it (or as ``reasoning.send_effort`` says), fixed between compaction
boundaries for Anthropic models, recorded in ``--replay-log``."""

from __future__ import annotations

import json
import threading

from agent.events import TurnStarted
from agent.pipeline.effort import EffortKeeper, choose_effort, is_short_question
from agent.providers.base import ModelRequest
from agent.providers.litellm_provider import LiteLLMProvider
from tui.cli import main

from tests.helpers import Recorder, make_session

REASONING_MODEL = "openai/o3-mini"


def glob() -> dict:
    return {"tool_calls": [{"name": "glob", "arguments": {"pattern": "*.py"}}]}


def efforts(provider) -> list[tuple[str, str | None]]:
    return [(r.purpose, r.reasoning_effort) for r in provider.requests]


def test_effort_per_kind_of_turn_in_the_recorded_requests(tmp_path):
    session, provider = make_session(tmp_path, [
        glob(), {"content": "It adds."},                               # a short read-only question: low
        glob(), {"content": "Done."},                                  # a change: medium, on every step
        {"tool_calls": [{"name": "submit_plan", "arguments": {"title": "T", "steps": [
            {"description": f"edit a.py part {n}", "files": ["a.py"], "rationale": "the task"} for n in (1, 2, 3)],
            "risks": ["none"],
            "assumptions": ["none"]}}]},
    ], model=REASONING_MODEL, files={"a.py": "x = 1\n"})
    emit = Recorder()
    session.run_turn("what does a.py do?", emit, threading.Event())
    session.run_turn("fix the bug in a.py and add a test", emit, threading.Event())
    assert efforts(provider) == [("main", "low"), ("main", "low"), ("main", "medium"), ("main", "medium")]
    assert [e.reasoning_effort for e in emit.of(TurnStarted)] == ["low", "medium"]
    planned = session.plan_turn("plan the refactor of a.py", emit, threading.Event())
    assert planned.plan is not None
    assert efforts(provider)[4] == ("main", "high")
    assert session.reasoning_effort == "high"


def test_refine_call_carries_high_effort(tmp_path):
    session, provider = make_session(tmp_path, [
        {"tool_calls": [{"name": "write", "arguments": {"path": "b.py", "content": "y = 2\n"}}]},
        {"content": "Wrote b.py."}, {"content": "ACCEPT"},
    ], model=REASONING_MODEL, pipeline={"refine": True})
    session.run_turn("create b.py with y = 2", Recorder(), threading.Event())
    assert efforts(provider) == [("main", "medium"), ("main", "medium"), ("refine", "high")]


def test_effort_is_absent_for_a_model_that_takes_none(tmp_path):
    session, provider = make_session(tmp_path, [{"content": "hi"}], model="openai/gpt-4.1")
    emit = Recorder()
    session.run_turn("what is this?", emit, threading.Event())
    assert efforts(provider) == [("main", None)]
    assert emit.of(TurnStarted)[0].reasoning_effort is None


def test_send_effort_override_on_and_off(tmp_path):
    (tmp_path / "on").mkdir()
    (tmp_path / "off").mkdir()
    on, on_provider = make_session(tmp_path / "on", [{"content": "hi"}], model="openai/gpt-4.1",
                                   reasoning={"send_effort": "on", "effort": "high"})
    on.run_turn("what is this?", Recorder(), threading.Event())
    off, off_provider = make_session(tmp_path / "off", [{"content": "hi"}], model=REASONING_MODEL,
                                     reasoning={"send_effort": "off"})
    off.run_turn("what is this?", Recorder(), threading.Event())
    assert efforts(on_provider) == [("main", "high")] and efforts(off_provider) == [("main", None)]


def test_anthropic_effort_stays_fixed_between_compaction_boundaries(tmp_path):
    session, provider = make_session(tmp_path, [{"content": "a"}, {"content": "b"}],
                                     model="anthropic/claude-sonnet-4-5")
    session.run_turn("what is this?", Recorder(), threading.Event())
    session.run_turn("refactor everything in the package", Recorder(), threading.Event())
    assert efforts(provider) == [("main", "low"), ("main", "low")]
    keeper = EffortKeeper()
    assert keeper.settle("anthropic/claude-sonnet-4-5", "low", 0) == "low"
    assert keeper.settle("anthropic/claude-sonnet-4-5", "high", 0) == "low"
    assert keeper.settle("anthropic/claude-sonnet-4-5", "high", 12) == "high"  # a compaction moved the mark
    assert keeper.settle("openai/o3-mini", "medium", 12) == "medium"


def test_choose_effort_rules():
    assert choose_effort("plan", "anything", "auto") == "high"
    assert choose_effort("refine", "x", "auto") == "high"
    assert choose_effort("act", "where is the config loaded?", "auto") == "low"
    assert choose_effort("act", "fix the config loading", "auto") == "medium"
    assert choose_effort("act", "what is it?", "medium") == "medium"
    assert not is_short_question("why? " * 100)


def test_replay_log_records_the_effort(tmp_path, capsys):
    ws = tmp_path / "ws"
    ws.mkdir()
    script, log = tmp_path / "r.json", tmp_path / "log.jsonl"
    script.write_text(json.dumps([{"content": "hi"}]))
    code = main(["run", "what is here?", "--replay", str(script), "--replay-log", str(log), "-C", str(ws),
                 "--model", REASONING_MODEL])
    assert code == 0
    assert [json.loads(line).get("reasoning_effort") for line in log.read_text().splitlines()] == ["low"]


def test_litellm_provider_sends_reasoning_effort_only_when_set(monkeypatch):
    import agent.providers.litellm_provider as module

    sent: list[dict] = []

    class FakeLitellm:
        @staticmethod
        def completion(**kwargs):
            sent.append(kwargs)
            return iter(())

    monkeypatch.setattr(module, "load_litellm", lambda: FakeLitellm)
    provider = LiteLLMProvider()
    for effort in ("high", None):
        request = ModelRequest(model="openai/o3-mini", messages=[{"role": "user", "content": "x"}],
                               reasoning_effort=effort)
        list(provider.stream(request, threading.Event()))
    assert sent[0]["reasoning_effort"] == "high" and "reasoning_effort" not in sent[1]
