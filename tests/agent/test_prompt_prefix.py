"""A stable prompt prefix (issue 11): between compactions every main request extends the previous
one byte for byte (messages and tools), across Plan -> Act -> Plan and across a resume; the system
prompt is journaled at session start and reused verbatim; invalid tool-call arguments are sent
back as a JSON object; prompt-cache usage is reported."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest

from agent.config.settings import Settings
from agent.events import ContextUsage, ToolCallFinished, TurnFinished
from agent.providers.scripted import ScriptedProvider
from agent.session.resume import load_session
from agent.runtime.build import build_session
from agent.session.journal import read_journal
from tui.cli import main
from tests.helpers import Recorder

PLAN = {
    "title": "Add a farewell",
    "steps": [{"description": "Add farewell() to a.py", "files": ["a.py"], "rationale": "the feature"},
              {"description": "Test it", "files": ["tests/test_a.py"], "rationale": "cover it"},
              {"description": "Document it", "files": ["README.md"], "rationale": "users read it"}],
}
SECOND_PLAN = {**PLAN, "title": "Add a greeting"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo,
                          capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path) -> Path:
    ws = tmp_path / "repo"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    (ws / "a.py").write_text("def hello():\n    return 'hello'\n")
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "init")
    return ws


def session_for(ws, replies, model="openai/gpt-4.1", **kw):
    provider = ScriptedProvider(replies)
    session = build_session(ws, Settings(model=model, permission_mode="full-auto"), provider=provider,
                            interactive=False, **kw)
    return session, provider


def as_json(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def assert_each_request_extends_the_previous(requests) -> None:
    """Every main request's tools equal the previous request's and its messages start with the
    previous request's messages, compared as JSON text (what a provider's cache keys on)."""
    main_requests = [r for r in requests if r.purpose == "main"]
    assert len(main_requests) >= 2
    for number, (prev, cur) in enumerate(zip(main_requests, main_requests[1:]), start=2):
        assert as_json(cur.tools) == as_json(prev.tools), f"request {number}: the tool list changed"
        assert len(cur.messages) > len(prev.messages)
        assert as_json(cur.messages[:len(prev.messages)]) == as_json(prev.messages), \
            f"request {number} does not extend request {number - 1}"


def system_prompt_records(path: Path) -> list[dict]:
    return [r for r in read_journal(path) if r.get("kind") == "system_prompt"]


# ------------------------------------------------------------------------------ Plan <-> Act
def test_plan_act_plan_keeps_every_request_an_extension_of_the_previous(repo):
    session, provider = session_for(repo, [
        {"tool_calls": [{"name": "read", "arguments": {"path": "a.py"}}]},  # planning pass 1
        {"tool_calls": [{"name": "write", "arguments": {"path": "x.txt", "content": "no"}}]},  # refused
        {"tool_calls": [{"name": "submit_plan", "arguments": PLAN}]},
        {"tool_calls": [{"name": "update_plan", "arguments": {"step": 1, "status": "in_progress"}},  # execution
                        {"name": "edit", "arguments": {"path": "a.py", "old_string": "return 'hello'",
                                                       "new_string": "return 'hello'\n\ndef farewell():\n    "
                                                                     "return 'bye'"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo ok"}},
                        {"name": "update_plan", "arguments": {"steps": [
                            {"step": 1, "status": "done"}, {"step": 2, "status": "skipped"},
                            {"step": 3, "status": "skipped"}]}}]},
        {"content": "Done."},
        {"content": "It returns 'bye'."},  # a plain Act follow-up
        {"tool_calls": [{"name": "glob", "arguments": {"pattern": "*.py"}}]},  # planning pass 2
        {"tool_calls": [{"name": "submit_plan", "arguments": SECOND_PLAN}]},
    ])
    planned = session.plan_turn("add a farewell", Recorder(), threading.Event())
    assert planned.plan is not None
    executed = session.execute_plan(planned.plan, Recorder(), threading.Event())
    assert executed.stop_reason == "done" and session.plan.steps[0].status == "done"
    session.run_turn("what does farewell return?", Recorder(), threading.Event())
    again = session.plan_turn("add a greeting", Recorder(), threading.Event())
    assert again.plan is not None and again.plan.title == "Add a greeting"
    assert provider.remaining == 0

    assert_each_request_extends_the_previous(provider.requests)
    users = [m["content"] for m in provider.requests[-1].messages if m["role"] == "user"]
    assert [u.split("\n", 2)[1] if u.startswith("<mode>") else None for u in users] == [
        "# Plan mode", "# Act mode", None, "# Plan mode"]
    # No two user messages in a row anywhere (the mode message rides in the turn's user message).
    roles = [m["role"] for m in provider.requests[-1].messages]
    assert all(not (a == b == "user") for a, b in zip(roles, roles[1:]))
    # The planner's journal records still name the execution prompt; the UI's notice still finds it.
    loaded = load_session(session.journal_path)
    (prompt_id,) = loaded.plan_prompts
    execution = next(m for m in loaded.messages if m.id == prompt_id)
    assert execution.content.startswith("The user approved the plan below.")
    assert execution.mode is not None and execution.mode.mode == "act"
    assert len(system_prompt_records(session.journal_path)) == 1


# ------------------------------------------------------------------------------------ resume
def test_resume_reuses_the_journaled_system_prompt_and_extends_the_prefix(repo):
    first, before = session_for(repo, [
        {"tool_calls": [{"name": "read", "arguments": {"path": "a.py"}}]}, {"content": "It says hello."}])
    first.run_turn("what does a.py say?", Recorder(), threading.Event())
    first.close()
    (record,) = system_prompt_records(first.journal_path)
    assert record["reason"] == "started" and record["text"] == before.requests[0].messages[0]["content"]
    assert record["tools"] == [t["function"]["name"] for t in before.requests[0].tools]
    assert "init" in record["text"]  # the git snapshot is in it

    # The repository moves on: a fresh snapshot would differ (new commit, dirty file).
    (repo / "b.py").write_text("y = 2\n")
    git(repo, "add", "b.py")
    git(repo, "commit", "-q", "-m", "second commit")
    (repo / "a.py").write_text("changed\n")

    second, after = session_for(repo, [{"content": "Still hello."}], resume="latest")
    second.run_turn("and now?", Recorder(), threading.Event())
    assert_each_request_extends_the_previous(before.requests + after.requests)
    assert "second commit" not in after.requests[0].messages[0]["content"]
    assert len(system_prompt_records(second.journal_path)) == 1  # nothing new to journal


def test_an_old_journal_without_the_record_is_rebuilt_and_journaled_once(repo):
    first, _ = session_for(repo, [{"content": "hi"}])
    first.run_turn("hello", Recorder(), threading.Event())
    first.close()
    path = first.journal_path
    lines = [line for line in path.read_text().splitlines() if '"kind": "system_prompt"' not in line]
    path.write_text("\n".join(lines) + "\n")  # a journal written before the record existed
    assert load_session(path).system_prompt is None

    second, provider = session_for(repo, [{"content": "again"}], resume="latest")
    second.run_turn("again?", Recorder(), threading.Event())
    second.close()
    (record,) = system_prompt_records(path)
    assert record["reason"] == "resumed_without_prompt"
    assert record["text"] == provider.requests[0].messages[0]["content"]
    assert load_session(path).system_prompt.text == record["text"]


def test_a_model_switch_keeps_the_prompt_unless_the_tool_set_changes(repo):
    session, provider = session_for(repo, [{"content": "a"}, {"content": "b"}, {"content": "c"}])
    session.run_turn("one", Recorder(), threading.Event())
    session.set_model("openai/gpt-4.1-mini")  # same tools (think): same prompt, same prefix
    session.run_turn("two", Recorder(), threading.Event())
    assert_each_request_extends_the_previous(provider.requests)
    assert len(system_prompt_records(session.journal_path)) == 1
    session.set_model("openai/o3-mini")  # native reasoning: no think tool, a new prompt
    session.run_turn("three", Recorder(), threading.Event())
    records = system_prompt_records(session.journal_path)
    assert [r["reason"] for r in records] == ["started", "tools_changed"]
    assert "think" not in records[-1]["tools"] and records[-1]["model"] == "openai/o3-mini"
    assert provider.requests[-1].messages[0]["content"] == records[-1]["text"]


def test_a_redacted_secret_is_the_only_difference_after_resume(repo, monkeypatch):
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("EXAMPLE_API_KEY", secret)
    (repo / "AGENTS.md").write_text(f"Use the key {secret} for the staging server.\n")
    first, before = session_for(repo, [{"content": "ok"}])
    first.run_turn("hi", Recorder(), threading.Event())
    first.close()
    second, after = session_for(repo, [{"content": "ok"}], resume="latest")
    second.run_turn("again", Recorder(), threading.Event())
    sent_before = before.requests[0].messages[0]["content"]
    sent_after = after.requests[0].messages[0]["content"]
    assert secret in sent_before and secret not in sent_after
    assert sent_after == sent_before.replace(secret, "[redacted EXAMPLE_API_KEY]")


# ---------------------------------------------------------------------- invalid tool arguments
@pytest.mark.parametrize("raw", ['{"path": "a', "", "[1]", '"x"', "{", "null"])
def test_invalid_arguments_stay_in_the_journal_and_are_sent_as_an_object(repo, raw):
    session, provider = session_for(repo, [
        {"tool_calls": [{"name": "read", "arguments": raw, "id": "c1"}]}, {"content": "sorry"}])
    rec = Recorder()
    session.run_turn("read it", rec, threading.Event())
    (finished,) = rec.of(ToolCallFinished)
    assert finished.is_error
    journaled = [r["message"] for r in read_journal(session.journal_path)
                 if r.get("kind") == "message" and r["message"]["role"] == "assistant"][0]
    assert journaled["tool_calls"][0]["arguments"] == raw  # as received
    second = provider.requests[1].messages
    call = second[-2]["tool_calls"][0]
    assert call["function"]["arguments"] == "{}" and call["id"] == "c1"
    assert second[-1] == {"role": "tool", "tool_call_id": "c1", "content": finished.output}
    assert_each_request_extends_the_previous(provider.requests)


def test_valid_and_double_encoded_arguments_are_sent_as_objects(repo):
    double = json.dumps(json.dumps({"path": "a.py"}))
    session, provider = session_for(repo, [
        {"tool_calls": [{"name": "read", "arguments": '{"path":  "a.py"}', "id": "c1"},
                        {"name": "read", "arguments": double, "id": "c2"}]}, {"content": "ok"}])
    session.run_turn("read it", Recorder(), threading.Event())
    calls = provider.requests[1].messages[-3]["tool_calls"]
    assert calls[0]["function"]["arguments"] == '{"path":  "a.py"}'  # byte for byte
    assert json.loads(calls[1]["function"]["arguments"]) == {"path": "a.py"}


def test_replay_log_shows_the_object_that_was_sent(repo, tmp_path, capsys):
    replay = tmp_path / "r.json"
    replay.write_text(json.dumps([{"tool_calls": [{"name": "read", "arguments": '{"path": "a'}]},
                                  {"content": "ok"}]))
    log = tmp_path / "log.jsonl"
    code = main(["run", "read a", "--replay", str(replay), "--replay-log", str(log), "-C", str(repo),
                 "--model", "openai/gpt-4.1", "--output-format", "json"])
    assert code == 0, capsys.readouterr().err
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    started = next(e for e in events if e["type"] == "tool_call_started")
    assert started["arguments"] == '{"path": "a'  # the event shows what the model sent
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    assert requests[1]["messages"][-2]["tool_calls"][0]["function"]["arguments"] == "{}"


# ------------------------------------------------------------------------------- cache usage
def test_cache_figures_reach_turn_finished_and_context_usage(repo, tmp_path):
    session, _ = session_for(repo, [
        {"tool_calls": [{"name": "read", "arguments": {"path": "a.py"}}],
         "usage": {"prompt_tokens": 2000, "completion_tokens": 10, "cache_creation_tokens": 1800}},
        {"content": "ok", "usage": {"prompt_tokens": 2100, "completion_tokens": 5, "cached_prompt_tokens": 1800,
                                    "cache_creation_tokens": 250}},
    ])
    session.settings.context_window = 100_000
    rec = Recorder()
    session.run_turn("read", rec, threading.Event())
    reported = [e for e in rec.of(ContextUsage) if not e.approximate]
    assert [(e.cached_prompt_tokens, e.cache_creation_tokens, e.cache_hit_rate) for e in reported] == [
        (None, 1800, None), (1800, 250, round(1800 / 2100, 4))]
    (finished,) = rec.of(TurnFinished)
    usage = finished.to_json_dict()["usage"]
    assert usage["prompt_tokens"] == 4100 and usage["cached_prompt_tokens"] == 1800
    assert usage["cache_creation_tokens"] == 2050 and usage["cache_hit_rate"] == round(1800 / 4100, 4)


def test_usage_without_cache_figures_keeps_its_shape(repo):
    session, _ = session_for(repo, [{"content": "ok", "usage": {"prompt_tokens": 10, "completion_tokens": 2}}])
    rec = Recorder()
    session.run_turn("hi", rec, threading.Event())
    usage = rec.of(TurnFinished)[0].to_json_dict()["usage"]
    assert usage == {"prompt_tokens": 10, "completion_tokens": 2, "cached_prompt_tokens": None,
                     "cache_creation_tokens": None, "cache_hit_rate": None}
