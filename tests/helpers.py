"""Helpers shared by the tests: an event recorder and a scripted session.

- ``Recorder``: the ``emit`` callback of a turn; a list of the events, ``of(kind)`` filters them,
  ``hooks`` (``(event type, fn)`` pairs) let a test react to an event (cancel on the first text).
- ``make_session(tmp_path, replies, ...)``: a real session (``build_session``) over a
  ``ScriptedProvider`` in the workspace ``tmp_path / "ws"``; returns ``(session, provider)``.
  The scripted provider checks every request it receives (``agent.providers.request_check``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from agent.config.settings import Settings
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session


class Recorder(list):
    """Collects emitted events; ``of(kind)`` lists those of a type; ``hooks`` react to events."""

    def __init__(self) -> None:
        super().__init__()
        self.hooks: list[tuple[type, Callable[[Any], None]]] = []

    def __call__(self, event: Any) -> None:
        self.append(event)
        for kind, fn in self.hooks:
            if isinstance(event, kind):
                fn(event)

    @property
    def events(self) -> list[Any]:
        """The events in order (the recorder itself)."""
        return self

    def of(self, kind: type) -> list[Any]:
        return [e for e in self if isinstance(e, kind)]


def make_session(tmp_path: Path, replies: list[dict[str, Any]], *, files: dict[str, str] | None = None,
                 prepare: bool = False, interactive: bool = False, **settings: Any) -> tuple[Any, ScriptedProvider]:
    """A session over scripted ``replies`` in ``tmp_path / "ws"`` (created, with ``files``:
    ``{relative path: text}``); ``settings`` go to ``Settings`` (model ``openai/gpt-4.1`` and
    ``permission_mode="full-auto"`` unless given); ``prepare`` runs ``session.prepare()``."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    for name, text in (files or {}).items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    settings.setdefault("model", "openai/gpt-4.1")
    settings.setdefault("permission_mode", "full-auto")
    provider = ScriptedProvider(replies)
    session = build_session(ws, Settings(**settings), provider=provider, interactive=interactive)
    if prepare:
        session.prepare()
    return session, provider


def tool_call_started(call_id: str, name: str, arguments: Any = None):
    """A ``ToolCallStarted`` as the loop emits it: with the view the tool describes (every
    standard tool and the plan tools; an unknown name gets the generic view)."""
    from agent.events import ToolCallStarted
    from agent.runtime.tool_views import describe_call

    return ToolCallStarted(id=call_id, name=name, arguments=arguments, view=describe_call(name, arguments))


def wait_for_file(path: Path, timeout_s: float = 30.0) -> None:
    """Wait until ``path`` exists; raise ``AssertionError`` after ``timeout_s`` seconds."""
    import time

    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if path.exists():
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def alive(processes: list) -> list:
    """The ``psutil.Process`` objects of ``processes`` still running (zombies count as dead)."""
    import psutil

    living = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                living.append(process)
        except psutil.NoSuchProcess:
            pass
    return living
