"""Files and folders only the user can read: every file the app writes for itself is 0600 in
folders that are 0700 (files the tools write in the workspace keep their own modes)."""

from __future__ import annotations

import os
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: Path, root: Path | None = None) -> Path:
    """Create ``path`` and its missing parents with mode 0700 and return it.

    Folders that already existed keep their mode, except ``path`` itself and, when ``root`` is
    given, every folder from ``root`` down to ``path`` (the app's own tree, e.g. the user data
    dir's ``opencli``), which are set to 0700. Raises ``OSError`` when a folder cannot be made."""
    path = Path(path)
    missing = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            pass
    chain = [path]
    if root is not None:
        root = Path(root)
        chain = [p for p in [path, *path.parents] if p == root or root in p.parents]
    for folder in {*chain, *missing}:
        try:
            if folder.is_dir() and (folder.stat().st_mode & 0o777) != DIR_MODE:
                os.chmod(folder, DIR_MODE)
        except OSError:
            pass
    return path


def open_private(path: Path, flags: int = os.O_WRONLY | os.O_CREAT | os.O_APPEND, root: Path | None = None) -> int:
    """Open ``path`` (its folder made private first, see ``private_dir``) with ``flags`` and mode
    0600, set 0600 on an existing file too, and return the descriptor. Raises ``OSError``."""
    path = Path(path)
    private_dir(path.parent, root)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    except OSError:
        pass
    return fd


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write less). Raises ``OSError``."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def close_quietly(fd: int) -> None:
    """Close ``fd``, ignoring an error (the descriptor is gone either way)."""
    try:
        os.close(fd)
    except OSError:
        pass


def write_private_text(path: Path, text: str, root: Path | None = None) -> None:
    """Replace ``path``'s content with ``text`` (UTF-8) atomically, as a 0600 file. Raises
    ``OSError``."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, root)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)
