"""The ``glob`` tool: find files by name pattern; plus the glob-to-regex translation and the
pruned folder walk that ``grep``'s Python fallback shares.

Pattern semantics are pathlib's (``Path.glob``): the pattern is matched against the whole path
relative to the search folder, ``*`` and ``?`` stay within one path segment, ``**`` as a whole
segment spans any number of folders (``**/*.py`` finds Python files at any depth, ``*.py`` only at
the top), ``[...]`` is a character class. Braces ``{a,b}`` are accepted as alternatives (as in
ripgrep). Our own walk replaces ``Path.glob`` so that ``.git`` and the heavy folders are pruned
instead of walked and filtered. Results are sorted newest first by modification time, as Claude
Code's Glob does (recently touched files are the likeliest targets), ties by path.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Callable, Iterator

from pydantic import Field, field_validator

from ..context.truncation.bounded import BoundedOutput
from .base import Capability, Tool, ToolArgs, ToolContext, ToolError, ToolOutput
from .names import parse_name
from .paths import resolve_in_workspace, shown_path
from .view import ToolView, one_line

#: Folders never walked into.
ALWAYS_SKIPPED = frozenset({".git", ".opencli"})
#: Folders skipped unless the pattern names them (dependency, environment and cache folders).
HEAVY_DIRS = frozenset(
    {"node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox"}
)
#: Matches collected before the walk stops (the result says so).
MAX_MATCHES = 50_000


def glob_to_regex(pattern: str) -> str:
    """Translate a glob ``pattern`` (``/``-separated) into a regex for ``re.fullmatch`` on a
    ``/``-separated relative path. Supports ``*``, ``?``, ``[...]`` / ``[!...]``, ``**`` segments
    and ``{a,b}`` alternatives (not nested)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                j = i + 2
                whole_segment = (i == 0 or pattern[i - 1] == "/") and (j == n or pattern[j] == "/")
                if whole_segment and j == n:
                    out.append(".*")
                    i = j
                    continue
                if whole_segment:
                    out.append("(?:.*/)?")
                    i = j + 1
                    continue
                out.append("[^/]*")
                i = j
                continue
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
                i += 1
                continue
            body = pattern[i + 1 : j].replace("\\", "\\\\")
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            out.append(f"[{body}]")
            i = j + 1
        elif c == "{":
            j = pattern.find("}", i)
            if j < 0:
                out.append(re.escape(c))
                i += 1
                continue
            alternatives = pattern[i + 1 : j].split(",")
            out.append("(?:" + "|".join(glob_to_regex(alt) for alt in alternatives) + ")")
            i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def compile_glob(pattern: str) -> re.Pattern[str]:
    """Return the compiled ``glob_to_regex(pattern)`` (``re.DOTALL``); raises ``ToolError`` when the
    pattern cannot be compiled."""
    try:
        return re.compile(glob_to_regex(pattern), re.DOTALL)
    except re.error as exc:
        raise ToolError(f"invalid glob pattern {pattern!r}: {exc}") from None


def skipped_dirs(pattern: str) -> frozenset[str]:
    """Folder names to prune for ``pattern``: ``.git`` and ``.opencli`` always, the heavy folders
    unless the pattern mentions them."""
    return ALWAYS_SKIPPED | frozenset(d for d in HEAVY_DIRS if d not in pattern)


def walk(
    root: Path,
    *,
    skip: frozenset[str],
    max_depth: int | None = None,
    keep_dir: Callable[[str, Path], bool] | None = None,
) -> Iterator[tuple[str, Path, bool]]:
    """Yield ``(relative posix path, absolute path, is_dir)`` for everything under ``root``, in
    sorted order, not following symlinked folders, and not going deeper than ``max_depth`` path
    segments (``None`` = unlimited). Folders named in ``skip``, or for which
    ``keep_dir(relative path, path)`` is false, are neither yielded nor entered. Unreadable folders
    are skipped silently."""
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        depth = 0 if not prefix else prefix.count("/")
        kept = []
        for name in sorted(dirnames):
            if name in skip:
                continue
            if keep_dir is not None and not keep_dir(prefix + name, Path(dirpath, name)):
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in kept:
            yield prefix + name, Path(dirpath, name), True
        for name in sorted(filenames):
            yield prefix + name, Path(dirpath, name), False
        if max_depth is not None and depth + 1 >= max_depth:
            dirnames[:] = []


