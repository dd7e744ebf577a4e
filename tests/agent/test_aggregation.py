"""Developer-loop aggregation on records: thresholds, capabilities, notice, pairing."""

from __future__ import annotations

import json

from agent.context.aggregation import NOTICE_PREFIX, aggregate_developer_loops, build_notice
from agent.context.repair import pairing_ok
from agent.context.records import to_dicts
from agent.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage


def step(i, name, args, result, is_error=False, text=None):
    call = ToolCall(id=f"c{i}", name=name, arguments=json.dumps(args))
    return [AssistantMessage(content=text, tool_calls=[call]),
            ToolResultMessage(tool_call_id=f"c{i}", name=name, content=result, is_error=is_error)]


def loop(n, final="3 passed"):
    msgs = [UserMessage(content="fix it")]
    for i in range(n):
        if i % 2 == 0:
            msgs += step(i, "edit", {"path": f"src/m{i}.py", "old_string": "a", "new_string": "b"}, "ok")
        else:
            last = i == n - 1 or i == n - 2
            msgs += step(i, "bash", {"command": "pytest -q"}, final if last else "1 failed, 2 passed",
                         is_error=not last)
    return msgs


def test_short_run_untouched():
    msgs = loop(4)
    out, ids = aggregate_developer_loops(msgs, min_steps=5)
    assert out == msgs and ids == []


def test_long_run_collapses_to_first_and_last_step():
    msgs = loop(8)
    out, ids = aggregate_developer_loops(msgs, min_steps=5)
    assert len(out) == 1 + 2 + 2
    assert out[1] is msgs[1] and out[-2:] == msgs[-2:]
    assert out[2].id == msgs[2].id and NOTICE_PREFIX in out[2].content
    assert len(ids) == 12
    assert pairing_ok(to_dicts(out))
    notice = out[2].content
    assert "6 edit/exec steps" in notice and "src/m2.py" in notice and "pytest -q" in notice
    # The final test run is the kept last step: the notice points to it instead of a failure.
    assert "kept verbatim" in notice and not notice.rstrip("]").rstrip().endswith("failed")


def test_final_outcome_in_notice_is_the_last_run():
    msgs = loop(9) + step(99, "edit", {"path": "README.md"}, "ok")
    out, _ = aggregate_developer_loops(msgs, min_steps=5)
    notice = next(m.content for m in out if isinstance(m, ToolResultMessage) and NOTICE_PREFIX in m.content)
    assert "Final outcome (current state, succeeded): `pytest -q` -> passing (3 passed)" in notice
    assert "resolved" in notice


def test_failing_final_state_is_reported_as_failing():
    msgs = loop(9, final="2 failed, 1 passed") + step(99, "edit", {"path": "README.md"}, "ok")
    out, _ = aggregate_developer_loops(msgs, min_steps=5)
    notice = next(m.content for m in out if isinstance(m, ToolResultMessage) and NOTICE_PREFIX in m.content)
    assert "FAILING" in notice and "2 failed" in notice


def test_reads_between_edits_and_tests_do_not_break_a_run():
    """read -> edit -> pytest cycles are one developer loop: the look-ups inside it are elided too."""
    msgs = loop(4) + step(50, "read", {"path": "src/m0.py"}, "text") + step(51, "grep", {"pattern": "a"}, "m0.py:1") \
        + loop(4)[1:]
    out, ids = aggregate_developer_loops(msgs, min_steps=5)
    assert msgs[9].id in ids and msgs[11].id in ids  # the read and grep steps' calls are among the elided
    assert out[1] is msgs[1] and out[-2:] == msgs[-2:] and pairing_ok(to_dicts(out))
    notice = out[2].content
    assert "read x1" in notice and "grep x1" in notice


