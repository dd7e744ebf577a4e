"""The workspace and the app's own folder in it.

The app keeps its files under ``<workspace>/.opencli/`` (saved tool outputs in ``tmp/``). In a git
repository that folder is added to ``.git/info/exclude`` (the repository's common git dir, so it
works in linked worktrees and submodules too), never to the user's ``.gitignore``.
"""

from __future__ import annotations

from pathlib import Path

APP_FOLDER = ".opencli"
_EXCLUDE_LINE = ".opencli/"


def git_common_dir(workspace: Path) -> Path | None:
    """Return the absolute common git dir of the repository containing ``workspace``, or None
    outside a repository (``git_repo.repository_dirs``: reads ``.git``, starts no process)."""
    from ..git_repo import repository_dirs

    dirs = repository_dirs(workspace)
    return dirs.common_dir if dirs is not None else None


def ensure_app_folder_excluded(workspace: Path) -> bool:
    """Add ``/.opencli/`` to ``info/exclude`` of the workspace's repository when missing.

    Returns True when the line is present afterwards; False outside a repository or when the file
    cannot be written (never raises).
    """
    common = git_common_dir(workspace)
    if common is None:
        return False
    exclude = common / "info" / "exclude"
    try:
        existing = exclude.read_text(encoding="utf-8", errors="replace") if exclude.exists() else ""
        if any(line.strip() in (_EXCLUDE_LINE, ".opencli/", ".opencli", "/.opencli") for line in existing.splitlines()):
            return True
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with exclude.open("a", encoding="utf-8") as fh:
            if existing and not existing.endswith("\n"):
                fh.write("\n")
            fh.write(f"# opencli-tui's own folder\n{_EXCLUDE_LINE}\n")
        return True
    except OSError:
        return False
