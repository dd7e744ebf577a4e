"""The tool registry: schemas for the model, argument parsing, and execution that never raises.

Every way a model can get a call wrong (unknown name, arguments that are not JSON, empty, the
wrong shape or types) becomes an error ``ToolOutput`` the model can act on, naming what was
expected (the loop never crashes on the model's mistakes). A ``ToolError`` from a tool
becomes an error result with its message; any other exception becomes an error result with the
exception's type and message.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import replace
from typing import Any, Iterable

from pydantic import ValidationError

from ..context.truncation.normalise import _SURROGATE_RE
from ..context.truncation.bounded import truncate_and_save
from ..messages import ToolCall, json_loads, unwrap_double_encoded
from .base import Tool, ToolArgs, ToolContext, ToolError, ToolOutput
from .view import ToolView, generic_view
from .bash import BashTool
from .edit import EditTool
from .glob_tool import GlobTool
from .grep import GrepTool
from .limits import run_with_limit
from .read import ReadTool
from .think import ThinkTool
from .write import WriteTool

#: Tool name -> class, for every tool this package defines.
TOOL_CLASSES: dict[str, type[Tool]] = {
    cls.name: cls for cls in (ReadTool, WriteTool, EditTool, BashTool, GrepTool, GlobTool, ThinkTool)
}
#: Tools given in read-only setups (read-only permission mode, the small embedded model).
READ_ONLY_TOOL_NAMES: tuple[str, ...] = ("read", "grep", "glob")
#: The full default tool set, in the order the model sees them.
DEFAULT_TOOL_NAMES: tuple[str, ...] = ("read", "write", "edit", "bash", "grep", "glob")
#: Characters of bad argument text quoted back in an error.
MAX_QUOTED_CHARS = 300
#: Room left for a truncation marker when checking a tool's own truncation (characters).
_MARKER_SLACK = 1000


def default_tools(*, include_think: bool, read_only: bool = False) -> list[Tool]:
    """Return new instances of the standard tools.

    ``read_only`` keeps only read, grep and glob; ``include_think`` adds ``think`` (for models
    without native reasoning, DESIGN.md 4). Plan tools (``update_plan``, ``submit_plan``) are not
    here: the planner adds them.
    """
    names = list(READ_ONLY_TOOL_NAMES if read_only else DEFAULT_TOOL_NAMES)
    if include_think:
        names.append("think")
    return [TOOL_CLASSES[name]() for name in names]


def describe_fields(tool: Tool) -> str:
    """Return the tool's argument fields as text, e.g. ``path (string, required), offset (integer)``."""
    schema = tool.Args.model_json_schema()
    required = set(schema.get("required", []))
    parts = []
    for name, prop in schema.get("properties", {}).items():
        kinds = [prop.get("type")] if "type" in prop else [p.get("type") for p in prop.get("anyOf", [])]
        kind = "/".join(k for k in kinds if k and k != "null") or "any"
        parts.append(f"{name} ({kind}{', required' if name in required else ''})")
    return ", ".join(parts)


def _quote(raw: str) -> str:
    if len(raw) <= MAX_QUOTED_CHARS:
        return repr(raw)
    return repr(raw[:MAX_QUOTED_CHARS]) + f"... ({len(raw)} characters)"


