"""A ``--replay`` file is validated whole at load (DESIGN.md 5), and generated tool-call ids stay
unique across a resumed session."""

from __future__ import annotations

import json

import pytest

from agent.providers.base import ModelRequest
from agent.providers.scripted import ReplayError, ScriptedProvider, load_replay_file
from tui.cli import main


def replay_file(tmp_path, replies, name="replay.json"):
    path = tmp_path / name
    path.write_text(json.dumps(replies))
    return path


@pytest.mark.parametrize("replies,needle", [
    ([{"tool_calls": "notalist"}], "reply 0, field tool_calls: "),
    ([{"content": "ok"}, {"tool_calls": [{"arguments": {}}]}], "reply 1, field tool_calls[0].name: Field required"),
    ([{"tool_calls": [{"name": "read", "arguments": 5}]}], "reply 0, field tool_calls[0].arguments: "),
    ([{"tool_calls": [{"name": "read", "id": 7}]}], "reply 0, field tool_calls[0].id: "),
    ([{"tool_calls": ["read"]}], "reply 0, field tool_calls[0]: "),
    ([{"content": 3}], "reply 0, field content: "),
    ([{"usage": {"prompt_tokens": "many"}}], "reply 0, field usage.prompt_tokens: "),
    ([{"usage": 12}], "reply 0, field usage: "),
    ([{"error": "boom"}], "reply 0, field error: unknown error 'boom'"),
    ([{"for": "everyone", "content": "x"}], "reply 0, field for: "),
    ([{"content": "a"}, "just text"], "reply 1 must be a JSON object, not a string"),
])
def test_bad_replay_entries_name_the_entry_and_field(tmp_path, replies, needle):
    path = replay_file(tmp_path, replies)
    with pytest.raises(ReplayError) as info:
        load_replay_file(path)
    message = str(info.value)
    assert needle in message and str(path) in message and "\n" not in message


def test_unknown_keys_next_to_known_ones_are_ignored(tmp_path):
    replies = [
        {"content": "x", "note": "added by a later version"},
        {"tool_calls": [{"name": "glob", "arguments": {"pattern": "*"}, "extra": True}]},
        {"usage": {"prompt_tokens": 1, "completion_tokens": 2, "reasoning_tokens": 3}},
        {"for": "subagent", "task": 1, "content": "s"},
    ]
    assert load_replay_file(replay_file(tmp_path, replies)) == replies


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_replay_tool_calls_not_a_list_exits_2_with_one_line(tmp_path, capsys, fmt):
    path = replay_file(tmp_path, [{"tool_calls": "notalist"}])
    code = main(["run", "x", "--replay", str(path), "-C", str(tmp_path), "--output-format", fmt])
    captured = capsys.readouterr()
    assert code == 2
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "reply 0, field tool_calls" in lines[0]
    assert "Traceback" not in captured.err and captured.out == ""


def _request(messages):
    return ModelRequest(model="openai/gpt-4.1", messages=messages, tools=[])


def _ids(provider, messages):
    import threading

    deltas = provider.stream(_request(messages), threading.Event())
    return [d.id for d in deltas if d.kind == "tool_call" and d.id]


def test_generated_ids_continue_after_the_ids_of_a_resumed_history():
    history = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1_0", "type": "function", "function": {"name": "glob", "arguments": "{}"}},
            {"id": "call_1_1", "type": "function", "function": {"name": "glob", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1_0", "content": "a"},
        {"role": "tool", "tool_call_id": "call_1_1", "content": "b"},
        {"role": "user", "content": "again"},
    ]
    provider = ScriptedProvider([{"tool_calls": [{"name": "glob", "arguments": {}}]}])
    assert _ids(provider, history) == ["call_2_0"]


def test_explicit_replay_ids_are_kept_as_written():
    provider = ScriptedProvider([{"tool_calls": [{"name": "glob", "arguments": {}, "id": "call_1_0"},
                                                 {"name": "glob", "arguments": {}, "id": "same"}]}])
    assert _ids(provider, [{"role": "user", "content": "x"}]) == ["call_1_0", "same"]


def _tool_call_ids(request):
    return [call["id"] for message in request["messages"] if message.get("role") == "assistant"
            for call in message.get("tool_calls") or ()]


def test_replayed_tool_call_ids_do_not_repeat_after_continue(tmp_path, capsys):
    ws = tmp_path / "ws"
    ws.mkdir()
    log = tmp_path / "requests.jsonl"
    step = [{"tool_calls": [{"name": "glob", "arguments": {"pattern": "*"}}]}, {"content": "done"}]
    for name, extra in (("first.json", []), ("second.json", ["--continue"])):
        code = main(["run", "task", "--output-format", "json", "-C", str(ws), "--model", "openai/gpt-4.1",
                     "--replay", str(replay_file(tmp_path, step, name)), "--replay-log", str(log), *extra])
        assert code == 0
    capsys.readouterr()
    last = json.loads(log.read_text().splitlines()[-1])
    ids = _tool_call_ids(last)
    assert len(ids) == 2 and len(set(ids)) == 2, ids


def test_generated_ids_continue_after_the_resumed_journal_even_when_compacted_away():
    provider = ScriptedProvider([{"tool_calls": [{"name": "glob", "arguments": {}}]}])
    provider.continue_ids_after(["call_7_0", "call_7_1", "custom", "call_x_1"])
    # the conversation sent holds only a summary: the journal's ids are not in it
    assert _ids(provider, [{"role": "user", "content": "summary of earlier work"}]) == ["call_8_0"]
