"""Plan mode (issue 4): the plan as data, submit_plan validation, the markdown fallback, execution
with update_plan and PlanUpdated, undeclared-file flags, the journal, and the headless flags."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from agent.events import Notice, PlanUpdated, ToolCallFinished, TurnFinished, TurnStarted
from agent.plan.model import Plan, PlanError, PlanStep, normalize_path
from agent.plan.prompts import execution_prompt
from agent.plan.markdown import parse_markdown_plan
from agent.session.resume import plan_from_journal
from agent.session.journal import read_journal
from tui.cli import build_parser, main
from tests.helpers import Recorder, make_session


def step(description, files=(), rationale="because", **kw):
    return {"description": description, "files": list(files), "rationale": rationale, **kw}


PLAN_ARGS = {
    "title": "Add a farewell",
    "steps": [step("Add farewell() to a.py", ["a.py"], "the feature"),
              step("Create tests for it", ["tests/test_a.py"], "cover it"),
              step("Document it in the README", ["README.md"], "users read it")],
    "risks": ["a.py is imported at start-up"],
    "assumptions": ["no other module defines farewell"],
}
SUBMIT = {"tool_calls": [{"name": "submit_plan", "arguments": PLAN_ARGS, "id": "plan1"}]}


def make(tmp_path: Path, replies, **settings):
    return make_session(tmp_path, replies, files={"a.py": "def hello():\n    return 'hello'\n"}, **settings)


def sample_plan(n=3) -> Plan:
    return Plan(title="T", steps=[PlanStep(description=f"step {i}", files=[f"f{i}.py"]) for i in range(1, n + 1)])


# ----------------------------------------------------------------------------------- the model
def test_ids_assigned_and_duplicates_fixed():
    plan = Plan(steps=[PlanStep(description="a"), PlanStep(id="7", description="b"), PlanStep(id="7", description="c")])
    assert [s.id for s in plan.steps] == ["1", "7", "2"]
    assert [s.id for s in plan.renumbered().steps] == ["1", "2", "3"]
    assert [s.id for s in plan.steps] == ["1", "7", "2"]  # renumbered() copies


@pytest.mark.parametrize("n,needle", [(2, "has 2. Split"), (11, "has 11. Merge")])
def test_check_size(n, needle):
    with pytest.raises(PlanError, match=needle):
        sample_plan(n).check_size()
    sample_plan(3).check_size()
    sample_plan(10).check_size()


def test_index_of_by_id_number_and_words():
    plan = Plan(steps=[PlanStep(id="a", description="x"), PlanStep(id="b", description="y"),
                       PlanStep(id="c", description="z")])
    assert plan.index_of("b") == 1 and plan.index_of(3) == 2 and plan.index_of("Step 1") == 0
    assert plan.index_of("#2") == 1
    with pytest.raises(PlanError, match="no step '9'.*a, b, c"):
        plan.index_of(9)


@pytest.mark.parametrize("declared,path,expected", [
    ("src/a.py", "src/a.py", True),
    ("./src/a.py", "src/a.py", True),
    ("`src/a.py:12-30`", "src/a.py", True),
    ("src/", "src/deep/b.py", True),
    ("src", "src/b.py", True),
    ("tests/*.py", "tests/test_x.py", True),
    ("a.py", "pkg/a.py", True),  # a bare file name matches anywhere
    ("src/a.py", "src/b.py", False),
    ("src/a.py", "src/a.pyc", False),
    ("srcx", "src/b.py", False),
])
def test_declares(declared, path, expected):
    plan = Plan(steps=[PlanStep(description="x", files=[declared])])
    assert plan.declares(path) is expected


def test_normalize_path_makes_workspace_paths_relative(tmp_path):
    assert normalize_path(str(tmp_path / "src" / "a.py"), tmp_path) == "src/a.py"
    assert normalize_path("/elsewhere/a.py", tmp_path) == "/elsewhere/a.py"


# -------------------------------------------------------------------------------- markdown
def test_markdown_round_trip():
    plan = Plan(title="Cache the fetcher",
                steps=[PlanStep(description="Add src/cache.py", files=["src/cache.py"], rationale="isolate it"),
                       PlanStep(description="Use it in fetch", files=["src/fetch.py", "src/util.py"],
                                rationale="the point", status="done", note="wired in"),
                       PlanStep(description="Tests", files=[], rationale="verify", status="in_progress"),
                       PlanStep(description="Docs", files=["README.md"], status="skipped")],
                risks=["stale data"], assumptions=["fetch is pure"], undeclared_files=["setup.cfg"])
    text = plan.to_markdown()
    assert text.startswith("# Cache the fetcher\n\n1. [ ] Add src/cache.py\n   Files: `src/cache.py`\n   Why: isolate it")
    assert "2. [x] Use it in fetch" in text and "3. [~] Tests" in text and "4. [-] Docs" in text
    assert "## Risks\n- stale data" in text and "## Assumptions (unverified)\n- fetch is pure" in text
    assert parse_markdown_plan(text) == plan


@pytest.mark.parametrize("title", ["Reduce the risk of data loss", "Risks", "Check assumptions"])
def test_round_trip_titles_that_name_a_section(title):
    plan = Plan(title=title, steps=[PlanStep(description="a", files=["a.py"]), PlanStep(description="b")],
                risks=["r"])
    assert parse_markdown_plan(plan.to_markdown()) == plan


def test_steps_inside_code_fences_are_ignored():
    assert parse_markdown_plan("```\n1. not a step\n2. nor this\n```\n") is None


FREE_TEXT = """\
I looked at the fetcher. Here is what I would do.

