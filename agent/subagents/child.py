"""Building a sub-agent's ``Agent`` from its parent's.

``ChildAgent`` marks its requests as a sub-agent's (``purpose="subagent"``, ``task_index``), so a
scripted run hands it the replies written for it (its tokens are counted by the runner from its
``model_call_finished`` events). ``build_child`` builds one with a read-only registry, the
sub-agent prompt, its own limits and its own journal.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from ..context.truncation.saved_file import safe_call_id
from ..loop.agent import Agent
from ..loop.reminders import ReminderEngine
from ..providers.base import ModelRequest
from ..session.journal import SessionJournal
from ..session.records import SessionRecord, SystemPromptRecord
from ..tools.base import Capability
from ..tools.registry import ToolRegistry
from ..tools.task import SUBAGENT_TOOL_NAMES
from .prompt import build_subagent_prompt

#: How a refused call names the sub-agent's mode.
SUBAGENT_MODE_NAME = "a sub-agent (read-only)"


class ChildAgent(Agent):
    """An ``Agent`` whose requests say they come from sub-agent number ``task_index``."""

    task_index: int = 0

    def build_request(self) -> ModelRequest:
        """The main-loop request, marked ``purpose="subagent"`` with this sub-agent's index."""
        request = super().build_request()
        return request.model_copy(update={"purpose": "subagent", "task_index": self.task_index})


def subagent_tools(parent: Agent) -> list[str]:
    """The tools a sub-agent of ``parent`` may have: the read-only ones the parent has, in
    ``SUBAGENT_TOOL_NAMES`` order (never ``task``, nor the plan tools), then the parent's
    read-only MCP tools (``readOnlyHint``) in the parent's order."""
    names = [name for name in SUBAGENT_TOOL_NAMES if name in parent.registry
             and parent.registry.get(name).capability == Capability.READ]
    return names + [t.name for t in parent.registry.tools()
                    if getattr(t, "shared_instance", False) and t.capability == Capability.READ]


def _child_tool(parent: Agent, name: str):
    """A sub-agent's instance of the parent's tool ``name``: a fresh one, or the parent's own for
    tools that hold no per-call state and cannot be built without their source (MCP tools)."""
    tool = parent.registry.get(name)
    return tool if getattr(tool, "shared_instance", False) else type(tool)()


def subagent_dir(parent: Agent) -> Path:
    """The folder of the parent's sub-agent journals: ``<parent output dir>/subagents``, i.e.
    ``<sessions_dir>/<parent_id>/subagents`` beside the parent's journal."""
    return parent.output_dir / "subagents"


def build_child(parent: Agent, *, call_id: str, index: int, tools: list[str], max_turns: int) -> ChildAgent:
    """A sub-agent of ``parent`` for its ``task`` call ``call_id``: ``tools`` (names the parent
    has; fresh instances), at most ``max_turns`` steps with tool calls, the parent's model,
    provider, permission mode and rules with every non-read
    capability refused, never interactive. Its journal (``<subagent_dir>/<call id>.jsonl``,
    0600) starts with a session record and its system prompt. Raises nothing but ``OSError``
    from nowhere: journal failures are kept by the journal itself."""
    name = safe_call_id(call_id)
    folder = subagent_dir(parent)
    registry = ToolRegistry(_child_tool(parent, tool) for tool in tools)
    prompt = build_subagent_prompt(parent.workspace, registry.names())
    config = replace(parent.config, max_turns=max_turns, interactive=False,
                     allowed_capabilities=frozenset({Capability.READ}), restricted_mode_name=SUBAGENT_MODE_NAME)
    session_id = f"{parent.session_id}-{name}"
    journal = SessionJournal(folder / f"{name}.jsonl")
    journal.append(SessionRecord(event="started", session_id=session_id, model=parent.model,
                                 workspace=str(parent.workspace), time=time.time()))
    journal.append(SystemPromptRecord(text=prompt, tools=tuple(registry.names()), model=parent.model,
                                      reason="started", time=time.time()))
    child = ChildAgent(provider=parent.provider, registry=registry, system_prompt=prompt,
                       model=parent.model, workspace=parent.workspace, output_dir=folder / name,
                       session_id=session_id, config=config, journal=journal,
                       context_window=parent.context_window, reminders=ReminderEngine(()))
    child.task_index = index
    child.spending = parent.spending  # the session budget counts sub-agents too
    child.call_purpose = "subagent"  # its model calls are logged as a sub-agent's
    child.tool_gate = parent.tool_gate  # the user's before/after_tool hooks see its calls too
    child.hook_agent = call_id
    child.hook_mode = parent.hook_context()["mode"]
    return child
