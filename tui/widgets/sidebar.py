"""The sidebar: session facts beside the conversation, one section each.

Sections, top to bottom:

- **Plan** (``#sidebar-plan``): the approved plan's checklist, live from ``PlanUpdated``
  (``set_plan``; drawn by ``plan_checklist``); hidden while no plan runs.

- **Git** (``#sidebar-git``): the snapshot taken at session start (``session.git`` after
  ``prepare()``): branch, default branch, ``git status --short`` lines (capped), recent commits;
  "not a git repository" outside one. A later snapshot from the file watcher replaces it with
  its title saying "now" instead of "at session start".
- **Changed files** (``#sidebar-files``): files changed in this session. From the tools' results
  (write/edit diffs, summed) merged with git's view (``set_git_changes``: files changed since
  the session started, by bash commands too, with counts against HEAD, which win for the files
  git lists); a file git cannot speak for (changed before the session, or ignored) keeps the
  tools' counts.

Visible by default when the terminal is at least ``WIDE_COLUMNS`` wide (the app sets the
``-wide`` screen class through Textual's horizontal breakpoints); ``toggle()`` (Ctrl+B) shows or
hides it whatever the width. All text is plain (no markup).
"""

from __future__ import annotations

from typing import Any, Iterable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget

#: Terminal width (columns) from which the sidebar shows by default.
WIDE_COLUMNS = 110
#: Status lines shown; the rest is summarised in one line.
MAX_STATUS_LINES = 8


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


class Sidebar(VerticalScroll, can_focus=False):
    """The sidebar (see the module docstring). ``set_git(snapshot)`` fills the Git section;
    ``record_change(path, added, removed)`` adds to Changed files; ``reset_changes()`` empties it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.changes: dict[str, tuple[int, int]] = {}
        self.git_changes: Any | None = None  # agent.runtime.agent_builder.WorkspaceChanges
        self.git_snapshot: Any | None = None
        self.plan_event: Any | None = None

    def compose(self) -> ComposeResult:
        plan = SidebarSection("Plan", id="sidebar-plan")  # the plan checklist, shown once a plan runs
        plan.display = False
        yield plan
        git = SidebarSection("Git · at session start", id="sidebar-git")
        git.set_body(git_text(None, prepared=False))
        yield git
        files = SidebarSection("Changed files", id="sidebar-files")
        files.set_body(self._files_body)
        yield files

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
        self.plan_event = event
        section.display = event is not None
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
