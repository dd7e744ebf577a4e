"""Developer-loop aggregation: collapse long edit/exec runs in the context view (DESIGN.md 4).

A *step* here is an assistant message with tool calls plus the results right after it. A step
is a *developer step* when every call's tool has a developer capability (default: mutating and
exec), and a *look-up step* when every call is a read-only tool (read, grep, glob, think). A
*run* is a sequence of steps that holds at least ``min_steps`` developer steps and only
developer and look-up steps, starting and ending with a developer step: reading and searching
the files being worked on between an edit and a test does not end the loop (read -> edit ->
pytest cycles are the common shape). A user message, a text-only reply or an unknown tool ends
it.

A run is replaced by its first step (the intent), its last step and a notice appended to the
first kept tool result: how many steps were elided, which tools, files and commands they used,
the final outcome with its test counts (the last test run's result when there is one:
a later "4 passed" wins over earlier failures; else the last command's), the text of the last
error that is still current, and the final change of each touched file (a compact diff of the
last edit, or the size of the last write). The notice is built by code, so no summariser can get
the outcome wrong.

Runs only at a compaction boundary. Whole steps are removed, so the pairing invariants hold, and
no user message is touched, so no two user messages become adjacent.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from typing import Any, Callable, Collection, Sequence

from ..messages import AssistantMessage, Message, ToolResultMessage
from .test_runs import FAIL_RE, ledger_of, looks_failed, parse_test_command
from .records import is_dict_list, to_dicts, to_records

#: Capabilities of the default tool names, ours and the aliases used in the handed cases.
DEFAULT_CAPABILITIES: dict[str, str] = {
    "read": "read", "read_file": "read", "grep": "read", "glob": "read", "think": "read",
    "list_files": "read", "ls": "read", "update_plan": "read", "submit_plan": "read",
    "edit": "mutating", "edit_file": "mutating", "write": "mutating", "write_file": "mutating",
    "apply_patch": "mutating", "str_replace": "mutating",
    "bash": "exec", "shell": "exec", "run_command": "exec", "execute": "exec",
}
DEFAULT_DEVELOPER_CAPABILITIES = frozenset({"mutating", "exec"})
NOTICE_PREFIX = "[aggregated:"
#: Characters kept of one error or outcome line in the notice.
LINE_CAP = 200
MAX_ERRORS = 5
#: Characters kept of the last current error's output, and of each file's final-change diff.
ERROR_TEXT_CAP = 800
DIFF_CAP = 600
#: Most files whose final change is shown.
MAX_DIFFS = 8

_SUMMARY_LINE_RE = re.compile(r"\b\d+ (passed|failed|errors?|skipped)\b|\bOK\b|\bFAILED\b|^ok\s")


def default_capability_of(name: str) -> str | None:
    """Capability of a tool by name from ``DEFAULT_CAPABILITIES`` (``None`` when unknown)."""
    return DEFAULT_CAPABILITIES.get(name)


def aggregate_developer_loops(messages: Sequence[Any], *, min_steps: int = 5,
                              developer_capabilities: Collection[str] = DEFAULT_DEVELOPER_CAPABILITIES,
                              capability_of: Callable[[str], str | None] = default_capability_of,
                              ) -> tuple[list[Any], list[str]]:
    """Collapse every run of ``>= min_steps`` consecutive developer steps (module docstring).

    ``messages``: records or OpenAI dicts (the result has the same kind; dicts come back as
    ``to_openai()`` dicts). ``capability_of`` maps a tool name to its capability value
    (``"read"``, ``"mutating"``, ``"exec"`` or ``None`` for unknown tools, which end a run).
    Returns ``(new_messages, aggregated_ids)``: the ids of the removed messages (dicts without
    ``id`` get ``d<index>``). The record that carries the notice is a copy with the same id.
    ``min_steps < 3`` is treated as 3 (first + last + at least one elided). Never raises.
    """
    as_dicts = is_dict_list(messages)
    records = to_records(messages) if as_dicts else list(messages)
    min_steps = max(3, min_steps)
    out: list[Message] = []
    removed: list[str] = []
    i = 0
    n = len(records)
    while i < n:
        run = _developer_run(records, i, developer_capabilities, capability_of)
        if len(run) >= 3 and _developer_steps(run, developer_capabilities, capability_of) >= min_steps:
            first, last, elided = run[0], run[-1], run[1:-1]
            notice = build_notice(elided, last, first)
            out += _with_notice(first, notice)
            out += last
            removed += [m.id for step in elided for m in step]
            i += sum(len(step) for step in run)
            continue
        if run:
            for step in run:
                out += step
            i += sum(len(step) for step in run)
            continue
        out.append(records[i])
        i += 1
    if as_dicts:  # unchanged messages come back as the caller's own dicts
        origin = {id(r): d for r, d in zip(records, messages)}
        return [origin[id(m)] if id(m) in origin else to_dicts([m])[0] for m in out], removed
    return out, removed


def _developer_run(records: Sequence[Message], start: int, capabilities: Collection[str],
                   capability_of: Callable[[str], str | None]) -> list[list[Message]]:
    """The steps of the run starting at ``start`` (empty when ``records[start]`` does not begin
    a developer step). Look-up steps are included only between developer steps."""
    run: list[list[Message]] = []
    i = start
    last_developer = 0  # steps in ``run`` up to and including the last developer step
    while i < len(records):
        m = records[i]
        if not (isinstance(m, AssistantMessage) and m.tool_calls):
            break
        kinds = {capability_of(tc.name) for tc in m.tool_calls}
        developer = all(capability_of(tc.name) in capabilities for tc in m.tool_calls)
        lookup = kinds == {"read"} and bool(run)
        if not (developer or lookup):
            break
        j = i + 1
        while j < len(records) and isinstance(records[j], ToolResultMessage):
            j += 1
        results = records[i + 1:j]
        if [r.tool_call_id for r in results] != [tc.id for tc in m.tool_calls]:  # type: ignore[union-attr]
            break  # an incomplete or unpaired step is left for repair_history, never collapsed
        run.append(list(records[i:j]))
        if developer:
            last_developer = len(run)
        i = j
    return run[:last_developer]


def _developer_steps(run: list[list[Message]], capabilities: Collection[str],
                     capability_of: Callable[[str], str | None]) -> int:
    return sum(1 for step in run
               if all(capability_of(tc.name) in capabilities for tc in step[0].tool_calls))  # type: ignore[union-attr]


_EARLIER_RE = re.compile(r"\[aggregated: (\d+) ")


def _with_notice(step: list[Message], notice: str) -> list[Message]:
    """``step`` with ``notice`` appended to its last tool result (a copy with the same id).

    A result that carries notices of earlier compactions keeps only the new one, which names how
    many steps the earlier ones had elided, so repeated compactions of one long loop do not grow
    the kept first step."""
    last = step[-1]
    assert isinstance(last, ToolResultMessage)
    content = last.content
    cut = content.find(NOTICE_PREFIX)
    if cut != -1:
        earlier = sum(int(n) for n in _EARLIER_RE.findall(content[cut:]))
        content = content[:cut]
        if earlier:
            notice += f" [{earlier} steps before those were elided at earlier compactions.]"
    return step[:-1] + [last.model_copy(update={"content": (content.rstrip() + "\n\n" + notice).lstrip()})]


def _args(call) -> dict[str, Any]:
    parsed = call.parsed_arguments()
    return parsed if isinstance(parsed, dict) else {}


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LINE_CAP else text[:LINE_CAP - 1] + "…"


def _outcome_line(text: str) -> str:
    """The line of a command's output that says how it ended: the last test-summary-like line,
    else the last non-empty line."""
    lines = [line for line in (text or "").splitlines() if line.strip()]
    if not lines:
        return "(no output)"
    for line in reversed(lines):
        if _SUMMARY_LINE_RE.search(line):
            return _one_line(line)
    return _one_line(lines[-1])


def _error_line(text: str) -> str:
    """The first line of an output that shows the failure."""
    for line in (text or "").splitlines():
        if FAIL_RE.search(line):
            return _one_line(line)
    return _one_line(text or "(error)")


def _capped(text: str, cap: int) -> str:
    """``text`` cut to about ``cap`` characters, keeping its head and its tail."""
    if len(text) <= cap:
        return text
    head = cap // 3
    return text[:head] + f"\n[... {len(text) - cap} characters ...]\n" + text[len(text) - (cap - head):]


def _change_text(name: str, args: dict[str, Any]) -> str:
    """A compact description of what a successful file-changing call did: a unified diff of an
    edit's old and new text (capped), or the size of a write; ``""`` for other tools."""
    old, new = args.get("old_string"), args.get("new_string")
    if isinstance(old, str) and isinstance(new, str):
        diff = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=1)
        lines = [line for line in diff if not line.startswith(("---", "+++"))]
        return _capped("\n".join(lines), DIFF_CAP) if lines else ""
    content = args.get("content")
    if isinstance(content, str):
        return f"(written whole: {len(content.splitlines())} lines, {len(content)} characters)"
    return ""


