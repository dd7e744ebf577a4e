"""The judge: invariants checked on every recorded request, and the figures of a run.

``check(run)`` takes a ``runner.SessionRun`` and returns a ``Report``:

- ``violations``: one ``Violation`` per broken invariant, naming the check, the main request
  index (0-based over the whole session, across a reopen) and the numbers;
- ``figures``: counts and token figures (all *tokens* counted by ``tokens.TokenCounter``, a real
  tokenizer when one is available offline, ``Report.token_method`` says which);
- ``pins``: per pinned item, how many compactions it was checked after and how many it was
  present after.

Checks (each written here, independently of the code under test):

- ``pairing``: every assistant tool call is answered by exactly one tool result, in the block of
  tool messages right after it (ids compared as a multiset); no tool message outside such a block;
- ``empty_message``: no message whose content is empty and that carries no tool calls;
- ``over_window``: the counted request is at most window - reserved output tokens;
- ``after_compaction_over_half``: the first main request after each compaction is at most 50% of
  the window;
- ``pinned_missing``: the ground truth of the script (``pins_at``), not the code's own notion of
  what to pin, is present verbatim in the first main request after each compaction;
- ``prefix_break``: each main request's tools and messages extend the previous main request's,
  compared as JSON text, unless a compaction happened between them (a failed compaction is no
  boundary); resumes and Plan/Act switches are not exempt;
- ``old_reasoning``: in the first request after a compaction, no ``reasoning_content`` and no
  ``<think>`` block in assistant messages older than the last N assistant steps
  (``strip_reasoning_after_steps``, default 3);
- ``turn_not_done`` / ``script``: a turn that did not end ``done`` with every scripted reply
  consumed, or a tool result that contradicts the script (the harness's own validity).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any

from agent.events import CompactionDone, ContextUsage
from agent.session.journal import read_journal

from .runner import Request, SessionRun
from .tokens import TokenCounter, content_text
from .truth import contains, pins_at, unresolved_label  # noqa: F401 (unresolved_label re-exported)

AGGREGATION_MARK = "[aggregated:"
THINK_RE = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
#: A compaction whose first following request comes within this many steps of the previous
#: compaction's counts as thrash.
THRASH_STEPS = 3
#: After a compaction the context must be at most this fraction of the window.
AFTER_COMPACTION_MAX = 0.5


@dataclass(frozen=True)
class Violation:
    """One broken invariant: the ``check`` name, the main request index, the numbers."""

    check: str
    index: int          # main request index, -1 when not about one request
    detail: str

    def __str__(self) -> str:
        where = f"request {self.index}" if self.index >= 0 else "run"
        return f"{self.check} at {where}: {self.detail}"


@dataclass
class PinTally:
    """After how many compactions one pinned item was checked and found; where it was missing."""

    checked: int = 0
    present: int = 0
    missing_at: list[int] = field(default_factory=list)


@dataclass
class Report:
    """What ``check`` found: violations, figures (tokens unless named otherwise), pin tallies,
    the counted tokens of every main request and the indices of the first requests after
    compactions. ``limit`` = window - reserved output (tokens)."""

    shape: str
    window: int
    limit: int
    token_method: str
    reserved_source: str
    violations: list[Violation] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    pins: dict[str, PinTally] = field(default_factory=dict)
    request_tokens: list[int] = field(default_factory=list)
    after_compaction: list[int] = field(default_factory=list)   # main indices of first requests after compactions

    def of(self, check: str) -> list[Violation]:
        return [v for v in self.violations if v.check == check]

    def describe(self, check: str, limit: int = 8) -> str:
        found = self.of(check)
        lines = [str(v) for v in found[:limit]]
        if len(found) > limit:
            lines.append(f"... and {len(found) - limit} more")
        return f"{len(found)} {check} violation(s) in {self.shape} (window {self.window}):\n" + "\n".join(lines)


# ----------------------------------------------------------------------------- text helpers
def request_text(request: Request) -> str:
    """Every text the model sees in ``request``: contents, reasoning, tool call arguments."""
    parts = []
    for m in request.messages:
        parts.append(content_text(m))
        if m.get("reasoning_content"):
            parts.append(str(m["reasoning_content"]))
        for c in m.get("tool_calls") or []:
            parts.append(str((c.get("function") or {}).get("arguments") or ""))
    return "\n".join(parts)


# ------------------------------------------------------------------------------- checks
def pairing_problems(messages: list[dict[str, Any]]) -> list[str]:
    """Pairing problems of one request's messages, each as a short text (empty when fine)."""
    problems = []
    i = 0
    while i < len(messages):
        m = messages[i]
        if m.get("role") == "tool":
            problems.append(f"orphan tool result at message {i} (id {m.get('tool_call_id')!r})")
            i += 1
            continue
        calls = (m.get("tool_calls") or []) if m.get("role") == "assistant" else []
        i += 1
        if not calls:
            continue
        block = []
        while i < len(messages) and messages[i].get("role") == "tool" and len(block) < len(calls):
            block.append(messages[i])
            i += 1
        want = Counter(c.get("id") for c in calls)
        got = Counter(t.get("tool_call_id") for t in block)
        if want != got:
            problems.append(f"assistant message {i - len(block) - 1}: calls {sorted(want.elements())} "
                            f"answered by {sorted(got.elements())}")
    return problems


