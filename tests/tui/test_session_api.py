"""``AgentSession`` has every member of ``tui.session_api.UISession``, the protocol the TUI uses."""

from __future__ import annotations

import threading

from agent.events import Notice
from agent.runtime.session import AgentSession
from tests.helpers import Recorder, make_session
from tui.session_api import UISession

ATTRIBUTES = ("workspace", "settings", "provider", "model", "session_id", "resumed", "plan_mode", "git")


def test_the_session_has_every_member_of_the_protocol(tmp_path):
    members = {name for name in vars(UISession) if not name.startswith("_")}
    assert members, "the protocol lists members"
    missing = sorted(name for name in members if not hasattr(AgentSession, name))
    assert missing == []
    session, _ = make_session(tmp_path, [])
    assert [name for name in ATTRIBUTES if not hasattr(session, name)] == []
    assert set(UISession.__annotations__) == set(ATTRIBUTES)


def test_compact_and_breakdown_through_the_session(tmp_path):
    session, _ = make_session(tmp_path, [])
    assert session.context_breakdown() is None  # before prepare()
    session.prepare()
    rec = Recorder()
    session.compact(None, rec, threading.Event())
    assert [e.message for e in rec.of(Notice)] == ["Nothing to compact yet."]
    breakdown = session.context_breakdown()
    assert breakdown is not None and breakdown.tokens("system prompt") > 0
