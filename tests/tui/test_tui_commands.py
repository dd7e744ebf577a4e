"""Slash commands, the prompt box keys, queueing, themes and the embedded-model notice."""

from __future__ import annotations


from tui.command_table import parse_command, unescape_prompt
from tui.screens.help import HelpScreen
from tui.widgets.blocks import NoticeBlock, UserBlock
from tui.widgets.conversation import Conversation
from tui.widgets.prompt_input import PromptHistory, PromptInput
from tui.widgets.status_bar import StatusBar


def _notices(app) -> list[str]:
    return [n.message for n in app.query(NoticeBlock)]


class TestParse:
    def test_commands_and_not_commands(self) -> None:
        assert parse_command("/help") == ("help", "")
        assert parse_command("  /model  openai/gpt-4o ") == ("model", "openai/gpt-4o")
        assert parse_command("/exit") == ("quit", "")
        assert parse_command("//tmp is full") is None
        assert parse_command("fix /etc/hosts") is None
        assert parse_command("/ nothing") is None
        assert unescape_prompt("//tmp is full") == "/tmp is full"


class TestSlashCommands:
    async def test_unknown_command_is_a_notice_not_a_prompt(self, make_app, ui) -> None:
        app, provider = make_app([{"content": "never"}])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "/frobnicate now")
            await pilot.pause()
            assert any("Unknown command /frobnicate" in n for n in _notices(app))
            assert not app.query(UserBlock)
            assert not app.runner.running
        assert provider.requests == []

    async def test_help_opens_and_closes(self, make_app, ui) -> None:
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "/help")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, HelpScreen)
            await pilot.press("f1")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)

    async def test_clear_starts_a_new_conversation(self, make_app, ui) -> None:
        app, provider = make_app([{"content": "first answer"}, {"content": "second answer"}])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "first question")
            await ui.wait_turn(pilot, app)
            old_id = app.session.session_id
            await ui.submit(pilot, "/clear")
            await ui.wait_prepared(pilot, app)
            await pilot.pause()
            blocks = list(app.query_one(Conversation).children)
            assert [type(b).__name__ for b in blocks] == ["NoticeBlock"]
            assert app.session.session_id != old_id
            await ui.submit(pilot, "second question")
            await ui.wait_turn(pilot, app)
        # The second request does not carry the first conversation.
        users = [m["content"] for m in provider.requests[-1].messages if m["role"] == "user"]
        assert users == ["second question"]

    async def test_model_switches_and_confirms(self, make_app, ui) -> None:
        app, provider = make_app([{"content": "hi"}])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "/model anthropic/claude-sonnet-4-5")
            await ui.wait_for(pilot, lambda: any("Model switched to anthropic/claude-sonnet-4-5" in n
                                                 for n in _notices(app)), what="the confirmation")
            status = app.query_one(StatusBar)
            assert status.model == "anthropic/claude-sonnet-4-5"
            await ui.wait_prepared(pilot, app)
            assert app.session.model == "anthropic/claude-sonnet-4-5"
            await ui.submit(pilot, "hello")
            await ui.wait_turn(pilot, app)
        assert provider.requests[-1].model == "anthropic/claude-sonnet-4-5"

    async def test_a_model_litellm_cannot_route_is_refused(self, make_app, ui) -> None:
        app, provider = make_app([{"content": "hi"}])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)

            def refuse(name: str) -> None:  # what AgentSession.set_model does for such a name
                raise ValueError(f"litellm cannot tell which provider serves {name!r}: name it as provider/model")

            app.session.set_model = refuse
            await ui.submit(pilot, "/model gtp-5")
            await ui.wait_for(pilot, lambda: any("Model not switched" in n for n in _notices(app)),
                              what="the refusal")
            await ui.wait_prepared(pilot, app)
            assert app.query_one(StatusBar).model == "openai/gpt-4.1"
            assert not any("Model switched" in n for n in _notices(app))
            await ui.submit(pilot, "hello")
            await ui.wait_turn(pilot, app)
        assert provider.requests[-1].model == "openai/gpt-4.1"

    async def test_quit(self, make_app, ui) -> None:
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "/quit")
            await pilot.pause()
        assert app.return_code == 0