def test_a_text_reply_or_a_trailing_read_ends_a_run():
    text_between = loop(4) + [AssistantMessage(content="Let me think about the design.")] + loop(4)[1:]
    assert aggregate_developer_loops(text_between, min_steps=5)[1] == []
    trailing = loop(8) + step(60, "read", {"path": "src/m0.py"}, "text")
    out, ids = aggregate_developer_loops(trailing, min_steps=5)
    assert out[-2:] == trailing[-2:] and trailing[-2].id not in ids  # the read after the run stays


def test_notice_keeps_each_files_changes_in_order_and_the_current_error():
    msgs = [UserMessage(content="fix it")]
    msgs += step(9, "bash", {"command": "pytest -q"}, "E   AssertionError: first\n1 failed", is_error=True)
    msgs += step(0, "edit", {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}, "ok")
    msgs += step(1, "bash", {"command": "pytest -q"}, "E   AssertionError: boom\n1 failed", is_error=True)
    msgs += step(2, "edit", {"path": "a.py", "old_string": "x = 2", "new_string": "x = 3"}, "ok")
    msgs += step(3, "bash", {"command": "pytest -q"}, "E   AssertionError: still\n1 failed", is_error=True)
    msgs += step(4, "write", {"path": "b.py", "content": "print(1)\nprint(2)\n"}, "ok")
    msgs += step(5, "bash", {"command": "python b.py"}, "Traceback (most recent call last):\nNameError: nope",
                 is_error=True)
    msgs += step(6, "edit", {"path": "README.md", "old_string": "a", "new_string": "b"}, "ok")
    out, ids = aggregate_developer_loops(msgs, min_steps=5)
    notice = out[2].content
    changes = notice.split("Changes to each file in the elided steps, in order:")[1]
    assert changes.index("-x = 1\n+x = 2") < changes.index("-x = 2\n+x = 3")  # every edit, in order
    assert "--- b.py\n(written whole: 2 lines" in notice
    assert "Last error output (current):\nTraceback" in notice and "NameError: nope" in notice


def test_custom_capabilities_and_unknown_tools():
    msgs = [UserMessage(content="go")]
    for i in range(6):
        msgs += step(i, "mystery", {}, "ok")
    assert aggregate_developer_loops(msgs)[1] == []
    out, ids = aggregate_developer_loops(msgs, capability_of=lambda n: "exec")
    assert len(ids) == 8


def test_incomplete_step_is_not_collapsed():
    msgs = loop(8)
    del msgs[-1]  # the last call has no result yet
    out, ids = aggregate_developer_loops(msgs, min_steps=5)
    assert out[-1] is msgs[-1]


def test_build_notice_without_commands():
    steps = [step(i, "edit", {"path": "a.py"}, "ok") for i in range(3)]
    text = build_notice(steps[1:2], steps[2])
    assert "no command ran" in text and text.endswith("]")


def test_a_passing_subset_run_in_a_loop_never_reads_as_resolving_a_wider_failure():
    msgs = [UserMessage(content="fix stats")]
    msgs += step(0, "bash", {"command": "python -m pytest -q"}, "FAILED tests/test_stats.py::test_median\n1 failed, 7 passed",
                 is_error=True)
    for i in range(1, 6):
        msgs += step(i, "edit", {"path": "calc/stats.py", "old_string": f"v{i}", "new_string": f"v{i + 1}"}, "ok")
    msgs += step(6, "bash", {"command": "python -m pytest -q tests/test_stats.py::test_clamp 2>&1; cat logs/app.log | tail -40"},
                 "1 passed in 0.01s\n2026-01-01 INFO worker 120 processed batch ok")
    msgs += step(7, "edit", {"path": "README.md", "old_string": "a", "new_string": "b"}, "ok")
    out, _ = aggregate_developer_loops(msgs, min_steps=5)
    notice = out[2].content
    assert "resolved by the final outcome" not in notice
    # the widest run is the state: the later passing subset run does not replace it
    assert "Final outcome (current state, FAILING): `python -m pytest -q` -> FAILING (1 failed, 7 passed)" in notice
    assert "processed batch ok" not in notice
