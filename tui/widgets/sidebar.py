"""The sidebar: session facts beside the conversation, in three tabs (Textual's
``TabbedContent``): **Plan**, **Files** (Git and Changed files; the tab shown first) and
**Stats**. An approved plan brings its tab forward when Files was showing; the user's choice of
tab stays otherwise (a click on the tab bar).

- **Plan** (``#sidebar-plan``): the approved plan's checklist, live from ``PlanUpdated``
  (``set_plan``; drawn by ``plan_checklist``); hidden while no plan runs ("no plan yet" instead).

- **Git** (``#sidebar-git``): the snapshot taken at session start (``session.git`` after
  ``prepare()``): branch, default branch, ``git status --short`` lines (capped), recent commits;
  "not a git repository" outside one. A later snapshot from the file watcher replaces it with
  its title saying "now" instead of "at session start".
- **Changed files** (``#sidebar-files``): files changed in this session. From the tools' results
  (write/edit diffs, summed) merged with git's view (``set_git_changes``: files changed since
  the session started, by bash commands too, with counts against HEAD, which win for the files
  git lists); a file git cannot speak for (changed before the session, or ignored) keeps the
  tools' counts.
- **Stats** (``#sidebar-stats``, ``stats_panel``): the session's figures read from its log by
  ``stats_source`` (the session's ``stats``) in a thread worker: at the end of each turn and,
  while the tab shows, after model and tool calls at most every ``STATS_EVERY_S`` seconds.

Visible by default when the terminal is at least ``WIDE_COLUMNS`` wide (the app sets the
``-wide`` screen class through Textual's horizontal breakpoints); ``toggle()`` (Ctrl+B) shows or
hides it whatever the width. All text is plain (no markup).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from .stats_panel import StatsPanel

#: Terminal width (columns) from which the sidebar shows by default.
WIDE_COLUMNS = 110
#: Status lines shown; the rest is summarised in one line.
MAX_STATUS_LINES = 8
#: Seconds between two readings of the stats while a turn runs (the end of a turn always reads).
STATS_EVERY_S = 2.0


def _fit(text: str, width: int) -> str:
    """Cut ``text`` to ``width`` cells from the left ("…/long/path.py"), keeping the end."""
    if width <= 1 or len(text) <= width:
        return text
    return "…" + text[-(width - 1):]


def git_text(snapshot: Any | None, *, prepared: bool = True, max_status_lines: int = MAX_STATUS_LINES) -> Text:
    """Return the Git section body for a ``GitSnapshot`` (or None).

    Before ``prepare()`` ran (``prepared`` False) it says "loading..."; outside a repository,
    "not a git repository" (plus the error, when something else went wrong).
    """
    text = Text()
    if snapshot is None:
        text.append("loading..." if not prepared else "no snapshot", style="italic")
        return text
    if not getattr(snapshot, "is_repo", False):
        text.append("not a git repository", style="italic")
        if getattr(snapshot, "error", None):
            text.append(f"\n{snapshot.error}", style="italic")
        return text
    text.append("branch ", style="dim")
    text.append(snapshot.branch or "?", style="bold")
    if snapshot.default_branch and snapshot.default_branch != snapshot.branch:
        text.append("\ndefault ", style="dim")
        text.append(snapshot.default_branch)
    status_lines = [line for line in (snapshot.status or "").splitlines() if line.strip()]
    if status_lines:
        text.append("\nstatus", style="dim")
        for line in status_lines[:max_status_lines]:
            text.append(f"\n {line}")
        if len(status_lines) > max_status_lines:
            text.append(f"\n … {len(status_lines) - max_status_lines} more", style="dim")
    elif snapshot.has_commits:
        text.append("\nclean working tree", style="dim")
    if snapshot.recent_commits:
        text.append("\nrecent commits", style="dim")
        for commit in snapshot.recent_commits:
            text.append(f"\n {commit.sha} ", style="dim")
            text.append(commit.subject)
    elif not snapshot.has_commits:
        text.append("\nno commits yet", style="dim")
    if getattr(snapshot, "error", None):
        text.append(f"\n{snapshot.error}", style="italic")
    return text


def files_text(changes: Iterable[tuple[str, int, int]], width: int,
               colours: dict[str, str] | None = None) -> Text:
    """Return the Changed-files body: one line per ``(path, added, removed)``, the counts at the
    right and the path cut from the left to fit ``width`` cells. ``colours`` maps ``diff-added``
    and ``diff-removed`` to colours (the theme's variables)."""
    colours = colours or {}
    text = Text()
    rows = list(changes)
    if not rows:
        text.append("none yet", style="italic")
        return text
    for i, (path, added, removed) in enumerate(rows):
        counts = f"+{added} -{removed}"
        room = max(4, width - len(counts) - 1)
        name = _fit(path, room)
        if i:
            text.append("\n")
        text.append(name)
        text.append(" " * max(1, width - len(name) - len(counts)))
        text.append(f"+{added}", style=colours.get("diff-added", "green"))
        text.append(" ")
        text.append(f"-{removed}", style=colours.get("diff-removed", "red"))
    return text


class SidebarSection(Widget):
    """A titled section; ``body`` is a ``Text`` or a callable ``width -> Text`` drawn at render."""

    DEFAULT_CSS = """
    SidebarSection { height: auto; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, title: str, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="sidebar-section")
        self.title = title
        self._body: Any = Text()

    def set_body(self, body: Any) -> None:
        """Replace the body (``Text`` or ``width -> Text``) and redraw."""
        self._body = body
        self.refresh(layout=True)

    def body_text(self) -> Text:
        """The body as drawn at the current width."""
        body = self._body
        return body(max(self.content_size.width, 10)) if callable(body) else body

    def render(self) -> Text:
        """Title line, then the body (lines never wrap: long ones end with an ellipsis)."""
        text = Text()
        text.append(self.title, style="bold")
        text.append("\n")
        text.append_text(self.body_text())
        return text


class Sidebar(Vertical, can_focus=False):
    """The sidebar (see the module docstring). ``set_git(snapshot)`` fills the Git section;
    ``record_change(path, added, removed)`` adds to Changed files; ``reset_changes()`` empties it;
    ``stats_source`` (a callable returning a ``SessionStats``, run in a thread) feeds the Stats tab
    through ``refresh_stats``."""

    DEFAULT_CSS = """
    Sidebar TabbedContent { height: 1fr; }
    Sidebar ContentSwitcher { height: 1fr; }
    Sidebar TabPane { height: 1fr; padding: 0; }
    Sidebar .sidebar-pane { height: 1fr; scrollbar-size-vertical: 1; }
    Sidebar #sidebar-no-plan { margin: 1 0 0 0; color: $text-muted; text-style: italic; }
    Sidebar #sidebar-stats { margin: 1 0 0 0; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.changes: dict[str, tuple[int, int]] = {}
        self.git_changes: Any | None = None  # agent.runtime.agent_builder.WorkspaceChanges
        self.git_snapshot: Any | None = None
        self.plan_event: Any | None = None
        self.stats_source: Callable[[], Any] | None = None
        self._stats_read_at = float("-inf")
        self._stats_stale = True

    def compose(self) -> ComposeResult:
        with TabbedContent(initial="tab-files", id="sidebar-tabs"):
            with TabPane("Plan", id="tab-plan"):
                with VerticalScroll(classes="sidebar-pane"):
                    yield Static(Text("no plan yet"), id="sidebar-no-plan", markup=False)
                    plan = SidebarSection("Plan", id="sidebar-plan")  # the checklist, once a plan runs
                    plan.display = False
                    yield plan
            with TabPane("Files", id="tab-files"):
                with VerticalScroll(classes="sidebar-pane"):
                    git = SidebarSection("Git · at session start", id="sidebar-git")
                    git.set_body(git_text(None, prepared=False))
                    yield git
                    files = SidebarSection("Changed files", id="sidebar-files")
                    files.set_body(self._files_body)
                    yield files
            with TabPane("Stats", id="tab-stats"):
                with VerticalScroll(classes="sidebar-pane"):
                    yield StatsPanel(id="sidebar-stats")

    def on_mount(self) -> None:
        for tabs in self.query("Tabs"):
            tabs.can_focus = False  # Tab in the prompt completes; the tabs take clicks only

    # -- tabs ----------------------------------------------------------------------------------
    @property
    def active_tab(self) -> str:
        """The id of the tab showing: ``tab-plan``, ``tab-files`` or ``tab-stats``."""
        return self.query_one(TabbedContent).active

    def show_tab(self, tab: str) -> None:
        """Bring the tab ``tab`` (``tab-plan``, ``tab-files``, ``tab-stats``) forward."""
        self.query_one(TabbedContent).active = tab

    #: The tabs in the order F4 walks them.
    TAB_ORDER = ("tab-plan", "tab-files", "tab-stats")

    def next_tab(self) -> str:
        """Bring the next tab forward (Plan → Files → Stats → Plan); returns its id."""
        order = self.TAB_ORDER
        current = self.active_tab
        tab = order[(order.index(current) + 1) % len(order)] if current in order else order[0]
        self.show_tab(tab)
        return tab

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "tab-stats" and self._stats_stale:
            self.refresh_stats(now=True)

    # -- stats ---------------------------------------------------------------------------------
    def refresh_stats(self, *, now: bool = False) -> None:
        """Read the stats again (in a thread worker) when the Stats tab shows; ``now``: whatever
        the time since the last reading (the end of a turn). While the tab is hidden it only
        marks them stale, and showing the tab reads them."""
        source = self.stats_source
        if source is None:
            return
        if not (self.display and self.active_tab == "tab-stats"):
            self._stats_stale = True
            return
        if not now and time.monotonic() - self._stats_read_at < STATS_EVERY_S:
            self._stats_stale = True
            return
        self._stats_read_at = time.monotonic()
        self._stats_stale = False
        self.run_worker(source, thread=True, exclusive=True, group="sidebar-stats", name="sidebar-stats",
                        exit_on_error=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name == "sidebar-stats" and event.state == WorkerState.SUCCESS:
            self.query_one("#sidebar-stats", StatsPanel).show(event.worker.result)

    # -- content -----------------------------------------------------------------------------
    def set_git(self, snapshot: Any | None, *, live: bool = False) -> None:
        """Show a git snapshot (``None``: not taken): the session-start one, or with ``live`` a
        later one, titled as such."""
        self.git_snapshot = snapshot
        section = self.query_one("#sidebar-git", SidebarSection)
        section.title = "Git · now" if live else "Git · at session start"
        section.set_body(git_text(snapshot))

    def set_git_changes(self, changes: Any | None) -> None:
        """Take git's view of the changed files (``WorkspaceChanges``; None: no repository or
        git failed, so the tools' reports stand alone)."""
        self.git_changes = changes
        self.query_one("#sidebar-files", SidebarSection).set_body(self._files_body)

    def changed_rows(self) -> list[tuple[str, int, int]]:
        """The Changed-files rows ``(path, added, removed)``: the tools' files in the order they
        changed, then the other files git lists; git's counts for every file it lists."""
        rows = dict(self.changes)
        if self.git_changes is not None:
            for change in self.git_changes.files:
                rows[change.path] = (change.added or 0, change.removed or 0)
        return [(path, added, removed) for path, (added, removed) in rows.items()]

    def record_change(self, path: str, added: int, removed: int) -> None:
        """Add one write/edit of ``path`` (line counts from its diff)."""
        old_added, old_removed = self.changes.pop(path, (0, 0))
        self.changes[path] = (old_added + added, old_removed + removed)  # most recent last
        self.query_one("#sidebar-files", SidebarSection).set_body(self._files_body)

    def forget_change(self, path: str) -> None:
        """Drop ``path`` from Changed files (restored by /undo); unknown paths are ignored."""
        if self.changes.pop(path, None) is not None:
            self.query_one("#sidebar-files", SidebarSection).set_body(self._files_body)

    def reset_changes(self) -> None:
        """Forget the changed files (a new conversation)."""
        self.changes.clear()
        self.git_changes = None
        self.query_one("#sidebar-files", SidebarSection).set_body(self._files_body)

    def _files_body(self, width: int) -> Text:
        return files_text(self.changed_rows(), width, getattr(self.app, "theme_variables", None))

    def set_plan(self, event: Any | None) -> None:
        """Show the plan checklist of an approved ``PlanUpdated`` event (``None`` hides it)."""
        from .plan_checklist import plan_checklist_text, plan_section_title

        section = self.query_one("#sidebar-plan", SidebarSection)
        had_plan = self.plan_event is not None
        self.plan_event = event
        section.display = event is not None
        self.query_one("#sidebar-no-plan", Static).display = event is None
        if event is not None and not had_plan and self.active_tab == "tab-files":
            self.show_tab("tab-plan")
        elif event is None and had_plan and self.active_tab == "tab-plan":
            self.show_tab("tab-files")
        if event is not None:
            section.title = plan_section_title(event)
            section.set_body(lambda width: plan_checklist_text(event, width, getattr(self.app, "theme_variables", None)))

    # -- visibility ----------------------------------------------------------------------------
    @property
    def shown(self) -> bool:
        """True when the sidebar is displayed."""
        return self.display

    def toggle(self) -> None:
        """Show it when hidden, hide it when shown (overrides the width default)."""
        showing = self.shown
        self.set_class(showing, "-hidden")
        self.set_class(not showing, "-shown")
