"""``build_session``: an ``AgentSession`` for a workspace from settings, with its provider (given,
scripted from a ``--replay`` file, or litellm) and, for a resume, its locked journal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from ..config.settings import Settings
from ..providers.base import Provider
from ..providers.scripted import ScriptedProvider, load_replay_file
from ..session.journal import SessionJournal

from .session import AgentSession


def build_session(workspace: Path, settings: Settings, *, provider: Provider | None = None,
                  replay: Path | None = None, replay_log: Path | None = None,
                  interactive: bool = True, resume: "str | Literal['latest'] | None" = None,
                  model: str | None = None, permission_mode_given: bool = False) -> AgentSession:
    """Return an ``AgentSession`` for ``workspace``.

    Provider choice: ``provider`` if given; else a ``ScriptedProvider`` from the ``replay`` file
    (``replay_log`` records its requests); else litellm. Raises ``ReplayError`` for a bad replay
    file. Cheap: litellm is not imported here.

    ``resume``: a session id (or unique prefix) or ``"latest"`` continues that session of this
    project: same id and journal file (locked now), conversation and plan restored by
    ``prepare()``, model restored unless ``model`` (the ``--model`` flag) is given, permission
    mode restored (never looser) unless ``permission_mode_given`` (the flag was given). Raises
    ``resume.SessionNotFoundError`` (unknown id, no session) and ``session.SessionLockedError``
    (another instance has the session open); ``OSError`` if the journal cannot be read.
    """
    resumed = journal = None
    if resume is not None:
        from ..session.resume import find_session, load_session

        path = find_session(workspace, resume)
        journal = SessionJournal(path)
        journal.lock()  # refuse now, before any work, when another instance has it
        try:
            resumed = load_session(path)
        except BaseException:
            journal.close()
            raise
    if provider is None:
        if replay is not None:
            provider = ScriptedProvider(load_replay_file(replay), log_path=replay_log)
            if resumed is not None:
                provider.continue_ids_after(call.id for message in resumed.messages
                                            for call in getattr(message, "tool_calls", None) or ())
        else:
            from ..providers.litellm_provider import LiteLLMProvider

            provider = LiteLLMProvider(timeout_s=settings.request_timeout,
                                       first_token_timeout_s=settings.first_token_timeout,
                                       idle_timeout_s=settings.stream_idle_timeout,
                                       wait_notice_after_s=settings.wait_notice_after)
    return AgentSession(workspace, settings, provider, interactive=interactive, model=model, resumed=resumed,
                        journal=journal, permission_mode_given=permission_mode_given)
