"""The git snapshot taken once at session start and shown in the system prompt (DESIGN.md 4).

``git_snapshot(cwd)`` asks the git command line for the working-tree root, the current branch, the
default branch, a capped ``git status --short`` and the last five commits; ``render_snapshot``
turns that into a labelled block for the prompt. The snapshot is frozen: it is taken once so the
prompt prefix stays cache-stable, and the block says it does not update.

Why the git CLI and not gitpython's ``Repo`` API: ``Repo.active_branch`` raises in a detached HEAD
(Aider #520) and its text decoding is strict (Aider #1802); ``Git.execute`` collects the whole
output with ``communicate()`` (a huge untracked tree must be cut after a few KB, Codex #35008) and
cannot drop inherited ``GIT_DIR`` / ``GIT_INDEX_FILE`` variables (set inside git hooks), which
would point every call at another repository. So each call here is one ``git`` process with:

- a deadline shared by the whole snapshot (``timeout_s``); on expiry the process group is killed;
- an output cap (``git status`` is read up to about 2 bytes per allowed character, then killed);
- a clean environment (no repository-relocating ``GIT_*`` variables, ``GIT_OPTIONAL_LOCKS=0`` so a
  status never takes the index lock, C locale, no pager, no prompt);
- bytes decoded as UTF-8 with ``backslashreplace`` (an undecodable byte shows as ``\\xe9``), then
  control characters replaced, so the text is always valid UTF-8 and safe for JSON and terminals.

``git_snapshot`` never raises: outside a repository it returns ``is_repo=False`` (``error`` is set
only when something other than "not a repository" went wrong: git missing, a timeout, an unsafe
repository owner). Repositories with no commits, detached HEADs, linked worktrees, submodules and
non-UTF-8 names all produce a complete snapshot.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from .git_safety import STATUS_FLAGS, safe_argv, safe_env
from .process import BoundedResult
from .process import run_bounded as _run_bounded

#: Commits listed in the snapshot.
RECENT_COMMITS = 5
#: Bytes read from every git call except status (branch names, shas, five subjects).
_SMALL_OUTPUT_CAP = 64 * 1024
#: Variables that make git look at another repository, index or object store than the cwd's.
_UNSAFE_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")
_NOT_A_REPO = ("not a git repository", "must be run in a work tree")


class GitCommit(BaseModel):
    """One commit: abbreviated sha and subject line."""

    model_config = ConfigDict(frozen=True)
    sha: str
    subject: str


class GitSnapshot(BaseModel):
    """What ``git_snapshot`` found, as display-safe text (valid UTF-8, no control characters).

    - ``is_repo``: the folder is inside a git working tree.
    - ``root``: absolute path of the working-tree root (never the git dir, also for submodules and
      linked worktrees); empty outside a repository.
    - ``branch``: ``"main"``; ``"HEAD (detached at 1a2b3c4)"`` in a detached HEAD; the branch name
      in a repository with no commits.
    - ``default_branch``: from ``origin/HEAD`` when set, else ``main`` or ``master`` when such a
      local branch exists, else the current branch; ``None`` when none applies (detached HEAD).
    - ``has_commits``: HEAD points at a commit.
    - ``status``: ``git status --short`` output, at most ``status_cap_chars`` characters of whole
      lines plus one ``... more entries omitted`` line; untracked folders are collapsed.
    - ``recent_commits``: the last five commits, newest first.
    - ``error``: what failed, in one line, or ``None``.
    """

    model_config = ConfigDict(frozen=True)
    is_repo: bool = False
    root: str = ""
    branch: str = ""
    default_branch: str | None = None
    has_commits: bool = False
    status: str = ""
    recent_commits: list[GitCommit] = Field(default_factory=list)
    error: str | None = None


class GitUnavailable(Exception):
    """A git call that could not run or did not finish in time (message in one line)."""


def clean_text(data: bytes | str) -> str:
    """Return ``data`` as display-safe text: bytes are decoded as UTF-8 with undecodable bytes shown
    as ``\\xNN``; lone surrogates become U+FFFD; control characters other than newline and tab
    become U+FFFD. The result always encodes to UTF-8."""
    text = data.decode("utf-8", "backslashreplace") if isinstance(data, bytes) else data
    return _UNSAFE_RE.sub("\ufffd", text)


def git_env() -> dict[str, str]:
    """The environment of the app's own git calls: ``git_safety.safe_env`` (no relocating or
    program-naming variables, C locale, no pager, no prompt, no optional locks)."""
    return safe_env()


def run_bounded(argv: list[str], cwd: Path, *, deadline: float, max_bytes: int,
                env: dict[str, str] | None = None) -> BoundedResult:
    """``agent.process.run_bounded`` (stdout capped at ``max_bytes``, killed at ``deadline``),
    raising ``GitUnavailable`` with a one-line reason when the program cannot be started."""
    try:
        return _run_bounded(argv, cwd, deadline=deadline, max_bytes=max_bytes, env=env)
    except FileNotFoundError as exc:
        missing = "git is not installed" if exc.filename == argv[0] else f"folder not found: {cwd}"
        raise GitUnavailable(missing) from None
    except OSError as exc:
        raise GitUnavailable(f"cannot run {argv[0]}: {exc.strerror or exc}") from None


# The snapshot keeps its own bounded git CLI instead of gitpython: see the module docstring
# (detached HEAD, strict decoding, unbounded output, inherited GIT_DIR).
class _Git:
    """Runs git commands in one folder against one shared deadline."""

    def __init__(self, cwd: Path, deadline: float, timeout_s: float) -> None:
        self.cwd = cwd
        self.deadline = deadline
        self.timeout_s = timeout_s
        self.env = git_env()
        self._safe: list[str] | None = None  # the safe argv prefix, listed once per snapshot

    def run(self, *args: str, max_bytes: int = _SMALL_OUTPUT_CAP) -> BoundedResult:
        """Run ``git ARGS``; raises ``GitUnavailable`` when it cannot start or runs out of time."""
        if time.monotonic() >= self.deadline:
            raise GitUnavailable(f"git did not answer within {self.timeout_s:g} s")
        if self._safe is None:
            self._safe = safe_argv(self.cwd, [], deadline=self.deadline)
        argv = [*self._safe, *args]
        result = run_bounded(argv, self.cwd, deadline=self.deadline, max_bytes=max_bytes, env=self.env)
        if result.timed_out and not result.stdout:
            raise GitUnavailable(f"git {args[0]} did not answer within {self.timeout_s:g} s")
        return result

    def line(self, *args: str) -> str | None:
        """First output line of a successful ``git ARGS`` as text (undecodable bytes escaped), or None."""
        result = self.run(*args)
        if result.returncode != 0 or result.timed_out:
            return None
        text = result.stdout.decode("utf-8", "backslashreplace").strip()
        return text.splitlines()[0] if text else None


def git_snapshot(cwd: Path | str, *, timeout_s: float = 5.0, status_cap_chars: int = 2000) -> GitSnapshot:
    """Take the session-start git snapshot of the repository containing ``cwd``.

    ``timeout_s`` is the wall-clock budget in seconds for all git calls together (each is killed
    when it runs out, so the call returns within about that time); ``status_cap_chars`` caps the
    status listing (characters of whole lines). Never raises; see ``GitSnapshot`` for the fields.
    """
    deadline = time.monotonic() + timeout_s
    folder = Path(cwd)
    if not folder.is_dir():
        return GitSnapshot(error=clean_text(f"not a folder: {folder}"))
    git = _Git(folder, deadline, timeout_s)
    try:
        top = git.run("rev-parse", "--show-toplevel")
    except GitUnavailable as exc:
        return GitSnapshot(error=clean_text(str(exc)))
    if top.timed_out:
        return GitSnapshot(error=f"git rev-parse did not answer within {timeout_s:g} s")
    if top.returncode != 0:
        message = clean_text(top.stderr).strip()
        if any(marker in message for marker in _NOT_A_REPO):
            return GitSnapshot()
        return GitSnapshot(error=_one_line(message) or "git rev-parse failed")
    root_text = os.fsdecode(top.stdout.rstrip(b"\n"))
    git.cwd = Path(root_text)  # status paths relative to the root, whatever the cwd was
    facts: dict = {"is_repo": True, "root": clean_text(root_text)}
    errors: list[str] = []
    for name, part in (("branch", _branch_facts), ("commits", _commit_facts),
                       ("default branch", _default_branch_facts), ("status", _status_facts)):
        try:
            part(git, facts, status_cap_chars)
        except GitUnavailable as exc:
            errors.append(f"{name}: {exc}")
    if errors:
        facts["error"] = clean_text("; ".join(errors))
    return GitSnapshot(**facts)


def _one_line(text: str) -> str:
    """The most telling line of git's stderr (its ``fatal:``/``error:`` line), at most 300 characters."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    main = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return (main or lines or [""])[0][:300]


