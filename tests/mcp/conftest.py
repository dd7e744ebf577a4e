"""Fixtures for the MCP tests: the test server (``server.py``, stdio) as a server entry, and a
session over scripted replies with it configured."""

from __future__ import annotations

from typing import Any

import pytest

from tests.mcp.mcp_helpers import server_entry


@pytest.fixture
def mcp_session(tmp_path):
    """``make(replies, **settings)``: a session (``tests.helpers.make_session``) with the test
    server configured as ``t``; every session made is closed (its servers stopped) at the end."""
    from tests.helpers import make_session

    made = []

    def make(replies: list[dict[str, Any]], *, entry: dict[str, Any] | None = None, **settings: Any):
        settings.setdefault("mcp", {"servers": {"t": entry or server_entry()}})
        session, provider = make_session(tmp_path, replies, **settings)
        made.append(session)
        return session, provider

    yield make
    for session in made:
        session.close()
