"""Loading a ``--replay`` file (DESIGN.md 5): replies with no known key are refused at load time."""

from __future__ import annotations

import json

import pytest

from agent.providers.scripted import ReplayError, load_replay_file


def replay_file(tmp_path, replies):
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(replies))
    return path


def test_a_reply_with_no_known_key_is_refused_naming_index_and_key(tmp_path):
    path = replay_file(tmp_path, [{"content": "hi"}, {"bogus": 1, "contnet": "x"}])
    with pytest.raises(ReplayError) as info:
        load_replay_file(path)
    message = str(info.value)
    assert "reply 1" in message and "'bogus'" in message and "'contnet'" in message
    assert str(path) in message and "\n" not in message


def test_the_first_bad_reply_is_named(tmp_path):
    with pytest.raises(ReplayError, match=r"reply 0 .*'bogus'"):
        load_replay_file(replay_file(tmp_path, [{"bogus": 1}]))


def test_known_replies_and_the_empty_reply_still_load(tmp_path):
    replies = [
        {},
        {"content": "a", "reasoning_content": "b"},
        {"tool_calls": [{"name": "glob", "arguments": {"pattern": "*"}}], "finish_reason": "length"},
        {"usage": {"prompt_tokens": 1, "completion_tokens": 2}},
        {"error": "rate_limit"},
        {"for": "summary", "content": "s"},
        {"content": "x", "note": "a key added by a later version"},
    ]
    assert load_replay_file(replay_file(tmp_path, replies)) == replies
