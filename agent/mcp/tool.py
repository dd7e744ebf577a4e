"""An MCP server's tool as a ``tools.base.Tool``: named ``mcp__<server>__<tool>``, the server's
JSON schema as its parameters, its arguments checked against that schema (``jsonschema``) before
the call, and its capability from the tool's annotations: ``readOnlyHint`` true is ``read``;
anything else (``destructiveHint``, or no hints) is ``exec``, since the server may do anything.
So permission modes, prompts, rules (``tool:mcp__db__query``, ``tool:mcp__db__*``) and Plan mode
treat it as they treat a built-in tool of that capability.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from ..events import ToolView
from ..tools.base import Capability, Tool, ToolContext, ToolError, ToolOutput
from .naming import call_view
from .results import result_text

if TYPE_CHECKING:
    from .manager import McpManager


class McpArguments(BaseModel):
    """The validated arguments of an MCP call: any JSON object (the schema check is the tool's)."""

    model_config = ConfigDict(extra="allow")


def _parameters(schema: Any) -> dict[str, Any]:
    """The server's input schema as function parameters (an object schema in every case)."""
    params = dict(schema) if isinstance(schema, dict) else {}
    params.setdefault("type", "object")
    if params.get("type") == "object":
        params.setdefault("properties", {})
    return params


class McpTool(Tool):
    """One tool of one MCP server. ``info`` is the server's ``mcp.types.Tool``; ``name`` the
    offered name (``naming.tool_name``); calls go through ``manager`` (``McpManager.call``)."""

    truncates_output = True
    #: What a call stopped at its time limit (``call_timeout_s``) is told (``limits.over_limit_text``).
    limit_advice = ("The MCP server did not answer in time. Do not repeat the same call at once: try smaller "
                    "arguments (less data per call), another tool, or go on without it; the user can raise "
                    "call_timeout_s of this server or restart it with /mcp.")
    #: Shared by sub-agents as it is (it holds no per-call state).
    shared_instance = True

    def __init__(self, manager: "McpManager", server: str, info: Any, name: str, call_timeout_s: float) -> None:
        import jsonschema

        self.manager = manager
        self.server = server
        self.remote_name = info.name
        self.name = name  # type: ignore[misc] - instance attributes stand in for the class ones
        self.description = (info.description or f"Tool {info.name} of the MCP server {server}.").strip()  # type: ignore[misc]
        self.parameters = _parameters(info.inputSchema)
        hints = info.annotations
        self.capability = Capability.READ if hints is not None and hints.readOnlyHint else Capability.EXEC  # type: ignore[misc]
        self.call_timeout_s = call_timeout_s
        schema_cls = jsonschema.validators.validator_for(self.parameters, default=jsonschema.Draft202012Validator)
        try:
            schema_cls.check_schema(self.parameters)
            self._validator: Any = schema_cls(self.parameters)
        except jsonschema.SchemaError:
            self._validator = None  # a broken schema: the server checks its own arguments

        class Args(McpArguments):
            @classmethod
            def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:  # type: ignore[override]
                return self.parameters

        self.Args = Args  # type: ignore[misc]

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-tool schema, the server's input schema as its parameters."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}

    def check_arguments(self, data: dict[str, Any]) -> McpArguments:
        """Validate decoded ``data`` against the server's schema; raises ``ToolError`` listing each
        problem (``- path: message``) and the expected fields, so the model can fix its call."""
        errors = sorted(self._validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))) \
            if self._validator is not None else []
        if errors:
            from ..tools.registry import describe_fields

            lines = [f"invalid arguments for {self.name}:"]
            for error in errors[:10]:
                where = ".".join(str(p) for p in error.absolute_path) or "(arguments)"
                lines.append(f"- {where}: {error.message[:200]}")
            lines.append(f"Expected: {describe_fields(self) or 'no arguments'}")
            raise ToolError("\n".join(lines))
        return self.Args.model_validate(data)

    def time_limit_s(self, args: Any, ctx: ToolContext) -> float | None:
        """The server's ``call_timeout_s`` (seconds)."""
        return self.call_timeout_s

    def run(self, args: Any, ctx: ToolContext) -> ToolOutput:
        """Call the tool on its server; Esc or the time limit (``ctx.cancel``) cancels the call
        and sends MCP's cancellation notification. Raises ``ToolError`` when the server is not
        running or answers with a protocol error."""
        arguments = args.model_dump() if isinstance(args, BaseModel) else dict(args)
        started = time.monotonic()
        result = self.manager.call(self.server, self.remote_name, arguments, ctx.cancel,
                                   timed_out=lambda: ctx.time_limit_s is not None
                                   and time.monotonic() - started >= ctx.time_limit_s - 0.01)
        text, is_error = result_text(result)
        return ToolOutput(text=text, is_error=is_error, output_bytes=len(text.encode("utf-8", "replace")),
                          metadata={"server": self.server})

    def preview(self, args: Any, ctx: ToolContext) -> str:
        """``<tool> on MCP server <server> (<command or url>)`` and the arguments."""
        arguments = args.model_dump() if isinstance(args, BaseModel) else args
        return (f"{self.remote_name} on MCP server {self.server} ({self.manager.describe(self.server)})\n"
                f"{json.dumps(arguments, ensure_ascii=False)[:2000]}")

    def describe(self, args: Any) -> ToolView:
        """The tool's name, its server and the arguments."""
        return call_view(self.name, args.model_dump(), server=self.server, tool=self.remote_name)

    def view(self, arguments: Any) -> ToolView:
        """As ``describe``, for any decoded arguments (never raises)."""
        return call_view(self.name, arguments, server=self.server, tool=self.remote_name)