def build_notice(elided: list[list[Message]], last_step: list[Message],
                 first_step: list[Message] | None = None) -> str:
    """The aggregation notice for the ``elided`` steps; ``first_step`` and ``last_step`` are the
    kept first and final steps of the run (their test runs count for the state, not repeated).

    Lists the tools (with counts), files and commands of the elided steps, the errors they hit
    and, last, the final outcome. Test runs are judged as the pins judge them (``pins``): the
    outcome is the latest run of the widest test target, and errors count as resolved only when
    it passed and no target is still failing, so a passing subset run never reads as fixing a
    wider failure. The kept last step is referred to when it runs tests, not repeated. Each
    file's edits are shown in order (the net change, capped). The text never ends with a
    failure word unless the final state is one.
    """
    tools: Counter[str] = Counter()
    files: list[str] = []
    commands: list[str] = []
    errors: list[str] = []
    last_error_output = ""
    changes: dict[str, list[str]] = {}
    last_exec: tuple[str, str, bool] | None = None  # (command, outcome line, failed)
    for step in elided:
        call_msg = step[0]
        assert isinstance(call_msg, AssistantMessage)
        for call, result in zip(call_msg.tool_calls, step[1:]):
            assert isinstance(result, ToolResultMessage)
            tools[call.name] += 1
            args = _args(call)
            for key in ("path", "file_path", "file", "filename"):
                if isinstance(args.get(key), str) and args[key] not in files:
                    files.append(args[key])
            command = args.get("command") or args.get("cmd")
            failed = looks_failed(result.content, result.is_error)
            if isinstance(command, str):
                command = _one_line(command)
                if command not in commands:
                    commands.append(command)
                last_exec = (command, _outcome_line(result.content), failed)
            if failed:
                errors.append(_error_line(result.content))
                last_error_output = result.content
            elif not result.is_error:
                change = _change_text(call.name, args)
                if change:
                    changes.setdefault(str(args.get("path") or args.get("file_path")), []).append(change)
    ledger = ledger_of([m for step in [first_step or [], *elided] for m in step])
    final_run = ledger.final_state()
    still_failing = ledger.unresolved()
    last_call = last_step[0]
    kept_test = any(parse_test_command(str(_args(tc).get("command") or "")) is not None
                    for tc in last_call.tool_calls)  # type: ignore[union-attr]
    if final_run is not None:
        resolved = not final_run.failed and not still_failing
    else:
        resolved = last_exec is not None and not last_exec[2]
    parts = [f"{NOTICE_PREFIX} {len(elided)} edit/exec steps between this step and the next were elided from the "
             f"context (originals are in the session journal)."]
    if tools:
        parts.append("Tools: " + ", ".join(f"{name} x{count}" for name, count in tools.items()) + ".")
    if files:
        parts.append("Files: " + ", ".join(files[:20]) + (" ..." if len(files) > 20 else "") + ".")
    if commands:
        parts.append("Commands: " + "; ".join(f"`{c}`" for c in commands[:10]) + ".")
    if errors:
        shown = list(dict.fromkeys(errors))[-MAX_ERRORS:]
        label = "Errors seen, resolved by the final outcome below" if resolved else "Errors seen"
        parts.append(f"{label}: " + " | ".join(shown) + ".")
    if changes:
        shown = list(changes.items())[-MAX_DIFFS:]
        parts.append("Changes to each file in the elided steps, in order:\n" + "\n".join(
            f"--- {path}\n" + _capped("\n".join(edits), DIFF_CAP * 2) for path, edits in shown) + "\n")
    if last_error_output and not resolved and not kept_test:
        parts.append("Last error output (current):\n" + _capped(last_error_output, ERROR_TEXT_CAP) + "\n")
    if still_failing and (final_run is None or still_failing[-1] is not final_run):
        parts.append("Still failing: " + "; ".join(run.line() for run in still_failing) + ".")
    if kept_test:
        parts.append("Final outcome: see the last test run, kept verbatim right after this.")
    elif final_run is not None:
        state = "FAILING" if final_run.failed or still_failing else "succeeded"
        parts.append(f"Final outcome (current state, {state}): {final_run.line()}")
    elif last_exec is not None:
        state = "FAILING" if last_exec[2] else "succeeded"
        parts.append(f"Final outcome (current state, {state}): `{last_exec[0]}` -> {last_exec[1]}")
    else:
        parts.append("Final outcome: no command ran in the elided steps; the next step is kept verbatim.")
    return " ".join(parts) + "]"


__all__ = [
    "DEFAULT_CAPABILITIES", "DEFAULT_DEVELOPER_CAPABILITIES", "NOTICE_PREFIX", "aggregate_developer_loops",
    "build_notice", "default_capability_of", "looks_failed",
]
