"""The context-management UI: the context meter, the breakdown screen, ``/compact``, the
compaction mark and the compaction inspector (issue 5). Everything runs offline on a scripted
provider; compaction summaries are scripted replies marked ``"for": "summary"``."""

from __future__ import annotations

import json

from agent.context.compaction.summary import SUMMARY_HEADER
from agent.events import ContextUsage
from tui.screens.compaction_inspector import (CompactionInspectorScreen, compaction_line, format_record, header_text,
                                              load_compactions, summary_text)
from tui.screens.context_breakdown import ContextBreakdownScreen
from tui.widgets.blocks import NoticeBlock
from tui.widgets.compaction_mark import CompactionMark, mark_text
from tui.widgets.context_meter import ContextMeter, meter_bar, meter_level, meter_text

SUMMARY = "## Task\nFix calc.add.\n## Progress\nRead calc.py; the bug is a minus sign.\n## State\nNot fixed yet."


def long_reply(n: int) -> dict:
    """A long assistant reply (about 2,400 characters), numbered."""
    return {"content": f"Answer {n}: " + ("the calculator subtracts instead of adding. " * 55)}


def history_replies(turns: int = 4) -> list[dict]:
    return [long_reply(i) for i in range(1, turns + 1)]


async def usage(app, used: int, window: int = 200_000, approximate: bool = True) -> None:
    await app.handler.handle(ContextUsage(used_tokens=used, window_tokens=window, approximate=approximate))


BIG = "".join(f"line {i}: collected test output\n" for i in range(2000))


def write_journal(tmp_path, records: list[dict]):
    path = tmp_path / "journal.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def call(n: int, name: str = "bash") -> dict:
    return {"id": f"call_{n}", "name": name, "arguments": json.dumps({"command": f"pytest -q #{n}"})}


def stub_journal() -> list[dict]:
    """A journal with two compactions: one with a summary, two aggregated runs and a stubbed
    result; then a rewrite without summary (thrash) that rebuilt the summary message."""
    def step(n: int, result_id: str) -> list[dict]:
        return [{"id": f"m_a{n}", "role": "assistant", "content": None, "tool_calls": [call(n)]},
                {"id": result_id, "role": "tool", "tool_call_id": f"call_{n}", "name": "bash", "content": f"out {n}"}]

    # run 1: step 1 kept (its result m_r1 gets the notice), m_e1 and m_e2 elided;
    # run 2: step 4 kept (m_r3 gets the notice), m_e3 elided
    messages = [{"id": "m_u1", "role": "user", "content": "fix the tests"},
                *step(1, "m_r1"), *step(2, "m_e1"), *step(3, "m_e2"), *step(4, "m_r3"), *step(5, "m_e3")]
    messages += [{"id": "m_a6", "role": "assistant", "content": None, "tool_calls": [call(6, "read")]},
                 {"id": "m_big", "role": "tool", "tool_call_id": "call_6", "name": "read", "content": BIG}]
    records = [{"kind": "message", "message": m} for m in messages]
    notice = "out {n}\n\n[aggregated: 2 edit/exec steps between this step and the next were elided ...]"
    stub = BIG[:300] + "\n[... stubbed at compaction: 60000 characters of this tool result left out ...]\n" + BIG[-200:]
    summary = {"id": "m_s", "role": "user", "origin": "summary", "content": "## Pinned\ntask\n## Summary\nS1"}
    records.append({
        "kind": "compaction", "tokens_before": 9000, "tokens_after": 3000, "summary": "S1", "thrash": False,
        "summarized_ids": ["m_u1"], "pruned_ids": [], "aggregated_ids": ["m_e1", "m_e2", "m_e3"],
        "stubbed_ids": ["m_big"], "pinned": ["task", "test state", "changed files"],
        "rewritten": [summary,
                      {"id": "m_r1", "role": "tool", "tool_call_id": "call_1", "name": "bash", "content": notice.format(n=1)},
                      {"id": "m_r3", "role": "tool", "tool_call_id": "call_4", "name": "bash", "content": notice.format(n=4)},
                      {"id": "m_big", "role": "tool", "tool_call_id": "call_6", "name": "read", "content": stub}]})
    records.append({
        "kind": "compaction", "tokens_before": 7000, "tokens_after": 5000, "summary": "", "thrash": True,
        "summarized_ids": [], "pruned_ids": [], "aggregated_ids": [], "stubbed_ids": [], "pinned": ["task"],
        "rewritten": [{**summary, "content": "## Pinned\ntask (rebuilt)\n## Summary\nS1"}]})
    return records


