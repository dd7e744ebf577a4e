"""Compaction wired into the loop: auto-compaction mid-turn against the scripted provider, every
request valid, the task kept verbatim, prefix stability between boundaries, failures harmless,
manual /compact."""

from __future__ import annotations

import threading
from pathlib import Path

from agent.config.settings import CompactionSettings
from agent.context.compaction.summary import SUMMARY_HEADER
from agent.context.repair import pairing_ok
from agent.events import CompactionDone, Notice
from agent.session.journal import read_journal
from tests.helpers import Recorder, make_session

TASK = "Task: migrate the config loader in src/config.py from YAML to TOML, keep .yml working."
SUMMARY = "## Task\nmigrate\n## Progress\nread files\n## Decisions\n-\n## Errors\n-\n## Files\nf*.py\n## State\nreading"


def make(tmp_path: Path, replies, *, window=4600, files=8, **compaction):
    texts = {f"f{i}.py": "".join(f"value_{i}_{k} = {k}\n" for k in range(40)) for i in range(files)}
    session, provider = make_session(tmp_path, replies, files=texts, prepare=True, context_window=window)
    compaction.setdefault("keep_last_messages", 4)
    session.agent.config.compaction = CompactionSettings(**compaction)
    return session, provider


def reads(n):
    return [{"tool_calls": [{"name": "read", "arguments": {"path": f"f{i}.py"}}]} for i in range(n)]


def main_requests(provider):
    return [r for r in provider.requests if r.purpose == "main"]


def assert_every_request_valid(provider):
    for req in main_requests(provider):
        assert req.messages[0]["role"] == "system"
        assert req.messages[1]["role"] == "user"
        assert pairing_ok(req.messages)
        text = "\n".join(m.get("content") or "" for m in req.messages)
        assert TASK in text  # the original task, verbatim, in every request


def test_auto_compaction_mid_turn(tmp_path):
    replies = reads(8) + [{"content": "Done reading."}] + [{"for": "summary", "content": SUMMARY}] * 4
    session, provider = make(tmp_path, replies)
    rec = Recorder()
    result = session.run_turn(TASK, rec, threading.Event())
    assert result.stop_reason == "done"
    done = rec.of(CompactionDone)
    assert done, [e for e in rec if isinstance(e, Notice)]
    assert all(d.tokens_after < d.tokens_before and d.summarized > 0 for d in done)
    summaries = [r for r in provider.requests if r.purpose == "summary"]
    assert len(summaries) == len(done)
    assert "## State" in summaries[0].messages[0]["content"] and summaries[0].tools == []
    assert_every_request_valid(provider)
    # compaction happened mid-turn: a main request after it carries the summary and resumes
    # with a tool result (the model is called again, the turn does not stop)
    compacted = [r for r in main_requests(provider) if r.messages[1]["content"].startswith(SUMMARY_HEADER)]
    assert compacted and all(r.messages[-1]["role"] == "tool" for r in compacted)
    assert len(main_requests(provider)) == 9
    # the journal keeps every original message and records each compaction
    agent = session.agent
    records = list(read_journal(agent.journal.path))
    assert sum(1 for r in records if r["kind"] == "message") == len(agent.history)
    comp = [r for r in records if r["kind"] == "compaction"]
    assert len(comp) == len(done)
    assert comp[0]["summary"] == SUMMARY and comp[0]["summarized_ids"]
    history_ids = {m.id for m in agent.history}
    assert set(comp[0]["summarized_ids"]) <= history_ids
    assert comp[0]["rewritten"][0]["content"].startswith(SUMMARY_HEADER)


def test_requests_between_compactions_share_their_prefix(tmp_path):
    replies = reads(8) + [{"content": "Done."}] + [{"for": "summary", "content": SUMMARY}] * 4
    session, provider = make(tmp_path, replies, window=5400)  # room for a few steps between boundaries (plan tools included)
    session.run_turn(TASK, Recorder(), threading.Event())
    assert [r.purpose for r in provider.requests].count("summary") >= 2
    pairs = 0
    for a, b in zip(provider.requests, provider.requests[1:]):
        if a.purpose == b.purpose == "main":
            assert b.messages[:len(a.messages)] == a.messages
            pairs += 1
    assert pairs >= 3


def agent_limit(session):
    return session.agent.compactor.request_limit()


def big_files(session, lines=400):
    for i in range(8):
        (session.workspace / f"f{i}.py").write_text("".join(f"value_{i}_{k} = {k}\n" for k in range(lines)))


def request_tokens(agent, request):
    """Tokens of a recorded request as the agent's budget counts them."""
    from agent.context.records import to_records

    return agent.budget.estimate(request.messages[0]["content"], to_records(request.messages[1:]), request.tools).tokens


