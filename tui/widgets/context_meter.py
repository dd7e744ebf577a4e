"""The context meter in the status bar: how full the model's context window is.

It reads ``~124k/200k ▕██████░░│░░▏62%``:

- used / window tokens (``~`` when the figure is a local estimate, not the provider's count);
- a ten-cell bar with a tick (``│``) at the auto-compaction threshold;
- the percentage.

The colour follows the ``[compaction]`` settings: CSS class ``-normal`` below ``warn_at``
(default 60%), ``-warning`` from ``warn_at``, ``-error`` from ``threshold`` (default 80%). With
``mode`` ``off`` or ``manual`` there is no tick and the meter says ``auto-compact off``. Before
the model info is loaded it reads ``loading model info...``; before any usage, the window alone.

``ContextMeter`` is fed by ``ContextUsage`` events (``show_usage``); clicking it opens the
context breakdown (``tui.context_ui.open_breakdown``). The text functions are pure, for tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from .token_count import format_tokens

if TYPE_CHECKING:
    from agent.config.settings import CompactionSettings

#: Cells of the bar (each one is a tenth of the window).
BAR_CELLS = 10
FULL_CELL = "█"
EMPTY_CELL = "░"
TICK = "│"


def meter_level(used: int | None, window: int | None, warn_at: float = 0.6, threshold: float = 0.8) -> str:
    """``"normal"``, ``"warning"`` (fraction >= ``warn_at``) or ``"error"`` (>= ``threshold``).

    Unknown usage or window is ``"normal"``.
    """
    if used is None or not window:
        return "normal"
    fraction = used / window
    if fraction >= threshold:
        return "error"
    if fraction >= warn_at:
        return "warning"
    return "normal"


def meter_bar(fraction: float, threshold: float | None, cells: int = BAR_CELLS) -> str:
    """The bar: ``cells`` cells filled up to ``fraction`` (rounded, at least one when > 0),
    framed by ``▕ ▏``, with ``│`` inserted at ``threshold`` (None: no tick)."""
    fraction = min(max(fraction, 0.0), 1.0)
    filled = round(fraction * cells)
    if fraction > 0 and filled == 0:
        filled = 1
    body = [FULL_CELL] * filled + [EMPTY_CELL] * (cells - filled)
    if threshold is not None and 0 < threshold <= 1:
        body.insert(round(threshold * cells), TICK)
    return "▕" + "".join(body) + "▏"


def meter_text(used: int | None, window: int | None, *, approximate: bool = True, prepared: bool = True,
               mode: str = "auto", threshold: float = 0.8, compact: int = 0) -> str:
    """The meter's text (see the module docstring); pure, for tests and the widget.

    ``compact`` (for a narrow status bar): 0 the full meter; 1 without the bar and the
    ``auto-compact off`` note (``~12k/200k 6%``); 2 the percentage alone (``6%``; ``200k ctx``
    before any usage).
    """
    if compact:
        if not prepared:
            return "loading..."
        if not window:
            return "ctx ?"
        if used is None:
            return f"{format_tokens(window)} ctx"
        pct = round(100 * used / window)
        if compact >= 2:
            return f"{pct}%"
        return f"{'~' if approximate else ''}{format_tokens(used)}/{format_tokens(window)} {pct}%"
    if not prepared:
        return "loading model info..."
    auto = mode == "auto"
    suffix = "" if auto else " · auto-compact off"
    if not window:
        return "ctx unknown" + suffix
    if used is None:
        return f"{format_tokens(window)} ctx {meter_bar(0.0, threshold if auto else None)}{suffix}"
    fraction = used / window
    mark = "~" if approximate else ""
    pct = round(100 * fraction)
    bar = meter_bar(fraction, threshold if auto else None)
    return f"{mark}{format_tokens(used)}/{format_tokens(window)} {bar}{pct}%{suffix}"


def meter_tooltip(used: int | None, window: int | None, *, approximate: bool, mode: str,
                  warn_at: float, threshold: float) -> str:
    """The longer explanation shown on hover."""
    lines = []
    if used is not None and window:
        kind = ("counted locally, as the request builder counts" if approximate
                else "as the provider counted it")
        lines.append(f"{used:,} of {window:,} tokens in the context ({kind}).")
    elif window:
        lines.append(f"Context window: {window:,} tokens.")
    if mode == "auto":
        lines.append(f"Compacts automatically at {round(threshold * 100)}%; warns at {round(warn_at * 100)}%.")
    elif mode == "manual":
        lines.append("Auto-compaction is off (manual): /compact [focus] compacts now.")
    else:
        lines.append("Compaction is off.")
    lines.append("Click (or F2) for the breakdown.")
    return "\n".join(lines)


class ContextMeter(Static):
    """The status bar's context meter (module docstring). Assign the reactives or call
    ``show_usage(event)``; settings come from ``app.session.settings.compaction`` when mounted."""

    DEFAULT_CSS = """
    ContextMeter { width: auto; height: 1; padding: 0 0 0 1; }
    ContextMeter.-normal { color: $text-muted; }
    ContextMeter.-warning { color: $warning; text-style: bold; }
    ContextMeter.-error { color: $error; text-style: bold; }
    ContextMeter:hover { background: $boost; }
    """

    prepared: reactive[bool] = reactive(False)
    window_tokens: reactive[int | None] = reactive(None)
    used_tokens: reactive[int | None] = reactive(None)
    approximate: reactive[bool] = reactive(True)
    mode: reactive[str] = reactive("auto")
    warn_at: reactive[float] = reactive(0.6)
    threshold: reactive[float] = reactive(0.8)
    #: The form set by the status bar for its width: 0 full, 1 no bar, 2 percentage only, 3 hidden.
    compact: reactive[int] = reactive(0)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", markup=False, **kwargs)

    @property
    def level(self) -> str:
        """The colour level now: normal, warning or error."""
        return meter_level(self.used_tokens, self.window_tokens, self.warn_at, self.threshold)

    def show_usage(self, event: Any) -> None:
        """Show a ``ContextUsage`` event (used_tokens, window_tokens, approximate)."""
        self.window_tokens = event.window_tokens
        self.approximate = bool(getattr(event, "approximate", True))
        self.used_tokens = event.used_tokens

    def load_settings(self, settings: "CompactionSettings") -> None:
        """Take mode, warn_at and threshold (fractions of the window) from the session's
        compaction settings, and redraw."""
        self.mode = settings.mode
        self.warn_at = float(settings.warn_at)
        self.threshold = float(settings.threshold)
        if self.is_mounted:
            self._refresh_meter()

    def on_mount(self) -> None:
        self._refresh_meter()

    def text_for(self, compact: int = 0) -> str:
        """The meter's text in the given form (``meter_text``'s ``compact``)."""
        return meter_text(self.used_tokens, self.window_tokens, approximate=self.approximate,
                          prepared=self.prepared, mode=self.mode, threshold=self.threshold,
                          compact=min(compact, 2))

    def width_for(self, compact: int = 0) -> int:
        """The cells the meter takes in the given form (0 when hidden, form 3)."""
        return 0 if compact >= 3 else Text(self.text_for(compact)).cell_len + 1

    def _refresh_meter(self) -> None:
        level = self.level
        for name in ("normal", "warning", "error"):
            self.set_class(name == level, f"-{name}")
        self.set_class(self.mode != "auto", "-auto-off")
        self.display = self.compact < 3
        self.update(Text(self.text_for(self.compact), no_wrap=True))
        self.tooltip = meter_tooltip(self.used_tokens, self.window_tokens, approximate=self.approximate,
                                     mode=self.mode, warn_at=self.warn_at, threshold=self.threshold)

    def _watch_any(self) -> None:
        if self.is_mounted:
            self._refresh_meter()

    watch_prepared = watch_window_tokens = watch_used_tokens = watch_approximate = _watch_any
    watch_mode = watch_warn_at = watch_threshold = watch_compact = _watch_any

    class BreakdownRequested(Message):
        """The meter was clicked: the app shows the context breakdown."""

    async def on_click(self) -> None:
        """Ask for the context breakdown."""
        self.post_message(self.BreakdownRequested())
