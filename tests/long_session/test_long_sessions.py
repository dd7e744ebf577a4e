"""Long scripted sessions, scaled down, judged on every request (issue 11, "Done when").

Each shape runs once (lazily, cached for the module) in a small window so compaction has to
happen within a few dozen steps; ``SIZES`` gives (steps = model calls, window in tokens). Token
counts are real (tiktoken, loaded offline from litellm's bundled files; see ``tokens.py``).

What is asserted, per shape: the script ran as written (every turn done, every tool result as
scripted); every request is well formed (tool pairing, no empty message); no request is over the
window minus the reserved output; after every compaction the context is at most half the window
and every pinned item of the ground truth is present verbatim; no prefix break outside a
compaction (a resume and the Plan -> Act switch included). Per shape: compaction fires in one long
turn, reasoning older than N steps is pruned at the boundaries, aggregation fires on the
read -> edit -> test loops of the failing-tests repo.
"""

from __future__ import annotations

import pytest

from .checker import Report, check, unresolved_label
from .generator import SHAPES, make_script
from .runner import run_script
from .script import PYTEST

#: (steps, window tokens) per shape: a few dozen steps, windows of 8k-16k tokens.
SIZES = {
    "one_long_turn": (36, 12000),
    "many_short_turns": (40, 10000),
    "plan_then_execute": (36, 10000),
    "resume_midway": (36, 10000),
    "reasoning": (36, 10000),
    "huge_outputs": (14, 16000),
    "failing_tests": (43, 8000),
    "late_constraint": (36, 10000),
}

_REPORTS: dict[str, Report] = {}


@pytest.fixture
def report(request, tmp_path_factory) -> Report:
    """The checked run of the shape named by the test's ``shape`` parameter (run once per module,
    inside the first test that needs it, so conftest's isolated config and data folders apply)."""
    shape = request.node.callspec.params["shape"] if hasattr(request.node, "callspec") else request.param
    if shape not in _REPORTS:
        steps, window = SIZES[shape]
        run = run_script(make_script(shape, steps, window), tmp_path_factory.mktemp(shape))
        _REPORTS[shape] = check(run)
    return _REPORTS[shape]


def expect(condition: bool, message: str) -> None:
    """Fail with ``message`` alone (no traceback of the report object) unless ``condition``."""
    if not condition:
        pytest.fail(message, pytrace=False)


def _fail_unless_none(report: Report, *checks: str) -> None:
    """Fail with one line per offending request (index and numbers) when any of ``checks`` broke."""
    if any(report.of(c) for c in checks):
        pytest.fail("\n\n".join(report.describe(c) for c in checks if report.of(c)), pytrace=False)


# ------------------------------------------------------------------------------ every shape
@pytest.mark.parametrize("shape", SHAPES)
def test_script_runs_as_written(report: Report, shape: str) -> None:
    """Every turn ends ``done`` with all scripted replies consumed; each tool result shows what the
    script expects (real pytest counts, truncation of huge outputs, edits applied)."""
    _fail_unless_none(report, "turn_not_done", "script")


@pytest.mark.parametrize("shape", SHAPES)
def test_every_request_is_well_formed(report: Report, shape: str) -> None:
    """Pairing (each tool call answered by exactly one result, no orphans) and no empty message."""
    _fail_unless_none(report, "pairing", "empty_message")


@pytest.mark.parametrize("shape", SHAPES)
def test_no_request_over_the_window(report: Report, shape: str) -> None:
    """Real-tokenizer count of every main request <= window - reserved output tokens."""
    f = report.figures
    expect(f["over_window"] == 0, (
        f"{report.describe('over_window')}\npeak {f['peak_tokens']} tokens = {f['peak_over_window']:.0%} of the window "
        f"({report.token_method}; reserved: {report.reserved_source})"))


@pytest.mark.parametrize("shape", SHAPES)
def test_context_at_most_half_the_window_after_every_compaction(report: Report, shape: str) -> None:
    expect(report.figures["compactions"] > 0, f"{shape}: no compaction in {report.figures['main_requests']} requests")
    _fail_unless_none(report, "after_compaction_over_half")


@pytest.mark.parametrize("shape", SHAPES)
def test_every_pinned_item_present_after_every_compaction(report: Report, shape: str) -> None:
    """Task, later instructions, plan with step states, files changed (bash included), last
    unresolved error per test command, final test state: from the script's ground truth."""
    expect(report.figures["compactions"] > 0, f"{shape}: no compaction, so no pinned item could be checked")
    _fail_unless_none(report, "pinned_missing")


@pytest.mark.parametrize("shape", SHAPES)
def test_no_prefix_break_outside_compaction(report: Report, shape: str) -> None:
    """Each main request extends the previous one byte for byte unless a compaction came between
    (resume and Plan/Act switch are not boundaries)."""
    _fail_unless_none(report, "prefix_break")


# --------------------------------------------------------------------------- per shape
@pytest.mark.parametrize("shape", ["one_long_turn"])
def test_compaction_fires_in_one_long_turn(report: Report, shape: str) -> None:
    """A compaction happens inside the single turn, and before any request has gone over the window."""
    f = report.figures
    expect(f["compactions"] >= 1, (f"one turn of {f['main_requests']} steps: 0 compactions, peak request "
                                   f"{f['peak_tokens']} tokens ({f['peak_over_window']:.0%} of {report.window})"))
    first, over = f["first_compaction_index"], f["first_over_window_index"]
    if over is not None:
        expect(first is not None and first <= over, (
            f"first compaction before request {first}, but request {over} was already over the window at "
            f"{report.request_tokens[over]} tokens ({report.request_tokens[over] / report.window:.0%})"))


@pytest.mark.parametrize("shape", ["reasoning"])
def test_reasoning_pruned_at_compaction_boundaries(report: Report, shape: str) -> None:
    f = report.figures
    expect(f["reasoning_in_requests"] > 0, "the shape sent no reasoning at all: nothing to prune")
    expect(f["compactions"] > 0, "no compaction, so no boundary to prune at")
    _fail_unless_none(report, "old_reasoning")


@pytest.mark.parametrize("shape", ["failing_tests"])
def test_aggregation_fires_on_read_edit_test_loops(report: Report, shape: str) -> None:
    f = report.figures
    expect(f["compactions"] > 0, "no compaction, so aggregation had no boundary to run at")
    # a collapsed loop either stays in the kept part (its notice is in the requests) or is
    # summarised in its turn; the compactions' own counts say that it was collapsed
    expect(f["aggregated_messages"] > 0, (
        f"read -> edit -> pytest cycles over {f['main_requests']} steps, {f['compactions']} compactions: "
        f"{f['aggregated_messages']} messages aggregated, {f['requests_with_aggregation']} requests with an "
        f"aggregation notice"))


@pytest.mark.parametrize("shape", ["failing_tests"])
def test_a_passing_subset_run_keeps_the_wider_failure_pinned(report: Report, shape: str) -> None:
    """The /compact after ``pytest tests/test_mod_00.py -k basic`` passed, while the full suite's
    failure is open: its counts and an unresolved test name are in the next request, and at every
    later compaction while it stays open."""
    tally = report.pins.get(unresolved_label(PYTEST))
    expect(tally is not None and tally.checked >= 1, f"no compaction while the full suite's failure was open: {report.pins}")
    expect(tally.present == tally.checked, (f"the full suite's unresolved failure was missing after {tally.checked - tally.present} "
                                            f"of {tally.checked} compactions: requests {tally.missing_at}"))
