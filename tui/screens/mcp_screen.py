"""``/mcp``: the session's MCP servers in a modal screen: each server's name, status, where it
comes from, what it runs (for a project server: every field its approval
covers, env values of secret-looking names masked) and its tools (or, after a failure, the error and the end of its
stderr). Up/Down select a server; ``r`` restarts it (in a thread: stopping one takes up to a few
seconds), ``a`` approves a project server that waits for approval (remembered for this project);
Esc or q closes. The list refreshes twice a second while the screen is open.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widgets import Static

if TYPE_CHECKING:
    from ..session_api import UISession

_STATUS_STYLE = {"ready": "green", "starting": "yellow", "failed": "red", "needs approval": "magenta",
                 "disabled": "dim", "stopped": "dim"}


def servers_text(statuses: list[Any], selected: int) -> Text:
    """The servers (``agent.mcp.manager.ServerStatus``) as text, the ``selected`` one marked."""
    if not statuses:
        return Text("No MCP servers configured. Add [mcp.servers.NAME] to your config "
                    "(see the README's \"MCP servers\").", style="italic")
    out = Text()
    for index, status in enumerate(statuses):
        mark = "▶ " if index == selected else "  "
        out.append(mark + status.name, style="bold")
        out.append(f"  {status.status}", style=_STATUS_STYLE.get(status.status, ""))
        out.append(f"  ({status.origin}: {status.source}, {status.transport})\n", style="dim")
        if status.origin == "project" and status.details:  # all that its approval covers
            for line in status.details:
                out.append(f"    {line}\n", style="dim")
        else:
            out.append(f"    {status.target}\n", style="dim")
        if status.tools:
            out.append(f"    {len(status.tools)} tools: " + ", ".join(status.tools) + "\n")
        if status.error:
            out.append(f"    error: {status.error}\n", style="red")
        for line in status.stderr.splitlines()[-5:]:
            out.append(f"    | {line}\n", style="dim")
        out.append("\n")
    return out


class McpScreen(ModalScreen[None]):
    """The ``/mcp`` screen over ``session`` (``mcp_statuses``, ``restart_mcp``, ``approve_mcp``)."""

    DEFAULT_CSS = """
    McpScreen { align: center middle; }
    McpScreen #mcp-dialog {
        width: 110; max-width: 95%; height: auto; max-height: 90%;
        padding: 1 2; border: thick $primary; background: $panel;
    }
    McpScreen #mcp-title { text-style: bold; }
    McpScreen #mcp-hint { color: $text-muted; margin: 1 0 0 0; }
    """

    BINDINGS = [Binding("escape,q", "close", "Close"), Binding("up", "move(-1)", show=False),
                Binding("down", "move(1)", show=False), Binding("r", "restart", "Restart"),
                Binding("a", "approve", "Approve")]

    def __init__(self, session: "UISession") -> None:
        super().__init__()
        self.session = session
        self.selected = 0
        self.message = ""

    def statuses(self) -> list[Any]:
        """The session's server statuses ([] for a session without MCP support)."""
        getter = getattr(self.session, "mcp_statuses", None)
        return list(getter()) if getter is not None else []

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="mcp-dialog"):
            yield Static(Text("MCP servers"), id="mcp-title", markup=False)
            yield Static(Text(""), id="mcp-list", markup=False)
            yield Static(Text("↑↓ select · r restart · a approve (a project server) · Esc close"),
                         id="mcp-hint", markup=False)

    def on_mount(self) -> None:
        self.refresh_list()
        self.set_interval(0.5, self.refresh_list)

    def refresh_list(self) -> None:
        """Redraw the list from the session's statuses."""
        statuses = self.statuses()
        self.selected = max(0, min(self.selected, len(statuses) - 1))
        text = servers_text(statuses, self.selected)
        if self.message:
            text.append(self.message, style="italic")
        try:
            self.query_one("#mcp-list", Static).update(text)
        except NoMatches:  # closing: the interval fired once more
            pass

    def action_move(self, step: int) -> None:
        """Select the next or previous server."""
        self.selected += step
        self.refresh_list()

    def _selected(self) -> Any:
        statuses = self.statuses()
        return statuses[self.selected] if statuses else None

    def action_restart(self) -> None:
        """Restart the selected server in a thread worker."""
        status = self._selected()
        if status is None:
            return
        self.message = f"Restarting {status.name}..."
        self.run_worker(lambda: self._do(self.session.restart_mcp, status.name), thread=True, group="mcp-action",
                        exit_on_error=False)
        self.refresh_list()

    def action_approve(self) -> None:
        """Approve the selected project server (remembered for this project) and start it."""
        status = self._selected()
        if status is None or status.status != "needs approval":
            self.message = "Only a project server that needs approval can be approved."
        else:
            self.message = f"Approved {status.name} for this project; starting it."
            self.run_worker(lambda: self._do(self.session.approve_mcp, status.name), thread=True,
                            group="mcp-action", exit_on_error=False)
        self.refresh_list()

    def _do(self, action: Any, name: str) -> None:
        try:
            action(name)
        except (KeyError, ValueError, OSError) as exc:
            self.message = f"{name}: {exc}"

    def action_close(self) -> None:
        """Close the screen."""
        self.dismiss(None)
