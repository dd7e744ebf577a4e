"""An invalid setting names where the bad value came from (flag, env variable, user or project
file), and an ``OPENCLI_CONFIG`` that names no file gives a notice (DESIGN.md 5b)."""

from __future__ import annotations

import pytest

from agent.config.settings import ConfigError, PermissionMode
from agent.config.loading import load_settings


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def error_of(workspace, flags=None) -> str:
    with pytest.raises(ConfigError) as info:
        load_settings(workspace, flags)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    return root


def test_a_bad_flag_names_the_flag_not_the_env_variable(ws):
    message = error_of(ws, {"max_turns": -3})
    assert "max_turns=-3" in message and "--max-turns" in message
    assert "OPENCLI_" not in message and ".toml" not in message


def test_a_bad_section_flag_names_the_flag(ws):
    message = error_of(ws, {"compaction": {"mode": "sometimes"}})
    assert "compaction.mode='sometimes'" in message and "--compaction" in message
    assert "OPENCLI_" not in message


def test_a_bad_env_value_names_the_variable(ws, monkeypatch):
    monkeypatch.setenv("OPENCLI_MAX_TURNS", "-3")
    message = error_of(ws)
    assert "env OPENCLI_MAX_TURNS" in message and ".toml" not in message and "--max-turns" not in message
    monkeypatch.delenv("OPENCLI_MAX_TURNS")
    monkeypatch.setenv("OPENCLI_COMPACTION__MODE", "sometimes")
    assert "env OPENCLI_COMPACTION__MODE" in error_of(ws)


def test_a_section_in_env_that_is_not_json_is_a_config_error(ws, monkeypatch):
    """Used to escape as a pydantic-settings traceback."""
    monkeypatch.setenv("OPENCLI_COMPACTION", "xyz")
    message = error_of(ws)
    assert "compaction" in message and "OPENCLI_COMPACTION" in message


def test_a_bad_user_file_value_names_the_user_file(ws, isolated_env):
    user = isolated_env / "config.toml"
    write(user, "max_turns = -3\n")
    message = error_of(ws)
    assert "max_turns=-3" in message and str(user) in message and "key max_turns" in message
    assert "OPENCLI_" not in message and ".opencli.toml" not in message


def test_a_bad_project_file_value_names_the_project_file(ws, isolated_env):
    write(isolated_env / "config.toml", "max_turns = -1\n")  # also bad, but the project file wins
    write(ws / ".opencli.toml", "max-turns = -3\n")
    message = error_of(ws)
    assert "max_turns=-3" in message and str(ws / ".opencli.toml") in message
    assert str(isolated_env) not in message and "OPENCLI_" not in message


def test_higher_sources_hide_a_bad_lower_value(ws, isolated_env, monkeypatch):
    write(isolated_env / "config.toml", "max_turns = -1\n")
    assert load_settings(ws, {"max_turns": 7}).max_turns == 7
    monkeypatch.setenv("OPENCLI_MAX_TURNS", "8")
    assert load_settings(ws).max_turns == 8


def test_a_bad_section_key_names_the_file_that_set_it(ws, isolated_env, monkeypatch):
    user = isolated_env / "config.toml"
    write(user, '[compaction]\nmode = "sometimes"\n')
    write(ws / ".opencli.toml", "[compaction]\nthreshold = 0.5\n")
    monkeypatch.setenv("OPENCLI_COMPACTION__WARN_AT", "0.4")
    message = error_of(ws)
    assert "compaction.mode='sometimes'" in message and str(user) in message and "key compaction.mode" in message
    assert ".opencli.toml" not in message and "OPENCLI_" not in message


def test_a_bad_deny_rule_names_the_file_it_is_in(ws, isolated_env):
    user = isolated_env / "config.toml"
    project = ws / ".opencli.toml"
    write(user, '[permissions]\ndeny = ["rm -rf"]\n')
    write(project, '[permissions]\ndeny = ["git push", 4]\n')
    message = error_of(ws)
    assert str(project) in message and "key permissions.deny" in message
    write(user, '[permissions]\ndeny = ["rm -rf", 3]\n')
    write(project, '[permissions]\ndeny = ["git push"]\n')
    message = error_of(ws)
    assert str(user) in message and ".opencli.toml" not in message


def test_bad_user_allow_rules_are_not_blamed_on_the_project(ws, isolated_env):
    user = isolated_env / "config.toml"
    write(user, '[permissions]\nallow = [5]\n')
    write(ws / ".opencli.toml", '[permissions]\ndeny = ["git push"]\n')
    message = error_of(ws)
    assert str(user) in message and ".opencli.toml" not in message
    write(user, '[permissions]\nallow = ["pytest"]\n')
    s = load_settings(ws)
    assert s.permissions.allow == ["pytest"] and s.permissions.deny == ["git push"]


def test_bad_reminder_rules_name_their_source(ws, isolated_env, monkeypatch):
    project = ws / ".opencli.toml"
    write(project, '[reminders]\nrules = [{id = "x"}]\n')
    message = error_of(ws)
    assert "reminders.rules" in message and str(project) in message
    monkeypatch.setenv("OPENCLI_REMINDERS__RULES", '[{"id": 1}]')
    assert "env OPENCLI_REMINDERS__RULES" in error_of(ws)


def test_a_missing_opencli_config_file_is_a_notice(ws, tmp_path, monkeypatch):
    missing = tmp_path / "missing.toml"
    monkeypatch.setenv("OPENCLI_CONFIG", str(missing))
    notices: list[str] = []
    s = load_settings(ws, notices=notices)
    assert s.max_turns == 50 and s.permission_mode == PermissionMode.ASK
    assert len(notices) == 1
    assert "OPENCLI_CONFIG" in notices[0] and str(missing) in notices[0] and "does not exist" in notices[0]
    assert "\n" not in notices[0]


def test_an_opencli_config_naming_a_folder_is_a_notice(ws, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENCLI_CONFIG", str(tmp_path))
    notices: list[str] = []
    load_settings(ws, notices=notices)
    assert len(notices) == 1 and "OPENCLI_CONFIG" in notices[0] and "not a file" in notices[0]


def test_no_notice_when_the_named_file_exists_or_none_is_named(ws, tmp_path, isolated_env, monkeypatch):
    notices: list[str] = []
    load_settings(ws, notices=notices)  # isolated_env's config.toml exists (empty)
    assert notices == []
    monkeypatch.delenv("OPENCLI_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))  # the default place, absent
    load_settings(ws, notices=notices)
    assert notices == []


def test_an_unhashable_deny_rule_in_both_files_is_a_config_error(ws, isolated_env):
    """Joining the user's and the project's deny rules used to raise TypeError on a table."""
    write(isolated_env / "config.toml", '[permissions]\ndeny = [{a = 1}]\n')
    write(ws / ".opencli.toml", '[permissions]\ndeny = ["git push"]\n')
    message = error_of(ws)
    assert "permissions.deny" in message and str(isolated_env / "config.toml") in message
