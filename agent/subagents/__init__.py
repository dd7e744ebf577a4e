"""Sub-agents: the work behind the ``task`` tool (``agent.tools.task``).

A sub-agent is an ``Agent`` of its own (``child``): its own history, a registry of read-only
tools (never ``task``: no recursion), a system prompt saying it is a sub-agent that ends with a
concise result (``prompt``), its own turn limit and wall-clock limit, the parent's provider,
model and permission mode (with every non-read capability refused), and its own journal beside
the parent's, linked from it by ``session.records.SubagentRecord``. ``runner.SubagentRunner``
runs one to its end and turns how it ended into the parent's tool result (``outcome``), emitting
``SubagentStarted`` / ``SubagentProgress`` / ``SubagentCompleted`` / ``SubagentFailed``.
"""

from .runner import SubagentRunner

__all__ = ["SubagentRunner"]
