"""The offered tools as the embedded model sees them: ``ToolSpec`` (name, short description, simplified
argument schema) and the call syntax ``glob(pattern="**/*.py")`` (``format_call``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

#: The pseudo-tool the model calls to reply to the user.
ANSWER = "answer"
#: Cap (characters) on a string argument the model may generate: long paths and patterns are
#: pointless for this model, and a cap keeps a runaway string from eating the reply budget.
DEFAULT_STRING_MAX = 200
#: Larger caps for arguments that carry file content or commands.
LONG_STRING_ARGS = {"content": 1500, "new_string": 1000, "old_string": 500, "command": 400,
                    "thought": 400}
#: Characters of a tool description shown in the tool list.
DESCRIPTION_CHARS = 90

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


def compact_json(value: Any) -> str:
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
        return f"{name}({compact_json(arguments['text'])})"
    inner = ", ".join(f"{k}={compact_json(v)}" for k, v in arguments.items())
    return f"{name}({inner})"
