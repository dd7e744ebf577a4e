"""The status bar at the bottom: mode, model, context meter, permission mode, activity, key hints.

Everything shown comes from reactives, so the app only assigns values. The context figures
(``prepared``, ``context_window``, ``used_tokens``, ``context_approximate``) are drawn by the
``ContextMeter`` on the right (tui/widgets/context_meter.py: "~12k/200k ▕█░░░░░░░│░░▏6%",
colour-coded, click for the breakdown); ``context_text`` is the plain summary of them.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Static

from .token_count import format_tokens

KEY_HINTS = "esc cancel · ctrl+o tool · ctrl+t theme · f1 help"
#: The key hints when the full ones do not fit.
SHORT_KEY_HINTS = "esc cancel · f1 help"
#: The embedded model's note after its name (dropped when the bar is narrow).
EMBEDDED_NOTE = " (small local model)"

#: The steps by which the bar gives up space when it is too narrow, least important first:
#: (key hints 0 full / 1 short / 2 none, meter 0 full / 1 no bar / 2 percent only / 3 hidden,
#: permission 0 "perm ask" / 1 "ask" / 2 hidden, model 0 full / 1 short name).
#: Mode (Act/Plan) and the activity ("working...") are always shown.
DEGRADE_STEPS: tuple[tuple[int, int, int, int], ...] = (
    (0, 0, 0, 0),
    (1, 0, 0, 0),
    (2, 0, 0, 0),
    (2, 1, 0, 0),
    (2, 2, 0, 0),
    (2, 2, 1, 0),
    (2, 2, 1, 1),
    (2, 3, 1, 1),
    (2, 3, 2, 1),
)


def short_model_name(model: str) -> str:
    """The model without its provider prefix: ``openai/gpt-4.1`` -> ``gpt-4.1``."""
    return model.rsplit("/", 1)[-1] if "/" in model else model


class StatusBar(Horizontal):
    """One line: left the session facts, right the key hints."""

    mode: reactive[str] = reactive("Act")
    model: reactive[str] = reactive("")
    prepared: reactive[bool] = reactive(False)
    context_window: reactive[int | None] = reactive(None)
    used_tokens: reactive[int | None] = reactive(None)
    permission_mode: reactive[str] = reactive("ask")
    activity: reactive[str] = reactive("")
    embedded: reactive[bool] = reactive(False)
    #: The context figure is a local estimate (the meter marks it "~").
    context_approximate: reactive[bool] = reactive(True)
    #: The session journal cannot be written (a persistent mark until writes resume).
    journal_failed: reactive[bool] = reactive(False)
    #: The effort hint of the running or last turn (``low``, ``medium``, ``high``), or "" for none.
    effort: reactive[str] = reactive("")
    #: The OS sandbox of commands in Act and in Plan mode (``AgentSession.sandbox_label``), shown
    #: after the permission mode while the bar has room; ``sandbox_warning``: commands run
    #: unsandboxed because no sandbox works here (or one asked for cannot run), a mark that
    #: stays whatever the width.
    sandbox: reactive[str] = reactive("")
    plan_sandbox: reactive[str] = reactive("")
    sandbox_warning: reactive[bool] = reactive(False)

    def compose(self) -> ComposeResult:
        from .context_meter import ContextMeter  # imports format_tokens from here

        yield Static(id="status-info", markup=False)
        yield ContextMeter(id="status-context")
        yield Static(Text(KEY_HINTS), id="status-keys", markup=False)

    def context_text(self) -> str:
        """Return the context part of the bar (see the module docstring)."""
        if not self.prepared:
            return "loading model info..."
        window = self.context_window
        if self.used_tokens is not None and window:
            pct = round(100 * self.used_tokens / window)
            return f"{format_tokens(self.used_tokens)}/{format_tokens(window)} ctx ({pct}%)"
        if window:
            return f"{format_tokens(window)} ctx"
        return "ctx unknown"

    def show_sandbox(self, session: object) -> None:
        """Take the sandbox marks from ``session`` (its ``sandbox_label``; nothing without one)."""
        label = getattr(session, "sandbox_label", None)
        if label is None:
            return
        self.sandbox, self.plan_sandbox = label(), label(plan=True)
        self.sandbox_warning = self.sandbox in ("unsandboxed", "sandbox unavailable")

    def _sandbox_text(self) -> str:
        return self.plan_sandbox if self.mode == "Plan" else self.sandbox

    def info_text(self, *, short_model: bool = False, perm: int = 0, max_width: int | None = None,
                  sandbox: bool = False) -> Text:
        """Return the left part of the bar as styled text.

        ``short_model``: the model without provider prefix, the embedded note and the effort hint
        (``· effort high``, shown after the model when one is sent);
        ``perm``: 0 ``· perm ask``, 1 ``· ask``, 2 no permission mode; ``max_width``: shorten
        the model name (with an ellipsis) so the mode and the activity still fit; ``sandbox``:
        show the sandbox mode (a warning mark for unsandboxed commands always shows).
        """
        text = Text(no_wrap=True, overflow="ellipsis")
        if self.mode == "Plan":  # Plan mode stands out: the theme's warning colour, not reverse video
            colours = getattr(self.app, "theme_variables", {}) if self.is_attached else {}
            text.append(f" {self.mode} ", style=f"bold {colours.get('background', 'black')} on "
                                                f"{colours.get('warning', 'yellow')}")
        else:
            text.append(f" {self.mode} ", style="bold reverse")
        text.append("  ")
        model = short_model_name(self.model) if short_model else self.model
        note = EMBEDDED_NOTE if self.embedded and not short_model else ""
        if self.effort and not short_model:
            note += f" · effort {self.effort}"
        perm_text = {0: f" · perm {self.permission_mode}", 1: f" · {self.permission_mode}"}.get(perm, "")
        activity = f" · {self.activity}" if self.activity else ""
        sandbox_text = self._sandbox_text()
        sandbox_part = ""
        if sandbox_text and self.sandbox_warning and self.mode != "Plan":
            sandbox_part = f" · ⚠ {sandbox_text}"
        elif sandbox_text and sandbox:
            sandbox_part = f" · {sandbox_text}"
        if max_width is not None:
            room = (max_width - text.cell_len - len(note) - len(perm_text) - len(activity)
                    - len(sandbox_part))
            if len(model) > room:
                model = model[:max(room - 1, 0)] + "…" if room > 1 else ""
        if model:
            text.append(model, style="bold")
        elif perm_text:  # no model yet (the session is opening): no empty gap before the rest
            perm_text = perm_text.removeprefix(" · ")
        else:
            activity = activity.removeprefix(" · ")
        if note:
            text.append(note, style="italic")
        text.append(perm_text)
        if sandbox_part:
            text.append(sandbox_part, style="bold" if "⚠" in sandbox_part else "dim")
        if activity:
            text.append(activity, style="italic")
        if self.journal_failed:
            text.append(" · ⚠ journal not saved", style="bold red")
        return text

    def fitted_parts(self, width: int) -> tuple[Text, int, int]:
        """The info text, the meter's form (0 full, 1 no bar, 2 percent only, 3 hidden) and the
        key hints' form (0 full, 1 short, 2 none) for a bar ``width`` cells wide: the first
        step of ``DEGRADE_STEPS`` where everything fits, else the last one with the model
        name cut short."""
        from .context_meter import ContextMeter

        meters = list(self.query(ContextMeter)) if self.is_mounted else []
        meter = meters[0] if meters else None
        hints_width = {0: len(KEY_HINTS) + 2, 1: len(SHORT_KEY_HINTS) + 2, 2: 0}
        sandbox_text = self._sandbox_text()
        # An active sandbox (``sandbox: workspace-write`` / ``read-only``) says what protects the
        # user: it stays at every width, the model name is cut first. ``sandbox off`` (chosen)
        # and ``no bash`` are the first thing given up when the bar is short.
        keep_sandbox = sandbox_text.startswith("sandbox: ") and not self.sandbox_warning
        if sandbox_text and not self.sandbox_warning and not keep_sandbox:
            info = self.info_text(sandbox=True)
            if info.cell_len + (meter.width_for(0) if meter is not None else 0) + hints_width[0] <= width:
                return info, 0, 0
        for keys, meter_form, perm, short in DEGRADE_STEPS:
            info = self.info_text(short_model=bool(short), perm=perm, sandbox=keep_sandbox)
            meter_width = meter.width_for(meter_form) if meter is not None else 0
            if info.cell_len + meter_width + hints_width[keys] <= width:
                return info, meter_form, keys
        keys, meter_form, perm, short = DEGRADE_STEPS[-1]
        return (self.info_text(short_model=True, perm=perm, max_width=width, sandbox=keep_sandbox),
                meter_form, keys)

    def _update(self) -> None:
        if self.is_mounted:
            self._sync_meter()
            self._fit()

    def _fit(self) -> None:
        """Show as much as the bar's width allows (``fitted_parts``)."""
        from .context_meter import ContextMeter

        width = self.size.width or (self.app.size.width if self.is_attached else 0) or 120
        info, meter_form, keys = self.fitted_parts(width)
        self.query_one("#status-info", Static).update(info)
        for meter in self.query(ContextMeter):
            meter.compact = meter_form
        hints = self.query_one("#status-keys", Static)
        hints.display = keys < 2
        hints.update(Text(SHORT_KEY_HINTS if keys == 1 else KEY_HINTS))

    def on_resize(self) -> None:
        self._fit()

    def _sync_meter(self) -> None:
        """Hand the context figures to the context meter (tui/widgets/context_meter.py)."""
        from .context_meter import ContextMeter

        for meter in self.query(ContextMeter):
            meter.prepared = self.prepared
            meter.window_tokens = self.context_window
            meter.approximate = self.context_approximate
            meter.used_tokens = self.used_tokens

    def on_mount(self) -> None:
        self._update()
        self.call_after_refresh(self._fit)  # the meter has loaded its settings by then

    def watch_mode(self) -> None:
        self._update()

    def watch_model(self) -> None:
        self._update()

    def watch_prepared(self) -> None:
        self._update()

    def watch_context_window(self) -> None:
        self._update()

    def watch_used_tokens(self) -> None:
        self._update()

    def watch_context_approximate(self) -> None:
        self._update()

    def watch_permission_mode(self) -> None:
        self._update()

    def watch_activity(self) -> None:
        self._update()

    def watch_journal_failed(self) -> None:
        self._update()

    def watch_sandbox(self) -> None:
        self._update()

    def watch_plan_sandbox(self) -> None:
        self._update()

    def watch_sandbox_warning(self) -> None:
        self._update()

    def watch_embedded(self) -> None:
        self._update()

    def watch_effort(self) -> None:
        self._update()
