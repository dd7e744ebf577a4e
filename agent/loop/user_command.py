"""Commands the user runs themself (``!command`` in the TUI, Claude Code's bash mode).

The command runs through the bash tool as a call of the user's: the same process handling, time
limit, truncation and saved output as the model's calls, under the deny rules and the permission
mode (read-only refuses it; in the other modes typing it is the approval), but outside the OS
sandbox: the sandbox confines what the model runs, and the user's own line runs as they typed it
(``!pip install ...`` may write to the user's caches), as in Claude Code's bash mode. It is shown as a tool
call (``ToolCallStarted`` / ``ToolCallFinished``, id ``user_...``), and the command with its
output joins the conversation as one user message, so the model reads it with the next request.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING

from ..config.settings import PermissionMode
from ..events import Emit, ToolCallFinished, ToolCallStarted, ToolResult
from ..messages import ToolCall, UserMessage, new_id
from ..permissions.policy import decide
from ..tools.base import ToolOutput
from .user_command_text import USER_COMMAND_TEXT, parse_user_command

if TYPE_CHECKING:
    from .agent import Agent


def run_user_command(agent: "Agent", command: str, emit: Emit, cancel: threading.Event) -> ToolResult:
    """Run ``command`` (a shell line the user typed) for ``agent`` between turns and add it to the
    conversation; returns the typed result. A refused command (read-only mode, a deny rule) is
    shown as denied and joins nothing. Never raises for a failing command."""
    arguments = {"command": command}
    call = ToolCall(id=f"user_{new_id()}", name="bash", arguments=json.dumps(arguments))
    emit(ToolCallStarted(id=call.id, name="bash", arguments=arguments, view=agent.registry.view("bash", arguments)))
    tool = agent.registry.get("bash")
    refusal = ""
    if tool is None:
        refusal = "bash is not among this session's tools (the embedded model reads only)."
    elif agent.config.permission_mode == PermissionMode.READ_ONLY:
        refusal = "Permission denied: the permission mode is read-only, so no command runs (Ctrl+R changes it)."
    else:
        verdict = decide("bash", tool.capability, arguments, mode=agent.config.permission_mode,
                         rules=agent.config.permission_rules, workspace=agent.workspace, interactive=True)
        if verdict.access == "deny":
            refusal = verdict.message
    if refusal:
        output = ToolOutput(text=refusal, is_error=True, outcome="denied")
    else:
        output = _run(agent, call, cancel)
    result = output.to_result(cancelled=cancel.is_set())
    emit(ToolCallFinished(id=call.id, name="bash", output=output.text, result=result))
    if not refusal:
        agent._append(UserMessage(content=USER_COMMAND_TEXT.format(command=command, output=output.text)), emit)
    return result


def _run(agent: "Agent", call: ToolCall, cancel: threading.Event) -> ToolOutput:
    """The bash tool run as the loop runs it, without the permission prompt or the sandbox (the
    user typed it)."""
    context = agent.tool_context(call.id, cancel)
    context.sandbox = None
    return agent.registry.execute(call, context)


__all__ = ["USER_COMMAND_TEXT", "parse_user_command", "run_user_command"]
