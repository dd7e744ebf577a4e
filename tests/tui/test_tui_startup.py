"""The TUI paints before the session exists: settings, session and journal open in a worker
(tui/startup.py), so the first frame waits for neither pydantic nor litellm. These tests drive
that path as ``opencli-tui`` does (``OpenCLIApp(start=...)``)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from agent.config.settings import Settings
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session
from tui.app import OpenCLIApp
from tui.startup import SessionRequest, StartupError, open_session
from tui.widgets.blocks import UserBlock, WelcomeBlock
from tui.widgets.prompt_input import PromptInput
from tui.widgets.sidebar import Sidebar
from tui.widgets.status_bar import StatusBar

ROOT = Path(__file__).resolve().parents[2]


def _gated_start(workspace: Path, replies: list[dict[str, Any]]):
    """A start callable that waits for ``gate`` before opening a scripted session."""
    gate = threading.Event()
    provider = ScriptedProvider(replies)

    def start() -> tuple[Any, list[str]]:
        assert gate.wait(10), "the test never opened the gate"
        session = build_session(workspace, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                                provider=provider, interactive=True)
        return session, ["a notice from loading the settings"]

    return start, gate, provider


async def test_first_frame_comes_before_the_session(workspace, ui) -> None:
    start, gate, _ = _gated_start(workspace, [{"content": "hi"}])
    app = OpenCLIApp(start=start, watch_themes=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        # Painted and usable while the session is still opening.
        assert app.session is None
        assert app.focused is app.query_one(PromptInput)
        assert app.query_one(StatusBar).info_text().plain.split() == ["Act", "perm", "ask", "·", "starting..."]
        assert not app.query(WelcomeBlock)
        gate.set()

        def notices() -> list[str]:
            return [str(n.message) for n in app.query("NoticeBlock")]

        await ui.wait_for(pilot, lambda: "a notice from loading the settings" in notices(),
                          what="the welcome block and the settings notice")
        assert len(app.query(WelcomeBlock)) == 1
        status = app.query_one(StatusBar)
        assert app.session is not None and status.model == "openai/gpt-4.1"
        assert "starting" not in status.info_text().plain
        assert app.query(Sidebar), "the sidebar is mounted (lazily) by then"


async def test_a_prompt_typed_while_starting_runs_once_the_session_is_open(workspace, ui) -> None:
    start, gate, provider = _gated_start(workspace, [{"content": "done"}])
    app = OpenCLIApp(start=start, watch_themes=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.submit(pilot, "say done")
        await pilot.pause()
        assert provider.requests == [] and not app.query(UserBlock)
        gate.set()
        await ui.wait_for(pilot, lambda: bool(provider.requests), what="the request")
        await ui.wait_turn(pilot, app)
        assert [b.text for b in app.query(UserBlock)] == ["say done"]
        assert provider.requests[0].messages[-1]["content"] == "say done"


async def test_keys_before_the_session_opens_do_not_crash(workspace, ui) -> None:
    start, gate, _ = _gated_start(workspace, [])
    app = OpenCLIApp(start=start, watch_themes=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("ctrl+b", "ctrl+r", "f2", "escape", "ctrl+t")
        await pilot.pause()
        assert app.session is None and app.is_running
        assert app.theme == "opencli-light"
        gate.set()
        await ui.wait_for(pilot, lambda: app.session is not None, what="the session")
        await pilot.pause()
        assert app.theme == "opencli-light", "the theme chosen while starting stays"


async def test_a_startup_error_ends_the_app_with_its_line(workspace) -> None:
    def start() -> tuple[Any, list[str]]:
        raise StartupError("opencli-tui: error: max_turns: Input should be greater than 0")

    app = OpenCLIApp(start=start, watch_themes=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(0.3)
    assert app.return_code == 2
    assert app.startup_error == "opencli-tui: error: max_turns: Input should be greater than 0"


async def test_an_invalid_setting_found_by_the_worker_names_the_setting(workspace, monkeypatch) -> None:
    monkeypatch.setenv("OPENCLI_MAX_TURNS", "-3")
    request = SessionRequest(workspace=workspace, flags={"model": "openai/gpt-4.1"})
    app = OpenCLIApp(start=lambda: open_session(request), watch_themes=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(1.0)
    assert app.return_code == 2
    assert app.startup_error is not None and app.startup_error.startswith("opencli-tui: error: ")
    assert "max_turns" in app.startup_error and "\n" not in app.startup_error


async def test_theme_hint_gives_the_first_frame_its_colours(workspace) -> None:
    start, gate, _ = _gated_start(workspace, [])
    app = OpenCLIApp(start=start, theme_hint="opencli-light", watch_themes=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert app.theme == "opencli-light"
        assert "-light-mode" in app.classes and "-dark-mode" not in app.classes
        assert app.theme_variables["diff-added"].lower() == "#2e7d3e"  # from themes/opencli-light.toml
        gate.set()


async def test_main_screen_starts_with_its_breakpoint_class(workspace, ui) -> None:
    for width, wanted, unwanted in ((120, "-wide", "-narrow"), (80, "-narrow", "-wide")):
        start, gate, _ = _gated_start(workspace, [])
        gate.set()
        app = OpenCLIApp(start=start, watch_themes=False)
        async with app.run_test(size=(width, 30)) as pilot:
            assert wanted in app.screen.classes and unwanted not in app.screen.classes
            await ui.wait_for(pilot, lambda: app.session is not None, what="the session")
        app.session.close()


def test_the_first_frame_imports_neither_pydantic_nor_the_agent_core() -> None:
    """What ``opencli-tui`` imports before its first paint stays light (benchmarks/first_paint.py
    measures the time; this guards the cause): no pydantic, no agent settings, no litellm."""
    code = (
        "import sys\n"
        "import tui.cli, tui.app, tui.startup\n"
        "from agent.config.files import peek_setting\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_settings', 'litellm')"
        " or m in ('agent.config.settings', 'agent.config.loading', 'agent.runtime', 'agent.events', 'tui.event_handler'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == ""


async def test_an_unknown_theme_falls_back_with_a_notice(workspace, ui) -> None:
    start, gate, _ = _gated_start(workspace, [])
    gate.set()
    app = OpenCLIApp(start=start, theme_hint="no-such-theme", watch_themes=False)
    toasts: list[str] = []
    app.notify = lambda message, **_: toasts.append(str(message))  # type: ignore[method-assign]
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_for(pilot, lambda: app.session is not None, what="the session")
        # The theme files are validated once the session is open and drawn.
        await ui.wait_for(pilot, lambda: app._wanted_theme is None, what="the theme files validated")
        assert app.theme == "opencli-dark"
        assert any("Unknown theme 'no-such-theme'" in t for t in toasts)
    app.session.close()


async def test_a_theme_file_changed_to_invalid_keeps_the_app_running(workspace, tmp_path, ui) -> None:
    themes = tmp_path / "themes"
    themes.mkdir()
    (themes / "mine.toml").write_text('name = "mine"\nprimary = "#336699"\ndark = false\n')
    start, gate, _ = _gated_start(workspace, [])
    gate.set()
    app = OpenCLIApp(start=start, theme_hint="mine", themes_dir=themes, watch_themes=False)
    toasts: list[str] = []
    app.notify = lambda message, **_: toasts.append(str(message))  # type: ignore[method-assign]
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_for(pilot, lambda: app.session is not None, what="the session")
        # The theme files are validated once the session is open and drawn; the watcher runs after.
        await ui.wait_for(pilot, lambda: app._wanted_theme is None, what="the theme files validated")
        assert app.theme == "mine" and not app.current_theme.dark
        (themes / "mine.toml").write_text('name = "mine"\nprimary = "oops"\n')
        app._load_themes()  # what the watcher does on a change
        await pilot.pause()
        assert app.theme == "mine"  # the last good version stays
        assert any("mine.toml" in t for t in toasts)
    app.session.close()


async def test_sigterm_in_the_tui_ends_the_turn_interrupted_kills_commands_and_exits_143(make_app, ui, workspace) -> None:
    import os
    import signal
    import time

    command = "sleep 300 & echo $! > child.pid; wait"
    app, _ = make_app([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"content": "x"}])
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.submit(pilot, "wait")
        pid_file = workspace / "child.pid"
        await ui.wait_for(pilot, lambda: pid_file.exists() and pid_file.read_text().strip() != "",
                          what="the command's child")
        child = int(pid_file.read_text())
        app.on_terminate_signal(signal.SIGTERM)  # what the loop's signal handler calls
        await pilot.pause()
    assert app.return_code == 128 + signal.SIGTERM
    import json

    records = [json.loads(line) for line in app.session.journal_path.read_text().splitlines()]
    ends = [r.get("stop_reason") for r in records if r.get("kind") == "event" and r.get("event") == "turn_finished"]
    assert ends == ["interrupted"]  # the turn ended before the app did
    end = time.monotonic() + 10  # generous: a loaded CI machine
    while time.monotonic() < end:
        try:
            os.kill(child, 0)
            if open(f"/proc/{child}/stat").read().split(") ")[1].startswith("Z"):
                break
        except (ProcessLookupError, OSError):
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the command's child outlived the app")


async def test_prompt_history_reaches_earlier_sessions_of_the_project(make_app, ui, workspace, monkeypatch) -> None:
    from tui.prompt_history_store import history_path, load_history

    monkeypatch.setenv("MY_SERVICE_TOKEN", "s3cr3t-value-123")
    app, _ = make_app([{"content": "one"}])
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.submit(pilot, "first task with s3cr3t-value-123")
        await ui.wait_turn(pilot, app)
    app.session.close()
    path = history_path(workspace)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert "s3cr3t-value-123" not in path.read_text()
    path.write_text(path.read_text() + "{torn line\n")  # a torn write loses only itself
    assert load_history(workspace) == ["first task with [redacted MY_SERVICE_TOKEN]"]

    app, _ = make_app([])
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_prepared(pilot, app)
        await pilot.press("up")
        assert app.query_one(PromptInput).text == "first task with [redacted MY_SERVICE_TOKEN]"
    app.session.close()


async def test_plan_mode_from_the_command_line_is_journaled_once_the_session_opens(workspace, ui) -> None:
    """`opencli-tui --plan`: the session opens after the first frame; its journal must still say
    Plan mode, so a resume starts in it."""
    from agent.session.journal import read_journal

    start, gate, _ = _gated_start(workspace, [])
    gate.set()
    app = OpenCLIApp(start=start, start_in_plan_mode=True, watch_themes=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_for(pilot, lambda: app.session is not None, what="the session")
        await pilot.pause()
        assert app.plan_mode.active and app.session.plan_mode
        modes = [r for r in read_journal(app.session.journal_path) if r.get("kind") == "mode"]
        assert [r["plan_mode"] for r in modes] == [True]
    app.session.close()


async def test_agent_events_after_exit_was_requested_are_dropped(make_app) -> None:
    """SIGTERM asks the app to exit while the cancelled turn still reports its end; blocks for
    those late events must not be mounted into a conversation that is going away (Textual raised
    MountError and printed a traceback after the terminal was restored)."""
    from agent.events import TextDelta, TurnFinished
    from tui.bridge import AgentEventMessage, TurnEnded
    from tui.widgets.blocks import AssistantBlock, StopBlock
    from tui.widgets.conversation import Conversation

    app, _ = make_app([])
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        before = len(app.query_one(Conversation).children)
        app.exit(return_code=143)
        assert app.closing
        finished = TurnFinished(stop_reason="cancelled")
        await app.on_agent_event_message(AgentEventMessage(TextDelta(text="late")))
        await app.on_agent_event_message(AgentEventMessage(finished))
        await app.on_turn_ended(TurnEnded(finished))
        assert len(app.query_one(Conversation).children) == before
        assert not app.query(AssistantBlock) and not app.query(StopBlock)
    assert app.return_code == 143


async def test_a_missing_key_is_said_at_start_under_the_welcome(workspace, ui) -> None:
    """The TUI opens (the user may switch models) and says at once what is missing and how to
    fix it, before any prompt is sent."""
    from tui.widgets.blocks import NoticeBlock

    request = SessionRequest(workspace=workspace, flags={"model": "anthropic/claude-sonnet-4-5"}, interactive=True)
    app = OpenCLIApp(start=lambda: open_session(request), watch_themes=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_for(pilot, lambda: any("ANTHROPIC_API_KEY" in b.message for b in app.query(NoticeBlock)),
                          what="the missing-key notice")
        line = next(b.message for b in app.query(NoticeBlock) if "ANTHROPIC_API_KEY" in b.message)
        assert "'anthropic/claude-sonnet-4-5'" in line and "/model" in line
        assert app.return_code is None
        app.session.close()


async def test_a_prompt_sent_while_the_model_connection_starts_says_so(workspace, ui) -> None:
    """Issue 18: a message sent before ``session.prepare()`` is done (litellm still importing)
    waits for it, and the status bar says "connecting to the model..." meanwhile, not
    "working..."; then the turn runs as usual."""
    session = build_session(workspace, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                            provider=ScriptedProvider([{"content": "the reply"}]), interactive=True)
    gate = threading.Event()
    prepare = session.prepare

    def slow_prepare() -> None:
        assert gate.wait(10), "the test never opened the gate"
        prepare()

    session.prepare = slow_prepare
    app = OpenCLIApp(session=session, watch_themes=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await ui.submit(pilot, "hello")
        status = app.query_one(StatusBar)
        assert "connecting to the model..." in status.info_text().plain
        gate.set()
        await ui.wait_for(pilot, lambda: not app.runner.running, what="the turn")
        assert "the reply" in " ".join(str(b.text) for b in app.query("AssistantBlock"))
        assert "connecting" not in status.info_text().plain


async def test_full_collections_wait_while_the_session_opens_and_resume_once_it_is_drawn(workspace, ui) -> None:
    """Issue 18: reading a long journal makes objects faster than generation 2's threshold
    counts, and each automatic full pass re-scanned them all (65-86 ms, twice, before a resumed
    5000-message session's last message was drawn). The start worker pauses full collections;
    they resume, thresholds as before, once the bound session has been drawn."""
    import gc

    from agent import gc_pause

    before = gc.get_threshold()
    start, gate, _ = _gated_start(workspace, [])
    app = OpenCLIApp(start=start, watch_themes=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_for(pilot, lambda: gc_pause.full_collections_paused(), what="the start worker's pause")
        assert gc.get_threshold()[2] == gc_pause.PAUSED_THRESHOLD
        gate.set()
        await ui.wait_for(pilot, lambda: app.session is not None, what="the session")
        await ui.wait_for(pilot, lambda: not gc_pause.full_collections_paused(), what="the pause's end")
        assert app.query(WelcomeBlock), "resumed after the session was drawn"
        assert gc.get_threshold() == before
    app.session.close()


async def test_a_startup_error_ends_the_start_workers_pause_of_full_collections(workspace) -> None:
    from agent import gc_pause


    def start() -> tuple[Any, list[str]]:
        assert gc_pause.full_collections_paused()
        raise StartupError("opencli-tui: error: no such session")

    app = OpenCLIApp(start=start, watch_themes=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(0.3)
    assert app.startup_error == "opencli-tui: error: no such session"
    assert not gc_pause.full_collections_paused()


def _resumable_session(workspace: Path, pairs: int) -> str:
    """Write a session of ``pairs`` question/answer pairs (markdown answers with a code block,
    enough to scroll at 120x36); returns its id."""
    import time

    from agent.messages import AssistantMessage, UserMessage
    from agent.session.records import EventRecord

    session = build_session(workspace, Settings(model="openai/gpt-4.1"), provider=ScriptedProvider([]))
    session.prepare()
    for i in range(pairs):
        session.journal.append_message(UserMessage(content=f"question {i}"))
        session.journal.append_message(AssistantMessage(
            content=f"Answer **{i}**:\n\n- one\n- two\n\n```python\ndef f_{i}():\n    return {i}\n```\n\nend of {i}"))
        session.journal.append(EventRecord.turn_finished("done", time.time()))
    session_id = session.session_id
    session.close()
    return session_id


async def test_a_resumed_conversation_renders_each_answer_once(workspace, ui, monkeypatch) -> None:
    """Issue 18: a resumed session's markdown is rendered once. It was rendered three times:
    at the pane's full width, again one column narrower when the scrollbar appeared (the pane now
    keeps the scrollbar's column, ``scrollbar-gutter: stable``), and again when the theme files
    were loaded after the first frame (an unchanged theme replaced its equal object, and the
    render cache is keyed on the theme object)."""
    from collections import Counter

    from tui.widgets import flat_markdown

    session_id = _resumable_session(workspace, 6)
    rendered: Counter[tuple[str, int]] = Counter()
    render = flat_markdown.render_markdown

    def counting(text: str, width: int, *args: Any, **kwargs: Any) -> list[Any]:
        if text.startswith("Answer"):  # not the warm-up render (``flat_markdown.warm_up``)
            rendered[(text.split(":")[0], width)] += 1
        return render(text, width, *args, **kwargs)

    monkeypatch.setattr(flat_markdown, "render_markdown", counting)

    def start() -> tuple[Any, list[str]]:
        session = build_session(workspace, Settings(model="openai/gpt-4.1"), provider=ScriptedProvider([]),
                                interactive=True, resume=session_id)
        return session, []

    app = OpenCLIApp(start=start, watch_themes=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_for(pilot, lambda: app.session is not None and app._wanted_theme is None,
                          what="the session drawn and the theme files loaded")
        await pilot.pause(0.2)
        conversation = app.query_one("Conversation")
        assert conversation.max_scroll_y > 0, "the conversation scrolls: the scrollbar is shown"
        assert len(rendered) >= 3, "the answers were rendered"
        assert len({width for _, width in rendered}) == 1, rendered
        assert all(count == 1 for count in rendered.values()), rendered
    app.session.close()


async def test_an_app_ended_while_the_session_opens_leaves_no_pause_and_closes_the_session(workspace) -> None:
    """Quit before the start worker is done: its pause of full collections ends with the app
    (it was left on for the rest of the process), and the session it then opens is closed (its
    journal lock released), since no app will bind it."""
    from agent import gc_pause

    start, gate, _ = _gated_start(workspace, [])
    opened: list[Any] = []

    closed: list[bool] = []

    def recording_start() -> tuple[Any, list[str]]:
        session, notices = start()
        close = session.close
        session.close = lambda: (closed.append(True), close())  # type: ignore[method-assign]
        opened.append(session)
        return session, notices

    app = OpenCLIApp(start=recording_start, watch_themes=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert gc_pause.full_collections_paused()
    assert not gc_pause.full_collections_paused()
    gate.set()
    for _ in range(200):
        if closed:
            break
        await asyncio.sleep(0.02)
    assert opened and closed == [True], "the session opened after the app ended is closed"
    assert not opened[0].journal.locked
    assert not gc_pause.full_collections_paused()