def empty_messages(messages: list[dict[str, Any]]) -> list[int]:
    """Indices of messages with empty content and no tool calls."""
    return [i for i, m in enumerate(messages) if not content_text(m).strip() and not m.get("tool_calls")]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def prefix_break(previous: Request, current: Request) -> str | None:
    """Why ``current`` does not extend ``previous`` byte for byte (every reason, joined by "; "),
    or ``None`` when it does."""
    reasons = []
    if _json(previous.tools) != _json(current.tools):
        before = [t.get("function", {}).get("name") for t in previous.tools]
        after = [t.get("function", {}).get("name") for t in current.tools]
        reasons.append(f"tool list changed: {sorted(set(before) ^ set(after))} differ" if before != after
                       else "tool schemas changed")
    if len(current.messages) < len(previous.messages):
        reasons.append(f"request shorter than the previous one ({len(current.messages)} < {len(previous.messages)} messages)")
    for i, (a, b) in enumerate(zip(previous.messages, current.messages)):
        if _json(a) != _json(b):
            what = "system prompt" if i == 0 and a.get("role") == "system" else f"message {i} ({a.get('role')})"
            reasons.append(f"{what} changed{_first_difference(content_text(a), content_text(b))}")
            break
    return "; ".join(reasons) or None


def _first_difference(a: str, b: str) -> str:
    """``" at line N: 'old' -> 'new'"`` for the first differing line of two texts ("" if none)."""
    for n, (x, y) in enumerate(zip_longest(a.splitlines(), b.splitlines(), fillvalue="<end>"), start=1):
        if x != y:
            return f" at line {n}: {x[:70]!r} -> {y[:70]!r}"
    return ""


def old_reasoning_blocks(messages: list[dict[str, Any]], keep_steps: int) -> int:
    """Assistant messages older than the last ``keep_steps`` assistant messages that still carry
    reasoning (a ``reasoning_content`` field or a ``<think>`` tag in the content)."""
    assistants = [m for m in messages if m.get("role") == "assistant"]
    old = assistants[:-keep_steps] if keep_steps else assistants
    return sum(1 for m in old if m.get("reasoning_content") or THINK_RE.search(content_text(m)))


def _script_problems(run: SessionRun) -> list[Violation]:
    """Tool results that contradict the script (the script, not the pipeline, would be wrong)."""
    out = []
    for seg_run in run.segments:
        seg = seg_run.segment
        if seg.kind in ("reopen", "compact"):
            continue
        if seg_run.stop_reason != "done" or seg_run.unused_replies:
            out.append(Violation("turn_not_done", seg_run.first_index,
                                 f"{seg.kind} segment ended {seg_run.stop_reason!r} with "
                                 f"{seg_run.unused_replies} scripted replies unused"))
        results = list(seg_run.results)
        position = 0
        for j, step in enumerate(seg.steps):
            n = len(step.reply.get("tool_calls") or [])
            mine, position = results[position:position + n], position + n
            if len(mine) < n:
                break
            index = seg_run.first_index + j
            if not step.expect.errors:
                for r in mine:
                    if r.is_error:
                        out.append(Violation("script", index, f"{r.name} failed unexpectedly: {r.output[:160]!r}"))
            for needle in step.expect.contains:
                if not any(contains(r.output, needle) for r in mine):
                    got = mine[0].output[-200:] if mine else ""
                    out.append(Violation("script", index, f"expected {needle!r} in the result; got ...{got!r}"))
            if step.expect.truncated and not any(r.truncated for r in mine):
                out.append(Violation("script", index, "expected a truncated result"))
    return out