class GlobArgs(ToolArgs):
    """Arguments of ``glob``."""

    pattern: str = Field(
        min_length=1,
        description="Glob pattern relative to `path`, e.g. `**/*.py` (any depth), `src/*.ts`, `*` (top level).",
    )
    path: str = Field(default=".", description="Folder to search in (default: the workspace root).")

    @field_validator("path", mode="before")
    @classmethod
    def _null_is_default(cls, value: Any) -> Any:
        """Models often send ``null`` for an optional argument: treat it as absent."""
        return "." if value is None else value


class GlobTool(Tool):
    """List files and folders matching a glob pattern, newest first."""

    name = "glob"
    description = (
        "Find files by path pattern (pathlib glob): `**/*.py` matches at any depth, `*.py` only at the top "
        "of `path`; `{a,b}` alternatives work. Folders are listed with a trailing `/`. Results are sorted "
        "by modification time, newest first. Skips .git and dependency/cache folders such as "
        "node_modules and .venv unless the pattern names them."
    )
    Args = GlobArgs
    capability = Capability.READ
    truncates_output = True

    def preview(self, args: GlobArgs, ctx: ToolContext) -> str:
        """Return ``glob PATTERN [in PATH]``."""
        return f"glob {args.pattern}" + (f" in {args.path}" if args.path not in ("", ".") else "")


    def describe(self, args: GlobArgs) -> ToolView:
        """The pattern, and the folder when not the root."""
        where = f" in {args.path}" if args.path not in ("", ".") else ""
        return ToolView(title=self.name, summary=one_line(args.pattern + where))

    def run(self, args: GlobArgs, ctx: ToolContext) -> ToolOutput:
        """Return one workspace-relative path per line and a count line.

        Raises ``ToolError`` for a search folder outside the workspace or missing, a file given as
        folder, an absolute pattern or one that climbs out with ``..``.
        """
        base = resolve_in_workspace(args.path or ".", ctx)
        if not base.exists():
            raise ToolError(f"folder not found: {args.path}")
        if not base.is_dir():
            raise ToolError(f"{args.path} is a file, not a folder; give its folder as path")
        pattern = parse_name(args.pattern.strip())
        while pattern.startswith("./"):
            pattern = pattern[2:]
        pattern = pattern.rstrip("/") or "*"
        if pattern.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", pattern):
            raise ToolError(f"pattern {args.pattern!r} is absolute; give it relative to `path`")
        if ".." in pattern.split("/"):
            raise ToolError(f"pattern {args.pattern!r} contains `..`; set `path` to the folder to search instead")
        regex = compile_glob(pattern)
        max_depth = None if "**" in pattern else pattern.count("/") + 1
        found: list[tuple[float, str]] = []
        capped = False
        for count, (rel, path, is_dir) in enumerate(walk(base, skip=skipped_dirs(pattern), max_depth=max_depth)):
            if count % 1000 == 0 and ctx.cancel.is_set():
                return ToolOutput(text="[cancelled by user]", is_error=True)
            if not regex.fullmatch(rel):
                continue
            if len(found) >= MAX_MATCHES:
                capped = True
                break
            shown = shown_path(path, ctx) + ("/" if is_dir else "")
            found.append((_mtime(path), shown))
        where = shown_path(base, ctx)
        if not found:
            return ToolOutput(text=f"No files match {args.pattern!r} in {where}", metadata={"count": 0})
        found.sort(key=lambda item: (-item[0], item[1]))
        summary = f"[{len(found)} paths, newest first" + (f"; stopped after {MAX_MATCHES}" if capped else "") + "]"
        output = BoundedOutput.for_context(ctx)
        output.feed("\n".join(shown for _, shown in found).encode("utf-8"))
        result = output.finish()
        return ToolOutput(
            text=f"{result.text}\n{summary}",
            truncated=result.truncated,
            saved_path=result.saved_path, output_lines=result.total_lines, output_bytes=result.total_bytes,
            metadata={"count": len(found)},
        )


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        try:
            return path.lstat().st_mtime
        except OSError:
            return 0.0