class TestMeterText:
    def test_levels(self) -> None:
        assert meter_level(None, 200_000) == "normal"
        assert meter_level(119_999, 200_000) == "normal"
        assert meter_level(120_000, 200_000) == "warning"
        assert meter_level(159_999, 200_000) == "warning"
        assert meter_level(160_000, 200_000) == "error"
        assert meter_level(50, 100, warn_at=0.4, threshold=0.5) == "error"

    def test_bar_has_a_tick_at_the_threshold(self) -> None:
        assert meter_bar(0.62, 0.8) == "▕██████░░│░░▏"
        assert meter_bar(0.0, None) == "▕░░░░░░░░░░▏"
        assert meter_bar(0.001, 0.8).startswith("▕█░")  # anything used shows
        assert meter_bar(1.5, 0.8) == "▕████████│██▏"

    def test_text(self) -> None:
        assert meter_text(124_000, 200_000) == "~124k/200k ▕██████░░│░░▏62%"
        assert meter_text(124_000, 200_000, approximate=False).startswith("124k/200k")
        assert meter_text(None, 200_000) == "200k ctx ▕░░░░░░░░│░░▏"
        assert meter_text(1, None, prepared=False) == "loading model info..."
        off = meter_text(1000, 4000, mode="manual")
        assert off.endswith("25% · auto-compact off") and "│" not in off


class TestMeterWidget:
    async def test_numbers_and_colour_classes(self, make_app, ui) -> None:
        app, _ = make_app([], context_window=200_000)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            meter = app.query_one(ContextMeter)
            assert str(meter.render()) == "200k ctx ▕░░░░░░░░│░░▏"
            await usage(app, 30_000)
            await pilot.pause()
            assert "~30k/200k" in str(meter.render()) and "15%" in str(meter.render())
            assert meter.has_class("-normal") and not meter.has_class("-warning")
            await usage(app, 120_000)  # 60%: warning
            await pilot.pause()
            assert meter.has_class("-warning") and not meter.has_class("-normal")
            assert "60%" in str(meter.render())
            await usage(app, 160_000, approximate=False)  # 80%: error, the provider's own count
            await pilot.pause()
            assert meter.has_class("-error") and not meter.has_class("-warning")
            assert str(meter.render()).startswith("160k/200k")
            assert "80%" in meter.tooltip and "automatically" in meter.tooltip

    async def test_a_scripted_turn_feeds_the_meter(self, make_app, ui) -> None:
        app, _ = make_app([{"content": "hi"}], context_window=4000)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "hello")
            await ui.wait_turn(pilot, app)
            meter = app.query_one(ContextMeter)
            assert meter.used_tokens and meter.window_tokens == 4000
            assert "/4k" in str(meter.render())

    async def test_manual_mode_says_auto_compaction_is_off(self, make_app, ui) -> None:
        app, _ = make_app([], context_window=200_000, compaction={"mode": "manual", "warn_at": 0.5})
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            await usage(app, 110_000)
            await pilot.pause()
            meter = app.query_one(ContextMeter)
            assert "auto-compact off" in str(meter.render()) and meter.has_class("-warning")


