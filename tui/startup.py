"""Opening the agent session for the TUI and for ``run``: settings, then ``build_session``.

``open_session`` does what used to sit inline in ``cli.main``. The headless ``run`` calls it
before anything else; the TUI calls it in a thread worker after its first paint, because
importing ``agent.config`` (pydantic, pydantic-settings) and ``agent.runtime`` costs 150 ms or
more, which would double the time to the first frame. Nothing here is imported at module level
from ``agent`` for the same reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The model identity of a ``--replay`` run without ``--model`` (provider rules, context window).
REPLAY_DEFAULT_MODEL = "openai/gpt-4.1"


class StartupError(Exception):
    """The session could not be opened; the message is the one line to print (exit code 2):
    an invalid setting, a bad replay file, an unknown session id, a session locked by another
    instance, or an unreadable session file."""


@dataclass(frozen=True)
class SessionRequest:
    """What the command line asks for.

    ``workspace``: the project folder; ``flags``: CLI setting overrides for ``load_settings``
    (None values are unset); ``replay`` / ``replay_log``: the scripted provider's files;
    ``interactive``: True for the TUI; ``resume``: ``build_session``'s resume value (None, "latest"
    or an id prefix); ``model``: the ``--model`` flag as given (None when absent); ``approve_mcp``:
    project MCP servers approved for this run (``--approve-mcp NAME``, repeatable)."""

    workspace: Path
    flags: dict[str, Any]
    replay: Path | None = None
    replay_log: Path | None = None
    interactive: bool = True
    resume: str | None = None
    model: str | None = None
    approve_mcp: tuple[str, ...] = ()


def _check_model(model: str, api_base: str | None, interactive: bool, notices: list[str]) -> None:
    """A missing API key or an unknown model, found before the session starts (milliseconds, see
    ``agent.providers.preflight``): headless, a ``StartupError`` (exit 2); in the TUI, a notice
    under the welcome block that says what to do (the user may switch models with /model)."""
    from agent.providers.preflight import model_problem

    problem = model_problem(model, api_base=api_base)
    if problem is None:
        return
    if not interactive:
        raise StartupError(f"opencli-tui: error: {problem.message}")
    notices.append(f"{problem.message}. In the TUI, /model NAME switches the model.")


def _window_from_server(settings: Any, model: str, notices: list[str]) -> None:
    """For a model litellm does not know, served at ``api_base``: the context window the server
    says it runs it with becomes ``settings.context_window``; when it does not say, a notice
    tells how to set it (else nothing is compacted and the meter reads "ctx unknown")."""
    from agent.providers.preflight import bundled_context_window
    from agent.providers.server_probe import server_context_window

    if bundled_context_window(model) is not None:
        return
    window = server_context_window(settings.api_base, model)
    if window is not None:
        settings.context_window = window
        return
    notices.append(f"The context window of {model} is unknown (litellm does not know the model and the server "
                   "does not say): set context_window in the config or OPENCLI_CONTEXT_WINDOW, else nothing is "
                   "compacted and the meter reads 'ctx unknown'.")


def open_session(request: SessionRequest) -> tuple[Any, list[str]]:
    """Load the settings and build the session for ``request``.

    Returns ``(session, notices)``: an ``agent.runtime.session.AgentSession`` (holding the journal lock
    until ``close()``) and the notices from loading the settings (unknown keys, ignored project
    keys), one line each. Raises ``StartupError`` with one line for every expected failure.
    Without ``replay`` it first starts litellm's import in a daemon thread (seconds of work that
    ``session.prepare()`` then waits for less); in the TUI this runs after the first paint, where
    the import no longer competes with it for the GIL."""
    from agent.config.settings import ConfigError
    from agent.config.loading import load_settings
    from agent.providers.scripted import ReplayError
    from agent.session.resume import SessionNotFoundError
    from agent.runtime.build import build_session
    from agent.session.journal import SessionLockedError

    if request.replay is None:  # litellm takes seconds to import: begin now, beside the settings
        from agent.providers.litellm_loader import start_background_import

        start_background_import()
    notices: list[str] = []
    flags = dict(request.flags)
    if request.replay is not None and flags.get("model") is None:
        # A replay stands in for the model: give it a real model's identity (and full tool set)
        # rather than the embedded one's read-only tools, unless --model says otherwise.
        flags["model"] = REPLAY_DEFAULT_MODEL
    try:
        settings = load_settings(request.workspace, flags, notices)
        if request.replay is None and not request.resume:
            _check_model(request.model or settings.resolved_model(), settings.api_base, request.interactive, notices)
        if request.replay is None and settings.api_base and not settings.context_window:
            _window_from_server(settings, request.model or settings.resolved_model(), notices)
        session = build_session(request.workspace, settings, replay=request.replay,
                                replay_log=request.replay_log, interactive=request.interactive,
                                resume=request.resume, model=request.model,
                                permission_mode_given=request.flags.get("permission_mode") is not None)
    except (ConfigError, ReplayError, SessionNotFoundError, SessionLockedError) as exc:
        raise StartupError(f"opencli-tui: error: {exc}") from exc
    except OSError as exc:
        raise StartupError(f"opencli-tui: error: the session could not be read: {exc}") from exc
    session.mcp_approved_for_run = frozenset(request.approve_mcp)
    if request.replay is None and request.resume:
        try:
            _check_model(session.model, settings.api_base, request.interactive, notices)
        except StartupError:
            session.close()
            raise
    if request.replay is None and session.is_embedded:
        from agent.providers.server_probe import ollama_hint

        hint = ollama_hint()  # 0.3 s at most, in the start worker (the TUI has painted)
        if hint:
            notices.append(hint)
    from agent.session.retention import apply_retention

    kept = settings.retention
    report = apply_retention(kept.max_age_days, kept.max_total_mb, keep={session.session_id})
    if report.deleted:
        notices.append(report.notice())
    return session, notices
