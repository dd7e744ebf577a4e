"""Keeping the request's tool list in step with the registry's tool source (the MCP servers).

Before each model call ``sync_tool_source`` lets the source settle (the first request waits for
servers still starting, each up to its start limit, so the tool list is complete and stable
from the first request), shows the source's notices (a server that failed, with its stderr
tail), and, when the list differs from the one the previous request carried, says so: the tool
list leads every request, so a change is a prompt-prefix change and the provider's prompt
cache starts over (``Agent.prefix_changes`` counts them; the context budget drops its reconciled
figure on its own, its key holding the tools).
"""

from __future__ import annotations

from typing import Any

from ..events import Emit, Notice


def sync_tool_source(agent: Any, emit: Emit) -> None:
    """See the module docstring. ``agent``: an ``Agent``; does nothing without a source."""
    source = getattr(agent.registry, "source", None)
    if source is None:
        return
    source.settle()
    for text in source.take_notices():
        emit(Notice(message=text))
    names = [schema["function"]["name"] for schema in agent.registry.schemas()]
    previous = getattr(agent, "_offered_names", None)
    agent._offered_names = names
    if previous is None or previous == names:
        return
    agent.prefix_changes = getattr(agent, "prefix_changes", 0) + 1
    gone = [n for n in previous if n not in names]
    added = [n for n in names if n not in previous]
    what = "; ".join(part for part in (f"removed {', '.join(gone)}" if gone else "",
                                       f"added {', '.join(added)}" if added else "") if part) or "reordered"
    emit(Notice(message=f"The tool list changed ({what}): a prompt-prefix change, so the provider's "
                        "prompt cache starts over from this request.", key="tool_list"))
