"""A pipeline hook's run in the conversation: one compact line, the detail expandable.

"⋯ verify · running" while the hook runs (``HookStarted``), then its verdict (``HookFinished``):
"✓ verify · pytest · 2.1 s", "✗ verify · 3 failed · round 1 of 2 · 1.4 s", "✗ verify · failed: 1 failed · round 2 of 2 · no
rounds left · 1.2 s" (``fail``: the last round), "⚠ verify · timed out: ...", "– verify · skipped: no
file changed", "⚠ refine · error: ...". The detail (e.g. the failing test output) is mounted only
when the block is first expanded (Enter, Space or a click).
"""

from __future__ import annotations

from typing import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

#: The mark and the CSS class of each verdict.
VERDICT_MARKS: dict[str, tuple[str, str]] = {
    "accept": ("✓", "-ok"), "retry": ("✗", "-failed"), "fail": ("✗", "-failed"), "block": ("⊘", "-failed"), "error": ("⚠", "-warning"),
    "timeout": ("⚠", "-warning"), "disabled": ("–", "-muted"), "skipped": ("–", "-muted"),
}
#: Words put before the message for verdicts whose message alone would not say what happened.
VERDICT_WORDS = {"error": "error: ", "timeout": "timed out: ", "disabled": "off: ", "skipped": "skipped: ",
                 "block": "blocked: ", "fail": "failed: "}


def _seconds(value: float) -> str:
    return f"{value:.1f} s" if value < 60 else f"{int(value // 60)} min {int(value % 60)} s"


class HookBlock(Widget, can_focus=True):
    """One hook run (``hook``: its name, ``event``: the pipeline event, ``round``); ``finish``
    sets the verdict, message, detail and duration (seconds)."""

    DEFAULT_CSS = """
    HookBlock {
        height: auto;
        margin: 0 0 0 0;
        padding: 0 1 0 0;
        border-left: blank;
        color: $text-muted;
    }
    HookBlock.-ok .hook-header { color: $success; }
    HookBlock.-failed .hook-header { color: $error; }
    HookBlock.-warning .hook-header { color: $warning; }
    HookBlock .hook-body {
        display: none;
        padding: 0 0 0 2;
        color: $text-muted;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    HookBlock.-expanded .hook-body { display: block; }
    HookBlock:focus {
        background: $boost;
        border-left: thick $accent;
    }
    """

    BINDINGS = [("enter,space", "toggle", "Expand")]

    expanded: reactive[bool] = reactive(False)

    def __init__(self, hook: str, event: str, round_no: int, *,
                 duration_format: Callable[[float], str] | None = None) -> None:
        super().__init__(classes="block")
        self.hook = hook
        self.event = event
        self.round = round_no
        self.verdict: str | None = None
        self.message = ""
        self.detail = ""
        self.duration_s = 0.0
        self._format = duration_format or _seconds
        self._body: Static | None = None

    def compose(self) -> ComposeResult:
        yield Static(self.header(), markup=False, classes="hook-header")

    def header(self) -> Text:
        """The one line the block shows (module docstring)."""
        if self.verdict is None:
            return Text(f"⋯ {self.hook} · running")
        mark, _ = VERDICT_MARKS.get(self.verdict, ("·", ""))
        parts = [f"{mark} {self.hook}"]
        if self.message:
            parts.append(VERDICT_WORDS.get(self.verdict, "") + self.message)
        elif self.verdict in VERDICT_WORDS:
            parts.append(VERDICT_WORDS[self.verdict].rstrip(": "))
        if self.verdict not in ("skipped", "disabled"):
            parts.append(self._format(self.duration_s))
        text = Text(" · ".join(parts), no_wrap=True, overflow="ellipsis")
        if self.detail:
            text.append(" ▾" if self.expanded else " ▸", style="dim")
        return text

    def finish(self, verdict: str, message: str, detail: str, duration_s: float) -> None:
        """Show how the hook ended."""
        self.verdict, self.message, self.detail, self.duration_s = verdict, message, detail, duration_s
        _, css = VERDICT_MARKS.get(verdict, ("", ""))
        for name in ("-ok", "-failed", "-warning", "-muted"):
            self.set_class(name == css, name)
        self._refresh()

    def _refresh(self) -> None:
        if not self.is_mounted:
            return
        self.query_one(".hook-header", Static).update(self.header())
        if self._body is not None:
            self._body.update(self._detail_text())

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(expanded, "-expanded")
        if expanded and self._body is None and self.is_mounted:
            self._body = Static(self._detail_text(), markup=False, classes="hook-body")
            self.mount(self._body)
        self._refresh()

    def _detail_text(self) -> Text:
        """The detail as plain text, one screen line per line (long lines end in an ellipsis)."""
        return Text(self.detail.rstrip(), no_wrap=True, overflow="ellipsis")

    def action_toggle(self) -> None:
        """Expand or collapse the detail (nothing to expand without one)."""
        if self.detail or self.expanded:
            self.expanded = not self.expanded

    def on_click(self) -> None:
        self.action_toggle()