def _branch_facts(git: _Git, facts: dict, _cap: int) -> None:
    ref = git.line("symbolic-ref", "-q", "HEAD")
    sha = git.line("rev-parse", "--short", "-q", "--verify", "HEAD")
    if ref is not None:
        branch = ref.removeprefix("refs/heads/")
    elif sha is not None:
        branch = f"HEAD (detached at {sha})"
    else:
        branch = "HEAD (unknown)"
    facts["branch"] = clean_text(branch)
    facts["has_commits"] = sha is not None


def _commit_facts(git: _Git, facts: dict, _cap: int) -> None:
    if not facts.get("has_commits"):
        return
    result = git.run("log", f"-n{RECENT_COMMITS}", "--no-color", "--no-show-signature", "--format=%h%x00%s")
    if result.returncode != 0:
        raise GitUnavailable(_one_line(clean_text(result.stderr)) or "git log failed")
    commits = []
    for raw in result.stdout.splitlines():
        sha, _, subject = raw.partition(b"\x00")
        if sha:
            commits.append(GitCommit(sha=clean_text(sha), subject=clean_text(subject)))
    facts["recent_commits"] = commits


def _default_branch_facts(git: _Git, facts: dict, _cap: int) -> None:
    result = git.run("for-each-ref", "--format=%(refname)%00%(symref)",
                     "refs/remotes/origin/HEAD", "refs/heads/main", "refs/heads/master")
    refs: dict[str, str] = {}
    for raw in result.stdout.splitlines():
        name, _, target = raw.decode("utf-8", "backslashreplace").partition("\x00")
        refs[name] = target
    origin_head = refs.get("refs/remotes/origin/HEAD", "")
    if origin_head.startswith("refs/remotes/origin/"):
        default = origin_head.removeprefix("refs/remotes/origin/")
    elif "refs/heads/main" in refs:
        default = "main"
    elif "refs/heads/master" in refs:
        default = "master"
    elif facts.get("branch") and not facts["branch"].startswith("HEAD ("):
        default = facts["branch"]
    else:
        default = None
    facts["default_branch"] = clean_text(default) if default else None


