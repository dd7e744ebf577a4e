"""The sandbox a command runs in: its mode and what it may write or reach (``SandboxPolicy``),
and the supervisor arguments that carry it (``supervisor_args``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class SandboxMode(str, Enum):
    """How bash commands are confined: ``off`` (not at all), ``read-only`` (nothing writable but
    the private temp folder), ``workspace-write`` (also the workspace and the listed folders)."""

    OFF = "off"
    READ_ONLY = "read-only"
    WORKSPACE_WRITE = "workspace-write"


@dataclass(frozen=True)
class SandboxPolicy:
    """One sandbox: ``mode`` (never ``OFF``: no sandbox is ``None``), ``tmp_dir`` (the private
    temp folder, absolute; ``TMPDIR`` of the command), ``writable`` (absolute folders writable
    besides it: the workspace and the configured ones, empty in read-only mode), ``network``
    (TCP/UDP allowed), ``unix_sockets`` (``socket(AF_UNIX)`` allowed: daemons such as docker).
    ``available``: whether the kernel can apply it; ``reason`` says why not; ``can_ask``."""

    mode: SandboxMode
    tmp_dir: str
    writable: tuple[str, ...] = ()
    network: bool = False
    unix_sockets: bool = False
    available: bool = True
    reason: str = ""
    #: The user can be asked (TUI): a refused command may be offered to run again unsandboxed.
    can_ask: bool = False
    #: Folders kept in place (a repository's ``.git``: not renamed or removed) and paths kept
    #: read-only inside the writable ones (its ``config``, ``hooks``, ``info``): ``setup.git_protected``.
    pinned: tuple[str, ...] = ()
    readonly: tuple[str, ...] = ()
    #: The planning pass's sandbox (Plan mode), not Act mode's: wording of refusals.
    plan: bool = False

    def supervisor_args(self) -> list[str]:
        """The options ``agent.supervisor`` reads before ``--``: ``--sandbox``, one ``--write
        PATH`` per writable folder (the temp folder first), ``--pin PATH`` / ``--readonly PATH``
        per protected git path, ``--net`` and ``--unix`` when allowed."""
        args = ["--sandbox"]
        for path in (self.tmp_dir, *self.writable):
            args += ["--write", path]
        for path in self.pinned:
            args += ["--pin", path]
        for path in self.readonly:
            args += ["--readonly", path]
        if self.network:
            args.append("--net")
        if self.unix_sockets:
            args.append("--unix")
        return args

    def allowed_text(self) -> str:
        """Where the command may write, in words (for the model and the user)."""
        places = [*self.writable, f"the private temp folder {self.tmp_dir}"]
        return ", ".join(places)

    def label(self) -> str:
        """``read-only`` / ``workspace-write``, with ``, no network`` when it is denied."""
        return self.mode.value + ("" if self.network else ", no network")


def prompt_text(policy: SandboxPolicy | None) -> str:
    """What the permission prompt says about a command under ``policy`` (None: unsandboxed):
    ``runs sandboxed (workspace-write)``, ``runs sandboxed (read-only, no network)`` or
    ``runs unsandboxed``."""
    return f"runs sandboxed ({policy.label()})" if policy is not None else "runs unsandboxed"
