"""The sandbox part of ``AgentSession``: which OS sandbox bash commands run in, in Act mode and in
the planning pass, from ``[sandbox]`` and the permission mode (``agent.sandbox``)."""

from __future__ import annotations

import dataclasses

import atexit
import shutil
import tempfile
from pathlib import Path

from ..config.settings import PermissionMode
from ..sandbox import SandboxMode, SandboxPolicy, SandboxSupport, probe, unavailable_notice
from ..sandbox.setup import choose_policy
from ..session.journal import sessions_dir


class SessionSandbox:
    """The sandbox part of ``AgentSession`` (``settings``, ``workspace``, ``session_id``,
    ``interactive``, ``agent`` come from the session)."""

    _sandbox_tmp: Path | None = None
    _sandbox_notices: list[str] | None = None

    @property
    def sandbox_support(self) -> SandboxSupport:
        """What this machine can do (``sandbox.probe``, checked once per process)."""
        return probe()

    def _sandbox_tmp_dir(self) -> Path:
        """The session's private temp folder (0700, under the system temp folder, removed at
        exit): the only folder a read-only command may write. Never the journal's folder."""
        if self._sandbox_tmp is None:
            path = Path(tempfile.mkdtemp(prefix=f"opencli-{self.session_id[:12]}-"))
            atexit.register(shutil.rmtree, path, True)
            self._sandbox_tmp = path
        return self._sandbox_tmp

    def _policy(self, mode: SandboxMode) -> SandboxPolicy | None:
        config = self.settings.sandbox
        policy, notices = choose_policy(
            mode, workspace=self.workspace, tmp_dir=self._sandbox_tmp_dir(), writable=list(config.writable),
            network=config.network, unix_sockets=config.unix_sockets, protected=[sessions_dir(self.workspace)],
            support=self.sandbox_support, can_ask=self.interactive)
        if self._sandbox_notices is None:
            self._sandbox_notices = []
        self._sandbox_notices += [n for n in notices if n not in self._sandbox_notices]
        return policy

    def act_sandbox(self) -> SandboxPolicy | None:
        """The sandbox of Act mode's commands (None = unsandboxed): ``sandbox.mode`` when it names
        one; ``auto``: read-only in the read-only permission mode, else workspace-write, where
        the sandbox is available (unsandboxed where it is not)."""
        setting = self.settings.sandbox.mode
        if setting == "off":
            return None
        if setting == "auto":
            if not self.sandbox_support.available:
                return None
            read_only = PermissionMode(self.settings.permission_mode) == PermissionMode.READ_ONLY
            return self._policy(SandboxMode.READ_ONLY if read_only else SandboxMode.WORKSPACE_WRITE)
        return self._policy(SandboxMode(setting))

    def plan_sandbox(self) -> SandboxPolicy | None:
        """The planning pass's sandbox: read-only where available and ``sandbox.mode`` is not
        ``off`` (None: Plan mode has no bash)."""
        if self.settings.sandbox.mode == "off" or not self.sandbox_support.available:
            return None
        policy = self._policy(SandboxMode.READ_ONLY)
        return dataclasses.replace(policy, plan=True, can_ask=False) if policy is not None else None

    def apply_sandbox(self) -> None:
        """Hand the current policies to the running loop (after a permission mode change)."""
        if getattr(self, "agent", None) is not None:
            self.agent.config.sandbox = self.act_sandbox()
            self.agent.config.plan_sandbox = self.plan_sandbox()

    def sandbox_label(self, plan: bool = False) -> str:
        """The status bar's words for the sandbox of Act mode's commands (``plan``: of the
        planning pass): ``sandbox: workspace-write``, ``sandbox: read-only``, ``sandbox off``
        (chosen), ``unsandboxed`` (none available here), ``sandbox unavailable`` (asked for, so
        commands are refused), ``no bash`` (a planning pass without a sandbox)."""
        policy = self.plan_sandbox() if plan else self.act_sandbox()
        if policy is not None:
            return f"sandbox: {policy.mode.value}" if policy.available else "sandbox unavailable"
        if plan:
            return "no bash"
        return "sandbox off" if self.settings.sandbox.mode == "off" else "unsandboxed"

    def sandbox_notices(self) -> list[str]:
        """Start-up notices: why the sandbox is unavailable, folders kept read-only."""
        notices = []
        setting = self.settings.sandbox.mode
        if setting != "off":
            notice = unavailable_notice(self.sandbox_support)
            if notice and setting != "auto":  # asked for by name: fail closed
                notice = (f"Sandbox unavailable: {self.sandbox_support.reason}. sandbox mode {setting} was asked "
                          "for, so bash commands are refused; --sandbox off runs them unsandboxed.")
            if notice:
                notices.append(notice)
            self.act_sandbox()
            self.plan_sandbox()
            notices += self._sandbox_notices or []
        return notices