def test_failed_summary_falls_back_to_stubs_and_a_digest_and_no_request_goes_over_the_limit(tmp_path):
    """The summariser fails every time: the request over the hard limit is never sent; large tool
    results are stubbed and the older steps are replaced by a list built by code, and the turn
    ends normally."""
    replies = reads(8) + [{"content": "Done."}] + [{"for": "summary", "error": "auth"}] * 12
    session, provider = make(tmp_path, replies, window=9000)
    big_files(session)
    rec = Recorder()
    result = session.run_turn(TASK, rec, threading.Event())
    assert result.stop_reason == "done"
    assert any("Compaction failed" in n.message and "unchanged" in n.message for n in rec.of(Notice))
    done = rec.of(CompactionDone)
    assert done and any(d.stubbed > 0 for d in done) and any(d.summarized > 0 for d in done)
    agent = session.agent
    limit = agent.compactor.request_limit()
    assert all(request_tokens(agent, r) <= limit for r in main_requests(provider))
    sent = "\n".join(m.get("content") or "" for r in main_requests(provider) for m in r.messages)
    assert "stubbed at compaction" in sent and "(The summary call failed: this list of the earlier steps" in sent
    assert "- read({\"path\": \"f0.py\"}) -> 1\tvalue_0_0 = 0" in sent
    assert_every_request_valid(provider)


def test_a_huge_summary_is_capped_so_the_context_fits_half_the_window(tmp_path):
    huge = "## Task\n" + "words " * 3000
    replies = reads(8) + [{"content": "Done."}] + [{"for": "summary", "content": huge}] * 6
    session, provider = make(tmp_path, replies, window=9000)
    big_files(session, lines=250)
    rec = Recorder()
    session.run_turn(TASK, rec, threading.Event())
    done = rec.of(CompactionDone)
    assert done and all(d.tokens_after <= 0.5 * 9000 for d in done), done
    compacted = [r for r in main_requests(provider) if r.messages[1]["content"].startswith(SUMMARY_HEADER)]
    assert compacted and "characters left out" in compacted[0].messages[1]["content"]
    assert_every_request_valid(provider)


def test_manual_mode_does_not_auto_compact_and_manual_compact_works(tmp_path):
    replies = reads(6) + [{"content": "Done."}, {"content": "Next answer."},
                          {"for": "summary", "content": SUMMARY}]
    session, provider = make(tmp_path, replies, window=100000, mode="manual")
    session.run_turn(TASK, Recorder(), threading.Event())
    assert not [r for r in provider.requests if r.purpose == "summary"]
    rec = Recorder()
    done = session.agent.compact("the loader", rec)
    assert isinstance(done, CompactionDone) and rec.of(CompactionDone) == [done]
    summary_req = [r for r in provider.requests if r.purpose == "summary"][0]
    assert "the loader" in summary_req.messages[0]["content"]
    session.run_turn("Now the tests.", Recorder(), threading.Event())
    last = main_requests(provider)[-1]
    assert last.messages[1]["content"].startswith(SUMMARY_HEADER)
    assert last.messages[-1] == {"role": "user", "content": "Now the tests."}
    assert_every_request_valid(provider)


def test_compaction_resets_budget_and_view_grows_after(tmp_path):
    replies = reads(8) + [{"content": "Done."}] + [{"for": "summary", "content": SUMMARY}] * 4
    session, provider = make(tmp_path, replies)
    session.run_turn(TASK, Recorder(), threading.Event())
    agent = session.agent
    view = agent.context_view()
    assert agent.compactor.compacted is not None
    assert view[-1] is agent.history[-1]
    assert len(view) < len(agent.history)


def test_switching_model_keeps_the_compacted_view_and_the_files_read(tmp_path):
    """/model NAME after a compaction: the next request still starts from the summary (not the
    whole history again), and files read before the switch can be edited without a re-read."""
    replies = reads(6) + [{"content": "Done."}, {"for": "summary", "content": SUMMARY},
                          {"tool_calls": [{"name": "edit", "arguments": {"path": "f0.py", "old_string": "value_0_0 = 0",
                                                                          "new_string": "value_0_0 = 100"}}]},
                          {"content": "Edited."}]
    session, provider = make(tmp_path, replies, window=100000, mode="manual")
    session.run_turn(TASK, Recorder(), threading.Event())
    assert isinstance(session.agent.compact(None, Recorder()), CompactionDone)
    history_length = len(session.agent.history)
    session.set_model("anthropic/claude-sonnet-4-5")
    assert session.agent.model == "anthropic/claude-sonnet-4-5"
    rec = Recorder()
    session.run_turn("Now change f0.", rec, threading.Event())
    first_after = main_requests(provider)[-2]
    assert first_after.model == "anthropic/claude-sonnet-4-5"
    assert first_after.messages[1]["content"].startswith(SUMMARY_HEADER)
    assert len(session.agent.history) == history_length + 4  # user, call, result, answer
    assert "value_0_0 = 100" in (session.workspace / "f0.py").read_text()
    assert_every_request_valid(provider)


