"""``opencli-tui run`` with sub-agents: their events in the JSON stream, their lines in the text
output, the replay keys that script them, and the exit code of a spent budget."""

from __future__ import annotations

import json

import pytest

from agent.providers.replay_file import ReplayError, load_replay_file
from tui.cli import main
from tui.headless import exit_code_for


def _run(tmp_path, capsys, replies, *extra):
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(replies))
    code = main(["run", "look", "--replay", str(path), "-C", str(ws), "--model", "openai/gpt-4.1", *extra])
    return code, capsys.readouterr()


SCRIPT = [
    {"tool_calls": [{"name": "task", "arguments": {"description": "find add", "prompt": "Where is add?"}},
                    {"name": "task", "arguments": {"description": "count defs", "prompt": "Count defs.",
                                                   "max_turns": 1}}]},
    {"content": "Done."},
    {"for": "subagent", "task": 1, "content": "calc.py:1", "usage": {"prompt_tokens": 7, "completion_tokens": 3}},
    {"for": "subagent", "task": 2, "tool_calls": [{"name": "grep", "arguments": {"pattern": "def"}}]},
    {"for": "subagent", "task": 2, "tool_calls": [{"name": "glob", "arguments": {"pattern": "*"}}]},
]


def test_headless_json_prints_subagent_events(tmp_path, capsys):
    code, out = _run(tmp_path, capsys, SCRIPT, "--output-format", "json")
    assert code == 0
    events = [json.loads(line) for line in out.out.splitlines()]
    started = [e for e in events if e["type"] == "subagent_started"]
    assert sorted((e["index"], e["description"]) for e in started) == [(1, "find add"), (2, "count defs")]
    assert all(e["task_id"] and e["journal_path"].endswith(".jsonl") for e in started)
    (completed,) = [e for e in events if e["type"] == "subagent_completed"]
    assert completed["index"] == 1 and completed["summary"] == "calc.py:1" and completed["stop_reason"] == "done"
    assert completed["usage"]["prompt_tokens"] == 7 and completed["duration_s"] >= 0
    (failed,) = [e for e in events if e["type"] == "subagent_failed"]
    assert failed["index"] == 2 and failed["stop_reason"] == "max_turns" and "turn cap" in failed["message"]
    assert any(e["type"] == "subagent_progress" and e["index"] == 2 and e["last_tool"] == "grep" for e in events)
    results = [e for e in events if e["type"] == "tool_call_finished" and e["name"] == "task"]
    assert [r["is_error"] for r in results] == [False, True]
    # each call is announced, in call order, before anything of its own (its sub-agent's start)
    order = [(e["type"], e.get("id") or e.get("task_id")) for e in events
             if e["type"] in ("tool_call_started", "subagent_started")]
    ids = [r["id"] for r in results]
    assert [i for kind, i in order if kind == "tool_call_started"] == ids
    for call_id in ids:
        assert order.index(("tool_call_started", call_id)) < order.index(("subagent_started", call_id))


def test_headless_text_output_shows_a_line_per_subagent_start_and_end(tmp_path, capsys):
    code, out = _run(tmp_path, capsys, SCRIPT)
    assert code == 0
    assert "◆ sub-agent 1 started: find add" in out.out
    assert "◆ sub-agent 1 done in" in out.out and "10 tokens" in out.out
    assert "◆ sub-agent 2 max_turns after" in out.out


def test_spent_budget_exits_6():
    assert exit_code_for("budget") == 6


@pytest.mark.parametrize("reply, needle", [
    ({"task": 1, "content": "x"}, '"task" numbers a sub-agent'),
    ({"for": "subagent", "contnet": "x"}, "no known key"),
    ({"for": "subagents", "content": "x"}, "field for"),
    ({"for": "subagent", "task": 0, "content": "x"}, "field task"),
    ({"for": "subagent", "task": "1", "content": "x"}, "field task"),
])
def test_replay_file_refuses_bad_subagent_keys(tmp_path, reply, needle):
    path = tmp_path / "r.json"
    path.write_text(json.dumps([reply]))
    with pytest.raises(ReplayError, match=needle):
        load_replay_file(path)


def test_replay_file_keeps_subagent_replies(tmp_path):
    path = tmp_path / "r.json"
    replies = [{"for": "subagent", "task": 2, "content": "x"}, {"for": "subagent"}]
    path.write_text(json.dumps(replies))
    assert load_replay_file(path) == replies