def parse_arguments(call: ToolCall, tool: Tool) -> ToolArgs:
    """Decode and validate ``call.arguments`` (raw JSON text) into an instance of ``tool.Args``.

    Empty text means ``{}``; a JSON string that itself holds a JSON object (double-encoded, as some
    models send) is decoded once more. Raises ``ToolError`` with a readable message: bad JSON
    (quoting the text, capped at 300 characters), not an object, or one line per invalid field;
    each message lists the expected fields.
    """
    raw = call.arguments or ""
    text = raw.strip()
    fields = describe_fields(tool)
    data: Any = {}
    if text:
        try:
            data = json_loads(text)
        except ValueError as exc:
            where = f" ({exc.msg} at character {exc.pos})" if isinstance(exc, json.JSONDecodeError) else ""
            raise ToolError(
                f"the arguments of {tool.name} are not valid JSON{where}: {_quote(raw)}. "
                f"Send a JSON object with: {fields}"
            ) from None
        data = unwrap_double_encoded(data)
    if not isinstance(data, dict):
        raise ToolError(
            f"the arguments of {tool.name} must be a JSON object, not {type(data).__name__}: {_quote(raw)}. "
            f"Expected: {fields}"
        )
    check = getattr(tool, "check_arguments", None)  # tools with a JSON schema of their own (MCP tools)
    if check is not None:
        return check(data)
    try:
        return tool.Args.model_validate(data)
    except ValidationError as exc:
        raise ToolError(_format_validation_error(tool, exc, empty=not text, fields=fields)) from None


def _format_validation_error(tool: Tool, exc: ValidationError, *, empty: bool, fields: str) -> str:
    lines = [f"invalid arguments for {tool.name}" + (" (the arguments were empty)" if empty else "") + ":"]
    for error in exc.errors(include_url=False):
        loc = ".".join(str(part) for part in error.get("loc", ())) or "(arguments)"
        kind = error.get("type", "")
        if kind == "missing":
            lines.append(f"- {loc}: required field missing")
        elif kind == "extra_forbidden":
            lines.append(f"- {loc}: unknown field")
        else:
            got = repr(error.get("input"))
            got = got if len(got) <= 80 else got[:80] + "..."
            lines.append(f"- {loc}: {error.get('msg', 'invalid value')} (got {got})")
    lines.append(f"Expected: {fields}")
    return "\n".join(lines)


def _sanitize(text: str) -> str:
    """No NUL and no lone surrogates in anything sent to a provider."""
    if "\x00" in text:
        text = text.replace("\x00", "\u2400")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _SURROGATE_RE.sub("\ufffd", text)
    return text