class TestBreakdown:
    async def test_click_on_the_meter_shows_categories(self, make_app, ui) -> None:
        app, _ = make_app([{"content": "Short answer.", "reasoning_content": "thinking hard"},
                           {"tool_calls": [{"name": "read", "arguments": {"path": "calc.py"}}]},
                           {"content": "Read it."}], context_window=200_000)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "first question")
            await ui.wait_turn(pilot, app)
            await ui.submit(pilot, "read calc.py")
            await ui.wait_turn(pilot, app)
            await pilot.click(ContextMeter)
            await ui.wait_for(pilot, lambda: isinstance(app.screen, ContextBreakdownScreen)
                              and app.screen.breakdown is not None, what="the breakdown")
            breakdown = app.screen.breakdown
            names = [row[0] for row in breakdown.rows]
            assert names == ["system prompt", "tool definitions", "conversation", "tool results", "reasoning"]
            assert breakdown.tokens("system prompt") > 0 and breakdown.tokens("tool definitions") > 0
            assert breakdown.tokens("tool results") > 0 and breakdown.tokens("reasoning") > 0
            assert breakdown.window == 200_000
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, ContextBreakdownScreen)
            await pilot.press("f2")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, ContextBreakdownScreen), what="F2")


    async def test_rows_add_up_to_the_request_builders_count(self, make_app, ui) -> None:
        """The breakdown counts with the loop's budget: its sent rows sum to what the loop's
        ``budget.estimate`` gives for the next request (before any reported usage), and the meter
        shows the figure the loop counted for its last request."""
        app, provider = make_app([
            {"content": "Let me look.", "reasoning_content": "the operator " * 40,
             "tool_calls": [{"name": "bash", "arguments": {"command": "printf 'E   assert 3 == 1\\n'"}}]},
            {"content": "Found it: `a - b`."},
            {"for": "summary", "content": SUMMARY},
        ], context_window=200_000)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "why does add subtract? " + "E   assert 1 == 3\n" * 30)
            await ui.wait_turn(pilot, app)
            agent = app.session.agent
            assert agent.budget.used_prompt_tokens is None  # no usage scripted: all local
            # the meter shows what the loop counted for its last request
            sent = agent.context_view()[:agent._sent_count]  # the view the last request was built from
            last = agent.budget.request_tokens(agent.system_prompt, sent, provider.requests[-1].tools)
            assert app.query_one(ContextMeter).used_tokens == last
            await pilot.press("f2")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, ContextBreakdownScreen)
                              and app.screen.breakdown is not None, what="the breakdown")
            breakdown = app.screen.breakdown
            expected = agent.budget.estimate(agent.system_prompt, agent.context_view(), agent._offered_schemas())
            assert expected.reported_tokens is None
            assert breakdown.total == expected.tokens
            # the reply carried reasoning content: from then on it is sent back, and counted
            assert agent.budget.include_reasoning
            assert sum(row[1] for row in breakdown.rows) == expected.tokens
            assert breakdown.tokens("reasoning") > 0
            assert breakdown.tokenizer == agent.budget.tokenizer
            table = app.screen.query_one("#breakdown-table")
            assert "characters / 4" not in str(table.render())

    def test_summary_is_found_by_origin_and_every_part_is_counted(self) -> None:
        """Unit: a summary message is the one with ``origin == "summary"`` (not its text), an
        assistant message's calls and sent reasoning are split off without changing its total,
        and the rows equal ``request_tokens`` for a margined (non-OpenAI) model too."""
        from types import SimpleNamespace

        from agent.context.context_budget import ContextBudget
        from agent.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
        from agent.context.breakdown import compute_breakdown

        view = [UserMessage(content="Summary of the earlier part", origin="summary"),
                UserMessage(content=SUMMARY_HEADER + " but typed by the user"),
                AssistantMessage(content="run it", reasoning_content="why " * 50,
                                 tool_calls=[ToolCall(id="c1", name="bash", arguments='{"command": "ls"}')]),
                ToolResultMessage(tool_call_id="c1", name="bash", content="a.py\nb.py\n" * 40)]
        tools = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]
        for budget in (ContextBudget("anthropic/claude-sonnet-4"), ContextBudget("openai/gpt-4.1", include_reasoning=True)):
            agent = SimpleNamespace(system_prompt="You are a coding agent.", budget=budget,
                                    context_view=lambda: view, _offered_schemas=lambda: tools)
            b = compute_breakdown(agent, 8000)
            assert b.total == budget.request_tokens(agent.system_prompt, view, tools)
            assert b.total == budget.estimate(agent.system_prompt, view, tools).tokens
            summary = next(r for r in b.rows if r[0] == "compaction summary")
            assert summary[1] == budget.message_tokens(view[0]) and summary[2] == 1
            assert b.tokens("tool results") > budget.message_tokens(view[3])  # the call is counted there
            assert b.tokens("reasoning") > 0


