"""The compaction inspector: what each compaction of the session did, message by message.

It reads the session's journal (``MessageRecord`` records hold every original message;
``CompactionRecord`` records hold the summary, the ids summarised / pruned / aggregated, the
token counts and the rewritten records) in a thread worker, so a large journal never blocks the
UI. Layout:

- left, top: the compactions ("#1  182k → 41k · summarised 120, pruned 8", plus "no summary" for
  a rewrite without a summary call and "⚠ thrash"); left, below: the messages that compaction
  touched, one line each: a tag (S summarised, P reasoning pruned, A elided by loop aggregation,
  N kept with the aggregation notice, T tool result stubbed), its step, role or tool name and
  first words;
- right: the compaction's figures (with what was pinned by code and the thrash mark), then two
  panes side by side: the ORIGINAL journal record of the selected message and what replaced it
  (the rewritten record with the same id: the stub, the pruned message, the result carrying the
  notice; the summary message for summarised ones; the notice of its run for an elided step).
  With no message selected the right pane shows the summary, or says there was none.

Keys: up/down select, Tab moves between the lists and panes, q / Esc close.
The loader and the text helpers are in ``compaction_entries`` (``load_compactions(path)`` is pure).
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState

from .compaction_entries import (
    LEGEND, AffectedMessage, CompactionEntry, compaction_line, format_record, header_text, load_compactions,
    message_line, summary_text, who,
)

KEY_HINTS = "↑/↓ select · tab next pane · q close"


class CompactionInspectorScreen(Screen[None]):
    """Inspects the compactions in the journal at ``journal_path`` (see the module docstring).

    ``tokens_before`` / ``tokens_after`` pick the compaction shown first (the latest with these
    counts; the latest of all when None or not found). Attributes for tests: ``entries`` (the
    loaded ``CompactionEntry`` list, None while loading), ``current`` (the selected entry),
    ``original_text`` / ``replacement_text`` (what the two panes show), ``header_text`` (the
    figures line above them).
    """

    DEFAULT_CSS = """
    CompactionInspectorScreen { layout: vertical; }
    CompactionInspectorScreen #ci-title { height: 1; padding: 0 1; background: $panel; text-style: bold; }
    CompactionInspectorScreen #ci-body { height: 1fr; }
    CompactionInspectorScreen #ci-left { width: 56; height: 1fr; }
    CompactionInspectorScreen #ci-compactions { height: auto; max-height: 8; border: round $primary 60%; }
    CompactionInspectorScreen #ci-messages { height: 1fr; border: round $primary 60%; }
    CompactionInspectorScreen #ci-compactions:focus, CompactionInspectorScreen #ci-messages:focus {
        border: round $primary;
    }
    CompactionInspectorScreen #ci-right { width: 1fr; height: 1fr; }
    CompactionInspectorScreen #ci-header { height: auto; padding: 0 1; color: $accent; }
    CompactionInspectorScreen #ci-compare { height: 1fr; }
    CompactionInspectorScreen .ci-side { width: 1fr; height: 1fr; }
    CompactionInspectorScreen .ci-label { height: 1; padding: 0 1; text-style: bold; color: $text-muted; }
    CompactionInspectorScreen .ci-scroll { height: 1fr; border: round $panel-lighten-2; padding: 0 1; }
    CompactionInspectorScreen #ci-status { height: 1; background: $footer-background; }
    CompactionInspectorScreen #ci-message { width: 1fr; height: 1; padding: 0 1; }
    CompactionInspectorScreen #ci-keys { width: auto; height: 1; padding: 0 1; color: $text-muted; }
    """

    BINDINGS = [Binding("q,escape", "close", "Close")]

    def __init__(self, journal_path: str | Path, *, tokens_before: int | None = None,
                 tokens_after: int | None = None) -> None:
        super().__init__()
        self.journal_path = Path(journal_path)
        self.want = (tokens_before, tokens_after)
        self.entries: list[CompactionEntry] | None = None
        self.current: CompactionEntry | None = None
        self.original_text = ""
        self.replacement_text = ""
        self.header_text = ""
        self._warnings: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static(Text("Compaction inspector"), id="ci-title", markup=False)
        with Horizontal(id="ci-body"):
            with Vertical(id="ci-left"):
                yield OptionList(id="ci-compactions")
                yield OptionList(id="ci-messages")
            with Vertical(id="ci-right"):
                yield Static("", id="ci-header", markup=False)
                with Horizontal(id="ci-compare"):
                    with Vertical(classes="ci-side"):
                        yield Static(Text("Original (journal)"), id="ci-original-label", classes="ci-label")
                        with VerticalScroll(classes="ci-scroll", id="ci-original-scroll"):
                            yield Static("", id="ci-original", markup=False)
                    with Vertical(classes="ci-side"):
                        yield Static(Text("Replaced by"), id="ci-replacement-label", classes="ci-label")
                        with VerticalScroll(classes="ci-scroll", id="ci-replacement-scroll"):
                            yield Static("", id="ci-replacement", markup=False)
        with Horizontal(id="ci-status"):
            yield Static(Text("Reading the journal..."), id="ci-message", markup=False)
            yield Static(Text(KEY_HINTS), id="ci-keys", markup=False)

    def on_mount(self) -> None:
        self.query_one("#ci-compactions", OptionList).border_title = "Compactions"
        self.query_one("#ci-messages", OptionList).border_title = "Messages changed"
        self.run_worker(self._load, thread=True, name="compaction-journal", group="compaction-journal",
                        exit_on_error=False)

    def _load(self) -> list[CompactionEntry]:
        return load_compactions(self.journal_path, self._warnings)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name != "compaction-journal":
            return
        if event.state == WorkerState.SUCCESS:
            self._show_entries(event.worker.result or [])
        elif event.state == WorkerState.ERROR:
            self.entries = []
            self._status(f"Could not read the journal: {event.worker.error}")

    def _status(self, message: str) -> None:
        self.query_one("#ci-message", Static).update(Text(message))

    def _show_entries(self, entries: list[CompactionEntry]) -> None:
        self.entries = entries
        count = len(entries)
        self.query_one("#ci-title", Static).update(Text(
            f"Compaction inspector · {count} compaction{'s' if count != 1 else ''} · {self.journal_path.name}"))
        if not entries:
            self._status("No compaction in this session yet (/compact compacts now).")
            return
        self._status(f"{count} compaction{'s' if count != 1 else ''}"
                     + (f" · {len(self._warnings)} journal line(s) skipped" if self._warnings else ""))
        options = self.query_one("#ci-compactions", OptionList)
        for entry in entries:
            options.add_option(Option(Text(compaction_line(entry), no_wrap=True, overflow="ellipsis"),
                                      id=str(entry.number)))
        before, after = self.want
        index = len(entries) - 1
        if before is not None:
            for i, entry in enumerate(entries):
                if entry.tokens_before == before and (after is None or entry.tokens_after == after):
                    index = i
        options.highlighted = index
        options.call_after_refresh(options.scroll_to_highlight)  # the latest may be below the fold
        self.select_compaction(index)
        options.focus()

    def select_compaction(self, index: int) -> None:
        """Show compaction ``index`` (0-based): its figures, its messages, its summary."""
        if not self.entries or not 0 <= index < len(self.entries):
            return
        entry = self.current = self.entries[index]
        self.header_text = header_text(entry)
        self.query_one("#ci-header", Static).update(Text(self.header_text))
        messages = self.query_one("#ci-messages", OptionList)
        messages.clear_options()
        for item in entry.messages:
            messages.add_option(Option(Text(message_line(item), no_wrap=True, overflow="ellipsis"), id=item.id))
        self._show_panes("Select a message to compare its original record with what replaced it.\n\n"
                         + LEGEND.replace(" · ", "\n"),
                         "Summary" if entry.has_model_summary else "No model summary", summary_text(entry))

    def select_message(self, message_id: str) -> bool:
        """Show the original and the replacement of ``message_id`` in the current compaction;
        False when that compaction did not touch it."""
        entry = self.current
        item = next((m for m in entry.messages if m.id == message_id), None) if entry else None
        if item is None:
            return False
        label = {"summarized": "Replaced by the summary", "pruned": "Kept with its reasoning pruned",
                 "aggregated": "Elided: the aggregation notice that stands for it",
                 "stubbed": "Stubbed: head + tail + pointer to the saved full output",
                 "notice": "Kept, with the aggregation notice appended"}[item.how]
        if item.replacement is None:
            replacement = "(removed; no record stands for it)"
        elif item.replacement is entry.summary_message:
            replacement = summary_text(entry)
        else:
            replacement = format_record(item.replacement)
            if item.how == "aggregated":
                replacement = f"(in {who(item.replacement)} · id {item.replacement.get('id', '?')})\n\n{replacement}"
        self._show_panes(format_record(item.original, empty="(the original is not in the journal)"), label,
                         replacement)
        return True

    def _show_panes(self, original: str, label: str, replacement: str) -> None:
        self.original_text, self.replacement_text = original, replacement
        self.query_one("#ci-original", Static).update(Text(original))
        self.query_one("#ci-replacement-label", Static).update(Text(label))
        self.query_one("#ci-replacement", Static).update(Text(replacement))
        for scroll in self.query(".ci-scroll"):
            scroll.scroll_home(animate=False)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "ci-compactions":
            if self.entries and (self.current is None or self.current.number != event.option_index + 1):
                self.select_compaction(event.option_index)
        elif event.option_list.id == "ci-messages" and event.option.id:
            self.select_message(event.option.id)

    def action_close(self) -> None:
        """Close the inspector."""
        self.dismiss(None)


__all__ = ["AffectedMessage", "CompactionEntry", "CompactionInspectorScreen", "LEGEND", "compaction_line",
           "format_record", "header_text", "load_compactions", "message_line", "summary_text", "who"]
