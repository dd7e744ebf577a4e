"""Each tool describes how its calls are shown; the loop puts the view on the events the UI reads,
and a file tool's permission request carries the diff it would make, computed without writing."""

from __future__ import annotations

import json

from agent.config.settings import Settings
from agent.events import PermissionDecision, PermissionRequest, ToolCallStarted
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session
from agent.runtime.tool_views import describe_call
from agent.tools.base import ToolContext
from agent.tools.edit import EditArgs, EditTool
from agent.tools.write import WriteArgs, WriteTool
from tests.helpers import Recorder


def _session(tmp_path, replies, mode="ask"):
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    provider = ScriptedProvider(replies)
    return build_session(ws, Settings(model="openai/gpt-4.1", permission_mode=mode), provider=provider,
                         interactive=True), ws


def test_the_loop_puts_each_tools_view_on_its_started_event(tmp_path):
    session, _ = _session(tmp_path, [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}},
                        {"name": "read", "arguments": {"path": "calc.py"}},
                        {"name": "nosuch", "arguments": {"x": 1}}]},
        {"content": "ok"},
    ], mode="full-auto")
    rec = Recorder()
    import threading

    session.run_turn("go", rec, threading.Event())
    views = [e.view for e in rec.of(ToolCallStarted)]
    assert [(v.title, v.summary, v.command) for v in views] == [
        ("bash", "echo hi", "echo hi"), ("read", "calc.py", None), ("nosuch", '{"x": 1}', None)]
    dumped = json.loads(rec.of(ToolCallStarted)[0].model_dump_json())
    assert dumped["arguments"] == {"command": "echo hi"} and dumped["view"]["summary"] == "echo hi"


def test_a_file_tools_permission_request_carries_the_diff_without_writing(tmp_path):
    import threading

    edit = {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}
    session, ws = _session(tmp_path, [{"tool_calls": [{"name": "edit", "arguments": edit}]}, {"content": "ok"}])
    seen: list[PermissionRequest] = []

    def answer(event: PermissionRequest) -> None:
        seen.append(event)
        assert "a - b" in (ws / "calc.py").read_text(), "nothing written before the answer"
        event.reply.set_result(PermissionDecision(allow=False))

    rec = Recorder()
    rec.hooks.append((PermissionRequest, answer))
    session.run_turn("fix", rec, threading.Event())
    (request,) = seen
    assert request.view is not None and (request.view.body, request.view.path) == ("diff", "calc.py")
    assert "-    return a - b" in request.diff and "+    return a + b" in request.diff
    assert request.diff.startswith("--- a/calc.py")


def test_proposed_diffs_of_write_and_of_an_edit_that_cannot_apply(tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    ctx = ToolContext(workspace=tmp_path.resolve(), output_dir=tmp_path / "out")
    created = WriteTool().proposed_diff(WriteArgs(path="new.txt", content="x\n"), ctx)
    assert created.startswith("--- /dev/null") and "+x" in created
    assert "-one" in WriteTool().proposed_diff(WriteArgs(path="a.txt", content="two\n"), ctx)
    missing = EditTool().proposed_diff(EditArgs(path="a.txt", old_string="zzz", new_string="yyy"), ctx)
    assert "-zzz" in missing and "+yyy" in missing, "the bare replacement when it cannot apply"
    assert (tmp_path / "a.txt").read_text() == "one\n" and not (tmp_path / "new.txt").exists()


def test_views_never_raise_on_bad_arguments():
    for name in ("bash", "read", "write", "edit", "grep", "glob", "think", "update_plan", "submit_plan", "x"):
        for arguments in (None, "{not json", {}, {"path": None}, [1, 2], {"steps": "notalist"}):
            view = describe_call(name, arguments)
            assert view.title == name and "\n" not in view.summary


def test_a_resumed_task_call_is_shown_by_its_title_before_the_loop_exists():
    """A journaled ``task`` call is drawn as the live tool draws it (title, then the job's
    description), not as raw JSON."""
    view = describe_call("task", {"description": "Reader A", "prompt": "Read calc.py"})
    assert view.title == "task" and view.summary == "Reader A"