def test_one_long_turn_of_bash_steps_compacts_and_never_goes_over_the_window(tmp_path):
    """One task, 30 bash steps each printing a few KB, a 12k window: compaction fires inside the
    turn (aggregation no longer cancels it), every request stays under the hard limit and each
    compaction leaves at most half the window, with the task pinned."""
    steps = [{"tool_calls": [{"name": "bash", "arguments": {"command": f"seq {i * 1000} {i * 1000 + 700}"}}]}
             for i in range(30)]
    replies = steps + [{"content": "All done."}] + [{"for": "summary", "content": SUMMARY}] * 30
    session, provider = make(tmp_path, replies, window=12000)
    session.agent.config.compaction = CompactionSettings()  # the defaults, as a user has them
    rec = Recorder()
    result = session.run_turn(TASK, rec, threading.Event())
    assert result.stop_reason == "done", [n.message for n in rec.of(Notice)]
    done = rec.of(CompactionDone)
    assert len(done) >= 2
    assert all(d.tokens_after <= 0.5 * 12000 for d in done), [(d.tokens_before, d.tokens_after) for d in done]
    agent = session.agent
    limit = agent.compactor.request_limit()
    sizes = [request_tokens(agent, r) for r in main_requests(provider)]
    assert max(sizes) <= limit, (max(sizes), limit)
    assert agent.compactor.thrash == 0
    assert not any("Nothing to compact" in n.message for n in rec.of(Notice))
    assert_every_request_valid(provider)


def test_compaction_off_or_manual_never_compacts_and_never_sends_over_the_limit(tmp_path):
    """--compaction off / manual: the hard limit is still kept, but by stopping with a clear
    error naming the mode, not by compacting behind the user's back."""
    for mode in ("off", "manual"):
        replies = reads(8) + [{"content": "Done."}] + [{"for": "summary", "content": SUMMARY}] * 4
        (tmp_path / mode).mkdir()
        session, provider = make(tmp_path / mode, replies, window=5000, mode=mode)
        rec = Recorder()
        result = session.run_turn(TASK, rec, threading.Event())
        assert result.stop_reason == "error" and f"compaction is {mode}" in result.final_text
        assert not rec.of(CompactionDone) and not [r for r in provider.requests if r.purpose == "summary"]
        assert not any("compacting and retrying" in n.message for n in rec.of(Notice))
        usage = [e for e in rec if type(e).__name__ == "ContextUsage"]
        assert usage[-1].used_tokens > agent_limit(session)  # the meter shows the refused size
        agent = session.agent
        assert all(request_tokens(agent, r) <= agent.compactor.request_limit() for r in main_requests(provider))


def test_a_failing_summary_is_tried_once_per_safe_point(tmp_path):
    """The summariser errors: at the safe point where auto-compaction tried it, the hard limit's
    compaction uses the digest at once instead of a second round of summary calls."""
    replies = reads(8) + [{"content": "Done."}] + [{"for": "summary", "error": "auth"}] * 20
    session, provider = make(tmp_path, replies, window=9000)
    big_files(session)
    rec = Recorder()
    assert session.run_turn(TASK, rec, threading.Event()).stop_reason == "done"
    timeline = [r.purpose for r in provider.requests]
    runs = "".join("s" if p == "summary" else "m" for p in timeline).split("m")
    assert max(len(run) for run in runs) == 1, timeline  # one summary attempt between two main calls
    assert rec.of(CompactionDone)


def test_the_plan_is_in_the_context_once_with_its_current_step_states(tmp_path):
    """After a compaction the plan-execution prompt kept in the tail no longer carries its
    checklist as it was when sent; the summary pins the current one."""
    from agent.context.compaction.summary_message import PLAN_PROMPT_STAND_IN
    from agent.plan.model import Plan

    replies = ([{"tool_calls": [{"name": "update_plan", "arguments": {"step": 1, "status": "done"}}]}]
               + reads(8) + [{"content": "Done."}] + [{"for": "summary", "content": SUMMARY}] * 4)
    session, provider = make(tmp_path, replies, window=6000, keep_last_messages=40)
    plan = Plan.model_validate({"title": "Port the loader", "steps": [
        {"description": "Read the loader", "files": ["f0.py"]}, {"description": "Port it", "files": ["f1.py"]}]})
    rec = Recorder()
    session.execute_plan(plan, rec, threading.Event())
    after = [r for r in main_requests(provider) if r.messages[1]["content"].startswith(SUMMARY_HEADER)]
    assert rec.of(CompactionDone) and after
    text = "\n".join(m.get("content") or "" for m in after[0].messages)
    assert text.count("Read the loader") == 1 and "[x] Read the loader" in text
    assert PLAN_PROMPT_STAND_IN in text or "[ ] Read the loader" not in text


def test_an_automatic_compaction_with_nothing_to_compact_says_nothing(tmp_path):
    """At the threshold with a conversation shorter than the kept tail (a small window), the
    automatic pass finds nothing to compact: no notice nobody asked for; /compact still says it."""
    session, _ = make(tmp_path, [{"content": "short answer"}], window=4600, threshold=0.05, keep_tail_fraction=0.9)
    rec = Recorder()
    session.run_turn("what is this?", rec, threading.Event())
    assert not any("Nothing to compact" in n.message for n in rec.of(Notice))
    asked = Recorder()
    session.compact(None, asked, threading.Event())
    assert any("Nothing to compact" in n.message for n in asked.of(Notice))
