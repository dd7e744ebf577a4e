"""Pilot tests: think calls drawn like reasoning, reminder marks under their tool block, and the
stops that may go on (step limit, loop guards) with Continue / Stop."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Button, Static

from tests.helpers import tool_call_started
from agent.events import GuardTriggered, ReminderInjected, ToolCallFinished, TurnFinished, TurnStarted
from tui.widgets.blocks import NoticeBlock, ReminderMark, StopBlock, UserBlock
from tui.widgets.conversation import Conversation
from tui.widgets.stop_panel import CONTINUE_AFTER_LIMIT, StopPanel, continue_prompt
from tui.widgets.think_block import ThinkBlock
from tui.widgets.tool_block import ToolBlock

READ = {"name": "read", "arguments": {"path": "calc.py"}}


def _plain(widget: Static) -> str:
    rendered = widget.render()
    return rendered.plain if isinstance(rendered, Text) else str(rendered)


def _last_user_message(provider) -> str:
    messages = provider.requests[-1].messages
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


class TestThink:
    async def test_think_call_is_a_dim_collapsed_block_not_a_tool_block(self, make_app, ui) -> None:
        thought = "The bug is in add: it subtracts. Edit calc.py, then run the tests."
        replies = [{"tool_calls": [{"name": "think", "arguments": {"thought": thought}}]},
                   {"content": "Plan made."}]
        app, provider = make_app(replies)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "think first")
            await ui.wait_turn(pilot, app)
            assert "think" in [t["function"]["name"] for t in provider.requests[0].tools], "registered"
            block = app.query_one(ThinkBlock)
            assert not app.query(ToolBlock), "a thought is not drawn as a tool call"
            assert block.text == thought and block.finished and not block.is_error
            assert not block.expanded and not block.query(".reasoning-body")
            header = block.query_one(".reasoning-header", Static)
            assert _plain(header) == "▸ think (13 words)"
            await pilot.click(ThinkBlock)
            await pilot.pause()
            assert block.expanded and _plain(header).startswith("▾ think")
            assert _plain(block.query_one(".reasoning-body", Static)) == thought
            block.focus()
            await pilot.press("enter")
            assert not block.expanded

    async def test_a_malformed_think_call_says_so(self, make_app, ui) -> None:
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            await app.handler.handle(tool_call_started("t1", "think", "{not json"))
            await app.handler.handle(ToolCallFinished(id="t1", name="think", is_error=True,
                                                      output="Invalid arguments for think"))
            await pilot.pause()
            block = app.query_one(ThinkBlock)
            assert block.is_error and "not a valid call" in block._header().plain
            assert "Invalid arguments" in block.text and "{not json" in block.text

    def test_the_think_tool_describes_its_calls_as_thoughts(self) -> None:
        from agent.tools.think import ThinkTool

        assert ThinkTool().view({"thought": "x y"}).text == "x y"
        assert ThinkTool().view("raw [text]").model_dump(include={"body", "text"}) == {
            "body": "thought", "text": "raw [text]"}
        assert ThinkTool().view(None).text == "" and ThinkTool().view({}).body == "thought"


class TestReminders:
    async def test_reminder_is_a_small_mark_under_its_tool_block(self, make_app, ui) -> None:
        replies = [{"tool_calls": [{"name": "edit", "arguments": {"path": "calc.py", "old_string": "a - b",
                                                                  "new_string": "a + b"}}]},
                   {"content": "Fixed."}]
        app, provider = make_app(replies)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "fix add")
            await ui.wait_turn(pilot, app)
            blocks = list(app.query_one(Conversation).children)
            mark = app.query_one(ReminderMark)
            edit = app.query_one(ToolBlock)
            assert blocks.index(mark) == blocks.index(edit) + 1, "right under the edit block"
            assert "[reminder:" in (edit.output or ""), "the model got it in the tool result"
            assert mark.text in (edit.output or "")
            assert _plain(mark).startswith("↳ reminder: ")
            assert mark.size.height == 1, "one line, not a big block"
            assert not [n for n in app.query(NoticeBlock) if "reminder" in n.message]

    async def test_marks_follow_the_last_call_of_the_step(self, make_app, ui) -> None:
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            handler = app.handler
            await handler.handle(tool_call_started("a", "edit", {"path": "x.py"}))
            await handler.handle(ToolCallFinished(id="a", name="edit", output="ok"))
            await handler.handle(tool_call_started("b", "bash", {"command": "git status"}))
            await handler.handle(ReminderInjected(text="run the tests"))
            await handler.handle(ReminderInjected(text="never commit unless asked"))
            await handler.handle(ToolCallFinished(id="b", name="bash", output="clean"))
            await pilot.pause()
            children = list(app.query_one(Conversation).children)
            bash = [b for b in app.query(ToolBlock) if b.tool_name == "bash"][0]
            i = children.index(bash)
            assert [type(w).__name__ for w in children[i:i + 3]] == ["ToolBlock", "ReminderMark", "ReminderMark"]
            assert [m.text for m in children[i + 1:i + 3]] == ["run the tests", "never commit unless asked"]


class TestStops:
    async def test_stuck_offers_continue_which_sends_a_new_turn(self, make_app, ui) -> None:
        replies = [{"tool_calls": [READ]}] * 4 + [{"content": "Changed approach."}]
        app, provider = make_app(replies)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "loop please")
            await ui.wait_turn(pilot, app)
            assert app.handler.turn_finished.stop_reason == "stuck"
            panel = app.query_one(StopPanel)
            assert panel.reason == "stuck" and panel.guard == "stuck"
            texts = [_plain(s) for s in panel.query(Static) if not isinstance(s, Button)]
            assert texts[0] == "■ Stopped: the agent was repeating itself"
            assert panel.message and panel.message in texts[1]
            assert not app.query(StopBlock), "distinct from an error or a cancel"
            assert app.focused is panel.query_one("#stop-continue"), "Enter continues"
            await pilot.click("#stop-continue")
            await ui.wait_turn(pilot, app)
            sent = _last_user_message(provider)
            assert sent.startswith("Continue, but change your approach: ") and panel.message.split()[0] in sent
            assert list(app.query(UserBlock))[-1].text == sent
            assert not panel.open and not panel.query(Button)
            assert "continued" in _plain(panel.query_one(".stop-note", Static))
            assert app.handler.turn_finished.stop_reason == "done"

    async def test_stop_dismisses_without_a_new_turn(self, make_app, ui) -> None:
        replies = [{"tool_calls": [READ]}] * 4 + [{"content": "never"}]
        app, provider = make_app(replies)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "loop please")
            await ui.wait_turn(pilot, app)
            requests = len(provider.requests)
            panel = app.query_one(StopPanel)
            await pilot.press("s")  # the panel has the focus
            await pilot.pause()
            assert not panel.open and not panel.query(Button)
            assert "stopped" in _plain(panel.query_one(".stop-note", Static))
            assert len(provider.requests) == requests and not app.runner.running
            assert app.focused is app.query_one("#prompt")

    async def test_max_turns_is_a_distinct_stop_with_continue(self, make_app, ui) -> None:
        replies = [{"tool_calls": [READ]}, {"tool_calls": [READ]}, {"content": "Carried on."}]
        app, provider = make_app(replies, max_turns=1)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "read it")
            await ui.wait_turn(pilot, app)
            panel = app.query_one(StopPanel)
            assert panel.reason == "max_turns" and panel.title == "■ Step limit reached"
            assert panel.message.startswith("Stopped after 1 steps")
            assert not app.query("ErrorBlock")
            await pilot.press("c")
            await ui.wait_turn(pilot, app)
            assert _last_user_message(provider) == CONTINUE_AFTER_LIMIT
            assert app.handler.turn_finished.stop_reason == "max_turns", "the limit counts per turn"

    async def test_typing_a_prompt_is_not_stolen_and_retires_the_buttons(self, make_app, ui) -> None:
        replies = [{"tool_calls": [READ]}, {"tool_calls": [READ]}, {"content": "ok"}]
        app, _ = make_app(replies, max_turns=1)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "read it")
            await ui.wait_turn(pilot, app)
            panel = app.query_one(StopPanel)
            await ui.submit(pilot, "never mind, explain calc.py")
            await ui.wait_turn(pilot, app)
            assert not panel.open and not panel.query(Button) and not panel.query(".stop-note")

    async def test_guard_titles(self, make_app, ui) -> None:
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            handler = app.handler
            for guard, words in (("ping_pong", "back and forth"), ("repeated_failure", "kept failing")):
                await handler.handle(TurnStarted(session_id="s", model="m"))
                await handler.handle(GuardTriggered(guard=guard, message=f"{guard} happened"))
                await handler.handle(TurnFinished(stop_reason="stuck", final_text=f"{guard} happened"))
                await pilot.pause()
                panel = list(app.query(StopPanel))[-1]
                assert words in panel.title and panel.message == f"{guard} happened"
            first, second = app.query(StopPanel)
            assert not first.open and second.open, "only the latest stop keeps its buttons"

    def test_continue_prompt(self) -> None:
        assert continue_prompt("max_turns", "whatever") == CONTINUE_AFTER_LIMIT
        assert continue_prompt("stuck", "Same call\n twice.") == "Continue, but change your approach: Same call twice."
        assert continue_prompt("stuck", "").startswith("Continue, but change your approach:")
