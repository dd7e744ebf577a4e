"""What the TUI uses of a session: the ``UISession`` protocol (``agent.runtime.AgentSession``
implements it).

Imported only under ``if TYPE_CHECKING:`` (annotations), so it costs nothing at start-up and the
UI depends on these members, not on the session's parts (its ``agent``, registry or history).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol

if TYPE_CHECKING:
    from agent.config.settings import PermissionMode, Settings
    from agent.context.breakdown import ContextBreakdown
    from agent.events import Emit, TurnFinished
    from agent.git_context import GitSnapshot
    from agent.plan.controller import PlanResult
    from agent.plan.model import Plan
    from agent.providers.base import Provider
    from agent.runtime.agent_builder import WorkspaceChanges
    from agent.events import ToolView
    from agent.session.journal import SessionJournal
    from agent.session.resume import LoadedSession


class UISession(Protocol):
    """A conversation bound to a workspace, a model and a provider, as the TUI drives it."""

    workspace: Path
    settings: Settings
    provider: Provider
    model: str
    session_id: str
    resumed: LoadedSession | None
    plan_mode: bool
    git: GitSnapshot | None

    @property
    def context_window(self) -> int | None: ...
    @property
    def journal_path(self) -> Path: ...
    @property
    def journal(self) -> SessionJournal: ...
    @property
    def plan(self) -> Plan | None: ...
    @property
    def is_prepared(self) -> bool: ...
    def startup_notices(self) -> list[str]: ...

    # lifecycle
    def prepare(self) -> None: ...
    def close(self) -> None: ...
    def clear(self) -> None: ...
    def set_model(self, name: str) -> None: ...

    # turns (in a worker thread)
    def run_turn(self, prompt: str, emit: Emit, cancel: threading.Event) -> TurnFinished: ...
    def steer(self, text: str) -> bool: ...
    def compact(self, focus: str | None, emit: Emit, cancel: threading.Event) -> None: ...
    def context_breakdown(self) -> ContextBreakdown | None: ...
    def undo(self) -> list[str]: ...
    def tool_view(self, name: str, arguments: object) -> ToolView: ...
    def changed_files(self) -> WorkspaceChanges | None: ...

    # Plan mode
    def plan_turn(self, task: str, emit: Emit, cancel: threading.Event) -> PlanResult: ...
    def execute_plan(self, plan: Plan, emit: Emit, cancel: threading.Event) -> TurnFinished: ...
    def discard_plan(self) -> None: ...

    # modes and watching
    def set_permission_mode(self, mode: PermissionMode | str) -> PermissionMode: ...
    def record_modes(self, *, plan_mode: bool | None = None) -> None: ...
    def start_watching(self, on_files_changed: Callable[[list[str]], None] | None = None,
                       on_git_changed: Callable[[], None] | None = None) -> None: ...
    def stop_watching(self) -> None: ...


__all__ = ["UISession"]
