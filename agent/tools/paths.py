"""Resolving tool paths inside the workspace (DESIGN.md 6: leaving it is refused).

A path given by the model is resolved against the workspace root, with ``..`` and every symlink
followed (``Path.resolve``), and the final location must lie under one of the allowed roots: the
workspace, a root the user allowed (``ctx.allowed_outside``) and, for reading only, the folder of
saved tool outputs (``ctx.output_dir``, beside the session journal in the user data dir). Checking
the fully resolved path is what catches a symlink inside the workspace that points out of it.

A byte of a file name that is not UTF-8 is written ``\\xNN`` in path arguments and in output
(``names``): ``resolve_in_workspace`` reads the escape, ``shown_path`` writes it.
"""

from __future__ import annotations

import os
from pathlib import Path

from .base import ToolContext, ToolError
from .names import parse_name, show_name


def allowed_roots(ctx: ToolContext, reading: bool = False) -> list[Path]:
    """Return the resolved absolute roots a tool path may resolve into (workspace first); with
    ``reading`` the saved-output folder too."""
    roots = [Path(ctx.workspace).resolve()]
    for extra in ((ctx.output_dir,) if reading else ()) + tuple(ctx.allowed_outside):
        if extra is None:
            continue
        root = Path(extra).expanduser()
        if not root.is_absolute():
            root = roots[0] / root
        roots.append(root.resolve())
    return roots


def resolve_in_workspace(path: str, ctx: ToolContext, reading: bool = False) -> Path:
    """Return the absolute, fully resolved ``Path`` for a tool argument ``path``.

    Relative paths are taken from ``ctx.workspace``; ``~`` is expanded; ``\\xNN`` escapes of
    bytes that are not UTF-8 are read back (``names.parse_name``). Raises ``ToolError`` when
    the path is empty or contains a NUL character, when it cannot be resolved (a symlink loop),
    or when the resolved location is outside every allowed root: the message names the path, says
    it is outside the workspace, and names the symlink target when a link led there. ``reading``:
    the saved-output folder (``ctx.output_dir``) is allowed too (the ``read`` tool).
    """
    if not isinstance(path, str) or not path.strip():
        raise ToolError("path is empty: give a file path relative to the workspace root")
    if "\x00" in path:
        raise ToolError(f"path {path!r} contains a NUL character")
    roots = allowed_roots(ctx, reading)
    workspace = roots[0]
    candidate = Path(parse_name(path)).expanduser()
    if not candidate.is_absolute():
        candidate = workspace / candidate
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError) as exc:
        raise ToolError(f"cannot resolve path {path!r}: {exc}") from None
    if any(_is_within(resolved, root) for root in roots):
        return resolved
    lexical = Path(os.path.normpath(candidate))
    via_link = any(_is_within(lexical, root) for root in roots)
    target = show_name(str(resolved))
    detail = f" (it is a symlink to {target})" if via_link else f" (it resolves to {target})"
    raise ToolError(
        f"path {path!r} is outside the workspace {show_name(str(workspace))}{detail}; "
        "only files inside the workspace can be used"
    )


def display_path(path: Path, ctx: ToolContext) -> str:
    """Return ``path`` relative to the workspace with ``/`` separators, or absolute when outside."""
    workspace = Path(ctx.workspace).resolve()
    try:
        rel = path.relative_to(workspace)
    except ValueError:
        return str(path)
    return rel.as_posix() or "."


def shown_path(path: Path, ctx: ToolContext) -> str:
    """``display_path`` as tool output shows it: bytes that are not UTF-8 as ``\\xNN``
    (``names.show_name``), so the text is valid UTF-8 and ``resolve_in_workspace`` reads it back.
    ``display_path`` itself keeps the surrogate-escaped name, for passing on to other programs."""
    return show_name(display_path(path, ctx))


def _is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
