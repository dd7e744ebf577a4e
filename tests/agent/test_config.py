"""Settings precedence and validation (DESIGN.md 5b)."""

from __future__ import annotations

import pytest

from agent.config.settings import EMBEDDED_MODEL, ConfigError, PermissionMode
from agent.config.loading import load_settings


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


def test_unknown_project_key_is_a_notice_with_a_suggestion(tmp_path, isolated_env):
    write(tmp_path / ".opencli.toml", "bogus_key = 1\nmax_turn = 7\n")
    notices: list[str] = []
    s = load_settings(tmp_path, notices=notices)
    assert s.max_turns == 50
    bogus = [n for n in notices if "'bogus_key'" in n]
    assert len(bogus) == 1 and ".opencli.toml" in bogus[0] and "\n" not in bogus[0]
    near = [n for n in notices if "'max_turn'" in n]
    assert len(near) == 1 and "did you mean 'max_turns'" in near[0]


def test_unknown_user_key_and_section_key_are_notices(tmp_path, isolated_env):
    write(isolated_env / "config.toml", "bogus_key = 1\n[compaction]\ntreshold = 0.5\n")
    notices: list[str] = []
    load_settings(tmp_path, notices=notices)
    assert any("'bogus_key'" in n and "config.toml" in n for n in notices), notices
    assert any("compaction.treshold" in n and "did you mean compaction.threshold" in n for n in notices), notices


def test_unknown_env_names_are_notices(tmp_path, isolated_env, monkeypatch):
    monkeypatch.setenv("OPENCLI_COMPACTION__NOPE", "1")
    monkeypatch.setenv("OPENCLI_MAX_TURN", "3")
    monkeypatch.setenv("OPENCLI_MAX_TURNS__X", "3")
    monkeypatch.setenv("OPENCLI_COMPACTION__MODE", "manual")
    notices: list[str] = []
    s = load_settings(tmp_path, notices=notices)
    assert s.compaction.mode == "manual" and s.max_turns == 50
    assert len(notices) == 3, notices
    assert any("OPENCLI_COMPACTION__NOPE" in n for n in notices)
    assert any("OPENCLI_MAX_TURN;" in n and "did you mean OPENCLI_MAX_TURNS" in n for n in notices)
    assert any("OPENCLI_MAX_TURNS__X" in n for n in notices)


def test_config_and_data_dir_env_are_not_reported(tmp_path, isolated_env):
    notices: list[str] = []
    load_settings(tmp_path, notices=notices)  # isolated_env sets OPENCLI_CONFIG and OPENCLI_DATA_DIR
    assert notices == []


def test_embedded_tools_must_be_read_only_or_all(tmp_path, isolated_env, monkeypatch):
    write(tmp_path / ".opencli.toml", '[embedded]\ntools = "some"\n')
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path)
    message = str(info.value)
    assert "embedded.tools" in message and "'some'" in message and "\n" not in message
    write(tmp_path / ".opencli.toml", '[embedded]\ntools = "all"\n')
    assert load_settings(tmp_path).embedded.tools == "all"
    monkeypatch.setenv("OPENCLI_EMBEDDED__TOOLS", "everything")
    with pytest.raises(ConfigError, match="embedded.tools"):
        load_settings(tmp_path)