def _status_facts(git: _Git, facts: dict, cap_chars: int) -> None:
    # Never -uall: untracked folders stay one line each. About 2 bytes per allowed character is
    # enough for ASCII and Latin paths; git is killed as soon as that much has been read.
    result = git.run("status", *STATUS_FLAGS, "--short", "--untracked-files=normal", max_bytes=max(2 * cap_chars, 256))
    stopped = result.cut or result.timed_out
    if result.returncode != 0 and not stopped:
        raise GitUnavailable(_one_line(clean_text(result.stderr)) or "git status failed")
    facts["status"] = cap_status(result.stdout, cap_chars, complete=not stopped)
    if result.timed_out:
        raise GitUnavailable(f"git status did not finish within {git.timeout_s:g} s; the listing is partial")


def cap_status(raw: bytes, cap_chars: int, *, complete: bool) -> str:
    """Return status lines from ``raw`` fitting in ``cap_chars`` characters (whole lines only; a
    single over-long first line is cut), plus ``... N more entries omitted`` when lines were left
    out. When ``complete`` is false the output was cut short, so the count is unknown and the line
    says so. A partial last line of incomplete output is dropped."""
    lines = raw.splitlines()
    if not complete and raw and not raw.endswith(b"\n") and lines:
        lines.pop()
    kept: list[str] = []
    used = 0
    for raw_line in lines:
        line = clean_text(raw_line)
        cost = len(line) + (1 if kept else 0)
        if used + cost > cap_chars:
            if not kept:
                kept.append(line[:cap_chars])
            break
        kept.append(line)
        used += cost
    omitted = len(lines) - len(kept)
    text = "\n".join(kept)
    if not complete:
        more = f"at least {omitted} " if omitted else ""
        return text + f"\n... {more}more entries omitted (listing stopped early)"
    if omitted:
        return text + f"\n... {omitted} more entries omitted"
    return text


def render_snapshot(snap: GitSnapshot) -> str:
    """Return the snapshot as a labelled block for the system prompt and the UI, or ``""`` when
    ``snap`` is not a repository. The text is valid UTF-8 and says it was taken at session start."""
    if not snap.is_repo:
        return ""
    lines = ["Git snapshot taken at session start (it does not update; run git to see the current state):",
             f"Repository root: {snap.root}",
             f"Current branch: {snap.branch or 'unknown'}",
             f"Default branch: {snap.default_branch or 'unknown'}"]
    lines.append("Status (git status --short):")
    lines.append(snap.status if snap.status else "(clean)")
    lines.append("Recent commits:")
    if snap.recent_commits:
        lines += [f"{c.sha} {c.subject}" for c in snap.recent_commits]
    else:
        lines.append("(no commits yet)" if not snap.has_commits else "(unavailable)")
    if snap.error:
        lines.append(f"(part of the snapshot is missing: {snap.error})")
    return clean_text("\n".join(lines))
