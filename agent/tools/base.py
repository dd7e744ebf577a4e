"""The tool contract: argument model, capability, context and output.

A tool is a class with a pydantic ``Args`` model (its JSON schema is what the model sees), a
``capability`` used by permission modes and Plan mode (never the tool's name), and a ``run``
method that returns a ``ToolOutput``. A tool signals a failure the model should see by raising
``ToolError`` (the registry turns it into an error result); any other exception is a bug, but the
registry still turns it into an error result so the loop never crashes.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar, Sequence

from pydantic import BaseModel, ConfigDict, ValidationError

from ..events import ToolOutcome, ToolResult
from .view import ToolView, compact_arguments, generic_view


class Capability(str, Enum):
    """What a tool can do to the workspace: read it, change files in it, or execute commands."""

    READ = "read"
    MUTATING = "mutating"
    EXEC = "exec"


class ToolError(Exception):
    """A failure reported to the model as an error tool result (message in one or a few lines)."""


class ToolArgs(BaseModel):
    """Base for tool argument models: unknown keys are rejected so typos reach the model."""

    model_config = ConfigDict(extra="forbid")


@dataclass
class ToolContext:
    """What a tool run may use.

    - ``workspace``: absolute, resolved workspace root; paths resolve inside it.
    - ``output_dir``: folder for saved full outputs of truncated results (beside the session
      journal in the user data dir, ``<sessions>/<project key>/<session_id>/``), created on
      demand; the ``read`` tool may read it (read-only) whatever the workspace.
    - ``cancel``: set when the user cancels; long tools poll it and stop.
    - ``max_output_chars``: cap for truncated tool output (characters; 0 = no truncation).
    - ``bash_timeout_s``: default time limit of the bash tool (seconds).
    - ``allowed_outside``: extra absolute roots the user allowed paths to resolve into.
    - ``env_allow``: secret-looking environment variables commands may still see
      (``agent.secrets.env``).
    - ``tool_time_limits``: time limit per tool name (seconds), from the settings; tools not in it
      get ``default_time_limit_s`` (bash uses its own ``timeout``, see ``Tool.time_limit_s``).
    - ``time_limit_s``: the limit of the running call (seconds; None = none), set by the
      registry; tools that can stop (grep) stop at it themselves.
    - ``sandbox``: the ``agent.sandbox.SandboxPolicy`` commands run under (None = unsandboxed).
    """

    workspace: Path
    output_dir: Path
    cancel: threading.Event = field(default_factory=threading.Event)
    max_output_chars: int = 20000
    bash_timeout_s: float = 120.0
    allowed_outside: tuple[Path, ...] = ()
    call_id: str = ""
    env_allow: tuple[str, ...] = ()
    tool_time_limits: dict[str, float] = field(default_factory=dict)
    default_time_limit_s: float = 60.0
    time_limit_s: float | None = None
    sandbox: Any = None


class ToolOutput(BaseModel):
    """What a tool returns.

    - ``text``: what the model sees (already truncated where the tool truncates).
    - ``is_error``: the call failed; the text says why.
    - ``exit_code``: for exec tools.
    - ``diff``: unified diff of a file change (write/edit), for the UI.
    - ``truncated`` / ``saved_path``: the text was middle-truncated and the full output saved at
      this absolute path.
    - ``display``: the text for the UI when it differs from ``text`` (ANSI colours kept).
    - ``output_lines`` / ``output_bytes``: the size of the full output, when the tool counted it.
    - ``outcome``: set when the call did not simply succeed or fail (``denied``, ``cancelled``);
      None means ``ok`` or ``error`` by ``is_error``.
    - ``metadata``: small extra facts for the UI (e.g. ``{"path": "src/a.py"}``).

    ``to_result`` turns it into the ``events.ToolResult`` the event, journal and UI carry.
    """

    text: str
    is_error: bool = False
    exit_code: int | None = None
    diff: str | None = None
    truncated: bool = False
    saved_path: str | None = None
    display: str | None = None
    output_lines: int | None = None
    output_bytes: int | None = None
    outcome: ToolOutcome | None = None
    metadata: dict[str, Any] = {}

    def to_result(self, *, duration_s: float | None = None, reminders: Sequence[str] = (),
                  cancelled: bool = False) -> ToolResult:
        """The typed result of this output; ``cancelled``: the turn was cancelled, so a failure
        is a cancellation."""
        outcome = self.outcome or ("ok" if not self.is_error else "cancelled" if cancelled else "error")
        return ToolResult(outcome=outcome, exit_code=self.exit_code, duration_s=duration_s,
                          output_lines=self.output_lines, output_bytes=self.output_bytes, truncated=self.truncated,
                          saved_path=self.saved_path, diff=self.diff, display=self.display,
                          reminders=tuple(reminders))


class Tool(ABC):
    """Base class of every tool. Subclasses set the class attributes and implement ``run``."""

    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[ToolArgs]]
    capability: ClassVar[Capability]
    #: Whether long output is middle-truncated with the full text saved (bash, grep, glob; not read).
    truncates_output: ClassVar[bool] = False

    @abstractmethod
    def run(self, args: Any, ctx: ToolContext) -> ToolOutput:
        """Run with validated ``args`` (an instance of ``self.Args``); raise ``ToolError`` on failure."""

    def time_limit_s(self, args: Any, ctx: ToolContext) -> float | None:
        """The time limit of a call with ``args`` (seconds; None = none): the tool's entry in
        ``ctx.tool_time_limits``, else ``ctx.default_time_limit_s``."""
        return ctx.tool_time_limits.get(self.name, ctx.default_time_limit_s)

    def schema(self) -> dict[str, Any]:
        """Return the OpenAI function-tool schema ``{"type": "function", "function": {...}}``."""
        params = self.Args.model_json_schema()
        params.pop("title", None)
        params.pop("description", None)  # the tool's description already says it
        for prop in params.get("properties", {}).values():
            prop.pop("title", None)
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": params},
        }

    def preview(self, args: Any, ctx: ToolContext) -> str:
        """Return a short human preview of what the call will do (shown in permission prompts)."""
        return ""

    def proposed_diff(self, args: Any, ctx: ToolContext) -> str | None:
        """The unified diff the call would make, computed without changing anything (shown in
        permission prompts), or None for tools that change no file."""
        return None

    def describe(self, args: Any) -> ToolView:
        """How a call with validated ``args`` is shown; the default is the name and the
        arguments given (defaults left out) on one line."""
        return ToolView(title=self.name, summary=compact_arguments(args.model_dump(exclude_defaults=True)))

    def view(self, arguments: Any) -> ToolView:
        """How a call is shown, from its decoded ``arguments`` (a dict, or the raw string of
        invalid JSON): ``describe`` of the validated arguments, or the generic view when they
        do not validate. Never raises."""
        if isinstance(arguments, dict):
            try:
                return self.describe(self.Args.model_validate(arguments))
            except (ValidationError, ValueError, TypeError):
                pass
        return generic_view(self.name, arguments)
