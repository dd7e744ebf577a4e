"""Run a ``generator.Script`` in-process and record one timeline of requests and events.

``run_script(script, root)`` builds the scratch repository under ``root/ws``, then performs the
segments through the public session API: ``build_session(..., provider=..., interactive=False)``,
``run_turn``, ``plan_turn`` / ``execute_plan``, ``compact`` as ``/compact`` calls it, and for ``reopen`` ``close()`` followed by
``build_session(..., resume="latest")`` (what ``--continue`` does). Settings are the shipped
defaults except ``model``, ``context_window`` (the script's window, tokens), ``permission_mode``
(full-auto) and ``max_turns`` (room for the scripted steps).

The provider is a ``ScriptedProvider`` subclass that hands each segment its own list of replies
(so a turn that ends early cannot shift the replies of the next one) and records every request,
as a JSON copy taken when it is received, in the shared ``Timeline`` next to the events (the emit
callback): the checker learns from the order which requests came after a ``CompactionDone``.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from agent.config.settings import Settings
from agent.events import ToolCallFinished, TurnFinished
from agent.providers.base import ModelRequest, StreamDelta
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session

from .script import Script, Segment


@dataclass
class Request:
    """One recorded model call: ``purpose`` (main or summary), ``model``, JSON copies of
    ``messages`` and ``tools``, ``index`` (its position among main requests; -1 for summaries),
    ``session`` (0 for the first session object, +1 per reopen), ``segment`` (index in the script)."""

    purpose: str
    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    index: int
    session: int
    segment: int


@dataclass
class Timeline:
    """Requests and events in the order they happened: ``entries`` holds ``("request", Request)``
    and ``("event", event)`` pairs."""

    entries: list[tuple[str, Any]] = field(default_factory=list)
    session: int = 0
    segment: int = 0

    @property
    def main(self) -> list[Request]:
        return [r for kind, r in self.entries if kind == "request" and r.purpose == "main"]

    @property
    def summaries(self) -> list[Request]:
        return [r for kind, r in self.entries if kind == "request" and r.purpose == "summary"]

    @property
    def events(self) -> list[Any]:
        return [e for kind, e in self.entries if kind == "event"]

    def emit(self, event: Any) -> None:
        self.entries.append(("event", event))


class TimelineProvider(ScriptedProvider):
    """A scripted provider whose replies are loaded per segment (``load``); records each request
    in ``timeline`` before delegating to a fresh ``ScriptedProvider`` of the segment's replies."""

    def __init__(self, timeline: Timeline) -> None:
        super().__init__([])
        self.timeline = timeline
        self._inner = ScriptedProvider([])
        self._main_count = 0

    def load(self, replies: list[dict[str, Any]]) -> None:
        self._inner = ScriptedProvider([json.loads(json.dumps(r)) for r in replies])

    @property
    def remaining(self) -> int:
        return self._inner.remaining

    def stream(self, request: ModelRequest, cancel: threading.Event) -> Iterator[StreamDelta]:
        main = request.purpose == "main"
        index = len(self.timeline.main) if main else -1
        copy = json.loads(json.dumps({"messages": request.messages, "tools": request.tools}))
        self.timeline.entries.append(("request", Request(request.purpose, request.model, copy["messages"],
                                                         copy["tools"], index, self.timeline.session,
                                                         self.timeline.segment)))
        yield from self._inner.stream(request, cancel)


@dataclass
class SegmentRun:
    """What happened in one segment: where its requests start (main index), how the turn ended,
    the scripted replies it did not consume, and the tool results of each consumed step."""

    segment: Segment
    first_index: int
    stop_reason: str = ""
    unused_replies: int = 0
    results: list[ToolCallFinished] = field(default_factory=list)


@dataclass
class SessionRun:
    """A finished run: the script, the timeline, one ``SegmentRun`` per segment, the journal
    files (one per session object; a resume appends to the same file) and the workspace."""

    script: Script
    timeline: Timeline
    segments: list[SegmentRun]
    journals: list[Path]
    workspace: Path
    reserved_output_tokens: int
    reserved_source: str
    strip_after_steps: int


def _settings(script: Script) -> Settings:
    return Settings(model=script.model, context_window=script.window, permission_mode="full-auto",
                    max_turns=max(50, script.replies + 10))


def reserved_output(settings: Settings) -> tuple[int, str]:
    """The output tokens the window keeps free for the reply, by the project's own rule
    (``agent.context.budget.reserved_output``: the ``[compaction] reserved_output_tokens``
    setting, else min(8192, 20% of the window)), and where the figure came from."""
    from agent.context.budget import reserved_output as rule

    window = settings.context_window or 0
    value = settings.compaction.reserved_output_tokens
    label = "compaction.reserved_output_tokens" if value is not None else "default: min(8192, 20% of the window)"
    return rule(window, setting=value), label


def strip_after_steps(settings: Settings) -> int:
    """``compaction.strip_reasoning_after_steps`` when the setting exists, else 3 (the issue's default)."""
    value = getattr(settings.compaction, "strip_reasoning_after_steps", None)
    return value if isinstance(value, int) and value > 0 else 3


def run_script(script: Script, root: Path) -> SessionRun:
    """Build ``root/ws``, run every segment of ``script`` and return the ``SessionRun``.

    Never raises for what the code under test does (a turn that ends in an error is recorded in
    ``SegmentRun.stop_reason``); raises for a broken script (a ``reopen`` first, an ``execute``
    without a proposed plan).
    """
    ws = root / "ws"
    ws.mkdir(parents=True)
    script.setup(ws)
    timeline = Timeline()
    settings = _settings(script)
    reserved, reserved_source = reserved_output(settings)
    provider = TimelineProvider(timeline)
    session = build_session(ws, settings, provider=provider, interactive=False)
    journals = [session.journal_path]
    runs: list[SegmentRun] = []
    proposed = None
    try:
        for number, segment in enumerate(script.segments):
            timeline.segment = number
            run = SegmentRun(segment, len(timeline.main))
            runs.append(run)
            if segment.kind == "reopen":
                session.close()
                timeline.session += 1
                provider = TimelineProvider(timeline)
                session = build_session(ws, _settings(script), provider=provider, interactive=False, resume="latest")
                if session.journal_path not in journals:
                    journals.append(session.journal_path)
                continue
            if segment.kind == "compact":  # what /compact does (tui/context_ui.py)
                compact = getattr(session, "compact", None)
                if compact is None:
                    session.prepare()
                    compact = session.agent.compact
                compact(None, timeline.emit, threading.Event())
                run.stop_reason = "done"
                continue
            provider.load([s.reply for s in segment.steps])
            start = len(timeline.entries)
            cancel = threading.Event()
            if segment.kind == "turn":
                finished = session.run_turn(segment.prompt, timeline.emit, cancel)
            elif segment.kind == "plan":
                result = session.plan_turn(segment.prompt, timeline.emit, cancel)
                finished, proposed = result.turn, result.plan
            elif segment.kind == "execute":
                if proposed is None:
                    raise RuntimeError("script error: execute without a proposed plan")
                finished = session.execute_plan(proposed, timeline.emit, cancel)
            else:
                raise RuntimeError(f"script error: unknown segment kind {segment.kind!r}")
            assert isinstance(finished, TurnFinished)
            run.stop_reason = finished.stop_reason
            run.unused_replies = provider.remaining
            run.results = [e for kind, e in timeline.entries[start:] if kind == "event" and isinstance(e, ToolCallFinished)]
    finally:
        session.close()
    return SessionRun(script, timeline, runs, journals, ws, reserved, reserved_source, strip_after_steps(settings))
