"""Fixtures for the TUI tests: an isolated environment, a scripted session, and waiting helpers.

Every test runs with ``OPENCLI_CONFIG`` pointing at a missing file and ``OPENCLI_DATA_DIR`` in
``tmp_path``, no API keys, and a workspace folder ``tmp_path / "demo-repo"``: no user config or
real data folder is touched and nothing reaches the network.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import pytest

from agent.config.settings import Settings
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session
from tui.app import OpenCLIApp


@pytest.fixture(autouse=True)
def isolated_tui_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep user config, data folder and API keys out of the tests."""
    import os

    for key in list(os.environ):
        if key.startswith("OPENCLI_") or key.endswith("_API_KEY"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("OPENCLI_CONFIG", str(tmp_path / "no-such-config.toml"))
    monkeypatch.setenv("OPENCLI_DATA_DIR", str(tmp_path / "data"))
    # The same pictures on every kernel: whether Landlock exists changes Plan mode's tools.
    monkeypatch.setenv("OPENCLI_SANDBOX__MODE", "off")


def fill_demo_repo(root: Path) -> Path:
    """Create ``root`` with a README and a Python file; returns ``root``."""
    root.mkdir()
    (root / "README.md").write_text("# Demo\n\nA tiny project used by the TUI tests.\n", encoding="utf-8")
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    return root


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A small project folder with a README and a Python file."""
    return fill_demo_repo(tmp_path / "demo-repo")


@pytest.fixture
def make_app(workspace: Path) -> Callable[..., tuple[OpenCLIApp, ScriptedProvider]]:
    """Return a factory: ``make_app(replies, permission_mode=..., **settings) -> (app, provider)``.

    The session is the real one (``build_session``) over a ``ScriptedProvider``; the app does not
    watch theme files.
    """

    def factory(replies: list[dict[str, Any]], *, permission_mode: str = "full-auto",
                model: str = "openai/gpt-4.1", app_kwargs: dict[str, Any] | None = None,
                **settings: Any) -> tuple[OpenCLIApp, ScriptedProvider]:
        provider = ScriptedProvider(replies)
        config = Settings(model=model, permission_mode=permission_mode, **settings)
        session = build_session(workspace, config, provider=provider, interactive=True)
        app = OpenCLIApp(session=session, watch_themes=False, **(app_kwargs or {}))
        app.animation_level = "none"  # spinners stand still; nothing animates
        return app, provider

    return factory


async def wait_for(pilot: Any, condition: Callable[[], bool], timeout: float = 30.0,
                   what: str = "condition") -> None:
    """Pause the pilot until ``condition()`` is true; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await pilot.pause(0.02)


async def wait_turn(pilot: Any, app: OpenCLIApp, timeout: float = 30.0) -> None:
    """Wait until the running turn has ended and the UI has handled its end."""
    await wait_for(pilot, lambda: not app.runner.running, timeout, "the turn to end")
    await pilot.pause()


async def wait_prepared(pilot: Any, app: OpenCLIApp, timeout: float = 30.0) -> None:
    """Wait until ``session.prepare()`` finished and the status bar knows."""
    from tui.widgets.status_bar import StatusBar

    await wait_for(pilot, lambda: app.query_one(StatusBar).prepared, timeout, "prepare()")


async def submit(pilot: Any, text: str) -> None:
    """Type ``text`` into the prompt box and press Enter."""
    from tui.widgets.prompt_input import PromptInput

    app = pilot.app
    prompt = app.query_one(PromptInput)
    prompt.focus()
    prompt.insert(text)
    await pilot.press("enter")
    await asyncio.sleep(0)


def frozen_duration(seconds: float) -> str:
    """A duration formatter that ignores wall time, for pictures that must not change."""
    return "1.2s"


@pytest.fixture
def ui() -> SimpleNamespace:
    """The waiting and typing helpers, as one fixture (tests import nothing from here:
    pytest runs with ``--import-mode=importlib``)."""
    return SimpleNamespace(wait_for=wait_for, wait_turn=wait_turn, wait_prepared=wait_prepared,
                           submit=submit, frozen_duration=frozen_duration)
