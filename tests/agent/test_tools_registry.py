"""The tool registry (agent/tools/registry.py): schemas, argument errors, execution never raises."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest
from pydantic import Field

from agent.messages import ToolCall
from agent.tools.base import Capability, Tool, ToolArgs, ToolContext, ToolError, ToolOutput
from agent.tools.read import ReadArgs
from agent.tools.registry import (
    TOOL_CLASSES,
    ToolRegistry,
    default_tools,
    parse_arguments,
)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    (tmp_path / "a.txt").write_text("hello\n")
    return ToolContext(workspace=tmp_path.resolve(), output_dir=tmp_path / ".opencli" / "tmp" / "s")


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry(default_tools(include_think=True))


def call(name: str, arguments: str | dict, id: str = "call_1") -> ToolCall:
    return ToolCall(id=id, name=name, arguments=arguments if isinstance(arguments, str) else json.dumps(arguments))


class _Args(ToolArgs):
    """Arguments of the test tools."""

    n: int = Field(description="A number.")


class Exploding(Tool):
    """Raises an unexpected exception."""

    name: ClassVar[str] = "explode"
    description: ClassVar[str] = "test"
    Args = _Args
    capability = Capability.READ

    def run(self, args, ctx):
        raise KeyError("boom")


class Chatty(Tool):
    """Returns a huge text without truncating it itself, with a NUL in it."""

    name: ClassVar[str] = "chatty"
    description: ClassVar[str] = "test"
    Args = _Args
    capability = Capability.READ
    truncates_output = True

    def run(self, args, ctx):
        return ToolOutput(text="\x00" + "line\n" * args.n)


class Failing(Tool):
    """Raises ToolError."""

    name: ClassVar[str] = "failing"
    description: ClassVar[str] = "test"
    Args = _Args
    capability = Capability.READ

    def run(self, args, ctx):
        raise ToolError("it failed for a reason")


def test_default_tool_sets():
    assert [t.name for t in default_tools(include_think=False)] == ["read", "write", "edit", "bash", "grep", "glob"]
    assert [t.name for t in default_tools(include_think=True, read_only=True)] == ["read", "grep", "glob", "think"]
    assert set(TOOL_CLASSES) == {"read", "write", "edit", "bash", "grep", "glob", "think"}
    for tool in default_tools(include_think=True, read_only=True):
        assert tool.capability is Capability.READ


def test_schemas_are_openai_function_tools(registry):
    schemas = registry.schemas()
    assert [s["function"]["name"] for s in schemas] == registry.names()
    for schema in schemas:
        assert schema["type"] == "function"
        params = schema["function"]["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        for prop in params["properties"].values():
            assert prop.get("description"), schema["function"]["name"]
    by_name = {s["function"]["name"]: s["function"]["parameters"] for s in schemas}
    assert by_name["edit"]["required"] == ["path", "old_string", "new_string"]
    assert set(by_name["read"]["properties"]) == {"path", "offset", "limit", "column"}
    assert set(by_name["bash"]["properties"]) == {"command", "timeout"}
    assert set(by_name["grep"]["properties"]) == {"pattern", "path", "glob"}
    assert set(by_name["glob"]["properties"]) == {"pattern", "path"}
    assert by_name["think"]["required"] == ["thought"]


def test_execute_runs_a_tool(registry, ctx):
    out = registry.execute(call("read", {"path": "a.txt"}), ctx)
    assert not out.is_error and "     1\thello" in out.text


def test_unknown_tool_lists_available(registry, ctx):
    out = registry.execute(call("read_file", {"path": "a.txt"}), ctx)
    assert out.is_error
    assert "unknown tool 'read_file'" in out.text and "Did you mean 'read'" in out.text
    assert "read, write, edit, bash, grep, glob, think" in out.text


def test_invalid_json_is_quoted_and_capped(registry, ctx):
    bad = '{"path": "a.txt"' + "x" * 1000
    out = registry.execute(call("read", bad), ctx)
    assert out.is_error and "not valid JSON" in out.text
    assert '{"path": "a.txt"' in out.text and "(1016 characters)" in out.text
    assert len(out.text) < 700
    assert "path (string, required)" in out.text


def test_empty_arguments_when_required(registry, ctx):
    for raw in ("", "   ", "{}"):
        out = registry.execute(call("read", raw), ctx)
        assert out.is_error
        assert "path: required field missing" in out.text
        assert "Expected: path (string, required), offset (integer), limit (integer)" in out.text


def test_wrong_types_one_line_per_field(registry, ctx):
    out = registry.execute(call("edit", {"path": 5, "old_string": "a", "new_string": ["x"], "extra": 1}), ctx)
    assert out.is_error
    lines = out.text.splitlines()
    assert lines[0] == "invalid arguments for edit:"
    assert any(l.startswith("- path: ") for l in lines)
    assert any(l.startswith("- new_string: ") for l in lines)
    assert "- extra: unknown field" in lines


def test_non_object_and_double_encoded_arguments(registry, ctx):
    out = registry.execute(call("read", "[1, 2]"), ctx)
    assert out.is_error and "must be a JSON object" in out.text
    out = registry.execute(call("read", json.dumps(json.dumps({"path": "a.txt"}))), ctx)
    assert not out.is_error and "hello" in out.text


def test_tool_error_and_unexpected_exception(ctx):
    registry = ToolRegistry([Exploding(), Failing()])
    out = registry.execute(call("failing", {"n": 1}), ctx)
    assert out.is_error and out.text == "it failed for a reason"
    out = registry.execute(call("explode", {"n": 1}), ctx)
    assert out.is_error and "KeyError" in out.text and "boom" in out.text


def test_safety_net_truncation_and_sanitising(ctx):
    registry = ToolRegistry([Chatty()])
    ctx.max_output_chars = 1000
    out = registry.execute(call("chatty", {"n": 5000}, id="chat_1"), ctx)
    assert out.truncated and out.saved_path.endswith("tool-output-chat_1.txt")
    assert "\x00" not in out.text
    small = registry.execute(call("chatty", {"n": 3}), ctx)
    assert "\x00" not in small.text and small.text.startswith("\u2400")


def test_call_id_names_the_saved_output(registry, ctx):
    out = registry.execute(call("bash", {"command": "seq 1 100000"}, id="call_xyz"), ctx)
    assert out.truncated and Path(out.saved_path).name == "tool-output-call_xyz.txt"
    assert ctx.call_id == ""  # the caller's context is not mutated


def test_parse_arguments_for_previews(registry):
    tool = registry.get("read")
    args = parse_arguments(call("read", {"path": "a.txt", "offset": "3"}), tool)
    assert isinstance(args, ReadArgs) and args.offset == 3
    with pytest.raises(ToolError):
        registry.parse_arguments(call("nope", {}))
    assert tool.preview(args, None) == "read a.txt from line 3"


def test_think_is_a_no_op(registry, ctx):
    out = registry.execute(call("think", {"thought": "first check the tests"}), ctx)
    assert not out.is_error and out.text == "Thought noted."


def test_duplicate_names_are_rejected():
    with pytest.raises(ValueError):
        ToolRegistry(default_tools(include_think=False) + default_tools(include_think=False))


def test_a_system_refusal_is_a_plain_error_not_an_internal_one(tmp_path):
    ctx = ToolContext(workspace=tmp_path.resolve(), output_dir=tmp_path / "out")
    registry = ToolRegistry(default_tools(include_think=False))
    name = "x" * 300  # longer than a file name may be
    out = registry.execute(call("write", {"path": name, "content": "x"}), ctx)
    assert out.is_error and "internal error" not in out.text and "File name too long" in out.text
