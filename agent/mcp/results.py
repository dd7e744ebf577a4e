"""MCP tool results as the text the model sees.

``CallToolResult.content`` blocks become lines: text as it is; an image or audio block as a
placeholder naming its type and size (``[image: image/png, 12.4 KB]``: the model gets no pixels
through a text tool result); an embedded resource or a resource link as a link
(``[resource: file:///a.txt (text/plain)]``). Structured content with no content blocks is shown
as JSON. ``isError`` makes a failed tool result. Truncation and the saved full output are the
registry's (``ToolRegistry._finalize``, the path bash, grep and glob results take).
"""

from __future__ import annotations

import json
from typing import Any


def _size(data: str | None) -> str:
    """The decoded size of base64 ``data``, e.g. ``12.4 KB``."""
    raw = len(data or "") * 3 // 4
    return f"{raw} B" if raw < 1024 else f"{raw / 1024:.1f} KB" if raw < 1024 * 1024 else f"{raw / 1048576:.1f} MB"


def block_text(block: Any) -> str:
    """The text of one content block (``mcp.types`` TextContent, ImageContent, AudioContent,
    EmbeddedResource, ResourceLink; anything else by its type)."""
    kind = getattr(block, "type", "")
    if kind == "text":
        return block.text
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mimeType}, {_size(block.data)}; not shown to the model]"
    if kind == "resource":
        resource = block.resource
        mime = f" ({resource.mimeType})" if getattr(resource, "mimeType", None) else ""
        return f"[resource: {resource.uri}{mime}]"
    if kind == "resource_link":
        mime = f" ({block.mimeType})" if block.mimeType else ""
        label = f"{block.name} " if block.name and block.name != str(block.uri) else ""
        return f"[resource link: {label}{block.uri}{mime}]"
    return f"[{kind or type(block).__name__} content]"


def result_text(result: Any) -> tuple[str, bool]:
    """``(text, is_error)`` of a ``CallToolResult``: its blocks joined by newlines (structured
    content as JSON when there are none; ``(no output)`` when empty)."""
    parts = [block_text(block) for block in (result.content or [])]
    if not parts and result.structuredContent is not None:
        parts.append(json.dumps(result.structuredContent, ensure_ascii=False, indent=1))
    text = "\n".join(parts)
    return (text if text.strip() else "(no output)"), bool(result.isError)
