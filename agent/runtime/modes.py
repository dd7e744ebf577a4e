"""The session's modes: the permission mode and rules (with the journaled "allow for this session"
answers), and Plan/Act mode, journaled as ``mode`` records and restored on resume (never looser).
"""

from __future__ import annotations

import time

from ..config.settings import PermissionMode
from ..session.records import ModeRecord, PermissionGrantRecord


class SessionModes:
    """The modes part of ``AgentSession``."""

    @property
    def permission_rules(self):
        """The ``[permissions]`` allow/deny rules plus this session's "allow for this session"
        answers (``permissions.rules.PermissionRules``); kept when the model changes. Rules come
        from this run's settings; a resumed session adds back its journaled answers (never its
        old rules or mode), and each new answer is journaled as a ``permission_grant`` record."""
        if self._permission_rules is None:
            from ..permissions.rules import PermissionRules

            rules = PermissionRules.from_settings(self.settings)
            if self.resumed is not None:
                rules.restore(self.resumed.grants)
            rules.on_grant = lambda grant: self.journal.append(PermissionGrantRecord.of(grant, time.time()))
            self._permission_rules = rules
        return self._permission_rules

    def set_permission_mode(self, mode: "PermissionMode | str") -> PermissionMode:
        """Switch the permission mode now (the running loop's config and the settings), journal
        it, and return it."""
        mode = PermissionMode(mode)
        self.settings.permission_mode = mode
        if self.agent is not None:
            self.agent.config.permission_mode = mode
        self.apply_sandbox()  # the read-only permission mode runs commands read-only
        self.record_modes()
        return mode

    def record_modes(self, *, plan_mode: bool | None = None) -> None:
        """Journal the permission mode and Plan/Act mode (``plan_mode`` updates the latter), so a
        resumed session starts in the same modes."""
        if plan_mode is not None:
            self.plan_mode = plan_mode
        self.journal.append(ModeRecord(permission_mode=PermissionMode(self.settings.permission_mode).value,
                                       plan_mode=self.plan_mode, time=time.time()))

    def _restore_modes(self, modes: "list[ModeRecord]", *, keep_permission_mode: bool = False) -> None:
        """Apply the last ``mode`` record of a resumed journal: Plan/Act always; the permission
        mode only when it is not looser than the one this run started with (a resume never grants
        more than the command line or config did) and ``keep_permission_mode`` is False (an
        explicit ``--permission-mode`` on the resuming command wins). A restored permission mode
        that differs from the launch's is said in ``startup_notices``."""
        from ..config.settings import is_looser

        if not modes:
            return
        last = modes[-1]
        self.plan_mode = last.plan_mode
        try:
            recorded = PermissionMode(last.permission_mode)
        except ValueError:
            return
        launched = PermissionMode(self.settings.permission_mode)
        if keep_permission_mode or recorded == launched:
            return
        if not is_looser(recorded, launched):
            self.settings.permission_mode = recorded
            self._mode_notices.append(f"Permission mode {recorded.value} restored from the session (this run "
                                      f"started with {launched.value}; Ctrl+R changes it).")
