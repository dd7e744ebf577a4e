"""Stuck-loop guard: each rule fires where the issue says, and never on polling or on identical
calls separated by other work."""

from __future__ import annotations

import json

import pytest

from agent.loop.guards import ALLOW, LoopGuard, canonical_arguments


def run(guard: LoopGuard, name: str, args, result: str, is_error: bool = False):
    """Check, and record when allowed (as the loop does); return the verdict."""
    text = args if isinstance(args, str) else json.dumps(args)
    verdict = guard.check(name, text)
    if verdict.action == "allow":
        guard.record(name, text, result, is_error)
    return verdict


def test_canonical_arguments_ignores_key_order_and_spacing():
    assert canonical_arguments('{"b": 1, "a": [1, 2]}') == canonical_arguments('{"a":[1,2],"b":1}')
    assert canonical_arguments("") == "{}"
    assert canonical_arguments('"{\\"path\\": \\"x\\"}"') == '{"path":"x"}'  # double-encoded object
    assert canonical_arguments("{not json ") == "{not json"
    assert canonical_arguments('{"s": "caf\\u00e9"}') == '{"s":"café"}'


def test_same_call_same_result_warns_then_stops():
    guard = LoopGuard()
    assert run(guard, "read", {"path": "a.py", "limit": 5}, "x = 1") is ALLOW
    assert run(guard, "read", {"limit": 5, "path": "a.py"}, "x = 1") is ALLOW  # key order ignored
    third = guard.check("read", '{"path":"a.py","limit":5}')
    assert third.action == "warn" and third.guard == "stuck"
    assert "read" in third.message and "same result" in third.message and "approach" in third.message
    fourth = guard.check("read", '{"path": "a.py", "limit": 5}')
    assert fourth.action == "stop" and fourth.guard == "stuck"
    assert "Stopped" in fourth.message


def test_polling_with_changing_results_is_allowed():
    guard = LoopGuard()
    for i in range(6):
        assert run(guard, "bash", {"command": "gh run view 1"}, f"status: running ({i} steps done)") is ALLOW


def test_polling_that_stops_changing_is_then_flagged():
    guard = LoopGuard()
    assert run(guard, "bash", {"command": "check"}, "running 1") is ALLOW
    assert run(guard, "bash", {"command": "check"}, "running 2") is ALLOW
    assert run(guard, "bash", {"command": "check"}, "done") is ALLOW
    assert run(guard, "bash", {"command": "check"}, "done") is ALLOW
    assert guard.check("bash", '{"command": "check"}').action == "warn"


def test_identical_calls_separated_by_other_work_are_not_flagged():
    guard = LoopGuard()
    for i in range(5):
        assert run(guard, "bash", {"command": "pytest -q"}, "1 failed") is ALLOW
        assert run(guard, "edit", {"path": "a.py", "old_string": f"v{i}", "new_string": f"v{i + 1}"}, "ok") is ALLOW


def test_warning_is_cleared_by_a_new_turn():
    guard = LoopGuard()
    run(guard, "glob", {"pattern": "*.py"}, "a.py")
    run(guard, "glob", {"pattern": "*.py"}, "a.py")
    assert guard.check("glob", '{"pattern": "*.py"}').action == "warn"
    guard.reset()
    assert run(guard, "glob", {"pattern": "*.py"}, "a.py") is ALLOW
    assert run(guard, "glob", {"pattern": "*.py"}, "a.py") is ALLOW
    assert guard.check("glob", '{"pattern": "*.py"}').action == "warn"  # a fresh warning, not a stop


def test_changing_approach_after_warning_is_allowed():
    guard = LoopGuard()
    run(guard, "grep", {"pattern": "foo"}, "no matches")
    run(guard, "grep", {"pattern": "foo"}, "no matches")
    assert guard.check("grep", '{"pattern": "foo"}').action == "warn"
    assert run(guard, "grep", {"pattern": "fo+"}, "no matches") is ALLOW
    assert run(guard, "glob", {"pattern": "**/*foo*"}, "src/foo.py") is ALLOW


