"""The judge judged: the checker's own rules on hand-made requests and facts (no session runs)."""

from __future__ import annotations

from pathlib import Path

from .checker import empty_messages, old_reasoning_blocks, pairing_problems, prefix_break
from .script import PytestRun, Script, Segment, Step, reply
from .runner import Request, SegmentRun, SessionRun, Timeline
from .tokens import TokenCounter
from .truth import contains, pins_at


def call(i, name="bash"):
    return {"id": i, "type": "function", "function": {"name": name, "arguments": "{}"}}


def tool(i, text="ok"):
    return {"role": "tool", "tool_call_id": i, "content": text}


SYSTEM = {"role": "system", "content": "sys"}
USER = {"role": "user", "content": "task"}


def test_pairing_accepts_answered_calls_and_reused_ids():
    messages = [SYSTEM, USER, {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b")]},
                tool("b"), tool("a"), {"role": "assistant", "content": None, "tool_calls": [call("a")]}, tool("a")]
    assert pairing_problems(messages) == []


def test_pairing_finds_missing_duplicate_and_orphan_results():
    missing = [SYSTEM, USER, {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b")]}, tool("a")]
    assert pairing_problems(missing)
    duplicate = [SYSTEM, USER, {"role": "assistant", "content": None, "tool_calls": [call("a")]}, tool("a"), tool("a")]
    assert any("orphan" in p for p in pairing_problems(duplicate))
    orphan = [SYSTEM, USER, tool("z")]
    assert any("orphan" in p for p in pairing_problems(orphan))


def test_empty_messages_spares_tool_calls_without_text():
    messages = [SYSTEM, USER, {"role": "assistant", "content": None, "tool_calls": [call("a")]}, tool("a", ""),
                {"role": "assistant", "content": "  "}]
    assert empty_messages(messages) == [3, 4]


def request(messages, tools=(), index=0, session=0, segment=0):
    return Request("main", "m", list(messages), list(tools), index, session, segment)


def test_prefix_break_names_what_changed():
    a = request([SYSTEM, USER])
    assert prefix_break(a, request([SYSTEM, USER, {"role": "assistant", "content": "x"}])) is None
    assert "system prompt" in prefix_break(a, request([{"role": "system", "content": "sys2"}, USER]))
    assert "tool list" in prefix_break(a, request([SYSTEM, USER], [{"function": {"name": "bash"}}]))
    assert "shorter" in prefix_break(request([SYSTEM, USER, USER]), a)


def test_contains_does_not_find_a_count_inside_a_larger_one():
    assert contains("12 failed, 3 passed", "12 failed")
    assert not contains("12 failed, 3 passed", "2 failed")


def test_old_reasoning_counts_only_messages_older_than_the_kept_steps():
    think = {"role": "assistant", "content": "<think>hm</think>ok"}
    plain = {"role": "assistant", "content": "ok"}
    assert old_reasoning_blocks([USER, think, plain, think, plain], 3) == 1
    assert old_reasoning_blocks([USER, {"role": "assistant", "content": "x", "reasoning_content": "r"}, plain, plain, plain], 3) == 1


def _run(steps: list[Step]) -> SessionRun:
    segment = Segment("turn", "Task: fix it.", steps)
    script = Script("t", len(steps), 8000, lambda ws: None, [segment])
    return SessionRun(script, Timeline(), [SegmentRun(segment, 0, "done")], [], Path("."), 0, "", 3)


def test_a_passing_subset_run_does_not_resolve_the_wider_failure():
    full = PytestRun("pytest", frozenset({"t1", "t2", "t3"}), ("t1", "t2"), 1)
    subset = PytestRun("pytest -k t1", frozenset({"t1"}), (), 1)
    fixed = PytestRun("pytest", frozenset({"t1", "t2", "t3"}), (), 3)
    run = _run([Step(reply(), test_runs=(full,)), Step(reply(), test_runs=(subset,)),
                Step(reply(), test_runs=(fixed,))])
    after_subset = {p.kind: p for p in pins_at(run, 2)}
    assert after_subset["unresolved_error"].needles == ("2 failed", "t2")  # t1 passed since; t2 did not
    assert after_subset["final_test_state"].needles == ("2 failed",)
    after_fix = {p.kind: p for p in pins_at(run, 3)}
    assert "unresolved_error" not in after_fix and after_fix["final_test_state"].needles == ("3 passed",)


def test_facts_become_visible_after_their_step():
    run = _run([Step(reply(), changed=("a.py",)), Step(reply())])
    assert [p.kind for p in pins_at(run, 0)] == ["task"]
    assert [p.needles for p in pins_at(run, 1)] == [("Task: fix it.",), ("a.py",)]


def test_token_counter_is_real_or_says_it_estimates():
    counter = TokenCounter("openai/gpt-4.1")
    assert counter.exact, counter.method  # litellm bundles the tiktoken files: no fallback here
    assert counter.text("hello world") == 2
    assert counter.request([USER], []) == 3 + 3 + counter.text("user") + counter.text("task")
