"""The quality pipeline of a session (``agent.pipeline.Pipeline``), created on first use.

``verify_granted``: the user passed ``--verify`` (a headless run takes that as the permission to
run the test command; the TUI asks once).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..pipeline import Pipeline


class SessionPipeline:
    """The pipeline part of ``AgentSession``."""

    verify_granted: bool = False
    _pipeline: "Pipeline | None" = None

    @property
    def pipeline(self) -> "Pipeline":
        """The session's ``Pipeline`` (one per session: hook failure counts, lessons, effort)."""
        if self._pipeline is None:
            from ..pipeline import Pipeline

            self._pipeline = Pipeline(self)  # type: ignore[arg-type]
        return self._pipeline

    @property
    def reasoning_effort(self) -> str | None:
        """The effort hint of the running or last turn, or None (none sent, or no turn yet)."""
        return self._pipeline.effort if self._pipeline is not None else None
