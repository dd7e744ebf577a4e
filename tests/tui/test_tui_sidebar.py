"""Pilot tests for the sidebar: shown on wide terminals, Ctrl+B toggles it, the git snapshot of
session start (built from real repositories in tmp folders), and the files the agent changed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agent.git_context import GitCommit, GitSnapshot
from tui.widgets.sidebar import MAX_STATUS_LINES, Sidebar, SidebarSection, files_text, git_text

EDIT = {"name": "edit", "arguments": {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}}


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def _section(app, section_id: str) -> str:
    return app.query_one(section_id, SidebarSection).render().plain


class TestVisibility:
    async def test_shown_when_wide_hidden_when_narrow_and_ctrl_b_toggles(self, make_app) -> None:
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            sidebar = app.query_one(Sidebar)
            assert sidebar.display and sidebar.size.width > 0
            await pilot.press("ctrl+b")
            assert not sidebar.display
            await pilot.press("ctrl+b")
            assert sidebar.display
        app, _ = make_app([])
        async with app.run_test(size=(100, 30)) as pilot:
            sidebar = app.query_one(Sidebar)
            assert not sidebar.display
            await pilot.press("ctrl+b")
            assert sidebar.display
            await pilot.resize_terminal(130, 30)
            await pilot.pause()
            assert sidebar.display
            await pilot.press("ctrl+b")
            assert not sidebar.display, "the user's choice wins over the width"


class TestGitSection:
    async def test_real_repository_snapshot(self, make_app, workspace, ui) -> None:
        _git(workspace, "init", "-q", "-b", "main")
        _git(workspace, "add", "README.md", "calc.py")
        _git(workspace, "commit", "-q", "-m", "Add the calculator")
        _git(workspace, "checkout", "-q", "-b", "fix/add")
        (workspace / "notes.txt").write_text("todo\n")
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            await pilot.pause()
            text = _section(app, "#sidebar-git")
            assert text.startswith("Git · at session start")
            assert "branch fix/add" in text and "default main" in text
            assert "?? notes.txt" in text and "Add the calculator" in text
            assert app.session.git.is_repo

    async def test_outside_a_repository(self, make_app, ui) -> None:
        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            assert "loading..." in _section(app, "#sidebar-git")
            await ui.wait_prepared(pilot, app)
            await pilot.pause()
            assert "not a git repository" in _section(app, "#sidebar-git")

    def test_status_is_capped_and_empty_repository(self) -> None:
        status = "\n".join(f" M file{i}.py" for i in range(MAX_STATUS_LINES + 5))
        snapshot = GitSnapshot(is_repo=True, branch="main", default_branch="main", has_commits=True,
                               status=status, recent_commits=[GitCommit(sha="abc1234", subject="First")])
        plain = git_text(snapshot).plain
        assert plain.count(" M file") == MAX_STATUS_LINES and "… 5 more" in plain
        assert "default" not in plain, "the default branch is named only when it differs"
        fresh = git_text(GitSnapshot(is_repo=True, branch="main", has_commits=False)).plain
        assert "no commits yet" in fresh
        detached = git_text(GitSnapshot(is_repo=True, branch="HEAD (detached at 1a2b3c4)", has_commits=True)).plain
        assert "detached at 1a2b3c4" in detached and "clean working tree" in detached


class TestChangedFiles:
    async def test_edits_are_listed_with_counts_and_clear_resets(self, make_app, ui) -> None:
        write = {"name": "write", "arguments": {"path": "docs/notes.md", "content": "one\ntwo\n"}}
        replies = [{"tool_calls": [EDIT]}, {"tool_calls": [write]}, {"content": "Done."}]
        app, _ = make_app(replies)
        async with app.run_test(size=(120, 36)) as pilot:
            assert "none yet" in _section(app, "#sidebar-files")
            await ui.submit(pilot, "fix add and write notes")
            await ui.wait_turn(pilot, app)
            sidebar = app.query_one(Sidebar)
            assert sidebar.changes == {"calc.py": (1, 1), "docs/notes.md": (2, 0)}
            text = _section(app, "#sidebar-files")
            assert "calc.py" in text and "+1 -1" in text and "+2 -0" in text
            await ui.submit(pilot, "/clear")
            await pilot.pause()
            assert sidebar.changes == {} and "none yet" in _section(app, "#sidebar-files")

    async def test_files_changed_by_bash_are_listed_from_git(self, make_app, workspace, ui) -> None:
        _git(workspace, "init", "-q", "-b", "main")
        _git(workspace, "add", "README.md", "calc.py")
        _git(workspace, "commit", "-q", "-m", "init")
        (workspace / "before.txt").write_text("changed before the session\n")
        bash = {"name": "bash", "arguments": {
            "command": "sed -i 's/a - b/a + b/' calc.py && printf 'x\\ny\\n' > made.txt"}}
        app, _ = make_app([{"tool_calls": [bash]}, {"content": "Done."}])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            await ui.submit(pilot, "fix add with sed")
            await ui.wait_turn(pilot, app)
            sidebar = app.query_one(Sidebar)
            await ui.wait_for(pilot, lambda: len(sidebar.changed_rows()) == 2)
            assert sidebar.changed_rows() == [("calc.py", 1, 1), ("made.txt", 2, 0)]
            assert "before.txt" not in _section(app, "#sidebar-files"), "not this session's change"

    async def test_a_live_git_snapshot_is_titled_as_live(self, make_app, ui) -> None:
        from agent.git_context import GitSnapshot

        app, _ = make_app([])
        async with app.run_test(size=(120, 36)) as pilot:
            await ui.wait_prepared(pilot, app)
            app.query_one(Sidebar).set_git(GitSnapshot(is_repo=True, branch="main", has_commits=True), live=True)
            await pilot.pause()
            assert _section(app, "#sidebar-git").startswith("Git · now")

    def test_long_paths_are_cut_from_the_left(self) -> None:
        text = files_text([("src/very/deep/package/module_name.py", 12, 3)], 24).plain
        assert len(text) == 24 and text.endswith("+12 -3") and text.startswith("…") and "module_name.py" in text


async def test_a_stuck_git_does_not_freeze_the_ui(make_app, workspace, ui, tmp_path, monkeypatch) -> None:
    import os
    import time

    from tui.widgets.prompt_input import PromptInput

    _git(workspace, "init", "-q")
    fake = tmp_path / "stuck-bin"
    fake.mkdir()
    (fake / "git").write_text("#!/bin/sh\nsleep 60\n")
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    app, _ = make_app([])
    started = time.monotonic()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("h", "i")  # the prompt answers while git hangs in the session's worker
        assert app.query_one(PromptInput).text == "hi"
        await ui.wait_prepared(pilot, app, timeout=30)
        assert time.monotonic() - started < 30, "git is killed at its time limit, not waited for"
        assert "did not answer" in _section(app, "#sidebar-git")


async def test_f4_walks_the_sidebar_tabs_and_shows_a_hidden_sidebar(make_app) -> None:
    """F4 brings the next tab forward (Files → Stats → Plan → Files); with the sidebar hidden it
    shows it first, on the tab it had."""
    app, _ = make_app([])
    async with app.run_test(size=(120, 36)) as pilot:
        sidebar = app.query_one(Sidebar)
        assert sidebar.active_tab == "tab-files"
        seen = []
        for _ in range(3):
            await pilot.press("f4")
            await pilot.pause()
            seen.append(sidebar.active_tab)
        assert seen == ["tab-stats", "tab-plan", "tab-files"]
        await pilot.press("ctrl+b")
        assert not sidebar.display
        await pilot.press("f4")
        await pilot.pause()
        assert sidebar.display and sidebar.active_tab == "tab-files"
