"""What compaction pins by code: test targets and their coverage, the final test state, later
instructions by origin, the plan once, files changed by tools and by commands."""

from __future__ import annotations

import json

from agent.context.compaction.summary import SUMMARY_HEADER
from agent.context.compaction.rewrite import compact
from agent.context.pins import collect_pins
from agent.context.test_runs import ledger_of, parse_test_command
from agent.messages import AssistantMessage, ModeMessage, ToolCall, ToolResultMessage, UserMessage

FULL_FAIL = "tests/test_a.py F.\ntests/test_b.py FF\nE   AssertionError: total is 3\n=== 12 failed, 30 passed in 1.2s ==="


def run(i, command, output, is_error=False):
    call = ToolCall(id=f"t{i}", name="bash", arguments=json.dumps({"command": command}))
    return [AssistantMessage(tool_calls=[call]),
            ToolResultMessage(tool_call_id=f"t{i}", name="bash", content=output, is_error=is_error)]


def edit(i, path):
    call = ToolCall(id=f"e{i}", name="edit", arguments=json.dumps({"path": path, "old_string": "a", "new_string": "b"}))
    return [AssistantMessage(tool_calls=[call]), ToolResultMessage(tool_call_id=f"e{i}", name="edit", content="ok")]


def test_parse_test_command_targets_and_coverage():
    full = parse_test_command("python -m pytest -q")
    subset = parse_test_command("pytest tests/test_extra.py -k mad")
    folder = parse_test_command("cd repo && pytest tests/ -x 2>&1 | tail -5")
    node = parse_test_command("pytest tests/test_a.py::test_one")
    assert full.paths == frozenset() and full.filters == frozenset()
    assert subset.paths == {"tests/test_extra.py"} and subset.filters == {"-k mad"}
    assert folder.paths == {"tests/"} and folder.runner == "pytest"
    assert full.covers(subset) and full.covers(folder) and full.covers(node)
    assert not subset.covers(full) and not node.covers(full)
    assert folder.covers(node) and not node.covers(folder)
    assert not parse_test_command("pytest tests/test_extra.py -k mad").covers(parse_test_command("pytest tests/test_extra.py"))
    assert parse_test_command("ls -la") is None
    assert parse_test_command("npm test").runner == "npm test" and parse_test_command("cargo test foo").runner == "cargo test"


def test_a_passing_subset_run_never_resolves_a_failing_full_run():
    msgs = [UserMessage(content="fix the totals")]
    msgs += run(1, "pytest", FULL_FAIL, is_error=True)
    msgs += run(2, "pytest tests/test_extra.py -k mad", "1 passed, 3 deselected in 0.1s")
    ledger = ledger_of(msgs)
    unresolved = ledger.unresolved()
    assert [r.command for r in unresolved] == ["pytest"] and "12 failed" in unresolved[0].counts
    assert ledger.final_state().command == "pytest"  # the widest run wins, not the latest subset
    text = collect_pins(msgs).render()
    assert "12 failed" in text and "AssertionError: total is 3" in text
    assert "later runs of narrower targets: `pytest tests/test_extra.py -k mad` -> passing (1 passed" in text
    # the full suite passing resolves it
    msgs += run(3, "python -m pytest -q", "42 passed in 1.3s")
    ledger = ledger_of(msgs)
    assert ledger.unresolved() == [] and ledger.final_state().counts == "42 passed"


def test_one_failure_per_target_and_a_narrow_pass_resolves_only_its_own_target():
    msgs = [UserMessage(content="go")]
    msgs += run(1, "pytest tests/test_a.py", "E boom a\n1 failed", is_error=True)
    msgs += run(2, "pytest tests/test_b.py", "E boom b\n2 failed", is_error=True)
    msgs += run(3, "pytest tests/test_a.py", "E boom a again\n1 failed", is_error=True)
    msgs += run(4, "pytest tests/test_b.py", "2 passed")
    unresolved = ledger_of(msgs).unresolved()
    assert [r.output for r in unresolved] == ["E boom a again\n1 failed"]


def test_instructions_skip_plan_execution_and_summary_messages_and_the_last_mode_is_kept():
    plan_mode = ModeMessage(mode="plan", text="<mode>\n# Plan mode\n</mode>")
    act_mode = ModeMessage(mode="act", text="<mode>\n# Act mode\n</mode>")
    msgs = [UserMessage(content="TASK", mode=plan_mode),
            UserMessage(content="carry out the plan", origin="plan_execution", mode=act_mode),
            UserMessage(content="old summary", origin="summary"), UserMessage(content="LATER: keep setup.py as is")]
    pins = collect_pins(msgs, plan_markdown="1. [x] one (a.py)\n2. [ ] two (b.py)")
    assert pins.task.content == "TASK" and [m.content for m in pins.instructions] == ["LATER: keep setup.py as is"]
    assert pins.mode == act_mode
    text = pins.render()
    assert text.count("1. [x] one (a.py)") == 1 and "carry out the plan" not in text and "old summary" not in text