class TestCompact:
    async def test_compact_marks_the_conversation_and_opens_the_inspector(self, make_app, ui) -> None:
        replies = history_replies(4) + [{"for": "summary", "content": SUMMARY}]
        app, provider = make_app(replies, context_window=200_000, compaction={"keep_last_messages": 2})
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            for i in range(1, 5):
                await ui.submit(pilot, f"question {i}: why does add subtract?")
                await ui.wait_turn(pilot, app)
            await ui.submit(pilot, "/compact the calculator bug")
            await ui.wait_turn(pilot, app)
            await ui.wait_for(pilot, lambda: bool(app.query(CompactionMark)), what="the compaction mark")
            assert provider.requests[-1].purpose == "summary"
            mark = app.query_one(CompactionMark)
            assert mark.text.startswith("⟲ context compacted: ") and "summarized 7, pruned 0" in mark.text
            assert mark.tokens_after < mark.tokens_before
            meter = app.query_one(ContextMeter)
            assert meter.used_tokens == mark.tokens_after  # the meter follows the compaction

            mark.focus()
            await pilot.press("enter")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, CompactionInspectorScreen)
                              and app.screen.entries is not None, what="the inspector")
            screen = app.screen
            assert len(screen.entries) == 1 and screen.current is screen.entries[0]
            entry = screen.current
            assert entry.record.focus == "the calculator bug"
            assert SUMMARY in screen.replacement_text  # the summary shows first
            first = entry.messages[0]
            assert first.how == "summarized" and first.original is not None
            assert screen.select_message(first.id)
            assert "question 1: why does add subtract?" in screen.original_text
            assert SUMMARY in screen.replacement_text
            assistant = next(m for m in entry.messages if m.original and m.original["role"] == "assistant")
            screen.query_one("#ci-messages").focus()
            await pilot.press("down", "down")  # the first message, then the second
            await pilot.pause()
            assert "Answer 1:" in screen.original_text  # the list drives the panes
            assert assistant.id in screen.original_text
            await pilot.press("q")
            await pilot.pause()
            assert not isinstance(app.screen, CompactionInspectorScreen)

    async def test_a_useless_compaction_gives_a_notice(self, make_app, ui) -> None:
        app, _ = make_app([{"content": "ok"}, {"for": "summary", "content": "x" * 5000}], context_window=200_000)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "hello")
            await ui.wait_turn(pilot, app)
            await ui.submit(pilot, "/compact")
            await ui.wait_turn(pilot, app)
            await pilot.pause()
            assert not app.query(CompactionMark)
            notices = [b.message for b in app.query(NoticeBlock)]
            assert notices[-1] != "Compacting the context..."  # the core said why nothing changed

    async def test_refused_while_a_turn_runs_and_when_off(self, make_app, ui) -> None:
        app, _ = make_app([], context_window=200_000, compaction={"mode": "off"})
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "/compact")
            await pilot.pause()
            assert "Compaction is off" in app.query(NoticeBlock).last().message
            assert "auto-compact off" in str(app.query_one(ContextMeter).render())
            app.session.settings.compaction.mode = "auto"
            app.runner._busy = True  # a turn is running
            await ui.submit(pilot, "/compact")
            await pilot.pause()
            assert "A turn is running" in app.query(NoticeBlock).last().message
            app.runner._busy = False

    async def test_auto_compaction_in_a_small_window(self, make_app, ui) -> None:
        replies = history_replies(6) + [{"for": "summary", "content": SUMMARY}]
        app, _ = make_app(replies, context_window=4000, compaction={"keep_last_messages": 2})
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            for i in range(1, 7):
                await ui.submit(pilot, f"question {i}")
                await ui.wait_turn(pilot, app)
                if app.query(CompactionMark):
                    break
            assert app.query(CompactionMark), "the run compacted automatically"
            entries = load_compactions(app.session.journal_path)
            assert len(entries) == 1 and entries[0].summary == SUMMARY


