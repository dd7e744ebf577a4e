"""A sub-agent stopped by the app's SIGTERM / SIGHUP / Ctrl+C is reported as cancelled (stop
reason ``cancelled``), never as a success: in its event, the ``task`` tool result and its card."""

from __future__ import annotations

import threading

import pytest

from agent.cancel import interrupt
from agent.events import SubagentCompleted, SubagentFailed, SubagentStarted, ToolCallFinished
from agent.providers.scripted import ScriptedProvider

from tests.helpers import Recorder, make_session

TASK = {"tool_calls": [{"name": "task", "arguments": {"description": "look", "prompt": "Look around."}}]}


class _Holding(ScriptedProvider):
    """Scripted replies (a scripted provider: no model lookups); a sub-agent's request waits for
    its cancel, then (``answer_late``) still streams its scripted reply, as a reply cut short by
    the stop may."""

    def __init__(self, replies, answer_late: bool) -> None:
        super().__init__(replies)
        self.answer_late = answer_late

    def stream(self, request, cancel):
        if request.purpose == "subagent":
            cancel.wait(30)
            if not self.answer_late:
                return
        yield from super().stream(request, cancel)


@pytest.mark.parametrize("answer_late", [False, True])
@pytest.mark.parametrize("how", ["sigterm", "esc"])
def test_a_stopped_subagent_is_reported_cancelled(tmp_path, how, answer_late):
    replies = [TASK, {"content": "unused"}, {"for": "subagent", "content": "A partial answer"}]
    session, _ = make_session(tmp_path, [], prepare=True)
    session.agent.provider = _Holding(replies, answer_late)
    emit, cancel = Recorder(), threading.Event()
    stop = (lambda: interrupt(cancel)) if how == "sigterm" else cancel.set
    emit.hooks.append((SubagentStarted, lambda _e: threading.Timer(0.3, stop).start()))
    turn = session.run_turn("go", emit, cancel)
    assert turn.stop_reason == ("interrupted" if how == "sigterm" else "cancelled")
    assert not emit.of(SubagentCompleted), "a stopped sub-agent was reported as a success"
    (failed,) = emit.of(SubagentFailed)
    assert failed.stop_reason == "cancelled" and "cancelled" in failed.message
    assert ("the app was stopped" in failed.message) == (how == "sigterm")
    (result,) = emit.of(ToolCallFinished)
    assert result.is_error and "was cancelled" in result.output and "This is not a result" in result.output
    assert result.result.outcome == ("interrupted" if how == "sigterm" else "cancelled")
