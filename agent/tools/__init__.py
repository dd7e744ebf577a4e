"""Tools the agent can call: the contract in ``base``, the tools in one module each, and the
registry (``registry.ToolRegistry``, ``registry.default_tools``) that parses and runs calls.

Only the contract is re-exported here, so importing ``agent.tools.base`` stays cheap and free of
import cycles; import tools and the registry from their modules.
"""

from .base import Capability, Tool, ToolArgs, ToolContext, ToolError, ToolOutput

__all__ = ["Capability", "Tool", "ToolArgs", "ToolContext", "ToolError", "ToolOutput"]
