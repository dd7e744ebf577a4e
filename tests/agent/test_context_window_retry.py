"""Issue 6: a context-window-exceeded error triggers a compaction and one retry."""

from __future__ import annotations

import threading

from agent.config.settings import Settings
from agent.context.repair import pairing_ok
from agent.events import CompactionDone, ErrorEvent
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session


def _session(tmp_path, replies):
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(12):
        (ws / f"m{i}.py").write_text(f"# module {i}\n" + "x = 1\n" * 300)
    provider = ScriptedProvider(replies)
    session = build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="full-auto",
                                         context_window=200_000), provider=provider, interactive=False)
    return session, provider


def _reads(n):
    return [{"tool_calls": [{"name": "read", "arguments": {"path": f"m{i}.py"}}]} for i in range(n)]


def test_context_window_error_compacts_and_retries_once(tmp_path):
    replies = _reads(12) + [{"error": "context_window"},
                            {"for": "summary", "content": "Task: read the modules. Progress: all read."},
                            {"content": "All modules read."}]
    session, provider = _session(tmp_path, replies)
    events = []
    result = session.run_turn("Read every module.", events.append, threading.Event())
    assert result.stop_reason == "done" and result.final_text == "All modules read."
    assert any(isinstance(e, CompactionDone) for e in events)
    main = [r for r in provider.requests if r.purpose == "main"]
    assert len(main[-1].messages) < len(main[-2].messages)  # the retry was sent compacted
    assert "Read every module." in str(main[-1].messages)
    assert all(pairing_ok(r.messages) for r in provider.requests)


def test_second_context_window_error_is_reported(tmp_path):
    replies = _reads(12) + [{"error": "context_window"}, {"for": "summary", "content": "Task: read."},
                            {"error": "context_window"}, {"content": "never"}]
    session, provider = _session(tmp_path, replies)
    events = []
    result = session.run_turn("Read every module.", events.append, threading.Event())
    assert result.stop_reason == "error"
    assert any(isinstance(e, ErrorEvent) and "context window" in e.message for e in events)
