"""GBNF grammars that constrain the embedded model's output: the arguments of one tool call (names
fixed, strings bounded) and a plain answer. Pure functions.
"""

from __future__ import annotations

import json
from typing import Any

from .tool_specs import ANSWER, DEFAULT_STRING_MAX, ToolSpec, compact_json

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
            return "(" + " | ".join(_gbnf_literal(compact_json(v)) for v in schema["enum"]) + ")"
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
