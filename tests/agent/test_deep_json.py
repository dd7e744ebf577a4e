"""JSON nested deeper than anyone writes (100 000 levels) is refused as invalid wherever the app
decodes JSON, never a RecursionError: tool-call arguments from a model, replay files, journal
lines. A provider's negative token count reads as 0."""

from __future__ import annotations

import json

import pytest

from agent.messages import MAX_JSON_DEPTH, ToolCall, Usage, json_loads
from agent.providers.replay_file import load_replay_file
from agent.providers.scripted import ReplayError
from agent.session.records import read_records

DEEP = '{"a":' * 100_000 + "1" + "}" * 100_000


def test_json_loads_refuses_deep_values_and_keeps_shallow_ones():
    with pytest.raises(json.JSONDecodeError, match="nested more than"):
        json_loads(DEEP)
    with pytest.raises(ValueError):
        json_loads("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1))  # decodes, but too deep
    assert json_loads("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is not None


def test_deep_tool_arguments_are_an_error_result_not_a_crash():
    call = ToolCall(id="c1", name="read", arguments=DEEP)
    assert call.parsed_arguments() == DEEP  # not valid: handed on as the raw text
    assert call.sendable_arguments() == "{}"


def test_a_deep_replay_file_is_a_clean_error(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ReplayError, match="nested more than"):
        load_replay_file(path)


def test_a_deep_journal_line_is_skipped_with_a_warning(tmp_path):
    path = tmp_path / "s.jsonl"
    good = json.dumps({"kind": "message", "message": {"role": "user", "content": "hi", "id": "m1"}})
    path.write_text(good + "\n" + DEEP + "\n" + good.replace("m1", "m2") + "\n")
    warnings: list[str] = []
    records = list(read_records(path, warnings))
    assert len(records) == 2 and len(warnings) == 1


def test_a_negative_token_count_reads_as_zero():
    usage = Usage(prompt_tokens=-5, completion_tokens=3, cached_prompt_tokens=-1)
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cached_prompt_tokens) == (0, 3, 0)