def test_falling_back_into_a_warned_loop_in_the_same_turn_stops():
    guard = LoopGuard()
    for _ in range(2):
        run(guard, "read", {"path": "a"}, "same")
    assert guard.check("read", '{"path": "a"}').action == "warn"
    run(guard, "glob", {"pattern": "*"}, "a")
    for _ in range(2):
        assert run(guard, "read", {"path": "a"}, "same") is ALLOW
    assert guard.check("read", '{"path": "a"}').action == "stop"


def test_repeated_failure_with_volatile_details():
    guard = LoopGuard()
    assert run(guard, "bash", {"command": "make"}, "error: no rule (after 0.51s, pid 4411)", True) is ALLOW
    assert run(guard, "bash", {"command": "make"}, "error: no rule (after 0.73s, pid 4420)", True) is ALLOW
    verdict = guard.check("bash", '{"command": "make"}')
    assert verdict.action == "warn" and verdict.guard == "repeated_failure"
    assert "failed twice" in verdict.message
    stop = guard.check("bash", '{"command":"make"}')
    assert stop.action == "stop" and stop.guard == "repeated_failure"


def test_different_errors_are_not_a_repeated_failure():
    guard = LoopGuard()
    assert run(guard, "bash", {"command": "make"}, "error: missing header foo.h", True) is ALLOW
    assert run(guard, "bash", {"command": "make"}, "error: undefined symbol bar", True) is ALLOW
    assert guard.check("bash", '{"command": "make"}') is ALLOW


def test_failure_then_success_is_not_flagged():
    guard = LoopGuard()
    run(guard, "bash", {"command": "curl localhost"}, "connection refused", True)
    run(guard, "bash", {"command": "curl localhost"}, "ok")
    assert guard.check("bash", '{"command": "curl localhost"}') is ALLOW


def test_ping_pong_warns_after_two_rounds_then_stops():
    guard = LoopGuard()
    a, b = {"path": "a.py"}, {"command": "pytest -q"}
    assert run(guard, "read", a, "A") is ALLOW
    assert run(guard, "bash", b, "1 failed") is ALLOW
    assert run(guard, "read", a, "A") is ALLOW
    assert run(guard, "bash", b, "1 failed") is ALLOW
    verdict = guard.check("read", json.dumps(a))
    assert verdict.action == "warn" and verdict.guard == "ping_pong"
    assert "read" in verdict.message and "bash" in verdict.message
    stop = guard.check("read", json.dumps(a))
    assert stop.action == "stop" and stop.guard == "ping_pong"


def test_ping_pong_with_changing_results_is_allowed():
    guard = LoopGuard()
    for i in range(4):
        assert run(guard, "bash", {"command": "pytest -q"}, f"{i} failed") is ALLOW
        assert run(guard, "read", {"path": "log"}, f"line {i}") is ALLOW


def test_three_call_cycle_is_a_ping_pong():
    guard = LoopGuard()
    cycle = [("read", {"path": "a"}, "A"), ("grep", {"pattern": "x"}, "none"), ("bash", {"command": "ls"}, "a")]
    for _ in range(2):
        for name, args, result in cycle:
            assert run(guard, name, args, result) is ALLOW
    assert guard.check("read", '{"path": "a"}').guard == "ping_pong"


def test_breaking_the_ping_pong_is_allowed():
    guard = LoopGuard()
    for _ in range(2):
        run(guard, "read", {"path": "a"}, "A")
        run(guard, "read", {"path": "b"}, "B")
    assert guard.check("read", '{"path": "a"}').action == "warn"
    assert guard.check("glob", '{"pattern": "*"}') is ALLOW


@pytest.mark.parametrize("raw", ["{bad json", ""])
def test_invalid_or_empty_arguments_are_compared_as_text(raw):
    guard = LoopGuard()
    for _ in range(2):
        guard.record("edit", raw, "invalid arguments for edit", True)
    assert guard.check("edit", raw).guard == "repeated_failure"
    assert guard.check("edit", raw + " ").action == "stop"  # same text once stripped