class TestPromptBox:
    async def test_newline_keys_and_history(self, make_app, ui) -> None:
        app, _ = make_app([{"content": "one"}, {"content": "two"}])
        async with app.run_test(size=(120, 36)) as pilot:
            prompt = app.query_one(PromptInput)
            await pilot.press("a", "ctrl+j", "b")
            assert prompt.text == "a\nb"
            await pilot.press("enter")
            await ui.wait_turn(pilot, app)
            assert prompt.text == ""
            assert app.query_one(UserBlock).text == "a\nb"
            await ui.submit(pilot, "second")
            await ui.wait_turn(pilot, app)
            await pilot.press("up")
            assert prompt.text == "second"
            await pilot.press("up")
            assert prompt.text == "a\nb"
            await pilot.press("down")  # cursor is on the last line: forward in history
            assert prompt.text == "second"
            await pilot.press("down")
            assert prompt.text == ""

    async def test_enter_while_running_queues(self, make_app, ui) -> None:
        replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 0.5"}}]},
                   {"content": "slept"}, {"content": "queued answer"}]
        app, provider = make_app(replies)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "sleep a bit")
            await ui.wait_for(pilot, lambda: app.runner.running, what="the turn to start")
            await ui.submit(pilot, "and then this")
            assert any(n.startswith("Queued") for n in _notices(app))
            await ui.wait_for(pilot, lambda: len(app.query(UserBlock)) == 2, what="the queued prompt")
            await ui.wait_turn(pilot, app)
        assert [m["content"] for m in provider.requests[-1].messages if m["role"] == "user"][-1] == "and then this"

    def test_history_keeps_the_draft(self) -> None:
        history = PromptHistory()
        history.add("one")
        history.add("two")
        history.add("two")
        assert history.entries == ["one", "two"]
        assert history.previous("draft") == "two"
        assert history.previous("ignored") == "one"
        assert history.previous("ignored") is None
        assert history.next() == "two"
        assert history.next() == "draft"
        assert history.next() is None


class TestThemesInApp:
    async def test_default_theme_and_toggle(self, make_app) -> None:
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            assert app.theme == "opencli-dark"
            await pilot.press("ctrl+t")
            assert app.theme == "opencli-light"
            await pilot.press("ctrl+t")
            assert app.theme == "opencli-dark"

    async def test_settings_pick_the_theme(self, make_app) -> None:
        app, _ = make_app([], theme="opencli-light")
        async with app.run_test(size=(120, 36)):
            assert app.theme == "opencli-light"
            assert app.theme_variables["diff-added"].lower() == "#2e7d3e"


class _FakeEmbeddedSession:
    """Just enough of an AgentSession for the start-up screen (no prepare work)."""

    def __init__(self, workspace) -> None:
        from agent.config.settings import Settings

        self.model = "embedded/smollm2-135m"
        self.settings = Settings(model=self.model)
        self.workspace = workspace
        self.context_window = 4096
        self.session_id = "s"
        self.plan_mode = False
        self.resumed = None
        self.git = None

    def prepare(self) -> None:
        pass

    def startup_notices(self) -> list[str]:
        return []

    def record_modes(self, *, plan_mode: bool | None = None) -> None:
        pass

    is_prepared = False

    def stop_watching(self) -> None:
        pass


