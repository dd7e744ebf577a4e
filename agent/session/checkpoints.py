"""Per-turn file checkpoints and undo.

Before a turn's first change to a file (a mutating tool call with a ``path`` argument), the file's
current bytes and permission bits, or the fact that it did not exist, are saved under ``root``
(the session uses ``<user data>/sessions/<project>/checkpoints/<session_id>/<turn>/``, beside the
journals, where no sandboxed command may write): one blob per file plus ``manifest.json``. Undo
restores only entries inside the workspace and outside ``.git/``, from blobs in the turn's
folder, whatever a manifest says (a manifest is data, not instructions). ``undo_last_turn`` puts those bytes back (exactly:
CRLF, encodings and binary content are untouched), deletes files the turn created, and removes the
checkpoint, so a second undo goes one turn further back. Git history is never touched.

Not tracked: what bash commands change (the turn is marked so the undo message says so), and
folders a turn created (left in place). Files over ``max_file_bytes`` are not saved (warning).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from pathlib import Path
from typing import Any

from ..tools.names import parse_name, show_name

MANIFEST = "manifest.json"
#: Default size limit for one checkpointed file (bytes).
MAX_FILE_BYTES = 64 * 1024 * 1024
BASH_NOTE = "note: bash commands ran in that turn; what they changed is not tracked and was not undone"


class Checkpoints:
    """Checkpoints of one session's turns.

    ``start_turn()`` at each user turn; ``before_tool(capability, arguments)`` before each tool
    call runs (mutating calls with a ``path`` save that file once per turn; exec calls mark the
    turn); ``undo_last_turn()`` restores the newest checkpointed turn. Never raises for file-system
    errors: ``before_*`` return a warning string instead, ``undo_last_turn`` reports per file.
    """

    def __init__(self, workspace: Path, session_id: str, root: Path | None = None,
                 max_file_bytes: int = MAX_FILE_BYTES) -> None:
        self.workspace = Path(workspace).resolve()
        self.root = Path(root) if root else self.workspace / ".opencli" / "checkpoints" / session_id
        self.max_file_bytes = max_file_bytes
        self._turn = max(self.turns(), default=0)
        self._manifest: dict[str, Any] | None = None  # this turn's, once something was saved
        self._saved: set[str] = set()

    # ----------------------------------------------------------------------------- recording
    def turns(self) -> list[int]:
        """Numbers of the turns that have a checkpoint on disk, oldest first."""
        try:
            return sorted(int(p.name) for p in self.root.iterdir() if p.name.isdigit() and (p / MANIFEST).is_file())
        except OSError:
            return []

    def start_turn(self) -> None:
        """Begin a new turn: later changes go to a new checkpoint (created lazily)."""
        self._turn = max(self._turn, max(self.turns(), default=0)) + 1
        self._manifest = None
        self._saved = set()

    def before_tool(self, capability: Any, arguments: Any) -> str | None:
        """Hook for the loop, right before a tool call executes. ``capability``: the tool's
        ``Capability`` (or its value); ``arguments``: the decoded argument object. Returns a
        warning for the user when a needed checkpoint could not be saved, else ``None``."""
        kind = getattr(capability, "value", capability)
        if kind == "exec":
            return self.note_exec()
        if kind == "mutating" and isinstance(arguments, dict) and isinstance(arguments.get("path"), str):
            return self.before_change(arguments["path"])
        return None

    def note_exec(self) -> str | None:
        """Mark the current turn as having run a shell command (not undoable)."""
        try:
            manifest = self._ensure_manifest()
            if not manifest["exec_ran"]:
                manifest["exec_ran"] = True
                self._write_manifest()
        except OSError as exc:
            return f"checkpoint not saved: {exc}"
        return None

    def before_change(self, path: str) -> str | None:
        """Save ``path`` (relative to the workspace or absolute) as it is now, once per turn.
        Folders and special files are skipped. Returns a warning, or ``None`` when saved/skipped."""
        target = self._resolve(path)
        if target is None:
            return None
        key = str(target)
        if key in self._saved:
            return None
        self._saved.add(key)
        entry: dict[str, Any] = {"path": key, "existed": False, "mode": None, "blob": None}
        try:
            st = os.stat(target)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            return f"checkpoint of {self._show(key)} not saved: {exc}"
        try:
            manifest = self._ensure_manifest()
            if st is not None:
                if not stat.S_ISREG(st.st_mode):
                    return None
                entry.update(existed=True, mode=stat.S_IMODE(st.st_mode))
                if st.st_size > self.max_file_bytes:
                    entry["skipped"] = "too large"
                    manifest["files"].append(entry)
                    self._write_manifest()
                    return (f"{self._show(key)} is larger than {self.max_file_bytes} bytes: no checkpoint, "
                            "/undo cannot restore it")
                blob = f"{len(manifest['files'])}.bin"
                data = target.read_bytes()
                blob_path = self._turn_dir() / blob
                fd = os.open(blob_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                entry["blob"] = blob
            manifest["files"].append(entry)
            self._write_manifest()
        except OSError as exc:
            return f"checkpoint of {self._show(key)} not saved: {exc}"
        return None

    def after_tool(self, capability: Any, arguments: Any) -> None:
        """Hook for the loop, right after a mutating tool call: record a digest of the file as the
        agent left it, so ``/undo`` can tell when someone changed it afterwards."""
        kind = getattr(capability, "value", capability)
        if kind != "mutating" or not isinstance(arguments, dict) or not isinstance(arguments.get("path"), str):
            return
        target = self._resolve(arguments["path"])
        if target is None or self._manifest is None:
            return
        for entry in self._manifest["files"]:
            if entry["path"] == str(target):
                entry["after"] = _digest(target)
                try:
                    self._write_manifest()
                except OSError:
                    pass
                return

    # ---------------------------------------------------------------------------------- undo
    def undo_last_turn(self) -> list[str]:
        """Restore the files the newest checkpointed turn changed and drop that checkpoint.

        Returns one line per file (``restored PATH``, ``deleted PATH (created by that turn)``,
        ``not restored: PATH (reason)``), plus ``BASH_NOTE`` when the turn ran shell commands, or
        ``["nothing to undo"]``. Paths are shown relative to the workspace.
        """
        turns = self.turns()
        if not turns:
            return ["nothing to undo"]
        turn_dir = self.root / str(turns[-1])
        try:
            manifest = json.loads((turn_dir / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            shutil.rmtree(turn_dir, ignore_errors=True)
            return [f"not restored: the checkpoint of turn {turns[-1]} is unreadable ({exc})"]
        lines = [self._restore(entry, turn_dir) for entry in reversed(manifest.get("files", []))]
        lines.reverse()
        if manifest.get("exec_ran"):
            lines.append(BASH_NOTE)
        shutil.rmtree(turn_dir, ignore_errors=True)
        if turns[-1] == self._turn:  # undoing the turn in progress (or just finished): start afresh
            self._manifest = None
            self._saved = set()
        return lines or ["nothing to undo"]

    def _restore(self, entry: dict[str, Any], turn_dir: Path) -> str:
        from ..tools.write import atomic_write

        path = Path(str(entry.get("path", "")))
        shown = self._show(str(entry.get("path", "")))
        refused = self._unsafe_entry(entry, path)
        if refused:
            return f"not restored: {shown} ({refused})"
        try:
            if entry.get("skipped"):
                return f"not restored: {shown} ({entry['skipped']})"
            if "after" in entry and _digest(path) != entry["after"]:
                # Someone (the user, another tool) changed it after the agent: never overwrite that.
                return f"not restored: {shown} (changed since that turn; your later edits are kept)"
            if not entry.get("existed"):
                if path.is_file() or path.is_symlink():
                    path.unlink()
                    return f"deleted {shown} (created by that turn)"
                return f"unchanged {shown} (created by that turn, already gone)"
            data = (turn_dir / entry["blob"]).read_bytes()
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, data)
            if entry.get("mode") is not None:
                os.chmod(path, entry["mode"])
            return f"restored {shown}"
        except OSError as exc:
            return f"not restored: {shown} ({exc})"

    # ------------------------------------------------------------------------------- helpers
    def _unsafe_entry(self, entry: dict[str, Any], path: Path) -> str:
        """Why undo must not act on ``entry`` ('' when it may): its path outside the workspace
        (after resolving links), under a ``.git`` folder, or a blob name that is not a plain file
        name of the turn's folder."""
        if not path.is_absolute():
            return "not an absolute path in the checkpoint"
        try:
            parts = path.parent.resolve().joinpath(path.name).relative_to(self.workspace).parts
        except (ValueError, OSError, RuntimeError):
            return "outside the workspace: refused"
        if ".git" in parts or not parts:
            return "under .git/: refused"
        blob = entry.get("blob")
        if entry.get("existed") and not entry.get("skipped") and (not isinstance(blob, str) or Path(blob).name != blob or blob in ("", ".", "..")):
            return "bad blob name in the checkpoint: refused"
        return ""

    def _resolve(self, path: str) -> Path | None:
        if not path.strip() or "\x00" in path:
            return None
        candidate = Path(parse_name(path)).expanduser()  # the file the tool opens
        if not candidate.is_absolute():
            candidate = self.workspace / candidate
        try:
            return candidate.resolve()
        except (OSError, RuntimeError):
            return None

    def _show(self, path: str) -> str:
        try:
            return show_name(Path(path).relative_to(self.workspace).as_posix())
        except ValueError:
            return show_name(path)

    def _turn_dir(self) -> Path:
        from ..secrets.private_files import private_dir

        return private_dir(self.root / str(self._turn), self.root)

    def _ensure_manifest(self) -> dict[str, Any]:
        if self._manifest is None:
            self._manifest = {"turn": self._turn, "time": time.time(), "exec_ran": False, "files": []}
            self._write_manifest()
        return self._manifest

    def _write_manifest(self) -> None:
        from ..tools.write import atomic_write

        path = self._turn_dir() / MANIFEST
        atomic_write(path, json.dumps(self._manifest).encode("ascii"))
        os.chmod(path, 0o600)


def _digest(path: Path) -> str | None:
    """SHA-256 of the file's bytes, or ``None`` when it does not exist or cannot be read."""
    import hashlib

    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None
