"""A tool call in the conversation: a one-line header and a body that is collapsed by default.

The header shows the tool name, a short summary of the arguments, the status (a spinner while
running, then ok / error / cancelled), the duration, the exit code, a truncation badge and, for
file changes, the added/removed line counts. The body (full arguments, the diff of edit/write,
the output as plain text) is mounted only when first expanded, so long conversations stay light.
Expanding is a reactive flag that toggles the ``-expanded`` CSS class.

A truncated result shows a badge, "truncated: 5.4 MB, 75 000 lines": the size comes from the
saved file, the lines are counted in a thread worker (the UI never reads a big file). ``v`` on
the focused block, or a click on the badge, opens the saved file in the output viewer.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from .diff_view import DiffView, diff_stats
from .plain_output import PlainOutput

if TYPE_CHECKING:
    from agent.events import ToolResult, ToolView

SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

def format_duration(seconds: float) -> str:
    """Return a short duration: ``0.4s``, ``12s``, ``2m05s`` (seconds in, text out)."""
    if seconds < 10:
        return f"{seconds:.1f}s"
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes}m{secs:02d}s"


def fit_summary(summary: str, width: int = 100) -> str:
    """``summary`` on one line, at most ``width`` characters (an ellipsis marks a cut)."""
    summary = " ".join(summary.split())
    return summary if len(summary) <= width else summary[: width - 1] + "…"


def output_lines(output: str) -> int:
    """The lines of a tool's output, not counting the status line tools end it with
    (``[exit code: 0]``, ``[end of file: 6 lines in total]``)."""
    lines = output.rstrip("\n").split("\n") if output.strip() else []
    if lines and lines[-1].startswith("[") and lines[-1].endswith("]"):
        lines.pop()
    return len(lines)


def _full_arguments(arguments: Any) -> str:
    if isinstance(arguments, (dict, list)):
        return json.dumps(arguments, ensure_ascii=False, indent=2)
    return "" if arguments is None else str(arguments)


class TruncationBadge(Static):
    """The header badge of a truncated result; a click opens the output viewer."""

    def on_click(self, event: Any) -> None:
        event.stop()
        block = next((node for node in self.ancestors if isinstance(node, ToolBlock)), None)
        if block is not None:
            block.action_view_output()


class ToolBlock(Widget, can_focus=True):
    """One tool call. ``finish(...)`` records its result; ``expanded`` shows the body.

    ``duration_format`` (seconds -> text) is injectable so snapshot tests can freeze it.
    ``saved_size`` / ``saved_lines`` describe the saved full output of a truncated result
    (bytes / lines; ``saved_lines`` is None until the worker has counted them).
    """

    DEFAULT_CSS = """
    ToolBlock {
        height: auto;
        margin: 1 0 0 0;
        border-left: outer $tool-border;
        padding: 0 0 0 1;
    }

    ToolBlock .tool-header {
        height: 1;
    }

    ToolBlock .tool-title {
        width: 1fr;
        height: 1;
    }

    ToolBlock .tool-badge {
        display: none;
        width: auto;
        height: 1;
        padding: 0 1;
        color: $warning;
        text-style: bold;
    }

    ToolBlock .tool-badge.-shown {
        display: block;
    }

    ToolBlock .tool-badge.-link:hover {
        text-style: bold underline;
    }

    ToolBlock .tool-meta {
        width: auto;
        height: 1;
        padding: 0 1;
        color: $text-muted;
    }

    ToolBlock.-running {
        border-left: outer $accent;
    }

    ToolBlock.-running .tool-title {
        color: $accent;
    }

    ToolBlock.-ok .tool-title {
        color: $foreground;
    }

    ToolBlock.-error {
        border-left: outer $error;
    }

    ToolBlock.-error .tool-title, ToolBlock.-error .tool-meta {
        color: $error;
    }

    ToolBlock.-cancelled .tool-title, ToolBlock.-cancelled .tool-meta {
        color: $text-muted;
    }

    ToolBlock .tool-body {
        display: none;
        height: auto;
        padding: 0 1 0 2;
    }

    ToolBlock.-expanded .tool-body {
        display: block;
    }

    ToolBlock .tool-args {
        color: $text-muted;
    }

    ToolBlock .tool-output, ToolBlock .tool-diff {
        margin-top: 0;
    }

    ToolBlock .tool-saved {
        color: $text-muted;
        text-style: italic;
    }

    /* Last, so that it wins over the status colours: the block Enter and v act on. */
    ToolBlock:focus {
        background: $boost;
        border-left: thick $accent;
    }

    ToolBlock:focus .tool-title {
        text-style: bold;
    }
    """

    BINDINGS = [("enter,space", "toggle", "Expand"), ("v", "view_output", "View full output")]

    expanded: reactive[bool] = reactive(False)
    status: reactive[str] = reactive("running")  # running, ok, error, cancelled

    def __init__(self, call_id: str, name: str, arguments: Any = None, *, view: "ToolView | None" = None,
                 duration_format: Callable[[float], str] | None = None) -> None:
        """``view``: how the call is shown (from its tool); without one, the name and the
        arguments on one line."""
        super().__init__(classes="block")
        from agent.tools.view import generic_view

        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.view = view if view is not None else generic_view(name, arguments)
        self.output: str | None = None
        self.display_output: str | None = None  # (``display`` is Textual's visibility flag)
        self.is_error = False
        self.truncated = False
        self.saved_path: str | None = None
        self.duration_s: float | None = None
        self.exit_code: int | None = None
        self.diff: str | None = None
        self.result: "ToolResult | None" = None
        self._format_duration = duration_format or format_duration
        self._frame = 0
        self._spinner: Timer | None = None
        self._body: Vertical | None = None
        self.awaiting_approval = False
        self.saved_size: int | None = None
        self.saved_lines: int | None = None
        self.saved_error: str | None = None
        self._counting = False

    # -- composition ---------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Horizontal(classes="tool-header"):
            yield Static(self._title(), markup=False, classes="tool-title")
            yield TruncationBadge(self._badge(), markup=False, classes="tool-badge")
            yield Static(self._meta(), markup=False, classes="tool-meta")

    def on_mount(self) -> None:
        if self.status == "running" and self.app.animation_level != "none":
            self._spinner = self.set_interval(0.1, self._spin)
        self._count_saved_lines()

    def _spin(self) -> None:
        self._frame = (self._frame + 1) % len(SPINNER_FRAMES)
        self._refresh_header()

    # -- header --------------------------------------------------------------------------------
    @property
    def denied(self) -> bool:
        """True when the call was not allowed (by the user, the permission mode or a deny rule):
        labelled "denied" rather than "error"."""
        return self.result is not None and self.result.outcome == "denied"

    def _icon(self) -> str:
        return {"running": SPINNER_FRAMES[self._frame], "ok": "✓", "error": "✗",
                "cancelled": "⊘"}.get(self.status, "?")

    def _title(self) -> Text:
        arrow = "▾" if self.expanded else "▸"
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{arrow} ")
        text.append(f"{self._icon()} ", style="bold")
        text.append(self.view.title, style="bold")
        summary = fit_summary(self.view.summary)
        if summary:
            text.append(f"  {summary}")
        return text

    def _meta(self) -> Text:
        parts: list[str] = []
        if self.status == "running":
            parts.append("awaiting approval" if self.awaiting_approval else "running")
        elif self.status == "cancelled":
            parts.append("cancelled")
        elif self.status == "error":
            parts.append("denied" if self.denied else "error")
        if self.diff:
            added, removed = diff_stats(self.diff)
            parts.append(f"+{added} -{removed}")
        elif self.output is not None and self.status == "ok" and not self.truncated:
            counted = self.result.output_lines if self.result is not None else None
            lines = counted if counted is not None else output_lines(self.output)
            parts.append(f"{lines} line{'s' if lines != 1 else ''}")
        if self.exit_code is not None:
            parts.append(f"exit {self.exit_code}")
        if self.duration_s is not None:
            parts.append(self._format_duration(self.duration_s))
        return Text(" · ".join(parts), no_wrap=True)

    def badge_text(self) -> str:
        """The badge: "truncated: 1.2 MB, 48 213 lines" for a truncated result, "saved output:
        ..." for a full output saved without truncation (binary output), else ""."""
        if not self.truncated and not self.saved_path:
            return ""
        from ..line_index import format_count, format_size  # only blocks with a saved output

        label = "truncated" if self.truncated else "saved output"
        if not self.saved_path:
            return f"{label} (full output not saved)"
        if self.saved_error:
            return f"{label} (saved output unreadable: {self.saved_error})"
        size = format_size(self.saved_size) if self.saved_size is not None else "?"
        lines = (f"{format_count(self.saved_lines)} line{'s' if self.saved_lines != 1 else ''}"
                 if self.saved_lines is not None else "counting lines...")
        return f"{label}: {size}, {lines}"

    def _badge(self) -> Text:
        return Text(self.badge_text(), no_wrap=True)

    def _refresh_header(self) -> None:
        for title in self.query(".tool-title").results(Static):
            title.update(self._title())
        for badge in self.query(".tool-badge").results(Static):
            badge.update(self._badge())
            badge.set_class(bool(self.truncated or self.saved_path), "-shown")
            badge.set_class(bool(self.saved_path and not self.saved_error), "-link")
            badge.tooltip = "Open the full output (v)" if self.saved_path else None
        for meta in self.query(".tool-meta").results(Static):
            meta.update(self._meta())

    # -- state ---------------------------------------------------------------------------------
    def finish(self, output: str, result: "ToolResult | None" = None) -> None:
        """Record the result: ``output`` is the model's text, ``result`` the typed rest (its
        outcome gives the status; its ``display``, when set, is what the body shows). The size of a
        saved output comes from the result when the tool counted it, else from the file."""
        from agent.events import ToolResult

        result = result if result is not None else ToolResult()
        self.result = result
        self.output = output
        self.display_output = result.display
        self.is_error = is_error = result.is_error
        self.truncated = result.truncated
        self.saved_path = saved_path = result.saved_path
        self.duration_s = result.duration_s
        self.exit_code = result.exit_code
        self.diff = result.diff or None
        if saved_path and result.output_bytes is not None and result.output_lines is not None:
            self.saved_size, self.saved_lines = result.output_bytes, result.output_lines
        elif saved_path:
            try:
                self.saved_size = os.stat(saved_path).st_size
            except OSError as exc:
                self.saved_error = exc.strerror or str(exc)
        self.status = "cancelled" if result.outcome in ("cancelled", "interrupted") else ("error" if is_error else "ok")
        if self.diff and not is_error:
            self.expanded = True  # a change the agent made is worth seeing at once
        self._count_saved_lines()

    def _count_saved_lines(self) -> None:
        """Count the saved output's lines in a thread worker (once, when mounted)."""
        if (not self.is_mounted or not self.saved_path or self.saved_error or self.saved_lines is not None
                or self._counting):
            return
        self._counting = True
        path = self.saved_path
        from ..line_index import count_lines
        self.run_worker(lambda: count_lines(path), thread=True, name="count-lines", group=f"count-{id(self)}",
                        exit_on_error=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name != "count-lines":
            return
        if event.state == WorkerState.SUCCESS:
            self.saved_size, self.saved_lines = event.worker.result
        elif event.state == WorkerState.ERROR:
            error = event.worker.error
            self.saved_error = getattr(error, "strerror", None) or str(error)
        else:
            return
        self._refresh_header()

    def set_awaiting_approval(self, waiting: bool) -> None:
        """Show (or stop showing) that the call waits for the user's permission."""
        self.awaiting_approval = waiting
        self._refresh_header()

    def mark_cancelled(self) -> None:
        """The turn ended without a result for this call: show it as cancelled."""
        if self.status == "running":
            self.status = "cancelled"

    def watch_status(self, status: str) -> None:
        for name in ("running", "ok", "error", "cancelled"):
            self.set_class(status == name, f"-{name}")
        if status != "running" and self._spinner is not None:
            self._spinner.stop()
            self._spinner = None
        self._refresh_header()
        if self._body is not None:
            self._rebuild_body()

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(expanded, "-expanded")
        if expanded and self._body is None:
            self._body = Vertical(classes="tool-body")
            self.mount(self._body)
            self._rebuild_body()
        self._refresh_header()

    # -- body ----------------------------------------------------------------------------------
    def _body_widgets(self) -> list[Widget]:
        widgets: list[Widget] = []
        if self.view.command is not None:
            widgets.append(PlainOutput(f"$ {self.view.command}", classes="tool-args"))
        elif self.view.body != "diff" or not self.diff:
            full = _full_arguments(self.arguments)
            if full and full not in ("{}", "[]"):
                widgets.append(PlainOutput(full, max_lines=40, classes="tool-args"))
        if self.diff:
            widgets.append(DiffView(self.diff, classes="tool-diff"))
        if self.status == "running":
            widgets.append(Static(Text("running...", style="italic"), classes="tool-output"))
        elif self.output is not None and not (self.diff and not self.is_error):
            shown = self.display_output if self.display_output is not None else self.output
            widgets.append(PlainOutput(shown or "(no output)", classes="tool-output"))
        if self.saved_path:
            widgets.append(Static(Text(f"full output saved to {self.saved_path} (v opens it)"), markup=False,
                                  classes="tool-saved"))
        return widgets

    def _rebuild_body(self) -> None:
        body = self._body
        if body is None:
            return
        body.remove_children()
        body.mount_all(self._body_widgets())

    # -- actions -------------------------------------------------------------------------------
    def action_toggle(self) -> None:
        """Expand or collapse the body."""
        self.expanded = not self.expanded

    def on_click(self) -> None:
        self.action_toggle()

    def on_key(self, event) -> None:
        """A printable key not bound here goes to the prompt input (typing is never lost)."""
        from .prompt_input import forward_typing

        forward_typing(self, event)

    class ViewOutputRequested(Message):
        """Open an output in the output viewer, titled ``title``: the saved full output at
        ``path``, or (``path`` None) the result ``text`` itself."""

        def __init__(self, path: str | None, title: str, text: str = "") -> None:
            super().__init__()
            self.path = path
            self.title = title
            self.text = text

    def action_view_output(self) -> None:
        """Open the whole output the model received in the viewer: the saved file of a truncated
        (or binary) result, else the result's own text (the body shows at most 400 lines)."""
        if self.saved_path:
            self.post_message(self.ViewOutputRequested(self.saved_path, f"Full output of {self.view.title}"))
            return
        if self.truncated:
            self.notify("The full output was not saved.", severity="warning")
            return
        if self.output is None:
            return
        shown = self.display_output if self.display_output is not None else self.output
        self.post_message(self.ViewOutputRequested(None, f"Output of {self.view.title}", text=shown))
