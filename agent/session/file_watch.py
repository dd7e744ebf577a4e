"""Live notice of external changes: the files the agent has read, and the git index/HEAD.

Only the folders holding those files are watched (not recursively), never the whole tree: a file
is watched through its folder because editors and ``git`` replace files by rename, which a watch
on the file itself would lose. ``FileWatcher`` runs ``watchfiles.watch`` in a daemon thread and
re-reads the set of files to watch about twice a second (restarting the OS watcher only when the
set of folders changes); without watchfiles it polls ``os.stat``.

Deduplication: the watcher only reports raw paths. Deciding whether a change is *external* (not
the agent's own write) and reporting it once is ``Agent.on_file_changed``'s job, through the same
``ReadFileStamps`` the loop checks after each tool call, so a change gives one reminder, whichever
of the two sees it first.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Callable, Iterable

#: Names inside the git dir whose change means "git state changed" (staging, commit, checkout).
GIT_FILES = ("index", "HEAD")


def find_git_dir(start: Path) -> Path | None:
    """Return the git dir of the repository containing ``start`` (``.git`` folder, or the folder a
    ``.git`` file points to in worktrees and submodules), resolved; ``None`` outside a repository
    (``git_repo.repository_dirs``: reads ``.git``, starts no process)."""
    from ..git_repo import repository_dirs

    dirs = repository_dirs(start)
    return dirs.git_dir if dirs is not None else None


def stamped_paths(stamps, root: Path) -> list[Path]:
    """Absolute paths of the files a ``reminders.ReadFileStamps`` remembers (``stamps.paths()``;
    relative ones are taken from ``root``). Call it under the owner's lock when another thread
    may change the stamps meanwhile (``Agent.stamps_lock``)."""
    return [(Path(root) / p) if not Path(p).is_absolute() else Path(p) for p in stamps.paths()]


class FileWatcher:
    """Watches files (a changing set) and a git dir in a daemon thread.

    ``paths()``: returns the files to watch now (absolute ``Path``s; called from the watcher thread
    about every ``rescan_s`` seconds). ``on_files_changed(paths)``: called with the absolute,
    resolved paths of watched files that changed (created, modified, deleted, replaced), each
    once per batch. ``on_git_changed()``: called when ``git_dir``'s index or HEAD changed. Batches
    are debounced by ``debounce_ms``. Callbacks run on the watcher thread; their exceptions are
    swallowed. ``start()`` / ``stop()``; ``polling`` forces the stat-polling fallback.
    """

    def __init__(self, paths: Callable[[], Iterable[Path]], *,
                 on_files_changed: Callable[[list[str]], None] | None = None,
                 on_git_changed: Callable[[], None] | None = None, git_dir: Path | None = None,
                 debounce_ms: int = 300, rescan_s: float = 0.5, polling: bool = False) -> None:
        self._paths = paths
        self.on_files_changed = on_files_changed
        self.on_git_changed = on_git_changed
        self.git_dir = Path(git_dir).resolve() if git_dir else None
        self.debounce_ms = debounce_ms
        self.rescan_s = rescan_s
        self.polling = polling
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: Set after each (re)start of the OS watcher: tests wait on it before changing files.
        self.ready = threading.Event()

    # ------------------------------------------------------------------------------ control
    def start(self) -> None:
        """Start the watcher thread (no-op when running)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="opencli-file-watch", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the thread and wait up to ``timeout`` seconds for it."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    # ------------------------------------------------------------------------------- targets
    def _targets(self) -> set[str]:
        out = set()
        try:
            for path in self._paths():
                try:
                    out.add(str(Path(path).resolve()))
                except (OSError, RuntimeError):
                    continue
        except Exception:  # a failing provider must not kill the thread
            pass
        return out

    def _folders(self, targets: set[str]) -> list[str]:
        folders = {os.path.dirname(t) for t in targets}
        if self.git_dir is not None:
            folders.add(str(self.git_dir))
        return sorted(f for f in folders if os.path.isdir(f))

    def _dispatch(self, changed: Iterable[str], targets: set[str]) -> None:
        files, git = [], False
        for raw in changed:
            path = os.path.abspath(raw)
            if path in targets and path not in files:
                files.append(path)
            elif self.git_dir is not None and os.path.dirname(path) == str(self.git_dir) \
                    and os.path.basename(path) in GIT_FILES:
                git = True
        try:
            if files and self.on_files_changed is not None:
                self.on_files_changed(files)
            if git and self.on_git_changed is not None:
                self.on_git_changed()
        except Exception:
            pass

    # ---------------------------------------------------------------------------------- run
    def _run(self) -> None:
        try:
            import watchfiles
        except ImportError:
            watchfiles = None
        if watchfiles is None or self.polling:
            self._poll()
            return
        while not self._stop.is_set():
            targets = self._targets()
            folders = self._folders(targets)
            if not folders:
                self.ready.set()
                self._stop.wait(self.rescan_s)
                continue
            try:
                for changes in watchfiles.watch(*folders, watch_filter=None, debounce=self.debounce_ms, step=50,
                                                stop_event=self._stop, rust_timeout=int(self.rescan_s * 1000),
                                                yield_on_timeout=True, recursive=False, raise_interrupt=False):
                    self.ready.set()
                    if changes:
                        self._dispatch((path for _change, path in changes), targets)
                    new_targets = self._targets()
                    if new_targets != targets:
                        targets = new_targets
                        if self._folders(targets) != folders:
                            break  # restart the OS watcher on the new folders
            except Exception:  # a folder vanished, too many watches...: fall back to polling
                self._poll()
                return

    def _poll(self) -> None:
        """Fallback: compare ``os.stat`` of the targets and git files every ``rescan_s`` seconds."""
        def snapshot(paths: Iterable[str]) -> dict[str, tuple[int, int, int] | None]:
            out = {}
            for p in paths:
                try:
                    st = os.stat(p)
                    out[p] = (st.st_mtime_ns, st.st_size, st.st_ino)
                except OSError:
                    out[p] = None
            return out

        git_files = [str(self.git_dir / name) for name in GIT_FILES] if self.git_dir else []
        targets = self._targets()
        before = snapshot([*targets, *git_files])
        self.ready.set()
        while not self._stop.wait(self.rescan_s):
            targets = self._targets()
            now = snapshot([*targets, *git_files])
            changed = [p for p, st in now.items() if p in before and before[p] != st]
            before = now
            if changed:
                self._dispatch(changed, targets)
