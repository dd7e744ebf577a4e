"""The ``grep`` tool: search file contents with a regular expression.

Runs ripgrep (``rg``, a dependency: the ``ripgrep`` wheel puts the binary in the environment's
scripts folder; ``find_ripgrep`` looks there, in the package's recorded files and on PATH) as a
bounded subprocess through ``agent.process``: its output goes through the bounded truncator, and
Esc (``ctx.cancel``) or the call's time limit (``ctx.time_limit_s``) kills its process tree.

Where rg is missing or cannot run, a pure-Python fallback walks the tree itself: it skips ``.git``,
``.opencli``, dependency/cache folders (``node_modules``, ``.venv`` ...), binary files (a NUL byte
in the first 8 KB) and files over 50 MB, and honours the ``.gitignore`` files of the searched
folders (git's pattern rules through pathspec; no global excludes). Its regex engine is RE2
(``google-re2``), which matches in time linear in the input, so no pattern can make it run for
ever; it checks cancel and the time limit between lines. Patterns RE2 does not support
(backreferences, lookaround) are refused with a clear error rather than handed to Python's
backtracking ``re``. (A killable subprocess running ``re`` was the alternative; RE2 keeps the
fallback in-process, cheap, and has the same syntax family as ripgrep's engine.)

Output is ``path:line:text`` per match, paths relative to the workspace, sorted by path.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import sys
import sysconfig
import time
from importlib import metadata
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
#: Time limit of one search when the context gives none (seconds).
RG_TIMEOUT_S = 120.0
#: Lines the fallback searches between two checks of cancel and the time limit.
_CHECK_EVERY_LINES = 2000
#: What RE2 refuses that Python's ``re`` accepts, named for the error message.
_RE2_UNSUPPORTED = (
    (re.compile(r"\\[1-9]|\(\?P=|\\k<"), "backreferences"),
    (re.compile(r"\(\?<?[=!]"), "lookahead/lookbehind"),
)


@functools.lru_cache(maxsize=1)
def find_ripgrep() -> str | None:
    """Return the path of an executable ``rg``, or None.

    Looked for in this order: the scripts folder of the running environment (where the
    ``ripgrep`` wheel installs it), the ``ripgrep`` distribution's recorded files, then PATH."""
    candidates = [Path(sysconfig.get_path("scripts")) / "rg", Path(sys.executable).parent / "rg"]
    try:
        for file in metadata.distribution("ripgrep").files or ():
            if file.name in ("rg", "rg.exe"):
                candidates.append(Path(str(file.locate())))
    except metadata.PackageNotFoundError:
        pass
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("rg")


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
        """``use_ripgrep``: ``None`` = use rg when found (``find_ripgrep``); ``False`` forces the
        Python fallback."""
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

        Raises ``ToolError`` for a path outside the workspace or missing, an invalid regex (or,
        in the fallback, one RE2 cannot run), or a search over ``ctx.time_limit_s`` seconds.
        """
        target = resolve_in_workspace(args.path or ".", ctx)
        if not target.exists():
            raise ToolError(f"path not found: {args.path}")
        rg = find_ripgrep() if self.use_ripgrep is not False else None
        limit_s = ctx.time_limit_s or RG_TIMEOUT_S
        output = BoundedOutput.for_context(ctx)
        matches = None
        if rg:
            matches = _search_rg(rg, args, target, ctx, output, limit_s)
            if matches is None:  # the binary could not run: the fallback searches instead
                output.finish()
                output = BoundedOutput.for_context(ctx)
                rg = None
        if matches is None:
            matches = _search_python(args, target, ctx, output, time.monotonic() + limit_s)
        if ctx.cancel.is_set():
            output.finish()
            return ToolOutput(text="[cancelled by user]", is_error=True, outcome="cancelled")
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


def _search_rg(rg: str, args: GrepArgs, target: Path, ctx: ToolContext, output: BoundedOutput,
               limit_s: float) -> int | None:
    """Run ripgrep into ``output`` for at most ``limit_s`` seconds; return the number of matching
    lines (approximate: lines fed), or None when the binary cannot be executed (wrong platform,
    not executable). Raises ``ToolError`` on a bad pattern, a failure or the time limit."""
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
        proc = run_streaming(argv, cwd=workspace, sink=sink, cancel=ctx.cancel, timeout_s=limit_s, env=command_env())
    except OSError:
        return None
    if proc.timed_out:
        raise ToolError(_over_limit(limit_s))
    if proc.cancelled:
        return lines
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


def _over_limit(limit_s: float) -> str:
    return f"stopped: over the {limit_s:g} s limit of grep; narrow it with `path` or `glob`"


def compile_re2(pattern: str) -> Any:
    """Compile ``pattern`` with RE2 (linear-time matching). Raises ``ToolError`` naming what RE2
    does not support (backreferences, lookaround), for an invalid pattern, or when google-re2 is
    not installed."""
    try:
        import re2  # google-re2
    except ImportError:
        raise ToolError("grep cannot search: neither ripgrep nor google-re2 is installed "
                        "(pip install 'ripgrep>=14.1,<15' google-re2)") from None
    options = re2.Options()
    options.log_errors = False  # RE2 would print parse errors on stderr (the TUI's terminal)
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        detail = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        for detector, feature in _RE2_UNSUPPORTED:
            if detector.search(pattern):
                raise ToolError(f"unsupported regular expression {pattern!r}: {feature} are not supported "
                                "(the search engine guarantees linear time); rewrite the pattern without "
                                "them") from None
        raise ToolError(f"invalid regular expression {pattern!r}: {detail}") from None


def _search_python(args: GrepArgs, target: Path, ctx: ToolContext, output: BoundedOutput,
                   deadline: float) -> int:
    """The fallback search, until the monotonic ``deadline``; returns the number of matching
    lines fed to ``output``. Raises ``ToolError`` (see ``compile_re2``, and past the deadline)."""
    regex = compile_re2(args.pattern)
    accept = _file_filter(args.glob)
    matches = 0
    stop = _Stop(ctx, deadline)
    candidates = []
    for count, path in enumerate(_candidate_files(target, ctx), start=1):
        if count % 500 == 0 and stop():
            return 0
        candidates.append((display_path(path, ctx), path))
    candidates.sort()
    for rel_ws, path in candidates:
        if stop():
            break
        rel_search = path.name if target.is_file() else os.path.relpath(path, target).replace(os.sep, "/")
        if not accept(rel_ws, rel_search):
            continue
        matches += _search_file(path, rel_ws, regex, output, stop)
    return matches


class _Stop:
    """Whether the fallback must stop: cancel set (returns True) or the deadline passed (raises
    ``ToolError``)."""

    def __init__(self, ctx: ToolContext, deadline: float) -> None:
        self.cancel = ctx.cancel
        self.deadline = deadline
        self.limit_s = ctx.time_limit_s or RG_TIMEOUT_S

    def __call__(self) -> bool:
        if self.cancel.is_set():
            return True
        if time.monotonic() >= self.deadline:
            raise ToolError(_over_limit(self.limit_s))
        return False


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


def _search_file(path: Path, shown: str, regex: Any, output: BoundedOutput, stop: Callable[[], bool]) -> int:
    """Feed ``shown:line:text`` for every matching line of one file; return how many matched."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return 0
        data = path.read_bytes()
    except OSError:
        return 0
    if b"\x00" in data[:BINARY_CHECK_BYTES]:
        return 0
    text = data.decode("utf-8", "replace")  # what the engine matches (it takes valid text only)
    raw_lines = data.split(b"\n")  # what is shown: bytes that are not UTF-8 become \xNN in the output
    found = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if number % _CHECK_EVERY_LINES == 0 and stop():
            break
        if regex.search(line) is None:
            continue
        raw = raw_lines[number - 1].rstrip(b"\r")
        if len(line) > MAX_LINE_CHARS:
            raw = line.rstrip("\r")[:MAX_LINE_CHARS].encode("utf-8") + b" [...]"
        output.feed(f"{show_name(shown)}:{number}:".encode("utf-8") + raw + b"\n")
        found += 1
    return found