## Plan: Add caching to the fetcher

1. **Add a cache module** - create an LRU cache.
   - Files: `src/cache.py`
   - Why: keeps the fetcher simple
2. Wire the cache into the fetcher (files: src/fetch.py, src/config.py)
3. Add tests in `tests/test_cache.py` — why: the cache must expire entries

**Risks:**
- Stale data served after an update
- Memory growth

**Assumptions:** fetch() has no side effects
"""


def test_parse_free_text_plan():
    plan = parse_markdown_plan(FREE_TEXT)
    assert plan is not None
    assert plan.title == "Add caching to the fetcher"
    assert [s.description for s in plan.steps] == [
        "Add a cache module - create an LRU cache.", "Wire the cache into the fetcher",
        "Add tests in `tests/test_cache.py`"]
    assert plan.steps[0].files == ["src/cache.py"] and plan.steps[0].rationale == "keeps the fetcher simple"
    assert plan.steps[1].files == ["src/fetch.py", "src/config.py"]
    assert plan.steps[2].files == ["tests/test_cache.py"]
    assert plan.steps[2].rationale == "the cache must expire entries"
    assert plan.risks == ["Stale data served after an update", "Memory growth"]
    assert plan.assumptions == ["fetch() has no side effects"]


def test_parse_checkbox_list_and_plain_bullets():
    boxes = parse_markdown_plan("Title: Fix it\n- [x] read the code\n- [ ] patch `lib/x.py`\n- [-] skip docs\n"
                                "- a plain remark\n")
    assert boxes is not None and boxes.title == "Fix it"
    assert [(s.description, s.status) for s in boxes.steps] == [
        ("read the code", "done"), ("patch `lib/x.py`", "pending"), ("skip docs", "skipped")]
    assert boxes.steps[1].files == ["lib/x.py"]
    bullets = parse_markdown_plan("# Steps\n- change a.py\n- change b.py\n  Files: b.py\n- run tests\n")
    assert bullets is not None and bullets.title == "Plan"
    assert [s.description for s in bullets.steps] == ["change a.py", "change b.py", "run tests"]
    assert bullets.steps[1].files == ["b.py"]


@pytest.mark.parametrize("text", ["", "I could not find the code you mention.", "```\ncode only\n```",
                                  "## Risks\n- everything"])
def test_parse_returns_none_without_steps(text):
    assert parse_markdown_plan(text) is None


# ----------------------------------------------------------------------------- planning pass
def test_submit_plan_ends_the_pass_and_proposes(tmp_path):
    session, provider = make(tmp_path, [
        {"tool_calls": [{"name": "read", "arguments": {"path": "a.py"}}]},
        SUBMIT,
        {"content": "never consumed"},
    ])
    rec = Recorder()
    result = session.plan_turn("add a farewell", rec, threading.Event())
    assert result.source == "submit_plan" and result.turn.stop_reason == "done"
    assert result.plan.title == "Add a farewell" and [s.files for s in result.plan.steps][0] == ["a.py"]
    assert result.plan.risks == PLAN_ARGS["risks"] and result.plan.assumptions == PLAN_ARGS["assumptions"]
    assert provider.remaining == 1 and len(provider.requests) == 2  # no model call after submit_plan
    assert session.plans.proposed == result.plan and session.plan is None
    (event,) = rec.of(PlanUpdated)
    assert event.approved is False and event.title == "Add a farewell"
    assert [(s.text, s.status) for s in event.steps][0] == ("Add farewell() to a.py", "pending")
    assert isinstance(rec[-1], PlanUpdated) and isinstance(rec[-2], TurnFinished)


@pytest.mark.parametrize("n,needle", [(2, "this one has 2"), (11, "this one has 11")])
def test_submit_plan_size_errors_go_back_to_the_model(tmp_path, n, needle):
    bad = {**PLAN_ARGS, "steps": [step(f"s{i}", [f"f{i}"]) for i in range(n)]}
    session, provider = make(tmp_path, [{"tool_calls": [{"name": "submit_plan", "arguments": bad}]}, SUBMIT])
    rec = Recorder()
    result = session.plan_turn("t", rec, threading.Event())
    first = rec.of(ToolCallFinished)[0]
    assert first.is_error and needle in first.output and "3 to 10 steps" in first.output
    assert provider.requests[1].messages[-1]["content"] == first.output
    assert result.plan is not None and len(result.plan.steps) == 3


def test_submit_plan_field_errors_list_the_expected_fields(tmp_path):
    bad = {"title": "x", "steps": [{"description": "a"}, {"text": "b"}, {"description": "c", "rationale": "r"}]}
    session, provider = make(tmp_path, [{"tool_calls": [{"name": "submit_plan", "arguments": bad}]}, SUBMIT])
    rec = Recorder()
    session.plan_turn("t", rec, threading.Event())
    first = rec.of(ToolCallFinished)[0]
    assert first.is_error and "steps.0.rationale: required field missing" in first.output
    assert "steps.1.text: unknown field" in first.output


def test_submit_plan_schema_advertises_the_limits(tmp_path):
    session, provider = make(tmp_path, [SUBMIT])
    session.plan_turn("t", Recorder(), threading.Event())
    schema = next(t for t in provider.requests[0].tools if t["function"]["name"] == "submit_plan")
    steps = schema["function"]["parameters"]["properties"]["steps"]
    assert steps["minItems"] == 3 and steps["maxItems"] == 10


def test_markdown_fallback_when_the_model_answers_in_text(tmp_path):
    session, _ = make(tmp_path, [{"content": FREE_TEXT}])
    rec = Recorder()
    result = session.plan_turn("t", rec, threading.Event())
    assert result.source == "markdown" and len(result.plan.steps) == 3
    assert any("markdown" in n.message for n in rec.of(Notice))
    assert rec.of(PlanUpdated)[0].approved is False


def test_text_without_a_plan_is_returned_as_the_message(tmp_path):
    session, _ = make(tmp_path, [{"content": "I need to know which database you use."}])
    result = session.plan_turn("t", Recorder(), threading.Event())
    assert result.plan is None and result.source == "none"
    assert result.message == "I need to know which database you use."
    assert session.plans.proposed is None


def test_planning_stopped_by_max_turns_says_so(tmp_path):
    replies = [{"tool_calls": [{"name": "glob", "arguments": {"pattern": f"*{i}"}}]} for i in range(4)]
    session, _ = make(tmp_path, replies, max_turns=2)
    result = session.plan_turn("t", Recorder(), threading.Event())
    assert result.plan is None and result.turn.stop_reason == "max_turns" and "max_turns" in result.message


# --------------------------------------------------------------------------------- execution
def statuses(event: PlanUpdated) -> list[str]:
    return [s.status for s in event.steps]


def test_approve_executes_with_the_plan_and_update_plan_emits(tmp_path):
    session, provider = make(tmp_path, [
        SUBMIT,
        {"tool_calls": [{"name": "update_plan", "arguments": {"step": 1, "status": "in_progress"}},
                        {"name": "edit", "arguments": {"path": "a.py", "old_string": "return 'hello'",
                                                       "new_string": "return 'hello'\n\ndef farewell():\n    return 'bye'"}},
                        {"name": "update_plan", "arguments": {"step": "1", "status": "done", "note": "added farewell"}}]},
        {"tool_calls": [{"name": "write", "arguments": {"path": "tests/test_a.py", "content": "def test(): pass\n"}},
                        {"name": "update_plan", "arguments": {"steps": [
                            {"step": 2, "status": "done"}, {"step": 3, "status": "skipped", "note": "no README"}]}}]},
        {"content": "All done."},
    ])
    planned = session.plan_turn("add a farewell", Recorder(), threading.Event())
    rec = Recorder()
    result = session.execute_plan(planned.plan, rec, threading.Event())
    assert result.stop_reason == "done" and result.final_text == "All done."

    request = provider.requests[1]
    user = request.messages[-1]
    assert user["role"] == "user" and planned.plan.to_markdown() in user["content"]
    assert "update_plan" in user["content"] and "(they edited it)" not in user["content"]
    assert request.tools == provider.requests[0].tools  # one tool list for Plan and Act mode
    assert user["content"].startswith("<mode>\n# Act mode\n")
    assert user["content"].endswith("</mode>\n\n" + execution_prompt(planned.plan))

    events = rec.of(PlanUpdated)
    assert isinstance(rec[0], TurnStarted) and rec[1] == events[0]  # the plan is announced first
    assert [statuses(e) for e in events] == [
        ["pending", "pending", "pending"],
        ["in_progress", "pending", "pending"],
        ["done", "pending", "pending"],
        ["done", "done", "skipped"],
    ]
    assert events[2].steps[0].note == "added farewell" and events[-1].steps[2].note == "no README"
    assert all(e.approved for e in events) and not any(e.undeclared_files for e in events)
    assert session.plan.finished and session.plan.steps[0].note == "added farewell"
    finished = [e for e in rec.of(ToolCallFinished) if e.name == "update_plan"]
    assert not any(e.is_error for e in finished)
    assert "Every step is done or skipped" in finished[-1].output


def test_edited_plan_is_what_the_execution_run_sees(tmp_path):
    session, provider = make(tmp_path, [SUBMIT, {"content": "ok"}])
    plan = session.plan_turn("t", Recorder(), threading.Event()).plan
    # What the plan screen does: edit text, skip, reorder, add, delete.
    plan.steps[0].description = "Add farewell() and goodbye() to a.py"
    plan.steps[2].status = "skipped"
    plan.steps.insert(0, plan.steps.pop(1))
    plan.steps.append(PlanStep(description="Run the test suite"))
    del plan.steps[1]
    session.execute_plan(plan, Recorder(), threading.Event())
    content = provider.requests[1].messages[-1]["content"]
    assert "(they edited it)" in content
    assert "1. [ ] Create tests for it" in content and "2. [-] Document it in the README" in content
    assert "3. [ ] Run the test suite" in content and "farewell() and goodbye()" not in content
    assert [s.id for s in session.plan.steps] == ["1", "2", "3"]


def test_undeclared_file_edit_is_flagged_once(tmp_path):
    session, _ = make(tmp_path, [
        SUBMIT,
        {"tool_calls": [{"name": "write", "arguments": {"path": "a.py", "content": "x = 1\n"}},
                        {"name": "write", "arguments": {"path": "./setup.cfg", "content": "[x]\n"}},
                        {"name": "write", "arguments": {"path": "setup.cfg", "content": "[y]\n"}},
                        {"name": "write", "arguments": {"path": "../outside.txt", "content": "no"}}]},
        {"content": "done"},
    ])
    plan = session.plan_turn("t", Recorder(), threading.Event()).plan
    rec = Recorder()
    session.execute_plan(plan, rec, threading.Event())
    flagged = [e for e in rec.of(PlanUpdated) if e.undeclared_files]
    assert len(flagged) == 1 and flagged[0].undeclared_files == ["setup.cfg"]  # failed write not flagged
    assert session.plan.undeclared_files == ["setup.cfg"]
    assert "## Files changed outside the plan\n- setup.cfg" in session.plan.to_markdown()


def test_a_step_the_user_skipped_cannot_be_taken_up_by_the_model(tmp_path):
    session, _ = make(tmp_path, [
        SUBMIT,
        {"tool_calls": [{"name": "update_plan", "arguments": {"step": 3, "status": "in_progress"}},
                        {"name": "update_plan", "arguments": {"steps": [{"step": 1, "status": "done"},
                                                                        {"step": 3, "status": "done"}]}},
                        {"name": "update_plan", "arguments": {"step": 1, "status": "done"}},
                        {"name": "update_plan", "arguments": {"step": 3, "status": "skipped", "note": "as asked"}}]},
        {"content": "ok"},
    ])
    plan = session.plan_turn("t", Recorder(), threading.Event()).plan
    plan.steps[2].status = "skipped"  # the user skipped it on the plan screen
    rec = Recorder()
    session.execute_plan(plan, rec, threading.Event())
    outputs = [e for e in rec.of(ToolCallFinished) if e.name == "update_plan"]
    assert [e.is_error for e in outputs] == [True, True, False, False]
    assert "skipped by the user" in outputs[0].output and "only the user" in outputs[0].output
    assert [s.status for s in session.plan.steps] == ["done", "pending", "skipped"]  # all or none
    assert session.plan.steps[2].skipped_by_user and not session.plan.steps[0].skipped_by_user


def test_update_plan_errors_go_back_to_the_model(tmp_path):
    session, _ = make(tmp_path, [
        SUBMIT,
        {"tool_calls": [{"name": "update_plan", "arguments": {"step": 9, "status": "done"}},
                        {"name": "update_plan", "arguments": {"status": "done"}},
                        {"name": "update_plan", "arguments": {}},
                        {"name": "update_plan", "arguments": {"step": 1, "status": "finished"}},
                        {"name": "update_plan", "arguments": {"steps": [{"step": 1, "status": "done"},
                                                                        {"step": 5, "status": "done"}]}}]},
        {"content": "ok"},
    ])
    plan = session.plan_turn("t", Recorder(), threading.Event()).plan
    rec = Recorder()
    session.execute_plan(plan, rec, threading.Event())
    outputs = [e for e in rec.of(ToolCallFinished) if e.name == "update_plan"]
    assert all(e.is_error for e in outputs)
    assert "no step '9'" in outputs[0].output and "1, 2, 3" in outputs[0].output
    assert "both step and status" in outputs[1].output
    assert "needs step and status" in outputs[2].output
    assert "status" in outputs[3].output
    assert session.plan.steps[0].status == "pending"  # all or none
    assert len(rec.of(PlanUpdated)) == 1  # only the announcement


def test_update_plan_outside_a_plan_and_follow_up_turns(tmp_path):
    session, provider = make(tmp_path, [
        SUBMIT,
        {"content": "stopped early"},
        {"tool_calls": [{"name": "update_plan", "arguments": {"step": 2, "status": "done"}}]},
        {"content": "continued"},
    ])
    plan = session.plan_turn("t", Recorder(), threading.Event()).plan
    session.execute_plan(plan, Recorder(), threading.Event())
    rec = Recorder()
    session.run_turn("continue", rec, threading.Event())  # a plain follow-up keeps update_plan
    assert statuses(rec.of(PlanUpdated)[-1]) == ["pending", "done", "pending"]
    assert "update_plan" in [t["function"]["name"] for t in provider.requests[-1].tools]
    session.discard_plan()
    assert session.plan is None
    with pytest.raises(PlanError):
        session.execute_plan(Plan(steps=[]), Recorder(), threading.Event())


def test_planning_again_while_a_plan_is_active_keeps_the_tools_and_leaves_the_plan(tmp_path):
    session, provider = make(tmp_path, [
        SUBMIT, {"content": "later"},
        {"tool_calls": [{"name": "update_plan", "arguments": {"step": 1, "status": "done"}}]}, SUBMIT])
    plan = session.plan_turn("t", Recorder(), threading.Event()).plan
    session.execute_plan(plan, Recorder(), threading.Event())
    rec = Recorder()
    session.plan_turn("a new task", rec, threading.Event())
    assert all(request.tools == provider.requests[0].tools for request in provider.requests)
    update = next(e for e in rec.of(ToolCallFinished) if e.name == "update_plan")
    assert update.is_error and "submit it with submit_plan" in update.output
    assert session.plan is not None and session.plan.steps[0].status == "pending"  # untouched while planning
    assert session.plans.proposed is not None  # approval is the caller's call


def test_submit_plan_in_act_mode_is_an_error(tmp_path):
    session, _ = make(tmp_path, [SUBMIT, {"content": "ok"}])
    rec = Recorder()
    session.run_turn("add a farewell", rec, threading.Event())
    (submitted,) = rec.of(ToolCallFinished)
    assert submitted.is_error and "submit_plan works only in Plan mode" in submitted.output
    assert session.plans.proposed is None and not rec.of(PlanUpdated)


def test_plan_is_journaled_and_recoverable(tmp_path):
    session, _ = make(tmp_path, [
        SUBMIT,
        {"tool_calls": [{"name": "update_plan", "arguments": {"step": 1, "status": "done"}},
                        {"name": "write", "arguments": {"path": "other.txt", "content": "x"}}]},
        {"content": "ok"},
    ])
    plan = session.plan_turn("t", Recorder(), threading.Event()).plan
    session.execute_plan(plan, Recorder(), threading.Event())
    records = [r for r in read_journal(session.journal_path) if r["kind"] == "plan"]
    assert [r["event"] for r in records] == ["proposed", "approved", "updated", "undeclared_file"]
    assert records[0]["plan"]["title"] == "Add a farewell"
    restored = plan_from_journal(read_journal(session.journal_path))
    assert restored == session.plan and restored.steps[0].status == "done"
    assert restored.undeclared_files == ["other.txt"]
    session.discard_plan()
    assert plan_from_journal(read_journal(session.journal_path)) is None
    assert plan_from_journal([records[0]]) is None  # a proposal is not an active plan


def test_execution_prompt_holds_the_checklist_verbatim():
    plan = sample_plan(3)
    text = execution_prompt(plan)
    assert plan.to_markdown() in text and "update_plan" in text and "skipped" in text


# ---------------------------------------------------------------------------------- headless
def write_replay(tmp_path, replies) -> Path:
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(replies))
    return path


def run_cli(tmp_path, capsys, replies, *extra):
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "a.py").write_text("def hello():\n    return 'hello'\n")
    code = main(["run", "add a farewell", "--replay", str(write_replay(tmp_path, replies)), "-C", str(ws),
                 "--model", "openai/gpt-4.1", *extra])
    out, err = capsys.readouterr()
    return code, out, err, ws


def test_headless_plan_prints_the_plan_and_exits_0(tmp_path, capsys):
    code, out, err, ws = run_cli(tmp_path, capsys, [
        {"tool_calls": [{"name": "write", "arguments": {"path": "a.py", "content": "x"}}]}, SUBMIT,
        {"content": "never"}], "--plan", "--permission-mode", "full-auto")
    assert code == 0, err
    assert "# Add a farewell" in out and "1. [ ] Add farewell() to a.py" in out and "Files: `a.py`" in out
    assert "## Risks" in out and "a.py is imported at start-up" in out
    assert "hello" in (ws / "a.py").read_text()  # nothing executed


def test_headless_plan_json_prints_plan_updated(tmp_path, capsys):
    code, out, _, _ = run_cli(tmp_path, capsys, [SUBMIT], "--plan", "--output-format", "json")
    events = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    types = [e["type"] for e in events]
    assert types[0] == "turn_started" and "turn_finished" in types and types[-1] == "plan_updated"
    plan = events[-1]
    assert plan["approved"] is False and plan["title"] == "Add a farewell"
    assert [(s["text"], s["status"]) for s in plan["steps"]] == [
        ("Add farewell() to a.py", "pending"), ("Create tests for it", "pending"),
        ("Document it in the README", "pending")]


def test_headless_plan_yes_executes(tmp_path, capsys):
    code, out, err, ws = run_cli(tmp_path, capsys, [
        SUBMIT,
        {"tool_calls": [{"name": "update_plan", "arguments": {"step": 1, "status": "in_progress"}},
                        {"name": "write", "arguments": {"path": "a.py", "content": "def farewell(): pass\n"}},
                        {"name": "update_plan", "arguments": {"step": 1, "status": "done"}}]},
        {"content": "Finished."},
    ], "--plan", "--yes", "--permission-mode", "full-auto", "--output-format", "json")
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["stop_reason"] for e in events if e["type"] == "turn_finished"] == ["done", "done"]
    plans = [e for e in events if e["type"] == "plan_updated"]
    assert plans[0]["approved"] is False and plans[-1]["approved"] is True
    assert [s["status"] for s in plans[-1]["steps"]] == ["done", "pending", "pending"]
    assert (ws / "a.py").read_text() == "def farewell(): pass\n"


def test_headless_plan_yes_text_and_permissions_still_apply(tmp_path, capsys):
    code, out, err, ws = run_cli(tmp_path, capsys, [
        SUBMIT,
        {"tool_calls": [{"name": "write", "arguments": {"path": "a.py", "content": "x"}},
                        {"name": "update_plan", "arguments": {"step": 1, "status": "skipped", "note": "denied"}}]},
        {"content": "Could not write."},
    ], "--plan", "--yes")  # default permission mode: ask -> headless denies writes
    assert code == 0, err
    assert "Permission denied: write" in out and "[-] 1. Add farewell() to a.py (denied)" in out
    assert "hello" in (ws / "a.py").read_text()
    # Two turns (the planning pass, then the execution), one session line, last.
    assert out.count("continue it with --resume") == 1, out
    assert out.rstrip().splitlines()[-1].startswith("session ")


def test_headless_plan_without_a_plan_exits_1(tmp_path, capsys):
    code, _, err, _ = run_cli(tmp_path, capsys, [{"content": "Which database?"}], "--plan")
    assert code == 1 and "no plan" in err and "Which database?" in err and len(err.strip().splitlines()) == 1


def test_yes_without_plan_is_a_usage_error(tmp_path, capsys):
    code, _, err, _ = run_cli(tmp_path, capsys, [{"content": "x"}], "--yes")
    assert code == 2 and "--yes needs --plan" in err and len(err.strip().splitlines()) == 1


def test_tui_command_line_accepts_plan():
    args = build_parser().parse_args(["--plan"])
    assert args.plan is True and args.command is None and args.yes is False