class TestInspectorScreen:
    async def test_stubs_notices_and_a_compaction_without_summary(self, make_app, ui, tmp_path) -> None:
        path = write_journal(tmp_path, stub_journal())
        app, _ = make_app([], context_window=200_000)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            screen = CompactionInspectorScreen(path)
            await app.push_screen(screen)
            await ui.wait_for(pilot, lambda: screen.entries is not None, what="the journal")
            assert screen.current.number == 2  # the latest first
            assert screen.query_one("#ci-replacement-label").render().plain == "No model summary"
            assert screen.replacement_text.startswith("No model summary")
            assert "⚠ thrash" in screen.header_text and "Pinned by code: task" in screen.header_text
            await pilot.press("up")  # the first compaction
            await pilot.pause()
            assert screen.current.number == 1 and "Pinned by code: task, test state, changed files" in screen.header_text
            assert screen.query_one("#ci-replacement-label").render().plain == "Summary"
            messages = screen.query_one("#ci-messages")
            lines = [str(messages.get_option_at_index(i).prompt) for i in range(messages.option_count)]
            assert any(line.startswith("T  step") and "· tool:read ·" in line for line in lines)
            assert any(line.startswith("N  step") and "· tool:bash ·" in line for line in lines)
            assert not any("m_big" in line for line in lines), "ids are in the panes, not the list"
            messages.focus()
            for _ in range(lines.index(next(line for line in lines if line.startswith("T  step"))) + 1):
                await pilot.press("down")
            await pilot.pause()
            assert screen.query_one("#ci-replacement-label").render().plain.startswith("Stubbed:")
            assert "line 1999: collected test output" in screen.original_text  # the whole original
            assert "stubbed at compaction" in screen.replacement_text
            assert "line 1999" in screen.replacement_text and "line 1000:" not in screen.replacement_text
            assert screen.select_message("m_e3")
            assert "id m_r3" in screen.replacement_text and "[aggregated:" in screen.replacement_text


    async def test_the_chosen_compaction_is_scrolled_into_view(self, make_app, ui, tmp_path) -> None:
        records = stub_journal()
        compaction = records[-2]
        records += [{**compaction, "tokens_before": 9000 + n, "tokens_after": 3000} for n in range(1, 9)]
        path = write_journal(tmp_path, records)
        app, _ = make_app([], context_window=200_000)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            screen = CompactionInspectorScreen(path, tokens_before=9008, tokens_after=3000)
            await app.push_screen(screen)
            await ui.wait_for(pilot, lambda: screen.entries is not None, what="the journal")
            await pilot.pause()
            options = screen.query_one("#ci-compactions")
            assert screen.current.number == 10 and options.highlighted == 9
            assert options.scroll_offset.y > 0  # the list (8 rows high) shows the 10th line