async def test_embedded_model_says_so_plainly(workspace, ui) -> None:
    from tui.app import OpenCLIApp

    app = OpenCLIApp(session=_FakeEmbeddedSession(workspace), watch_themes=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_prepared(pilot, app)
        assert any("small local model for trying the app offline" in n.lower() for n in _notices(app))
        assert "small local model" in app.query_one(StatusBar).info_text().plain
        assert "4.1k ctx" in app.query_one(StatusBar).context_text()  # drawn by the ContextMeter


class TestQuitAndInterrupt:
    async def test_quitting_mid_turn_stops_the_worker_quickly(self, make_app, ui) -> None:
        import time

        from tui.widgets.tool_block import ToolBlock

        replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 30"}}]}, {"content": "x"}]
        app, _ = make_app(replies)
        started = time.monotonic()
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "sleep")
            await ui.wait_for(pilot, lambda: bool(app.query(ToolBlock)), what="the bash block")
            await pilot.pause(0.2)
            await ui.submit(pilot, "/quit")
            await pilot.pause()
        assert time.monotonic() - started < 10

    async def test_ctrl_c_cancels_then_clears_then_quits(self, make_app, ui) -> None:
        from tui.widgets.tool_block import ToolBlock

        replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 30"}}]}, {"content": "x"}]
        app, _ = make_app(replies)
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "sleep")
            await ui.wait_for(pilot, lambda: bool(app.query(ToolBlock)), what="the bash block")
            await pilot.pause(0.2)
            await pilot.press("ctrl+c")
            await ui.wait_turn(pilot, app)
            assert app.handler.turn_finished.stop_reason == "cancelled"
            prompt = app.query_one(PromptInput)
            prompt.insert("draft")
            await pilot.press("ctrl+c")
            assert prompt.text == "" and app.is_running
            await pilot.press("ctrl+c")
            assert app.is_running  # one press only warns
            await pilot.press("ctrl+c")
            await pilot.pause()
        assert app.return_code == 0


async def test_theme_files_reload_when_changed(make_app, tmp_path, ui) -> None:
    import shutil

    from tui.theme_loader import THEMES_DIR

    themes = tmp_path / "themes"
    shutil.copytree(THEMES_DIR, themes)
    app, _ = make_app([], app_kwargs={"themes_dir": themes})
    app.watch_themes = True
    async with app.run_test(size=(120, 36)) as pilot:
        assert app.theme == "opencli-dark"
        await pilot.pause(0.3)  # let the watcher start
        path = themes / "opencli-dark.toml"
        path.write_text(path.read_text().replace('primary = "#6CA6E8"', 'primary = "#FF0000"'))
        await ui.wait_for(pilot, lambda: app.get_theme("opencli-dark").primary.upper() == "#FF0000",
                       timeout=10, what="the theme to reload")
        await pilot.pause(0.1)
        from textual.color import Color

        primary = Color.parse(app.theme_variables["primary"])  # the live CSS uses the new colour
        assert primary.r > 240 and primary.g < 16 and primary.b < 16


def _read_steps(n, prompt_tokens):
    return [{"tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}, "id": f"c{i}"}],
             "usage": {"prompt_tokens": prompt_tokens + i, "completion_tokens": 0}} for i in range(n)]


async def test_budget_command_in_the_tui_lets_a_stopped_session_go_on(make_app, ui):
    """A budget stop in the TUI: ``/budget tokens N`` raises the limit for the session and the
    next prompt runs, without a restart."""
    from tui.widgets.blocks import NoticeBlock

    app, provider = make_app(_read_steps(2, 600) + [{"content": "carried on"}], budget={"max_tokens": 1000})
    (app.session.workspace / "a.txt").write_text("alpha\n")
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.submit(pilot, "task")
        await ui.wait_turn(pilot, app)
        assert len(provider.requests) == 2
        await ui.submit(pilot, "/budget tokens 1m")
        await pilot.pause()
        notices = [n.message for n in app.query(NoticeBlock)]
        assert any("Budget changed for this session" in n and "of 1000000" in n for n in notices), notices
        await ui.submit(pilot, "go on")
        await ui.wait_turn(pilot, app)
    assert len(provider.requests) > 2
