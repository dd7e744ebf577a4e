"""agent/config_files.py: where the config files are and the quick, unvalidated read of one
setting the TUI needs before its first paint (the theme)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.config.loading import load_settings
from agent.config.files import PROJECT_FILE, peek_setting, user_config_path


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    user = tmp_path / "user.toml"
    monkeypatch.setenv("OPENCLI_CONFIG", str(user))
    monkeypatch.delenv("OPENCLI_THEME", raising=False)
    return user


def test_precedence_follows_load_settings(tmp_path: Path, isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    assert user_config_path() == isolated
    assert peek_setting(ws, "theme") is None
    isolated.write_text('theme = "from-user"\n')
    assert peek_setting(ws, "theme") == load_settings(ws, {}).theme == "from-user"
    (ws / PROJECT_FILE).write_text('theme = "from-project"\n')
    assert peek_setting(ws, "theme") == load_settings(ws, {}).theme == "from-project"
    monkeypatch.setenv("OPENCLI_THEME", "from-env")
    assert peek_setting(ws, "theme") == load_settings(ws, {}).theme == "from-env"


def test_a_broken_file_counts_as_unset(tmp_path: Path, isolated: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / PROJECT_FILE).write_text('theme = "unterminated\n')
    isolated.write_text('theme = "from-user"\n')
    assert peek_setting(ws, "theme") == "from-user"  # load_settings reports the broken file later
    (ws / PROJECT_FILE).write_bytes(b"\xff\xfe not utf-8")
    assert peek_setting(ws, "theme") == "from-user"
