"""Shared fixtures: every test runs with an isolated config and data folder and no API keys,
so nothing reads the developer's real settings or reaches for a provider."""

from __future__ import annotations

import os

import pytest

_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_BASE_URL")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch):
    """Point OPENCLI_CONFIG and OPENCLI_DATA_DIR at empty temp places (the config file exists and
    is empty: a missing one would give a notice); drop API keys and OPENCLI_* variables; force
    litellm's offline switches."""
    home = tmp_path_factory.mktemp("home")
    (home / "config.toml").touch()
    for key in list(os.environ):
        if key.startswith("OPENCLI_") or key in _KEYS:
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("OPENCLI_CONFIG", str(home / "config.toml"))
    monkeypatch.setenv("OPENCLI_DATA_DIR", str(home / "data"))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("LITELLM_OFFLINE_MODE", "true")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    yield home


@pytest.fixture(autouse=True)
def valid_requests():
    """Fail a test in which the scripted provider received an invalid request (see
    ``agent.providers.request_check``), even when the core caught the ``InvalidRequest``."""
    from agent.providers import request_check

    request_check.VIOLATIONS.clear()
    yield
    found = list(request_check.VIOLATIONS)
    request_check.VIOLATIONS.clear()
    assert not found, "the scripted provider received invalid requests:\n" + "\n".join(found)