class ToolRegistry:
    """The tools of one session, by name. Raises ``ValueError`` on duplicate names.

    Besides its own tools a registry may hold one tool *source* (``attach_source``: the MCP
    servers, ``agent.mcp.manager.McpManager``): an object with ``tools()`` (its current tools, in
    a stable order), ``generation`` (an int bumped whenever that list changes), ``settle()`` and
    ``take_notices()``, and optionally ``unavailable_message(name)`` (why a tool it offered
    earlier is gone: used instead of "unknown tool"). Its tools come after the registered ones; a source tool whose name a
    registered tool has is left out."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        self._schemas: list[dict[str, Any]] | None = None
        self.source: Any = None
        self._source_schemas: tuple[int, list[dict[str, Any]]] | None = None
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"duplicate tool name: {tool.name}")
            self._tools[tool.name] = tool

    def attach_source(self, source: Any) -> None:
        """Add ``source``'s tools after the registered ones (see the class docstring)."""
        self.source = source
        self._source_schemas = None

    def _source_tools(self) -> list[Tool]:
        source = self.source
        return [t for t in source.tools() if t.name not in self._tools] if source is not None else []

    def names(self) -> list[str]:
        """Tool names in registration order (the source's after the registered ones)."""
        return list(self._tools) + [t.name for t in self._source_tools()]

    def tools(self) -> list[Tool]:
        """Tool instances in registration order (the source's after the registered ones)."""
        return list(self._tools.values()) + self._source_tools()

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or ``None``."""
        tool = self._tools.get(name)
        if tool is None and self.source is not None:
            tool = next((t for t in self._source_tools() if t.name == name), None)
        return tool

    def __contains__(self, name: object) -> bool:
        return self.get(name) is not None if isinstance(name, str) else False

    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI function-tool schemas, one per tool, in registration order (built once; the
        registered tools never change, and a stable list keeps the prompt cache valid; the
        source's part is rebuilt only when its ``generation`` changes)."""
        if self._schemas is None:
            self._schemas = [tool.schema() for tool in self._tools.values()]
        if self.source is None:
            return self._schemas
        generation = self.source.generation
        cached = self._source_schemas
        if cached is None or cached[0] != generation:
            cached = (generation, self._schemas + [tool.schema() for tool in self._source_tools()])
            self._source_schemas = cached
        return cached[1]

    def view(self, name: str, arguments: Any) -> ToolView:
        """How a call of ``name`` with decoded ``arguments`` is shown: the tool's own view, or
        the generic one for an unknown tool. Never raises."""
        tool = self.get(name)
        return tool.view(arguments) if tool is not None else generic_view(name, arguments)

    def parse_arguments(self, call: ToolCall) -> ToolArgs:
        """``parse_arguments`` for ``call.name``; raises ``ToolError`` for an unknown tool too."""
        tool = self.get(call.name)
        if tool is None:
            raise ToolError(self._unknown_message(call.name))
        return parse_arguments(call, tool)

    def execute(self, call: ToolCall, ctx: ToolContext) -> ToolOutput:
        """Run ``call`` and return its output; never raises (``Exception`` subclasses).

        ``ctx.call_id``, when empty, is filled from ``call.id`` (it names the saved output file).
        The tool runs under Esc (``ctx.cancel``) and its time limit (``Tool.time_limit_s``, seconds)
        through ``limits.run_with_limit``: past either, the call is stopped and an error result
        (outcome ``cancelled`` on Esc) is returned.
        Tools flagged ``truncates_output`` that return more than ``ctx.max_output_chars`` without
        truncating are truncated here. The text never contains NUL or lone surrogates.
        """
        tool = self.get(call.name)
        if tool is None:
            return ToolOutput(text=self._unknown_message(call.name), is_error=True)
        if not ctx.call_id:
            ctx = replace(ctx, call_id=call.id)
        try:
            args = parse_arguments(call, tool)
            output = run_with_limit(lambda inner: tool.run(args, inner), ctx, name=tool.name,
                                    limit_s=tool.time_limit_s(args, ctx),
                                    advice=getattr(tool, "limit_advice", None))
            if not isinstance(output, ToolOutput):
                raise TypeError(f"{tool.name}.run returned {type(output).__name__}, not ToolOutput")
        except ToolError as exc:
            return ToolOutput(text=_sanitize(str(exc) or type(exc).__name__), is_error=True)
        except OSError as exc:  # the system refused (a name too long, a full disk): not a bug of ours
            where = f" ({_sanitize(str(exc.filename))})" if exc.filename else ""
            return ToolOutput(text=f"{tool.name} failed: {exc.strerror or exc}{where}", is_error=True)
        except Exception as exc:  # noqa: BLE001 - the loop must survive tool bugs
            return ToolOutput(
                text=f"tool {tool.name} failed with an internal error: {type(exc).__name__}: {exc}",
                is_error=True,
            )
        return self._finalize(tool, output, ctx)

    def _finalize(self, tool: Tool, output: ToolOutput, ctx: ToolContext) -> ToolOutput:
        text = output.text
        limit = ctx.max_output_chars
        if tool.truncates_output and not output.truncated and limit and len(text) > limit + _MARKER_SLACK:
            result = truncate_and_save(text, ctx)
            return output.model_copy(
                update={"text": result.text, "truncated": result.truncated, "saved_path": result.saved_path,
                        "output_lines": result.total_lines, "output_bytes": result.total_bytes}
            )
        clean = _sanitize(text)
        return output if clean is text else output.model_copy(update={"text": clean})

    def _unknown_message(self, name: str) -> str:
        explain = getattr(self.source, "unavailable_message", None)
        gone = explain(name) if explain is not None else None
        if gone:  # a source's tool whose server stopped: say so, not "unknown tool"
            return gone
        available = ", ".join(self.names())
        lowered = {n.lower(): n for n in self._tools}
        close = lowered.get(name.strip().lower()) or next(
            iter(difflib.get_close_matches(name, self.names(), n=1, cutoff=0.6)), None
        )
        hint = f" Did you mean {close!r}?" if close else ""
        return f"unknown tool {name!r}.{hint} Available tools: {available}"
