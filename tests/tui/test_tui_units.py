"""Unit tests of the TUI's pure parts: output cleaning, diffs, summaries, the delta coalescer,
the theme loader. No app is started."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agent.events import Notice, ReasoningDelta, TextDelta
from tui.bridge import DeltaCoalescer
from tui.theme_loader import THEMES_DIR, ThemeError, counterpart, first_frame_theme, load_theme_file, load_themes
from tui.widgets.diff_view import diff_stats, diff_to_text
from tui.widgets.plain_output import clean_output, to_text
from tui.widgets.token_count import format_tokens
from tests.helpers import tool_call_started
from tui.widgets.tool_block import fit_summary, format_duration


class TestPlainOutput:
    def test_markup_stays_literal_and_ansi_becomes_style(self) -> None:
        text = to_text("[bold]x[/] \x1b[31mred\x1b[0m [link=http://x]y[/link]")
        assert text.plain == "[bold]x[/] red [link=http://x]y[/link]"
        assert [span.style.color.number for span in text.spans] == [1]  # ANSI red

    def test_carriage_returns_resolve_like_a_terminal(self) -> None:
        assert clean_output("a\r\nb\r\n") == "a\nb\n"
        assert clean_output("10%\r50%\r100%\ndone") == "100%\ndone"
        assert clean_output("abc\r\r") == "abc"

    def test_control_bytes_and_stray_escapes_are_dropped(self) -> None:
        text = to_text("bell\x07 back\x08 \x1b[?25lhidden-cursor \x1b")
        assert "\x07" not in text.plain and "\x08" not in text.plain and "\x1b" not in text.plain
        assert "hidden-cursor" in text.plain

    def test_long_output_is_cut_with_a_note(self) -> None:
        text = to_text("\n".join(str(i) for i in range(1000)), max_lines=10)
        assert text.plain.splitlines()[:10] == [str(i) for i in range(10)]
        assert "990 more lines" in text.plain


class TestDiff:
    DIFF = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-old [b]\n+new\n ctx\n"

    def test_colours_and_stats(self) -> None:
        text = diff_to_text(self.DIFF, {"diff-added": "#00ff00", "diff-removed": "#ff0000", "diff-hunk": "#0000ff"})
        assert "-old [b]" in text.plain
        styles = {text.plain[s.start:s.end]: str(s.style) for s in text.spans}
        assert "#00ff00" in styles["+new"] and "#ff0000" in styles["-old [b]"]
        assert diff_stats(self.DIFF) == (1, 1)


class TestSummaries:
    def test_each_tool_summarises_its_own_calls(self) -> None:
        def summary(name, arguments):
            return tool_call_started("c", name, arguments).view.summary

        assert summary("bash", {"command": "ls -la\n  | head"}) == "ls -la | head"
        assert summary("read", {"path": "a.py", "offset": 10, "limit": 5}) == "a.py [10:+5]"
        assert summary("read", {"path": "a.py"}) == "a.py"
        assert summary("grep", {"pattern": "TODO", "path": "src"}) == "TODO in src"
        assert summary("glob", {"pattern": "**/*.py"}) == "**/*.py"
        assert summary("edit", {"path": "a.py", "old_string": "a", "new_string": "b"}) == "a.py"
        assert summary("write", {"path": "a.py", "content": "x\ny\n"}) == "a.py (2 lines)"
        assert summary("update_plan", {"step": 2, "status": "done"}) == "step 2 → done"
        assert summary("submit_plan", {"title": "Fix it", "steps": [{"description": "a", "rationale": "r"}] * 3}) == "Fix it · 3 steps"
        assert summary("mystery", {"k": 1}) == '{"k": 1}'
        assert summary("bash", "{not json") == "{not json"
        assert summary("read", {"path": 3, "bogus": 1}) == '{"path": 3, "bogus": 1}'  # not valid: shown as given

    def test_views_say_what_the_ui_needs(self) -> None:
        assert tool_call_started("c", "bash", {"command": "make"}).view.command == "make"
        edit = tool_call_started("c", "edit", {"path": "a.py", "old_string": "a", "new_string": "b"}).view
        assert (edit.body, edit.path) == ("diff", "a.py")
        assert tool_call_started("c", "think", {"thought": "hm"}).view.body == "thought"
        assert tool_call_started("c", "read", {"path": "a.py"}).view.path is None  # reads change nothing

    def test_fit_summary(self) -> None:
        assert fit_summary("a\n  b") == "a b"
        assert len(fit_summary("x" * 500, width=40)) == 40 and fit_summary("x" * 500, width=40).endswith("…")

    def test_durations_and_tokens(self) -> None:
        assert format_duration(0.04) == "0.0s"
        assert format_duration(3.25) == "3.2s"
        assert format_duration(42) == "42s"
        assert format_duration(125) == "2m05s"
        assert format_tokens(950) == "950"
        assert format_tokens(4096) == "4.1k"
        assert format_tokens(200_000) == "200k"
        assert format_tokens(1_048_576) == "1.05M"


class TestCoalescer:
    def test_merges_adjacent_deltas_and_keeps_order(self) -> None:
        posted: list = []
        now = [0.0]
        coalescer = DeltaCoalescer(posted.append, interval_s=0.04, clock=lambda: now[0])
        for piece in ("Hel", "lo ", "wor"):
            coalescer.add(TextDelta(text=piece))
        coalescer.add(ReasoningDelta(text="hmm"))
        coalescer.add(TextDelta(text="ld"))
        assert posted == []  # nothing is due yet
        coalescer.add(Notice(message="n"))  # any other event flushes first
        assert [(type(e).__name__, getattr(e, "text", getattr(e, "message", ""))) for e in posted] == [
            ("TextDelta", "Hello wor"), ("ReasoningDelta", "hmm"), ("TextDelta", "ld"), ("Notice", "n")]

    def test_flushes_when_the_interval_passed(self) -> None:
        posted: list = []
        now = [0.0]
        coalescer = DeltaCoalescer(posted.append, interval_s=0.04, clock=lambda: now[0])
        coalescer.add(TextDelta(text="a"))
        now[0] = 0.05
        coalescer.add(TextDelta(text="b"))
        assert [e.text for e in posted] == ["ab"]

    def test_ticker_flushes_a_stalled_stream(self) -> None:
        arrived = threading.Event()
        posted: list = []

        def post(event) -> None:
            posted.append(event)
            arrived.set()

        coalescer = DeltaCoalescer(post, interval_s=0.02)
        coalescer.start()
        try:
            coalescer.add(TextDelta(text="waiting"))
            assert arrived.wait(2.0)
        finally:
            coalescer.stop()
        assert [e.text for e in posted] == ["waiting"]

    def test_many_small_deltas_become_few_messages(self) -> None:
        posted: list = []
        coalescer = DeltaCoalescer(posted.append, interval_s=0.04)
        for _ in range(5000):
            coalescer.add(TextDelta(text="x"))
        coalescer.flush()
        assert "".join(e.text for e in posted) == "x" * 5000
        assert len(posted) < 50


class TestThemes:
    def test_shipped_themes_load(self) -> None:
        themes, problems = load_themes(THEMES_DIR)
        assert problems == []
        names = {t.name: t for t in themes}
        assert set(names) >= {"opencli-dark", "opencli-light"}
        assert names["opencli-dark"].dark and not names["opencli-light"].dark
        assert names["opencli-dark"].variables["diff-added"]

    def test_bad_files_are_reported_not_fatal(self, tmp_path: Path) -> None:
        (tmp_path / "good.toml").write_text('name = "good"\nprimary = "#112233"\n')
        (tmp_path / "bad-colour.toml").write_text('name = "bad"\nprimary = "not-a-colour"\n')
        (tmp_path / "typo.toml").write_text('name = "typo"\nprimary = "#112233"\nprimray = "#fff"\n')
        (tmp_path / "broken.toml").write_text('name = "broken\n')
        themes, problems = load_themes(tmp_path)
        assert [t.name for t in themes] == ["good"]
        assert len(problems) == 3
        assert any("bad-colour.toml" in p and "primary" in p for p in problems)
        assert any("typo.toml" in p and "primray" in p for p in problems)

    def test_missing_required_field(self, tmp_path: Path) -> None:
        path = tmp_path / "t.toml"
        path.write_text('name = "x"\n')
        with pytest.raises(ThemeError, match="primary"):
            load_theme_file(path)

    def test_first_frame_theme_matches_the_validated_one(self) -> None:
        themes, _ = load_themes(THEMES_DIR)
        for theme in themes:
            quick = first_frame_theme(theme.name, THEMES_DIR)
            assert quick is not None and quick == theme

    def test_first_frame_theme_accepts_nothing_validation_rejects(self, tmp_path: Path) -> None:
        files = {
            "bad-colour": 'name = "bad-colour"\nprimary = "not-a-colour"\n',
            "typo": 'name = "typo"\nprimary = "#112233"\nprimray = "#fff"\n',
            "no-primary": 'name = "no-primary"\n',
            "bad-variable": 'name = "bad-variable"\nprimary = "#112233"\n[variables]\nuser-border = "nope"\n',
            "number": 'name = "number"\nprimary = 12\n',
        }
        for name, text in files.items():
            (tmp_path / f"{name}.toml").write_text(text)
        _, problems = load_themes(tmp_path)
        assert len(problems) == len(files)
        for name in files:
            assert first_frame_theme(name, tmp_path) is None, name
        assert first_frame_theme("absent", tmp_path) is None
        assert first_frame_theme("x", tmp_path / "no-such-dir") is None
        # Stricter than pydantic's lax bool: the first frame falls back, the validated load
        # (after the paint) then switches to the theme.
        (tmp_path / "lax.toml").write_text('name = "lax"\nprimary = "#112233"\ndark = "yes"\n')
        assert first_frame_theme("lax", tmp_path) is None
        assert "lax" in {t.name for t in load_themes(tmp_path)[0]}

    def test_counterpart(self) -> None:
        assert counterpart("opencli-dark", True) == "opencli-light"
        assert counterpart("opencli-light", False) == "opencli-dark"
        assert counterpart("nord", True) == "opencli-light"


def test_the_app_module_does_not_import_litellm(ui) -> None:
    """First paint must not wait for litellm: importing the app (and building a session) leaves it out."""
    import subprocess
    import sys

    code = ("import sys; import tui.app, tui.bridge, tui.event_handler, tui.commands; "
            "print('litellm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


async def test_typing_counts_as_activity_for_the_idle_collection(make_app, ui):
    """The deferred full garbage collection only runs when nobody is typing."""
    import gc

    from tui.bridge import IDLE_COLLECT_S, collect_when_idle

    app, _ = make_app([])
    async with app.run_test(size=(120, 36)) as pilot:
        await ui.wait_prepared(pilot, app)
        app._last_input = 0.0
        await pilot.press("a")
        assert app._last_input > 0.0
    gc.freeze()
    try:
        assert collect_when_idle(IDLE_COLLECT_S - 1, busy=False) is False
        assert collect_when_idle(IDLE_COLLECT_S + 1, busy=True) is False
        assert collect_when_idle(IDLE_COLLECT_S + 1, busy=False) is True
        assert gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()


def test_output_line_counts_leave_the_status_line_out() -> None:
    from tui.widgets.tool_block import output_lines

    read = "".join(f"{n:>6}\t{n}\n" for n in range(1, 7)) + "[end of file: 6 lines in total]"
    assert output_lines(read) == 6
    assert output_lines("\n".join(str(n) for n in range(1, 1501)) + "\n[exit code: 0]") == 1500
    assert output_lines("") == 0 and output_lines("one line") == 1


def test_the_turn_pause_and_the_import_pause_do_not_undo_each_other() -> None:
    """The UI's turn pause (tui.bridge) and the import's pause (agent.gc_pause) overlap in any
    order; the thresholds end as they began."""
    import gc

    from agent import gc_pause
    from tui import bridge

    before = gc.get_threshold()
    gc_pause.pause_full_collections()  # the import starts
    bridge._pause_full_gc()  # a turn starts
    gc_pause.resume_full_collections(freeze=False)  # the import ends
    assert gc.get_threshold()[2] == gc_pause.PAUSED_THRESHOLD, "the turn still runs"
    bridge._resume_full_gc()
    bridge._resume_full_gc()  # a second end of the same turn does nothing
    assert gc.get_threshold() == before
