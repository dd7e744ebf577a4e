"""Reminders: one rule list for prompt and tool results, deduplicated per turn and per change."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent.config.reminder_rules import DEFAULT_RULES, ReminderRule, rules_from_config, system_prompt_rules
from agent.loop.reminders import ReadFileStamps, ReminderEngine, command_runs_git
from agent.tools.base import Capability

EDIT_TEXT = "run the relevant tests, and don't widen the scope of the change"
GIT_TEXT = "never commit or push unless the user asked"


def test_after_edit_fires_once_per_turn_and_file():
    engine = ReminderEngine()
    engine.start_turn()
    assert engine.on_tool_result("edit", "mutating", {"path": "a.py"}, False) == [EDIT_TEXT]
    assert engine.on_tool_result("edit", "mutating", {"path": "./a.py"}, False) == []  # same file
    assert engine.on_tool_result("write", Capability.MUTATING, '{"path": "b.py", "content": ""}', False) == [EDIT_TEXT]
    engine.start_turn()
    assert engine.on_tool_result("edit", "mutating", {"path": "a.py"}, False) == [EDIT_TEXT]


def test_failed_edit_and_read_tools_do_not_fire():
    engine = ReminderEngine()
    assert engine.on_tool_result("edit", "mutating", {"path": "a.py"}, True) == []
    assert engine.on_tool_result("read", "read", {"path": "a.py"}, False) == []
    assert engine.on_tool_result("edit", "mutating", "{not json", False) == []


def test_after_git_fires_once_per_turn_even_when_git_failed():
    engine = ReminderEngine()
    engine.start_turn()
    assert engine.on_tool_result("bash", "exec", {"command": "git push"}, True) == [GIT_TEXT]
    assert engine.on_tool_result("bash", "exec", {"command": "git status"}, False) == []
    assert engine.on_tool_result("bash", "exec", {"command": "pytest -q"}, False) == []
    engine.start_turn()
    assert engine.on_tool_result("bash", "exec", {"command": "cd src && git diff"}, False) == [GIT_TEXT]


@pytest.mark.parametrize("command, expected", [
    ("git status", True),
    ("cd repo && git log -1", True),
    ("echo $(git rev-parse HEAD)", True),
    ("echo `git rev-parse HEAD`", True),
    ("GIT_PAGER=cat git log", True),
    ("sudo git push", True),
    ("/usr/bin/git commit -m x", True),
    ("make; git add -A", True),
    ("ls | git hash-object --stdin", True),
    ("grep git notes.txt", False),
    ("pip install gitpython", False),
    ("echo 'git push'", False),
    ("cat x > git", False),
    ("python -c 'print(1)' 2>&1", False),
    ("git 'unbalanced", True),
])
def test_command_runs_git(command, expected):
    assert command_runs_git(command) is expected


def test_external_change_is_delivered_once_per_change():
    engine = ReminderEngine()
    engine.start_turn()
    engine.on_external_change("src/config.py")
    engine.on_external_change("src/config.py")  # the same change reported twice before delivery
    first = engine.on_tool_result("grep", "read", {"pattern": "x"}, False)
    assert first == ["src/config.py changed on disk since you read it; read it again before editing"]
    assert engine.on_tool_result("grep", "read", {"pattern": "x"}, False) == []
    engine.on_external_change("src/config.py")  # a second real change in the same turn
    assert len(engine.on_tool_result("bash", "exec", {"command": "ls"}, False)) == 1


def test_external_change_survives_a_new_turn_and_is_dropped_by_a_reread():
    engine = ReminderEngine()
    engine.on_external_change("a.py")
    engine.start_turn()
    assert engine.has_pending()
    assert engine.on_tool_result("read", "read", {"path": "a.py"}, False) == []
    assert not engine.has_pending()


def test_format_appends_distinct_reminders():
    assert ReminderEngine.format([]) == ""
    text = ReminderEngine.format(["a", "b", "a"])
    assert text == "\n\n[reminder: a]\n[reminder: b]"


def test_system_prompt_states_each_rule_once():
    prompt = system_prompt_rules(DEFAULT_RULES)
    assert prompt.count(EDIT_TEXT) == 1 and prompt.count(GIT_TEXT) == 1
    assert "read it again before editing" in prompt and "{path}" not in prompt
    assert system_prompt_rules([]) == ""


def test_rules_from_config():
    assert rules_from_config(None) == list(DEFAULT_RULES)
    assert rules_from_config([]) == []
    rules = rules_from_config([{"id": "lint", "trigger": "after_edit", "text": "run ruff on {path}"}])
    engine = ReminderEngine(rules)
    assert engine.on_tool_result("edit", "mutating", {"path": "x.py"}, False) == ["run ruff on x.py"]
    assert engine.on_tool_result("bash", "exec", {"command": "git push"}, False) == []
    with pytest.raises(ValueError, match=r"rules\[0\]\.trigger"):
        rules_from_config([{"id": "x", "trigger": "after_lunch", "text": "t"}])
    with pytest.raises(ValueError, match="duplicate"):
        rules_from_config([{"id": "x", "trigger": "after_git", "text": "t"}] * 2)
    with pytest.raises(ValueError, match="text"):
        rules_from_config([{"id": "x", "trigger": "after_git", "text": ""}])


def test_rule_without_external_trigger_ignores_changes():
    engine = ReminderEngine([ReminderRule(id="g", trigger="after_git", text="t")])
    engine.on_external_change("a.py")
    assert not engine.has_pending()


def test_read_file_stamps_report_each_change_once(tmp_path: Path):
    (tmp_path / "src").mkdir()
    target = tmp_path / "src" / "a.py"
    target.write_text("x = 1\n")
    stamps = ReadFileStamps(tmp_path)
    stamps.note("src/a.py")
    stamps.note("src")  # folders are not watched
    assert stamps.changed() == []
    os.utime(target, ns=(1, 1_000_000_000))
    assert stamps.changed() == ["src/a.py"]
    assert stamps.changed() == []
    target.write_text("x = 2\n")  # the agent's own edit: noted, so not external
    stamps.note("src/a.py")
    assert stamps.changed() == []
    target.unlink()
    assert stamps.changed() == ["src/a.py"]
    assert stamps.changed() == []