def test_the_summary_message_carries_the_mode_its_summarised_messages_stated():
    plan_mode = ModeMessage(mode="plan", text="<mode>\n# Plan mode: read-only\n</mode>")
    history = [UserMessage(content="TASK: plan the port", mode=plan_mode)]
    for i in range(12):  # reads: nothing to aggregate, so the older part is summarised
        call = ToolCall(id=f"r{i}", name="read", arguments=json.dumps({"path": f"data{i}.txt"}))
        history += [AssistantMessage(tool_calls=[call]),
                    ToolResultMessage(tool_call_id=f"r{i}", name="read", content="line\n" * 300)]
    r = compact(history, summarize=lambda req: "## Task\nx", keep_last=2, pins=collect_pins(history),
                window_tokens=8000)
    assert r.ok and r.summary_message.mode == plan_mode
    assert r.summary_message.to_openai()["content"].startswith("<mode>\n# Plan mode: read-only")


def test_changed_files_from_tools_and_from_commands_once_each():
    msgs = [UserMessage(content="go")] + edit(1, "src/a.py") + edit(2, "./src/a.py") + edit(3, "src/b.py")
    msgs += run(9, "sed -i s/a/b/ setup.cfg", "")
    pins = collect_pins(msgs, extra_changed_files=["setup.cfg", "src/b.py"])
    assert pins.changed_files == ["src/a.py", "src/b.py", "setup.cfg"]
    assert "## Files changed in this session\n- src/a.py\n- src/b.py\n- setup.cfg" in pins.render()


def test_compaction_pins_from_the_whole_history_once_each():
    """The compactor passes pins computed from the whole history: the task, a later instruction
    and the failing full run survive a second compaction, each exactly once."""
    history = [UserMessage(content="TASK: fix totals")] + run(1, "pytest", FULL_FAIL, is_error=True)
    history += [UserMessage(content="LATER: no new dependencies")]
    for i in range(2, 12):
        history += run(i, f"cat data{i}.txt", "line\n" * 300)
    history += run(20, "pytest tests/test_extra.py -k mad", "1 passed")
    first = compact(history, summarize=lambda r: "## Task\nx", keep_last=2, pins=collect_pins(history),
                    window_tokens=8000)
    assert first.ok
    grown = first.view + run(30, "cat more.txt", "line\n" * 300) + run(31, "cat more2.txt", "line\n" * 300)
    whole = history + grown[len(first.view):]
    second = compact(grown, summarize=lambda r: "## Task\ny", keep_last=2, pins=collect_pins(whole), window_tokens=8000)
    assert second.ok
    text = second.summary_message.content
    assert text.startswith(SUMMARY_HEADER) and text.count(SUMMARY_HEADER) == 1
    for needle in ("TASK: fix totals", "LATER: no new dependencies", "12 failed, 30 passed"):
        assert needle in text
    assert text.count("TASK: fix totals") == 1 and text.count("LATER: no new dependencies") == 1
    assert "pinned" not in second.pinned and {"task", "instructions", "unresolved errors", "test state"} <= set(second.pinned)


def test_many_long_instructions_fit_their_share_newest_verbatim_oldest_cut():
    """30 later instructions of ~1.4 KB each: pinned together within the cap, the newest kept
    verbatim, older ones cut to head and tail, the oldest to one line (a long session of long
    instructions must not outgrow the window)."""
    msgs = [UserMessage(content="TASK")]
    msgs += [UserMessage(content=f"LONGINSTR-{n}: " + "keep the public API stable and document it. " * 32)
             for n in range(30)]
    pins = collect_pins(msgs)
    text = pins.render(instructions_cap_chars=5400)
    section = text.split("## Later user instructions")[1]
    assert len(section) < 5400 + 30 * 40  # the cap plus the per-message headers
    assert msgs[-1].content in section and msgs[-2].content in section  # the newest, verbatim
    assert "characters left out" in section  # then shortened to head and tail
    assert "earlier instructions left out here for room; they are in the session journal" in section
    assert section.index("LONGINSTR-27:") < section.index("LONGINSTR-29:")  # in order
    assert len(pins.render()) > 40000  # without a cap all of them would be verbatim


def test_reasoning_pruning_counts_steps_unless_only_the_old_turns_key_is_set(monkeypatch):
    from agent.config.settings import CompactionSettings, Settings

    assert CompactionSettings().reasoning_steps_kept() == 3
    assert CompactionSettings(strip_reasoning_after_steps=5).reasoning_steps_kept() == 5
    assert CompactionSettings(strip_reasoning_after_turns=2).reasoning_steps_kept() is None  # counts turns
    both = CompactionSettings(strip_reasoning_after_turns=2, strip_reasoning_after_steps=0)
    assert both.reasoning_steps_kept() == 0  # the new key wins: 0 = off
    monkeypatch.setenv("OPENCLI_COMPACTION__STRIP_REASONING_AFTER_TURNS", "1")
    assert Settings().compaction.reasoning_steps_kept() is None
