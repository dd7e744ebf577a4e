"""Pilot tests of the session UI: the permission-mode key, /undo, /resume (picker and by id) and
the watcher refreshing the sidebar."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from textual.widgets import OptionList

from agent.config.settings import PermissionMode, Settings
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session
from tui.screens.permission import PermissionScreen
from tui.screens.session_picker import SessionPickerScreen
from tui.widgets.blocks import AssistantBlock, NoticeBlock, UserBlock
from tui.widgets.sidebar import Sidebar
from tui.widgets.status_bar import StatusBar
from tui.widgets.tool_block import ToolBlock

EDIT = {"name": "edit", "arguments": {"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}}


def previous_session(workspace: Path, task: str = "fix add in calc.py") -> str:
    """Run one scripted turn headless in ``workspace`` (same data folder) and return its id."""
    provider = ScriptedProvider([{"content": "Looking.", "tool_calls": [{"name": "read", "arguments": {"path": "calc.py"}}]},
                                 {"content": "It subtracts; it should add."}])
    session = build_session(workspace, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                            provider=provider, interactive=False)
    session.run_turn(task, lambda event: None, threading.Event())
    session.close()
    return session.session_id


def notices(app) -> list[str]:
    return [str(block.render()) for block in app.query(NoticeBlock)]


class TestPermissionModeKey:
    async def test_ctrl_r_cycles_and_applies_at_once(self, make_app, workspace, ui) -> None:
        write = {"name": "write", "arguments": {"path": "notes.txt", "content": "hi\n"}}
        app, provider = make_app([{"tool_calls": [write]}, {"content": "ok"}], permission_mode="ask")
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            status = app.query_one(StatusBar)
            assert status.permission_mode == "ask"
            await pilot.press("ctrl+r")
            assert status.permission_mode == "auto-edit"
            assert "perm auto-edit" in status.info_text().plain
            assert app.session.agent.config.permission_mode == PermissionMode.AUTO_EDIT
            assert app.session.settings.permission_mode == PermissionMode.AUTO_EDIT
            await ui.submit(pilot, "write notes")  # an edit in auto-edit: no prompt
            await ui.wait_turn(pilot, app)
            assert not isinstance(app.screen, PermissionScreen)
            assert app.query_one(ToolBlock).status == "ok"
            for expected in ("full-auto", "read-only", "ask"):
                await pilot.press("ctrl+r")
                assert status.permission_mode == expected
            assert app.session.agent.config.permission_mode == PermissionMode.ASK
        assert (workspace / "notes.txt").read_text() == "hi\n"


class TestUndo:
    async def test_undo_restores_the_file_of_the_previous_turn(self, make_app, workspace, ui) -> None:
        app, provider = make_app([{"tool_calls": [EDIT]}, {"content": "Fixed."}])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "fix add")
            await ui.wait_turn(pilot, app)
            assert (workspace / "calc.py").read_text().endswith("return a + b\n")
            assert "calc.py" in app.query_one(Sidebar).changes
            await ui.submit(pilot, "/undo")
            await ui.wait_for(pilot, lambda: any("Undo:" in n for n in notices(app)), what="the undo notice")
            assert any("restored calc.py" in n for n in notices(app))
            assert "calc.py" not in app.query_one(Sidebar).changes
        assert (workspace / "calc.py").read_text().endswith("return a - b\n")
        assert len(provider.requests) == 2  # /undo never reaches the model

    async def test_undo_with_nothing_to_undo(self, make_app, ui) -> None:
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "/undo")
            await ui.wait_for(pilot, lambda: any("nothing to undo" in n for n in notices(app)), what="notice")


class TestResume:
    async def test_picker_lists_and_resumes_a_previous_session(self, make_app, workspace, ui) -> None:
        old_id = previous_session(workspace)
        app, provider = make_app([{"content": "Continuing from where we were."}])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "/resume")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, SessionPickerScreen), what="the picker")
            options = app.screen.query_one(OptionList)
            assert options.option_count == 1
            label = options.get_option_at_index(0).prompt.plain
            assert "fix add in calc.py" in label and "1 turn" in label and "openai/gpt-4.1" in label
            await pilot.press("enter")
            await ui.wait_for(pilot, lambda: app.session.session_id == old_id, what="the swap")
            await ui.wait_prepared(pilot, app)
            assert [b.text for b in app.query(UserBlock)] == ["fix add in calc.py"]
            tool = app.query_one(ToolBlock)
            assert tool.tool_name == "read" and tool.status == "ok"
            assert len(app.query(AssistantBlock)) == 2
            assert any(f"Resumed session {old_id}" in n for n in notices(app))
            await ui.submit(pilot, "and now?")
            await ui.wait_turn(pilot, app)
        contents = [m.get("content") for m in provider.requests[-1].messages]
        assert "fix add in calc.py" in contents and "and now?" in contents
        journal = Path(app.session.journal_path).read_text()
        assert "Continuing from where we were." in journal  # appended to the resumed journal

    async def test_resume_restores_plan_mode(self, make_app, workspace, ui) -> None:
        provider = ScriptedProvider([{"content": "hi"}])
        first = build_session(workspace, Settings(model="openai/gpt-4.1"), provider=provider, interactive=False)
        first.run_turn("plan something later", lambda event: None, threading.Event())
        first.record_modes(plan_mode=True)
        first.close()
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            assert app.main_screen.query_one(StatusBar).mode == "Act"
            await ui.submit(pilot, f"/resume {first.session_id}")
            await ui.wait_for(pilot, lambda: app.session.session_id == first.session_id, what="the swap")
            await ui.wait_for(pilot, lambda: app.main_screen.query_one(StatusBar).mode == "Plan", what="Plan mode")

    async def test_resume_by_id_and_unknown_id(self, make_app, workspace, ui) -> None:
        old_id = previous_session(workspace)
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "/resume nope")
            await ui.wait_for(pilot, lambda: any("Cannot resume nope" in n for n in notices(app)), what="notice")
            await ui.submit(pilot, f"/resume {old_id[:-2]}")  # a unique prefix works
            await ui.wait_for(pilot, lambda: app.session.session_id == old_id, what="the swap")
            await ui.wait_for(pilot, lambda: len(app.query(UserBlock)) == 1, what="the rebuilt blocks")

    async def test_starting_on_a_resumed_session_shows_its_conversation(self, workspace, ui) -> None:
        from tui.app import OpenCLIApp

        old_id = previous_session(workspace)
        provider = ScriptedProvider([{"content": "Continuing."}])
        session = build_session(workspace, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                                provider=provider, interactive=True, resume=old_id)
        app = OpenCLIApp(session=session, watch_themes=False)  # like `opencli-tui --resume ID`
        app.animation_level = "none"
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            assert [b.text for b in app.query(UserBlock)] == ["fix add in calc.py"]
            tool = app.query_one(ToolBlock)
            assert tool.tool_name == "read" and tool.status == "ok"
            assert len(app.query(AssistantBlock)) == 2
            assert any(f"Resumed session {old_id}" in n for n in notices(app))
            await ui.submit(pilot, "and now?")
            await ui.wait_turn(pilot, app)
            assert [b.text for b in app.query(UserBlock)] == ["fix add in calc.py", "and now?"]
        contents = [m.get("content") for m in provider.requests[-1].messages]
        assert "fix add in calc.py" in contents and "and now?" in contents

    async def test_picker_opens_at_start_and_esc_keeps_the_new_session(self, make_app, workspace, ui) -> None:
        previous_session(workspace)
        app, _ = make_app([])
        app.pick_session_at_start = True
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_for(pilot, lambda: isinstance(app.screen, SessionPickerScreen), what="the picker")
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, SessionPickerScreen)
            assert app.session.resumed is None


class TestWatcher:
    async def test_an_external_change_refreshes_the_sidebar(self, make_app, workspace, ui, monkeypatch) -> None:
        from tui import watching
        from tui.watching import WatchEvent

        app, _ = make_app([{"tool_calls": [{"name": "read", "arguments": {"path": "calc.py"}}]}, {"content": "ok"}])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "read calc")
            await ui.wait_turn(pilot, app)
            await ui.wait_for(pilot, lambda: app.session._watcher is not None, what="the watcher to start")
            seen: list[WatchEvent] = []
            original = watching.on_watch_event
            monkeypatch.setattr(watching, "on_watch_event",
                                lambda app_, message: (seen.append(message), original(app_, message)))
            # The watcher picks up the newly read file's folder within about half a second: write
            # until it reports (each write is a new change).
            for attempt in range(40):
                (workspace / "calc.py").write_text(f"def add(a, b):\n    return a + b  # {attempt}\n",
                                                   encoding="utf-8")
                await pilot.pause(0.5)
                if any(p.endswith("calc.py") for e in seen for p in e.paths):
                    break
            await ui.wait_for(pilot, lambda: any(p.endswith("calc.py") for e in seen for p in e.paths),
                              timeout=15, what="the changed path")
            assert any(e.git is not None for e in seen)  # a fresh git snapshot for the sidebar
        assert app.session._watcher is None  # stopped on exit

    async def test_no_changed_on_disk_notice_for_the_agents_own_edit(self, make_app, workspace, ui) -> None:
        read = {"name": "read", "arguments": {"path": "calc.py"}}
        app, _ = make_app([{"tool_calls": [read]}, {"tool_calls": [EDIT]},
                           {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
                           {"content": "done"}], permission_mode="ask")
        shown: list[str] = []
        notify = app.notify
        app.notify = lambda message, *args, **kwargs: (shown.append(str(message)), notify(message, *args, **kwargs))[1]
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.submit(pilot, "fix calc")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), what="the edit prompt")
            await pilot.press("y")
            await ui.wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen)
                              and app.screen.tool_name == "bash", what="the bash prompt")
            assert "return a + b" in (workspace / "calc.py").read_text()
            watcher = app.session._watcher
            assert watcher is not None
            # What the watcher reports for the agent's own edit (called as its thread would).
            await asyncio.to_thread(watcher.on_files_changed, [str(workspace / "calc.py")])
            await pilot.pause(0.3)
            assert not [m for m in shown if "Changed on disk" in m]
            await pilot.press("n", "enter")
            await ui.wait_turn(pilot, app)
            # A real change from outside is shown, with a true description.
            (workspace / "calc.py").write_text("def add(a, b):\n    return b + a\n", encoding="utf-8")
            await asyncio.to_thread(watcher.on_files_changed, [str(workspace / "calc.py")])
            await ui.wait_for(pilot, lambda: any("Changed on disk: calc.py" in m for m in shown), what="the notice")
            notice = next(m for m in shown if "Changed on disk" in m)
            assert "the agent will be reminded at its next tool result" in notice
