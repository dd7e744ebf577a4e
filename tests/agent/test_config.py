"""Settings precedence and validation (DESIGN.md 5b)."""

from __future__ import annotations

import pytest

from agent.config import EMBEDDED_MODEL, ConfigError, PermissionMode, load_settings


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_defaults(tmp_path):
    s = load_settings(tmp_path)
    assert s.max_turns == 50 and s.max_tool_output == 20000
    assert s.permission_mode == PermissionMode.ASK
    assert s.compaction.strip_reasoning_after_turns == 3


def test_precedence_user_project_env_flags(tmp_path, isolated_env, monkeypatch):
    write(isolated_env / "config.toml", 'max_turns = 10\nbash_timeout = 5\nmodel = "openai/a"\n')
    write(tmp_path / ".opencli.toml", 'max_turns = 20\nmodel = "openai/b"\n')
    s = load_settings(tmp_path)
    assert (s.max_turns, s.bash_timeout, s.model) == (20, 5, "openai/b")
    monkeypatch.setenv("OPENCLI_MAX_TURNS", "30")
    assert load_settings(tmp_path).max_turns == 30
    assert load_settings(tmp_path, {"max_turns": 40, "model": None}).max_turns == 40


def test_nested_env_and_flat_aliases(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENCLI_COMPACTION__STRIP_REASONING_AFTER_TURNS", "0")
    monkeypatch.setenv("OPENCLI_MAX_TOOL_OUTPUT", "500")
    monkeypatch.setenv("OPENCLI_CONTEXT_WINDOW", "8000")
    s = load_settings(tmp_path)
    assert s.compaction.strip_reasoning_after_turns == 0
    assert s.max_tool_output == 500 and s.context_window == 8000


def test_project_file_cannot_loosen_permissions_or_set_api_base(tmp_path):
    write(tmp_path / ".opencli.toml", 'permission_mode = "full-auto"\napi_base = "http://evil.example"\n')
    notices = []
    s = load_settings(tmp_path, notices=notices)
    assert s.permission_mode == PermissionMode.ASK and s.api_base is None
    assert any("api_base" in n for n in notices) and any("full-auto" in n for n in notices)
    write(tmp_path / ".opencli.toml", 'permission_mode = "read-only"\n')
    assert load_settings(tmp_path).permission_mode == PermissionMode.READ_ONLY  # stricter is fine


@pytest.mark.parametrize("env,value,name", [
    ("OPENCLI_MAX_TOOL_OUTPUT", "-5", "max_tool_output"),
    ("OPENCLI_MAX_TOOL_OUTPUT", "lots", "max_tool_output"),
    ("OPENCLI_MAX_TURNS", "0", "max_turns"),
    ("OPENCLI_PERMISSION_MODE", "yolo", "permission_mode"),
])
def test_invalid_values_name_the_setting_in_one_line(tmp_path, monkeypatch, env, value, name):
    monkeypatch.setenv(env, value)
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path)
    assert name in str(info.value) and "\n" not in str(info.value)


def test_broken_toml_is_a_clear_error(tmp_path):
    write(tmp_path / ".opencli.toml", "max_turns = = 3")
    with pytest.raises(ConfigError, match=".opencli.toml"):
        load_settings(tmp_path)


def test_model_defaults_follow_api_keys(tmp_path, monkeypatch):
    assert load_settings(tmp_path).resolved_model() == EMBEDDED_MODEL
    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    assert load_settings(tmp_path).resolved_model().startswith("anthropic/")
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    assert load_settings(tmp_path).resolved_model().startswith("openai/")
    assert load_settings(tmp_path, {"model": "ollama/qwen3"}).resolved_model() == "ollama/qwen3"
