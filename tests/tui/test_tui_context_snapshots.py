"""Snapshot tests of the context-management UI: the context meter at warning level (with a
compaction mark in the conversation), and the compaction inspector comparing an original message
with what replaced it. Pictures are 120x36 like the other snapshots; nothing depends on time
(the journal used by the inspector is written by the test, with fixed ids)."""

from __future__ import annotations

import json

import pytest

from agent.context.compaction.summary import SUMMARY_HEADER
from agent.context.compaction.tail import stub_tool_result
from agent.events import CompactionDone, ContextUsage
from agent.messages import message_from_dict
from tui.screens.compaction_inspector import CompactionInspectorScreen
from tui.widgets.prompt_input import PromptInput

SIZE = (120, 36)

SUMMARY = ("## Task\nFix calc.add so that it adds.\n## Progress\nRead calc.py; found `return a - b`.\n"
           "## Decisions\nKeep the signature.\n## Errors\nNone.\n## Files\ncalc.py: add() subtracts.\n"
           "## State\nThe fix is not written yet.")


def journal_records() -> list[dict]:
    """A small session journal with one compaction (fixed ids and times)."""
    messages = [
        {"id": "m_000000000001", "role": "user", "content": "Why does add() in calc.py subtract?"},
        {"id": "m_000000000002", "role": "assistant", "content": None,
         "tool_calls": [{"id": "call_1", "name": "read", "arguments": "{\"path\": \"calc.py\"}"}]},
        {"id": "m_000000000003", "role": "tool", "tool_call_id": "call_1", "name": "read",
         "content": "1\tdef add(a, b):\n2\t    return a - b\n"},
        {"id": "m_000000000004", "role": "assistant", "reasoning_content": "The operator is wrong.",
         "content": "add() returns `a - b`: the operator is a minus sign.\n\nShall I fix it?"},
        {"id": "m_000000000005", "role": "user", "content": "Yes, fix it and run the tests."},
    ]
    records = [{"kind": "message", "message": m} for m in messages]
    summary_message = {"id": "m_00000000000s", "role": "user", "origin": "summary",
                       "content": f"{SUMMARY_HEADER}\n\nOriginal task: Why does add() in calc.py subtract?\n\n{SUMMARY}"}
    records.append({
        "kind": "compaction", "time": 0, "focus": "the calc bug", "tokens_before": 182_000, "tokens_after": 41_000,
        "summary": SUMMARY, "history_length": 5,
        "view_ids": ["m_00000000000s", "m_000000000004", "m_000000000005"],
        "summarized_ids": ["m_000000000001", "m_000000000002", "m_000000000003"],
        "pruned_ids": ["m_000000000004"], "aggregated_ids": [], "stubbed_ids": [],
        "pinned": ["task", "instructions"], "thrash": False,
        "rewritten": [summary_message,
                      {"id": "m_000000000004", "role": "assistant",
                       "content": "add() returns `a - b`: the operator is a minus sign.\n\nShall I fix it?"}],
    })
    return records


def stub_journal_records() -> list[dict]:
    """A journal whose one compaction (no model summary, forced too soon) stubbed a long test
    run kept in the tail (fixed ids and times)."""
    output = "".join(f"test_case_{i:03d} PASSED\n" for i in range(400)) + "400 passed in 1.23s\n"
    messages = [
        {"id": "m_000000000001", "role": "user", "content": "Run the whole test suite."},
        {"id": "m_000000000002", "role": "assistant", "content": None,
         "tool_calls": [{"id": "call_2", "name": "bash", "arguments": "{\"command\": \"pytest -v\"}"}]},
        {"id": "m_000000000003", "role": "tool", "tool_call_id": "call_2", "name": "bash", "content": output},
    ]
    records = [{"kind": "message", "message": m} for m in messages]
    records.append({
        "kind": "compaction", "time": 0, "focus": None, "tokens_before": 7_400, "tokens_after": 2_900,
        "summary": "", "history_length": 3, "view_ids": [m["id"] for m in messages],
        "summarized_ids": [], "pruned_ids": [], "aggregated_ids": [], "stubbed_ids": ["m_000000000003"],
        "pinned": ["task", "test state"], "thrash": True,
        "rewritten": [stub_tool_result(message_from_dict(messages[2]),
                                       "/data/sessions/demo/s1/tool-output-call_2-context.txt").model_dump(mode="json")],
    })
    return records


@pytest.fixture
def context_app(make_app, ui):
    """An app with a 200k window and frozen durations."""

    def factory():
        app, _ = make_app([], context_window=200_000, app_kwargs={"duration_format": ui.frozen_duration})
        return app

    return factory


def write_journal(folder, records):
    """Write ``records`` as a JSONL journal in ``folder`` and return its path."""
    path = folder / "journal.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


async def open_inspector(app, ui, pilot, path):
    """Open the compaction inspector on ``path`` once the app is ready, with the message list
    focused and the cursor blink frozen; return the screen."""
    app.query_one(PromptInput).cursor_blink = False
    await ui.wait_prepared(pilot, app)
    screen = CompactionInspectorScreen(path)
    await app.push_screen(screen)
    await ui.wait_for(pilot, lambda: screen.entries is not None, what="the journal")
    screen.query_one("#ci-messages").focus()
    return screen


class TestContextSnapshots:
    def test_meter_warning_with_compaction_mark(self, context_app, ui, snap_compare) -> None:
        app = context_app()

        async def run_before(pilot) -> None:
            app.query_one(PromptInput).cursor_blink = False
            await ui.wait_prepared(pilot, app)
            await app.handler.handle(CompactionDone(tokens_before=182_000, tokens_after=41_000, summarized=120,
                                                    pruned=8, aggregated=14))
            await app.handler.handle(ContextUsage(used_tokens=124_000, window_tokens=200_000, approximate=True))
            await pilot.pause()

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)

    def test_compaction_inspector(self, context_app, ui, snap_compare, tmp_path) -> None:
        app = context_app()
        path = write_journal(tmp_path, journal_records())

        async def run_before(pilot) -> None:
            screen = await open_inspector(app, ui, pilot, path)
            await pilot.press("down", "down", "down", "down")  # the pruned assistant message
            await pilot.pause()
            assert "reasoning:" in screen.original_text

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)

    def test_compaction_inspector_stubbed_result(self, context_app, ui, snap_compare, tmp_path) -> None:
        app = context_app()
        path = write_journal(tmp_path, stub_journal_records())

        async def run_before(pilot) -> None:
            screen = await open_inspector(app, ui, pilot, path)
            await pilot.press("down")  # the stubbed test run
            await pilot.pause()
            assert "stubbed at compaction" in screen.replacement_text
            # the pointer line near the top (the lines above it are short: one row each, but the
            # record's first line wraps once)
            rows = screen.replacement_text.splitlines()
            marker = next(i for i, line in enumerate(rows) if "stubbed at compaction" in line)
            screen.query_one("#ci-replacement-scroll").scroll_to(y=marker - 2, animate=False)
            await pilot.pause()

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
