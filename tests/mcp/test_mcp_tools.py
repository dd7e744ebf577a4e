"""MCP servers as tools: discovery and naming, schema checks, permissions, Plan mode, results,
truncation, cancellation, crashes, and a stable tool list (the test server over stdio)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from agent.events import Notice, PermissionRequest, ToolCallFinished, ToolCallStarted
from agent.mcp.naming import tool_name
from tests.helpers import Recorder, wait_for_file

from tests.mcp.mcp_helpers import server_entry

NAMES = ["mcp__t__big", "mcp__t__crash", "mcp__t__delete_item", "mcp__t__fail", "mcp__t__hang",
         "mcp__t__lookup", "mcp__t__picture"]


def call(name: str, arguments, id: str | None = None) -> dict:
    out = {"name": name, "arguments": arguments}
    if id:
        out["id"] = id
    return {"tool_calls": [out]}


def run(session, prompt: str = "go", cancel: threading.Event | None = None) -> Recorder:
    events = Recorder()
    session.run_turn(prompt, events, cancel or threading.Event())
    return events


def finished(events: Recorder) -> list[ToolCallFinished]:
    return events.of(ToolCallFinished)


def test_tools_are_discovered_named_and_offered_after_the_built_in_ones(mcp_session):
    session, provider = mcp_session([call("mcp__t__lookup", {"key": "k"}), {"content": "done"}])
    events = run(session)
    names = [t["function"]["name"] for t in provider.requests[0].tools]
    assert names[-len(NAMES):] == NAMES, [n.message for n in events.of(Notice)]  # server name, then tool name
    assert "read" in names[:names.index(NAMES[0])]
    schema = next(t for t in provider.requests[0].tools if t["function"]["name"] == "mcp__t__lookup")["function"]
    assert schema["parameters"]["required"] == ["key"]
    assert schema["description"].startswith("Look a key up")
    assert finished(events)[0].output == "value of k (limit 3)"
    started = events.of(ToolCallStarted)[0]
    assert started.view.title == "lookup · t (MCP)"
    stats = session.stats()
    assert stats.tool_calls == 1 and stats.mcp_calls == 1  # /stats: "tool time ... (1 call, 1 MCP)"


def test_the_tool_list_is_identical_across_steps(mcp_session):
    replies = [call("mcp__t__lookup", {"key": "a"}), call("mcp__t__lookup", {"key": "b"}), {"content": "done"}]
    session, provider = mcp_session(replies)
    run(session)
    lists = [r.tools for r in provider.requests]
    assert len(lists) == 3 and lists[0] == lists[1] == lists[2]
    assert session.agent.prefix_changes == 0


def test_bad_arguments_get_an_error_the_model_can_fix(mcp_session):
    session, _ = mcp_session([call("mcp__t__lookup", {"key": 5, "limit": "x"}), {"content": "done"}])
    result = finished(run(session))[0]
    assert result.result.outcome == "error"
    assert "invalid arguments for mcp__t__lookup" in result.output
    assert "- key: 5 is not of type 'string'" in result.output
    assert "- limit: 'x' is not of type 'integer'" in result.output
    assert "Expected: key (string, required), limit (integer)" in result.output


def test_the_destructive_tool_asks_and_a_denial_reaches_the_model(mcp_session):
    session, _ = mcp_session([call("mcp__t__delete_item", {"item_id": 3}), {"content": "done"}],
                             permission_mode="ask", interactive=True)
    events = Recorder()
    asked = []

    def answer(request: PermissionRequest) -> None:
        from agent.events import PermissionDecision

        asked.append(request)
        request.reply.set_result(PermissionDecision(allow=False, reason="not now"))

    events.hooks.append((PermissionRequest, answer))
    session.run_turn("go", events, threading.Event())
    assert asked and asked[0].capability == "exec" and asked[0].tool_name == "mcp__t__delete_item"
    assert "delete_item on MCP server t" in asked[0].preview
    assert finished(events)[0].result.outcome == "denied"
    assert "not now" in finished(events)[0].output


def test_read_only_tools_run_without_asking_and_headless_refuses_the_destructive_one(mcp_session):
    replies = [{"tool_calls": [{"name": "mcp__t__lookup", "arguments": {"key": "a"}},
                               {"name": "mcp__t__delete_item", "arguments": {"item_id": 1}}]}, {"content": "ok"}]
    session, _ = mcp_session(replies, permission_mode="ask")
    results = finished(run(session))
    assert results[0].result.outcome == "ok"
    assert results[1].result.outcome == "denied" and "--permission-mode full-auto" in results[1].output


def test_rules_name_a_tool_or_every_tool_of_a_server(mcp_session):
    replies = [{"tool_calls": [{"name": "mcp__t__delete_item", "arguments": {"item_id": 1}}]}, {"content": "ok"}]
    session, _ = mcp_session(replies, permission_mode="ask", permissions={"allow": ["tool:mcp__t__*"]})
    assert finished(run(session))[0].output == "deleted 1"
    session2, _ = mcp_session(replies, permission_mode="full-auto",
                              permissions={"deny": ["tool:mcp__t__delete_item"]})
    out = finished(run(session2))[0]
    assert out.result.outcome == "denied" and "deny rule" in out.output


def test_plan_mode_refuses_the_destructive_tool_and_runs_the_read_only_one(mcp_session):
    from agent.loop.config import TurnOptions
    from agent.tools.base import Capability

    replies = [{"tool_calls": [{"name": "mcp__t__delete_item", "arguments": {"item_id": 1}},
                               {"name": "mcp__t__lookup", "arguments": {"key": "z"}}]}, {"content": "ok"}]
    session, _ = mcp_session(replies)
    session.prepare()
    events = Recorder()
    session.agent.run_turn("plan", events, threading.Event(),
                           options=TurnOptions(allowed_capabilities=frozenset({Capability.READ}),
                                               restricted_mode_name="Plan mode"))
    refused, looked = finished(events)
    assert refused.output.startswith("Refused: mcp__t__delete_item (exec) is not available in Plan mode")
    assert looked.output.startswith("value of z")


def test_errors_images_and_links(mcp_session):
    replies = [{"tool_calls": [{"name": "mcp__t__fail", "arguments": {}},
                               {"name": "mcp__t__picture", "arguments": {}}]}, {"content": "ok"}]
    session, _ = mcp_session(replies)
    failed, picture = finished(run(session))
    assert failed.result.outcome == "error" and "it failed: boom" in failed.output
    assert "[image: image/png, 2.0 KB; not shown to the model]" in picture.output
    assert "[resource link: notes file:///tmp/notes.txt (text/plain)]" in picture.output


def test_a_large_result_is_truncated_and_saved_like_bash_output(mcp_session):
    session, _ = mcp_session([call("mcp__t__big", {}), {"content": "ok"}], max_tool_output=5000)
    result = finished(run(session))[0]
    assert result.result.truncated and result.result.saved_path
    saved = Path(result.result.saved_path)
    assert saved.read_text().count("\n") == 999 and len(saved.read_text()) > 90_000
    assert result.result.saved_path in result.output and "truncated" in result.output and len(result.output) < 8000


def test_esc_cancels_the_hanging_call_and_the_server_is_told(mcp_session, tmp_path):
    marker = tmp_path / "marker"
    session, _ = mcp_session([call("mcp__t__hang", {}), {"content": "never"}],
                             entry=server_entry(env={"MCP_TEST_MARKER": str(marker)}))
    session.prepare()
    session.mcp.settle()
    cancel = threading.Event()
    events = Recorder()
    started = Path(str(marker) + ".started")

    def press_esc_once_the_server_runs_it() -> None:
        wait_for_file(started, 10)
        cancel.set()

    events.hooks.append((ToolCallStarted, lambda e: threading.Thread(target=press_esc_once_the_server_runs_it).start()))
    began = time.monotonic()
    session.run_turn("go", events, cancel)
    assert time.monotonic() - began < 12
    assert finished(events)[0].result.outcome == "cancelled"
    deadline = time.monotonic() + 10
    while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.read_text() == "cancelled"


def test_the_call_time_limit_stops_the_hanging_call(mcp_session, tmp_path):
    marker = tmp_path / "marker"
    session, _ = mcp_session([call("mcp__t__hang", {}), {"content": "ok"}],
                             entry=server_entry(env={"MCP_TEST_MARKER": str(marker)}, call_timeout_s=0.5))
    began = time.monotonic()
    result = finished(run(session))[0]
    assert time.monotonic() - began < 8
    assert result.result.outcome == "error" and "over the 0.5 s limit of mcp__t__hang" in result.output
    deadline = time.monotonic() + 10
    while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.read_text() == "cancelled"


def test_a_crash_is_a_notice_with_stderr_and_its_tools_leave_the_next_request(mcp_session):
    replies = [call("mcp__t__crash", {}), call("read", {"path": "nothing.txt"}), {"content": "went on"}]
    session, provider = mcp_session(replies)
    events = run(session)
    assert "closed its connection" in finished(events)[0].output
    notices = [n.message for n in events.of(Notice)]
    assert any("MCP server t failed" in n and "about to crash: goodbye" in n for n in notices)
    assert any("The tool list changed (removed mcp__t__big" in n for n in notices)
    names = [[t["function"]["name"] for t in r.tools] for r in provider.requests]
    assert "mcp__t__lookup" in names[0] and not any(n.startswith("mcp__") for n in names[1])
    assert session.agent.prefix_changes == 1
    assert events[-1].stop_reason == "done"
    assert [s.status for s in session.mcp_statuses()] == ["failed"]


def test_a_server_that_fails_to_start_is_a_notice_and_the_session_goes_on(mcp_session):
    entry = server_entry(env={"MCP_TEST_EXIT": "4", "MCP_TEST_STDERR": "cannot open the database"})
    session, provider = mcp_session([{"content": "fine"}], entry=entry)
    events = run(session)
    notices = [n.message for n in events.of(Notice)]
    assert any("MCP server t failed" in n and "cannot open the database" in n for n in notices)
    assert not any(t["function"]["name"].startswith("mcp__") for t in provider.requests[0].tools)
    assert events[-1].stop_reason == "done"


def test_a_server_over_its_start_limit_fails_and_the_first_request_waits_only_that_long(mcp_session):
    entry = {"command": "sleep", "args": ["30"], "start_timeout_s": 0.5}
    session, provider = mcp_session([{"content": "fine"}], entry=entry)
    began = time.monotonic()
    events = run(session)
    assert time.monotonic() - began < 6
    assert any("did not start within 0.5 s" in n.message for n in events.of(Notice)), (
        [n.message for n in events.of(Notice)], session.mcp_statuses())


def test_restart_brings_the_tools_back(mcp_session):
    session, _ = mcp_session([{"content": "x"}])
    session.prepare()
    session.mcp.settle()
    first = [t.name for t in session.mcp.tools()]
    session.restart_mcp("t")
    session.mcp.settle()
    assert [t.name for t in session.mcp.tools()] == first == NAMES


def test_sub_agents_get_the_read_only_mcp_tools(mcp_session):
    from agent.subagents.child import subagent_tools

    session, _ = mcp_session([{"content": "x"}])
    session.prepare()
    session.mcp.settle()
    tools = subagent_tools(session.agent)
    assert "mcp__t__lookup" in tools and "mcp__t__delete_item" not in tools and "mcp__t__crash" not in tools


@pytest.mark.parametrize(("server", "tool", "expected"), [
    ("db", "query", "mcp__db__query"),
    ("my.srv", "do it!", "mcp__my_srv__do_it_"),
])
def test_names_are_sanitised(server, tool, expected):
    assert tool_name(server, tool) == expected


def test_long_names_are_cut_to_64_characters_and_stay_distinct():
    a, b = tool_name("server", "x" * 80 + "a"), tool_name("server", "x" * 80 + "b")
    assert len(a) == len(b) == 64 and a != b


def test_the_context_breakdown_counts_mcp_definitions_per_server(mcp_session):
    session, _ = mcp_session([{"content": "x"}])
    session.prepare()
    session.mcp.settle()
    breakdown = session.context_breakdown()
    (server, tokens, count), = breakdown.tool_servers
    assert server == "t" and count == len(NAMES) and 0 < tokens < breakdown.tokens("tool definitions")
    note = next(row[3] for row in breakdown.rows if row[0] == "tool definitions")
    assert f"MCP t {tokens:,} tok ({count} tools)" in note


def test_tools_whose_names_clash_both_stay_with_distinct_names_and_a_notice(mcp_session):
    replies = [{"tool_calls": [{"name": "mcp__t__do_it", "arguments": {}}, {"name": "mcp__t__do_it_2", "arguments": {}}]},
               {"content": "done"}]
    session, provider = mcp_session(replies, entry=server_entry(env={"MCP_TEST_CLASH": "1"}))
    events = run(session)
    names = [t["function"]["name"] for t in provider.requests[0].tools]
    assert "mcp__t__do_it" in names and "mcp__t__do_it_2" in names
    assert [f.output for f in finished(events)] == ["dot", "underscore"]  # do.it first: the tool order
    assert any("'do.it' and 'do_it'" in n.message and "mcp__t__do_it_2" in n.message for n in events.of(Notice))


def test_unique_names_keep_the_64_character_limit_and_are_deterministic():
    from agent.mcp.naming import unique_names

    long = "y" * 70
    names, notices = unique_names("ab", ["do.it", "do_it", "do-it", long + ".", long + "_"])
    assert names[:3] == ["mcp__ab__do_it", "mcp__ab__do_it_2", "mcp__ab__do-it"]
    assert len(set(names)) == 5 and all(len(n) <= 64 for n in names) and names[4].endswith("_2")
    assert len(notices) == 2 and unique_names("ab", ["do.it", "do_it"])[0] == names[:2]


def test_a_call_timeout_gives_mcp_advice(mcp_session):
    session, _ = mcp_session([call("mcp__t__hang", {}), {"content": "ok"}], entry=server_entry(call_timeout_s=0.5))
    output = finished(run(session))[0].output
    assert "did not answer in time" in output and "smaller path" not in output


def test_a_call_after_its_server_crashed_in_the_same_reply_says_so(mcp_session):
    replies = [{"tool_calls": [{"name": "mcp__t__crash", "arguments": {}},
                               {"name": "mcp__t__lookup", "arguments": {"key": "k"}}]}, {"content": "went on"}]
    session, _ = mcp_session(replies)
    second = finished(run(session))[1].output
    assert "unknown tool" not in second
    assert "MCP server t" in second and "crashed" in second