def _journal_tokens(run: SessionRun, counter: TokenCounter) -> int:
    """Tokens of every message record of the session's journal(s), reasoning included."""
    total = 0
    for path in dict.fromkeys(run.journals):
        for record in read_journal(path):
            if record.get("kind") != "message":
                continue
            m = record.get("message") or {}
            total += counter.message({
                "role": m.get("role"), "content": m.get("content"), "reasoning_content": m.get("reasoning_content"),
                "tool_call_id": m.get("tool_call_id"),
                "tool_calls": [{"id": c.get("id"), "function": {"name": c.get("name"), "arguments": c.get("arguments")}}
                               for c in m.get("tool_calls") or []]})
    return total


def check(run: SessionRun, counter: TokenCounter | None = None) -> Report:
    """Check every recorded request of ``run`` and compute its figures (see the module)."""
    counter = counter or TokenCounter(run.script.model)
    window = run.script.window
    report = Report(run.script.shape, window, window - run.reserved_output_tokens, counter.method,
                    run.reserved_source)
    report.violations += _script_problems(run)

    previous: Request | None = None
    compactions: list[CompactionDone] = []
    pending_compaction = False
    boundaries: list[int] = []
    old_reasoning = 0
    summary_tokens = 0
    aggregation_requests = 0
    prefix_breaks = 0
    kinds: Counter[str] = Counter()
    meter: int | None = None          # the last context-usage figure emitted before a request
    undercounts: list[tuple[int, int, int]] = []   # (index, real tokens, meter tokens)
    for kind, item in run.timeline.entries:
        if kind == "event":
            if isinstance(item, ContextUsage):
                meter = item.used_tokens
            if isinstance(item, CompactionDone):
                compactions.append(item)
                boundaries.append(len(report.request_tokens))  # index of the next main request
                pending_compaction = True
            continue
        request: Request = item
        if request.purpose != "main":
            summary_tokens += counter.request(request.messages, request.tools)
            continue
        i = request.index
        tokens = counter.request(request.messages, request.tools)
        report.request_tokens.append(tokens)
        if meter is not None:
            undercounts.append((i, tokens, meter))
        meter = None
        for problem in pairing_problems(request.messages):
            report.violations.append(Violation("pairing", i, problem))
        for m in empty_messages(request.messages):
            report.violations.append(Violation("empty_message", i, f"message {m} ({request.messages[m].get('role')}) is empty"))
        if tokens > report.limit:
            report.violations.append(Violation("over_window", i, f"{tokens} tokens > limit {report.limit} "
                                                                 f"({tokens / window:.0%} of the window)"))
        if AGGREGATION_MARK in request_text(request):
            aggregation_requests += 1
        if pending_compaction:
            pending_compaction = False
            report.after_compaction.append(i)
            if tokens > AFTER_COMPACTION_MAX * window:
                report.violations.append(Violation("after_compaction_over_half", i,
                                                   f"{tokens} tokens > {AFTER_COMPACTION_MAX:.0%} of {window} "
                                                   f"({tokens / window:.0%})"))
            text = request_text(request)
            for pin in pins_at(run, i):
                tally = report.pins.setdefault(pin.label, PinTally())
                tally.checked += 1
                if all(contains(text, n) for n in pin.needles):
                    tally.present += 1
                else:
                    tally.missing_at.append(i)
                    missing = [n for n in pin.needles if not contains(text, n)]
                    report.violations.append(Violation("pinned_missing", i, f"{pin.label}: {missing!r} not in the request"))
            old = old_reasoning_blocks(request.messages, run.strip_after_steps)
            old_reasoning += old
            if old:
                report.violations.append(Violation("old_reasoning", i, f"{old} assistant message(s) older than "
                                                                       f"{run.strip_after_steps} steps keep reasoning"))
        elif previous is not None:
            why = prefix_break(previous, request)
            if why is not None:
                prefix_breaks += 1
                where = ("resume" if request.session != previous.session else
                         "new segment" if request.segment != previous.segment else "within a turn")
                kinds[where] += 1
                report.violations.append(Violation("prefix_break", i, f"{why} ({where}; previous request {previous.index})"))
        previous = request

    thrash = sum(1 for a, b in zip(boundaries, boundaries[1:]) if b - a <= THRASH_STEPS)
    tokens = report.request_tokens
    journal = _journal_tokens(run, counter)
    last = run.timeline.main[-1] if run.timeline.main else None
    report.figures = {
        "main_requests": len(tokens),
        "last_tokens": tokens[-1] if tokens else 0,
        "peak_tokens": max(tokens, default=0),
        "peak_over_window": max(tokens, default=0) / window,
        "over_window": len(report.of("over_window")),
        "journal_tokens": journal,
        "last_over_journal": (tokens[-1] / journal) if tokens and journal else 0.0,
        "compactions": len(compactions),
        "first_compaction_index": boundaries[0] if boundaries else None,
        "first_over_window_index": report.of("over_window")[0].index if report.of("over_window") else None,
        "thrash": thrash,
        "after_compaction_peak": max((tokens[i] for i in report.after_compaction), default=0),
        "summary_requests": len(run.timeline.summaries),
        "summary_tokens": summary_tokens,
        "prefix_breaks": prefix_breaks,
        "prefix_break_kinds": dict(kinds),
        "old_reasoning_after_compaction": old_reasoning,
        "reasoning_in_requests": sum(1 for r in run.timeline.main for m in r.messages if m.get("role") == "assistant"
                                     and (m.get("reasoning_content") or THINK_RE.search(content_text(m)))),
        "requests_with_aggregation": aggregation_requests,
        "aggregation_notices_last": request_text(last).count(AGGREGATION_MARK) if last else 0,
        "aggregated_messages": sum(c.aggregated for c in compactions),
        "pruned_messages": sum(c.pruned for c in compactions),
        "pinned_missing": len(report.of("pinned_missing")),
        # the meter (ContextUsage right before a request) against the real count: the worst request
        "meter_worst": max(undercounts, key=lambda u: u[1] - u[2], default=(-1, 0, 0)),
        "script_problems": len(report.of("script")) + len(report.of("turn_not_done")),
    }
    return report


