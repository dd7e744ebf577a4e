"""The ``grep`` tool: search file contents with a regular expression.

Uses ripgrep (``rg``) when it is on PATH, as Claude Code and Codex do: fast, and it honours
``.gitignore``. Otherwise a pure-Python fallback walks the tree itself: it skips ``.git``,
``.opencli``, dependency/cache folders (``node_modules``, ``.venv`` ...), binary files (a NUL byte
in the first 8 KB) and files over 50 MB, and honours the ``.gitignore`` files of the searched folders
(git's pattern rules through pathspec; no global excludes). Output is
``path:line:text`` per match, paths relative to the workspace, sorted by path. The regex syntax is
Python's ``re`` in the fallback and ripgrep's (Rust) with rg; the common subset is the same.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any, Callable, Iterator

import pathspec
from pydantic import Field, ValidationInfo, field_validator

from ..context.truncation.bounded import BoundedOutput
from ..process import run_streaming
from .base import Capability, Tool, ToolArgs, ToolContext, ToolError, ToolOutput
from .view import ToolView, one_line
from .bash import command_env
from .glob_tool import ALWAYS_SKIPPED, HEAVY_DIRS, compile_glob, walk
from .names import show_name
from .paths import display_path, resolve_in_workspace
from .read import BINARY_CHECK_BYTES

#: Files larger than this are skipped by the Python fallback (bytes).
MAX_FILE_BYTES = 50 << 20
#: Matched lines longer than this are cut (characters), as rg's --max-columns.
MAX_LINE_CHARS = 2000
#: Time limit of one ripgrep run (seconds).
RG_TIMEOUT_S = 120.0


class GrepArgs(ToolArgs):
    """Arguments of ``grep``."""

    pattern: str = Field(min_length=1, description="Regular expression to search for (case-sensitive), e.g. `def main` or `TODO|FIXME`.")
    path: str = Field(default=".", description="File or folder to search (default: the workspace root).")
    glob: str = Field(
        default="",
        description="Only search files matching this glob: `*.py` matches names at any depth, `src/**/*.ts` whole paths; a leading `!` excludes.",
    )

    @field_validator("path", "glob", mode="before")
    @classmethod
    def _null_is_default(cls, value: Any, info: ValidationInfo) -> Any:
        """Models often send ``null`` for an optional argument: treat it as absent."""
        return cls.model_fields[info.field_name].default if value is None else value


class GrepTool(Tool):
    """Search file contents for a regular expression; one ``path:line:text`` per match."""

    name = "grep"
    description = (
        "Search file contents for a regular expression. Returns `path:line:text` for each matching line, "
        "sorted by path. Respects .gitignore and skips binary files, .git and dependency folders. Narrow "
        "with `path` (a file or folder) and `glob` (e.g. `*.py`). Long results are cut in the middle."
    )
    Args = GrepArgs
    capability = Capability.READ
    truncates_output = True

    def __init__(self, use_ripgrep: bool | None = None) -> None:
        """``use_ripgrep``: ``None`` = use rg when on PATH; ``False`` forces the Python fallback."""
        self.use_ripgrep = use_ripgrep

    def preview(self, args: GrepArgs, ctx: ToolContext) -> str:
        """Return ``grep PATTERN [in PATH] [glob]``."""
        return f"grep {args.pattern!r}" + (f" in {args.path}" if args.path not in ("", ".") else "") + (f" ({args.glob})" if args.glob else "")


    def describe(self, args: GrepArgs) -> ToolView:
        """The pattern, the folder when not the root, the file glob when given."""
        where = f" in {args.path}" if args.path not in ("", ".") else ""
        only = f" ({args.glob})" if args.glob else ""
        return ToolView(title=self.name, summary=one_line(args.pattern + where + only))

    def run(self, args: GrepArgs, ctx: ToolContext) -> ToolOutput:
        """Search and return matches (middle-truncated) or a "no matches" line.

        Raises ``ToolError`` for a path outside the workspace or missing, or an invalid regex.
        """
        target = resolve_in_workspace(args.path or ".", ctx)
        if not target.exists():
            raise ToolError(f"path not found: {args.path}")
        rg = shutil.which("rg") if self.use_ripgrep is not False else None
        output = BoundedOutput.for_context(ctx)
        if rg:
            matches = _search_rg(rg, args, target, ctx, output)
        else:
            matches = _search_python(args, target, ctx, output)
        if ctx.cancel.is_set():
            return ToolOutput(text="[cancelled by user]", is_error=True)
        result = output.finish()
        if matches == 0:
            where = show_name(display_path(target, ctx))
            scope = f" in files matching {args.glob!r}" if args.glob else ""
            return ToolOutput(text=f"No matches for {args.pattern!r} in {where}{scope}", metadata={"matches": 0})
        return ToolOutput(
            text=result.text.rstrip("\n"),
            truncated=result.truncated,
            saved_path=result.saved_path, output_lines=result.total_lines, output_bytes=result.total_bytes,
            metadata={"matches": matches, "engine": "rg" if rg else "python"},
        )


def _search_rg(rg: str, args: GrepArgs, target: Path, ctx: ToolContext, output: BoundedOutput) -> int:
    """Run ripgrep into ``output``; return the number of matching lines (approximate: lines fed)."""
    argv = [rg, "--line-number", "--no-heading", "--with-filename", "--color=never", "--hidden",
            "--max-columns", str(MAX_LINE_CHARS), "--sort", "path"]
    for skipped in sorted(ALWAYS_SKIPPED | HEAVY_DIRS):
        argv += ["--glob", f"!{skipped}"]
    if args.glob:
        argv += ["--glob", args.glob]
    argv += ["--regexp", args.pattern]
    workspace = Path(ctx.workspace).resolve()
    if target != workspace:
        argv += ["--", display_path(target, ctx)]
    lines = 0
    captured = bytearray()

    def sink(chunk: bytes) -> None:
        nonlocal lines
        lines += chunk.count(b"\n")
        if len(captured) < 4096:
            captured.extend(chunk[: 4096 - len(captured)])
        output.feed(chunk)

    try:
        proc = run_streaming(argv, cwd=workspace, sink=sink, cancel=ctx.cancel, timeout_s=RG_TIMEOUT_S, env=command_env())
    except OSError as exc:
        raise ToolError(f"cannot start ripgrep: {exc.strerror or exc}") from None
    if proc.timed_out:
        raise ToolError(f"grep timed out after {RG_TIMEOUT_S:g} s; narrow it with `path` or `glob`")
    if proc.returncode == 1:
        return 0
    if proc.returncode not in (0, None) and not re.search(rb"^[^\n]*:\d+:", bytes(captured), re.M):
        message = bytes(captured).decode("utf-8", "replace").strip()
        if "regex" in message:
            raise ToolError(f"invalid regular expression {args.pattern!r}: {message}")
        raise ToolError(f"ripgrep failed: {message or f'exit code {proc.returncode}'}")
    return lines


class _GitIgnore:
    """``.gitignore`` matching (pathspec's git semantics) over the files loaded so far: each file's
    patterns apply below its folder, and a deeper file's match overrides an outer one's."""

    def __init__(self) -> None:
        self._specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []

    def load(self, folder: Path, base: str) -> None:
        """Add the rules of ``folder/.gitignore``; ``base`` is the folder relative to the workspace."""
        try:
            text = (folder / ".gitignore").read_text("utf-8", "replace")
        except OSError:
            return
        try:
            spec = pathspec.GitIgnoreSpec.from_lines(text.splitlines())
        except (ValueError, TypeError):  # a malformed pattern: the file is skipped, not the search
            return
        if len(spec):
            self._specs.append((base, spec))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether ``rel`` (relative to the workspace, ``/``-separated) is ignored."""
        verdict = False
        for base, spec in self._specs:
            if base:
                if not rel.startswith(base + "/"):
                    continue
                sub = rel[len(base) + 1 :]
            else:
                sub = rel
            include = spec.check_file(sub + "/" if is_dir else sub).include
            if include is not None:
                verdict = include
        return verdict


def _file_filter(glob: str | None) -> Callable[[str, str], bool]:
    """Return a predicate on (workspace-relative path, search-relative path) for the ``glob`` arg."""
    if not glob:
        return lambda rel_ws, rel_search: True
    exclude = glob.startswith("!")
    pattern = glob[1:] if exclude else glob
    if pattern.startswith("./"):
        pattern = pattern[2:]
    regex = compile_glob(pattern)
    by_path = "/" in pattern

    def accept(rel_ws: str, rel_search: str) -> bool:
        if by_path:
            hit = bool(regex.fullmatch(rel_search) or regex.fullmatch(rel_ws))
        else:
            hit = bool(regex.fullmatch(rel_ws.rsplit("/", 1)[-1]))
        return hit != exclude

    return accept


def _search_python(args: GrepArgs, target: Path, ctx: ToolContext, output: BoundedOutput) -> int:
    """The fallback search; returns the number of matching lines fed to ``output``."""
    try:
        regex = re.compile(args.pattern)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {args.pattern!r}: {exc}") from None
    accept = _file_filter(args.glob)
    matches = 0
    candidates = sorted((display_path(path, ctx), path) for path in _candidate_files(target, ctx))
    for rel_ws, path in candidates:
        if ctx.cancel.is_set():
            break
        rel_search = path.name if target.is_file() else os.path.relpath(path, target).replace(os.sep, "/")
        if not accept(rel_ws, rel_search):
            continue
        matches += _search_file(path, rel_ws, regex, output)
    return matches


def _candidate_files(target: Path, ctx: ToolContext) -> Iterator[Path]:
    """Yield the files to search under ``target`` (or ``target`` itself when it is a file)."""
    if target.is_file():
        yield target
        return
    workspace = Path(ctx.workspace).resolve()
    inside = target == workspace or workspace in target.parents
    ignore = _GitIgnore()
    if inside:
        # The .gitignore files of the search root and of the folders above it apply.
        folder = workspace
        ignore.load(folder, "")
        for part in target.relative_to(workspace).parts:
            folder = folder / part
            ignore.load(folder, display_path(folder, ctx))

    def keep_dir(rel: str, path: Path) -> bool:
        if not inside:
            return True
        rel_ws = display_path(path, ctx)
        if ignore.ignored(rel_ws, True):
            return False
        if not path.is_symlink():
            ignore.load(path, rel_ws)
        return True

    for _rel, path, is_dir in walk(target, skip=ALWAYS_SKIPPED | HEAVY_DIRS, keep_dir=keep_dir):
        if is_dir:
            continue
        if inside and ignore.ignored(display_path(path, ctx), False):
            continue
        if path.is_symlink() and not path.is_file():
            continue
        yield path


def _search_file(path: Path, shown: str, regex: re.Pattern[str], output: BoundedOutput) -> int:
    """Feed ``shown:line:text`` for every matching line of one file; return how many matched."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return 0
        data = path.read_bytes()
    except OSError:
        return 0
    if b"\x00" in data[:BINARY_CHECK_BYTES]:
        return 0
    text = data.decode("utf-8", "replace")
    found = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if regex.search(line) is None:
            continue
        line = line.rstrip("\r")
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + " [...]"
        output.feed(f"{show_name(shown)}:{number}:{line}\n".encode("utf-8"))
        found += 1
    return found