class TestInspectorUnits:
    def test_loader_pairs_originals_with_replacements(self, tmp_path) -> None:
        path = tmp_path / "s.jsonl"
        records = [
            {"kind": "message", "message": {"id": "m_u1", "role": "user", "content": "the task"}},
            {"kind": "message", "message": {"id": "m_a1", "role": "assistant", "content": "<think>x</think>ok",
                                            "reasoning_content": "long thought"}},
            {"kind": "compaction", "tokens_before": 900, "tokens_after": 300, "summary": "S1",
             "summarized_ids": ["m_u1"], "pruned_ids": ["m_a1"], "aggregated_ids": ["m_zz"],
             "rewritten": [{"id": "m_s", "role": "user", "origin": "summary", "content": "pins\nS1"},
                           {"id": "m_a1", "role": "assistant", "content": "ok"}]},
        ]
        path.write_text("\n".join(json.dumps(r) for r in records) + "\n{torn", encoding="utf-8")
        warnings: list[str] = []
        [entry] = load_compactions(path, warnings)
        assert warnings and entry.counts() == {"summarized": 1, "pruned": 1, "aggregated": 1, "stubbed": 0}
        by_id = {m.id: m for m in entry.messages}
        assert by_id["m_u1"].replacement["id"] == "m_s"
        assert by_id["m_a1"].replacement["content"] == "ok"
        assert by_id["m_a1"].original["reasoning_content"] == "long thought"
        assert by_id["m_zz"].original is None
        assert "reasoning:\nlong thought" in format_record(by_id["m_a1"].original)
        assert load_compactions(tmp_path / "missing.jsonl") == []

    def test_mark_text(self) -> None:
        assert mark_text(182_000, 41_000, 120, 8, 14) == (
            "⟲ context compacted: 182k → 41k tokens (summarized 120, pruned 8, aggregated 14) — Enter/click to inspect")
        assert mark_text(9_000, 4_000, 0, 2, 6, 3, thrash=True, pinned=4) == (
            "⟲ context compacted: 9k → 4k tokens (no summary, pruned 2, aggregated 6, stubbed 3, 4 pinned) ⚠ thrash"
            " — Enter/click to inspect")

    def test_summary_is_the_record_with_the_summary_origin(self, tmp_path) -> None:
        """A user message that only starts like a summary is not taken for one."""
        path = write_journal(tmp_path, [
            {"kind": "message", "message": {"id": "m_u1", "role": "user", "content": "task"}},
            {"kind": "compaction", "summary": "S", "summarized_ids": ["m_u1"],
             "rewritten": [{"id": "m_fake", "role": "user", "content": SUMMARY_HEADER + " typed by hand"},
                           {"id": "m_s", "role": "user", "origin": "summary", "content": "pins + S"}]}])
        [entry] = load_compactions(path)
        assert entry.summary_message["id"] == "m_s" and entry.messages[0].replacement["id"] == "m_s"

    def test_stubs_notices_pins_thrash_and_no_summary(self, tmp_path) -> None:
        path = write_journal(tmp_path, stub_journal())
        [first, second] = load_compactions(path)
        assert first.has_model_summary and not first.thrash
        by_id = {m.id: m for m in first.messages}
        # two aggregated runs: each elided step points to the notice of its own run
        assert by_id["m_e1"].how == "aggregated" and by_id["m_e1"].replacement["id"] == "m_r1"
        assert by_id["m_e2"].replacement["id"] == "m_r1"
        assert by_id["m_e3"].replacement["id"] == "m_r3"
        assert by_id["m_r1"].how == "notice" and by_id["m_r3"].how == "notice"
        assert "[aggregated:" in by_id["m_r1"].replacement["content"]
        # the stub is listed with its own tag, the original beside it
        stub = by_id["m_big"]
        assert stub.how == "stubbed" and stub.original["content"] == BIG
        assert "stubbed at compaction" in stub.replacement["content"]
        assert first.pinned == ["task", "test state", "changed files"]
        assert [m.how for m in first.messages].count("stubbed") == 1 == first.counts()["stubbed"]
        # the second one is a rewrite without summary, forced too soon
        assert not second.has_model_summary and second.thrash
        text = summary_text(second)
        assert text.startswith("No model summary") and "rebuilt around the current pins" in text
        assert "no summary" in compaction_line(second) and "⚠ thrash" in compaction_line(second)
        header = header_text(first)
        assert "stubbed 1" in header and "Pinned by code: task, test state, changed files" in header
        assert "thrash" not in header and "thrash" in header_text(second)



def test_the_inspector_reflows_hard_wrapped_prose_but_keeps_code_and_lists():
    from tui.screens.compaction_entries import reflow

    text = ("Fix the add function so\nthat it adds.\n\n- one\n- two\n\n```\nx = 1\n\ny = 2\n```\n\n"
            "     1\tdef add(a, b):\n     2\t    return a - b")
    assert reflow(text) == ("Fix the add function so that it adds.\n\n- one\n- two\n\n```\nx = 1\n\ny = 2\n```\n\n"
                            "     1\tdef add(a, b):\n     2\t    return a - b")
