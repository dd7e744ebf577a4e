"""The typed journal records: every kind round-trips, and journals written before the typed
records (older shapes, torn and unknown lines) still load."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from agent.permissions.grants import SessionGrant
from agent.plan.model import Plan, PlanStep
from agent.events import ToolResult
from agent.session.journal import SessionJournal, read_journal
from agent.session.records import (RECORD_KINDS, CompactionRecord, EventRecord, GitBaselineRecord, LessonRecord,
                                   MessageRecord,
                                   ModeRecord, PermissionGrantRecord, PlanRecord, SessionRecord, SystemPromptRecord,
                                   SubagentRecord, ToolDetailsRecord, parse_record, read_records)
from agent.session.resume import load_session, session_info

OLD_JOURNAL = Path(__file__).parent / "data" / "old_journal.jsonl"

PLAN = Plan(title="P", steps=[PlanStep(description="one"), PlanStep(description="two")])
RESULT = ToolResultMessage(tool_call_id="c1", name="bash", content="ok")

EXAMPLES = [
    MessageRecord(message=UserMessage(content="hello")),
    MessageRecord(message=AssistantMessage(content="", tool_calls=[ToolCall(id="c1", name="bash",
                                                                            arguments='{"command": "ls"}')])),
    MessageRecord(message=RESULT),
    SessionRecord(event="started", session_id="s", model="m", workspace="/w", time=1.0),
    EventRecord.turn_finished("done", 2.0),
    EventRecord.undo(["M a.py"], 3.0),
    ModeRecord(permission_mode="auto-edit", plan_mode=True, time=4.0),
    PlanRecord(event="approved", plan=PLAN, time=5.0, message_id="m_u2"),
    PlanRecord(event="discarded", plan=None, time=6.0),
    CompactionRecord(time=7.0, focus="bug", tokens_before=10, tokens_after=5, summary="S", history_length=3,
                     view_ids=["a"], summarized_ids=["b"], pinned=["task"], thrash=True,
                     rewritten=[UserMessage(content="summary", origin="summary").model_dump(mode="json")]),
    ToolDetailsRecord.of(RESULT, ToolResult(outcome="error", exit_code=2, display="ok", truncated=True,
                                            saved_path="/tmp/o", reminders=("r",), duration_s=1.5,
                                            output_lines=3, output_bytes=40)),
    PermissionGrantRecord.of(SessionGrant("session_prefix", "bash", "git status"), 8.0),
    PermissionGrantRecord.of(SessionGrant("session_tool", "edit")),
    SystemPromptRecord(text="You are...", tools=("read", "bash"), model="m", reason="started", time=9.0),
    GitBaselineRecord(dirty=["a.py"], time=10.0),
    LessonRecord(text="Run the whole test file, not one test.", round=1, hook="verify", time=11.0),
    SubagentRecord(event="finished", task_id="c9", index=2, description="find x", journal="s/subagents/c9.jsonl",
                   stop_reason="timeout", duration_s=3.5, tokens=120, time=11.0),
]


def test_every_kind_has_an_example():
    assert {record.kind for record in EXAMPLES} == set(RECORD_KINDS)


@pytest.mark.parametrize("record", EXAMPLES, ids=lambda r: r.kind)
def test_every_record_kind_round_trips_through_the_journal(tmp_path, record):
    journal = SessionJournal(tmp_path / "s.jsonl")
    journal.append(record)
    journal.close()
    [line] = (tmp_path / "s.jsonl").read_text().splitlines()
    assert line.startswith('{"kind": ')  # cheap listings read the kind from the first bytes
    warnings: list[str] = []
    [back] = list(read_records(tmp_path / "s.jsonl", warnings))
    assert warnings == []
    assert type(back) is type(record) and back == record and back.dump() == json.loads(line)


def test_records_keep_the_shapes_written_before():
    message = UserMessage(content="x")
    assert MessageRecord(message=message).dump() == {"kind": "message", "message": message.model_dump(mode="json")}
    assert EventRecord.turn_finished("done", 1.0).dump() == {"kind": "event", "event": "turn_finished",
                                                             "stop_reason": "done", "time": 1.0}
    assert PermissionGrantRecord.of(SessionGrant("session_tool", "edit")).dump() == {
        "kind": "permission_grant", "scope": "session_tool", "tool": "edit"}
    assert ToolDetailsRecord.of(RESULT, ToolResult(exit_code=0, duration_s=0.25)).dump() == {
        "kind": "tool_details", "message_id": RESULT.id, "tool_call_id": "c1", "name": "bash", "outcome": "ok",
        "exit_code": 0, "duration_s": 0.25}
    assert PlanRecord(event="discarded", time=1.0).dump() == {"kind": "plan", "event": "discarded", "plan": None,
                                                              "time": 1.0}


def test_unknown_and_invalid_records_are_skipped_with_a_warning():
    warnings: list[str] = []
    assert parse_record({"kind": "nope"}, "j", warnings) is None
    assert parse_record({"kind": "message", "message": {"role": "robot"}}, "j", warnings) is None
    assert parse_record({"kind": "system_prompt", "text": "", "tools": []}, "j", warnings) is None
    assert len(warnings) == 3 and "unknown kind 'nope'" in warnings[0] and "message record is invalid" in warnings[1]


def test_an_old_format_journal_loads_with_typed_access(tmp_path):
    path = tmp_path / "20250101-000000-abcdef.jsonl"
    shutil.copy(OLD_JOURNAL, path)
    loaded = load_session(path)
    assert [m.id for m in loaded.messages] == ["m_u1", "m_u2", "m_a1", "m_t1"]
    assert loaded.model == "openai/gpt-4o"
    assert loaded.plan is not None and loaded.plan.title == "Fix add"
    assert [r.event for r in loaded.plan_records] == ["proposed", "approved"]
    assert list(loaded.plan_prompts) == ["m_u2"]  # an approved record without message_id: the next user message
    assert loaded.details_for(loaded.messages[3]) == {"exit_code": 1, "display": "\x1b[31m1 failed\x1b[0m"}
    result = loaded.result_for(loaded.messages[3])  # no outcome in an old record: taken from the message
    assert (result.outcome, result.exit_code, result.duration_s) == ("error", 1, None)
    assert loaded.grants == [SessionGrant("session_prefix", "bash", "pytest")]
    assert [(m.permission_mode, m.plan_mode) for m in loaded.modes] == [("ask", False)]
    assert loaded.git_baseline is not None and loaded.git_baseline.dirty == ["notes.txt"]
    assert loaded.undo_marks() == [(4, ["M calc.py"])]
    [compaction] = loaded.compactions
    assert compaction.ids("summarized") == ["m_u1"] and compaction.view_ids == ["m_t1"] and compaction.focus is None
    assert loaded.system_prompt is None  # written before the record existed
    assert len(loaded.warnings) == 2  # the unknown kind and the torn last line
    assert any("unknown kind" in w for w in loaded.warnings) and any("torn" in w for w in loaded.warnings)
    info = session_info(path)
    assert (info.messages, info.turns, info.model, info.first_task) == (4, 1, "openai/gpt-4o", "fix the add function")
    assert len(list(read_journal(path))) == 15  # the raw reader still sees every whole line


def test_a_denied_call_is_denied_live_and_after_resume(tmp_path):
    import threading

    from agent.config.settings import Settings
    from agent.providers.scripted import ScriptedProvider
    from agent.runtime.build import build_session

    (tmp_path / "a.py").write_text("x = 1\n")
    edit = {"name": "edit", "arguments": {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}}
    session = build_session(tmp_path, Settings(model="openai/gpt-4.1", permission_mode="read-only"),
                            provider=ScriptedProvider([{"tool_calls": [edit]}, {"content": "ok"}]), interactive=False)
    events: list = []
    session.run_turn("change a", events.append, threading.Event())
    session.close()
    [finished] = [e for e in events if e.type == "tool_call_finished"]
    assert finished.outcome == "denied" and finished.is_error and finished.to_json_dict()["outcome"] == "denied"
    loaded = load_session(session.journal_path)
    [result] = [m for m in loaded.messages if m.role == "tool"]
    assert loaded.result_for(result) == finished.result


def test_reading_a_journal_straight_from_json_gives_what_the_long_way_gives(tmp_path):
    """read_records validates each line from its JSON text; every kind of record, the old
    journal's shapes, and lines that are torn, glued to a torn one, of an unknown kind, invalid
    or nested too deep give the same records and the same warnings as decoding then validating."""
    from agent.messages import MAX_JSON_DEPTH
    from agent.session.records import read_journal as decoded_lines

    path = tmp_path / "mixed.jsonl"
    journal = SessionJournal(path)
    for record in EXAMPLES:
        journal.append(record)
    journal.close()
    deep: dict = {}
    for _ in range(MAX_JSON_DEPTH + 5):
        deep = {"a": deep}
    with path.open("a", encoding="utf-8") as fh:
        fh.write(OLD_JOURNAL.read_text(encoding="utf-8"))
        fh.write('{"kind": "message", "message": {"role": "user", "cont\n')  # torn
        fh.write('{"kind": "message", "mess' + json.dumps(EXAMPLES[0].dump()) + "\n")  # a whole record glued to a torn one
        fh.write('{"kind": "mystery", "x": 1}\n')
        fh.write('{"kind": "message", "message": {"role": "nobody"}}\n')
        fh.write(json.dumps({"kind": "event", "type": "turn_finished", "data": deep}) + "\n")
        fh.write("\n")
    fast_warnings: list[str] = []
    slow_warnings: list[str] = []
    fast = list(read_records(path, fast_warnings))
    slow = [r for r in (parse_record(d, str(path), slow_warnings) for d in decoded_lines(path, slow_warnings)) if r]

    def shape(record):  # an old line without created_at gets the time of reading: not compared
        dumped = record.model_dump(mode="json")
        message = getattr(record, "message", None)
        if message is not None and "created_at" not in message.model_fields_set:
            dumped["message"].pop("created_at")
        return dumped

    assert [shape(r) for r in fast] == [shape(r) for r in slow]
    assert [type(r) for r in fast] == [type(r) for r in slow]
    assert len(fast) >= len(EXAMPLES) + 1
    assert sorted(fast_warnings) == sorted(slow_warnings) and len(fast_warnings) >= 4