def format_report(report: Report) -> str:
    """The figures and the pinned-item table of ``report`` as text for a terminal."""
    f = report.figures
    rows = [
        ("main requests", f["main_requests"]),
        ("last / peak request tokens", f"{f['last_tokens']} / {f['peak_tokens']}"),
        ("peak / window", f"{f['peak_over_window']:.0%} of {report.window}"),
        ("requests over window (must be 0)", f["over_window"]),
        ("last request / raw journal", f"{f['last_over_journal']:.0%} ({f['last_tokens']} / {f['journal_tokens']})"),
        ("compactions", f["compactions"]),
        ("thrash (within 3 steps)", f["thrash"]),
        ("peak first request after compaction", f"{f['after_compaction_peak']} ({f['after_compaction_peak'] / report.window:.0%})"),
        ("summary requests / tokens sent", f"{f['summary_requests']} / {f['summary_tokens']}"),
        ("prefix breaks outside compaction", f"{f['prefix_breaks']} {f['prefix_break_kinds'] or ''}".strip()),
        ("old reasoning kept after compaction", f["old_reasoning_after_compaction"]),
        ("requests with an aggregation notice", f["requests_with_aggregation"]),
        ("pinned items missing (checks)", f["pinned_missing"]),
        ("meter vs real, worst request", "request {0}: real {1}, meter {2}".format(*f["meter_worst"])),
        ("script problems", f["script_problems"]),
    ]
    width = max(len(k) for k, _ in rows)
    lines = [f"== {report.shape}  (window {report.window}, limit {report.limit}; {report.token_method}; "
             f"reserved output: {report.reserved_source})"]
    lines += [f"  {k:<{width}}  {v}" for k, v in rows]
    if report.pins:
        lines.append(f"  {'pinned item':<48}  present after compactions")
        for label, tally in report.pins.items():
            mark = "yes" if tally.present == tally.checked else "NO "
            lines.append(f"  {label:<48}  {mark} {tally.present}/{tally.checked}")
    return "\n".join(lines)
