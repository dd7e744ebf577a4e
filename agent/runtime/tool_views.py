"""How calls are shown before a session has its loop: a registry of every tool the runtime can
register (the standard tools, ``think``, the plan tools and ``task``), used only for their views.

A resumed conversation is drawn before ``prepare()`` builds the session's tools; the views do not
depend on a tool's state, so fresh instances describe the journaled calls exactly as the live
tools did.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..events import ToolView
    from ..tools.registry import ToolRegistry


@lru_cache(maxsize=1)
def _describing_registry() -> "ToolRegistry":
    from ..plan.tools import SubmitPlanTool, UpdatePlanTool
    from ..tools.registry import ToolRegistry, default_tools
    from ..tools.task import TaskTool

    return ToolRegistry([*default_tools(include_think=True), SubmitPlanTool(lambda plan: None),
                         UpdatePlanTool(None),  # type: ignore[arg-type] - describe() needs no controller
                         TaskTool()])


def describe_call(name: str, arguments: Any) -> "ToolView":
    """The view of a call of tool ``name`` with decoded ``arguments`` (a dict, or the raw string
    of invalid JSON), as the runtime's tool of that name describes it (an MCP tool's by the
    server and tool its name holds); the generic view for an unknown name. Never raises."""
    from ..mcp.naming import call_view, split_name

    if split_name(name) is not None:
        return call_view(name, arguments)
    return _describing_registry().view(name, arguments)


__all__ = ["describe_call"]
