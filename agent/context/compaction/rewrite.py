"""The compaction pass: an LLM-summarised, smaller context view (DESIGN.md 3 and 4).

``compact`` takes the current view (records or OpenAI dicts; system messages stay in front) and
rewrites it in one pass whose result is measured once:

1. repairs it (``repair_history``), prunes old reasoning (``pruning``: by assistant steps, or by
   user turns with the older setting) and collapses developer loops (``aggregation``);
2. splits it: the kept tail is sized in tokens (``tail_fraction`` of the window, ref Gemini CLI
   keeps the last 30%; ``keep_last`` messages at least), never inside a tool pair and past user
   messages that would open it (they are pinned instead, so no two user messages are adjacent);
   large tool results in the tail are *stubbed*: head + tail + a pointer to the saved full output;
3. asks ``summarize`` for a summary of the older part with the sections Task / Progress /
   Decisions / Errors / Files / State (``SUMMARY_INSTRUCTIONS``), the transcript cut to fit the
   summary call's own budget;
4. builds one user message (origin ``summary``) that holds, **by code** (``pins.Pins``): the
   original task, later user instructions, the current plan with its step states, the last
   unresolved error per test target, the final test state and the files changed; then the
   model's summary, capped so the new view fits ``target_fraction`` of the window.

When nothing older than the tail is left to summarise (aggregation alone made room), the pruned,
aggregated and stubbed view is the result, without a summary call. Stages never cancel each
other: the result is kept when the whole pass saves at least ``min_saving``.

The view is ``[system...] + [summary message] + kept``: it never starts with an assistant or
tool message, passes ``pairing_ok`` and ends like the input (a tool result mid-turn, so the loop
resumes with a model call). A failed summary (exception or empty) or a pass that saves less than
``min_saving`` leaves the view unchanged: ``ok=False`` with a ``notice``.

Tokens are counted with ``count`` (the agent's budget counter, the one the request builder
uses); without it, with the budget module's local estimate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Sequence

from ...messages import Message, SystemMessage, ToolResultMessage, UserMessage
from ..aggregation import DEFAULT_DEVELOPER_CAPABILITIES, aggregate_developer_loops, default_capability_of
from ..budget import count_text_tokens, message_tokens
from ..pins import Pins, collect_pins
from ..pruning import prune_reasoning
from ..records import is_dict_list, to_dicts, to_records
from ..repair import repair_history
from .summary import SUMMARY_CAP_TOKENS, SUMMARY_RESERVE_TOKENS, build_summary_text, digest_summary, summary_request
from .summary_message import (
    cap_tokens, is_summary, pinned_names, pinned_part, refresh_summaries, without_stale_plan,
)
from .tail import LARGE_RESULT_FRACTION, STUB_MIN_TOKENS, split_by_tokens, split_point, stub_to_fit


@dataclass
class CompactionResult:
    """What ``compact`` produced.

    - ``view``: the new view (same kind as the input: records or dicts), or the input unchanged
      when ``ok`` is false.
    - ``summary``: the model's summary text (``""`` on failure or when no summary was needed);
      ``summary_message``: the record that replaced the older part (``None`` then).
    - ``tokens_before`` / ``tokens_after``: the views' tokens (``count``), plus ``fixed_tokens``.
    - ``summarized_ids``: ids of the messages replaced by the summary; ``pruned_ids``: kept
      messages whose reasoning was removed; ``aggregated_ids``: messages elided by loop
      aggregation (anywhere); ``stubbed_ids``: kept tool results cut to a stub. Ids of dict input
      are ``d<index>`` unless the dict had an ``id``.
    - ``pinned``: names of the items pinned by code in the summary message.
    - ``ok``: the view was rewritten; ``notice``: one line for the user (why not, or what).
    """

    view: list[Any]
    summary: str = ""
    summary_message: UserMessage | None = None
    tokens_before: int = 0
    tokens_after: int = 0
    summarized_ids: list[str] = field(default_factory=list)
    pruned_ids: list[str] = field(default_factory=list)
    aggregated_ids: list[str] = field(default_factory=list)
    stubbed_ids: list[str] = field(default_factory=list)
    pinned: list[str] = field(default_factory=list)
    ok: bool = False
    notice: str = ""


def view_tokens(messages: Sequence[Message], count: Callable[[Message], int] | None = None) -> int:
    """Tokens of records (system messages included), counted with ``count`` or the local estimate."""
    count = count or message_tokens
    return sum(count(m) for m in messages)


def compact(messages: Sequence[Any], *, summarize: Callable[[list[dict[str, Any]]], str] | None,
            keep_last: int = 10, plan_markdown: str | None = None, focus: str | None = None,
            strip_reasoning_after_turns: int = 3, strip_reasoning_after_steps: int | None = None,
            provider_requires_reasoning: bool = False, aggregate_loops: bool = True, min_loop_steps: int = 5,
            developer_capabilities: Collection[str] = DEFAULT_DEVELOPER_CAPABILITIES,
            capability_of: Callable[[str], str | None] = default_capability_of,
            error_output_cap_chars: int = 2000, min_saving: float = 0.05,
            count: Callable[[Message], int] | None = None, fixed_tokens: int = 0,
            window_tokens: int | None = None, tail_fraction: float = 0.3, target_fraction: float = 0.5,
            pins: Pins | None = None, save_full: Callable[[ToolResultMessage], str | None] | None = None,
            summary_budget_tokens: int | None = None,
            count_text: Callable[[str], int] | None = None, fallback_digest: bool = False) -> CompactionResult:
    """Compact ``messages`` into a smaller view (module docstring).

    ``summarize(request_messages) -> str`` gets OpenAI dicts (a system message with
    ``SUMMARY_INSTRUCTIONS`` and a user message holding the transcript) and returns the summary;
    it may raise (any exception is caught and reported). ``None``: no summary call, only the
    rewrites of the view (pruning, aggregation, stubbing) with the whole body as the tail.
    ``keep_last``: messages kept verbatim at least (moved to whole tool pairs).
    ``plan_markdown``: the current plan, pinned verbatim. ``focus``: what the user wants the
    summary to keep (``/compact focus``). ``strip_reasoning_after_steps`` (wins when set) /
    ``strip_reasoning_after_turns`` (0 = off), ``provider_requires_reasoning``,
    ``aggregate_loops``, ``min_loop_steps``, ``developer_capabilities``, ``capability_of``: the
    pruning and aggregation stages. ``error_output_cap_chars``: characters per pinned error.
    ``min_saving``: the fraction of tokens the pass must save.

    Sizing (tokens): ``count`` measures one record as sent; ``fixed_tokens`` is the rest of the
    request (system prompt, tools); ``window_tokens`` (``None``: size the tail by ``keep_last``
    alone and stub nothing) with ``tail_fraction`` (the kept tail's share) and
    ``target_fraction`` (what the whole request should fit in afterwards);
    ``summary_budget_tokens`` caps the summary call's request (default: the window), counted
    with ``count_text`` (tokens of a text; default the budget's ``count_text_tokens``). ``fallback_digest``: when
    the summary call fails or returns nothing, use ``digest_summary`` (a list of the older steps
    built by code) instead of giving up (the hard limit needs room whatever the summariser does).
    ``pins``: the items pinned by code, computed from the whole conversation by the caller
    (default: from ``messages``). ``save_full(result) -> path or None`` saves a tool result
    before it is stubbed (default: results are stubbed only when they point to a saved file
    already). Never raises.
    """
    count = count or message_tokens
    count_text = count_text or count_text_tokens
    as_dicts = is_dict_list(messages)
    records = to_records(messages) if as_dicts else list(messages)
    systems = [m for m in records if isinstance(m, SystemMessage)]
    body = repair_history([m for m in records if not isinstance(m, SystemMessage)])
    tokens_before = fixed_tokens + view_tokens(records, count)
    unchanged = CompactionResult(view=list(messages), tokens_before=tokens_before, tokens_after=tokens_before)

    whole = body  # before the rewrites: what pins are computed from when the caller gives none
    body, pruned = prune_reasoning(body, strip_reasoning_after_turns, keep_last_steps=strip_reasoning_after_steps,
                                   provider_requires_reasoning=provider_requires_reasoning)
    aggregated: list[str] = []
    if aggregate_loops:
        body, aggregated = aggregate_developer_loops(body, min_steps=min_loop_steps,
                                                     developer_capabilities=developer_capabilities,
                                                     capability_of=capability_of)
    base = fixed_tokens + view_tokens(systems, count)
    target = None
    if window_tokens:  # when the fixed part alone nears the target, a fifth of what is left
        target = max(int(target_fraction * window_tokens), base + int(0.2 * max(0, window_tokens - base)))
    # the pinned sections scale with the window: later instructions take at most ~15% of it
    # and each pinned error output ~5% (at ~3 characters per token)
    instructions_cap = int(window_tokens * 0.45) if window_tokens else None
    error_cap = error_output_cap_chars
    if window_tokens and error_cap > 0:
        error_cap = min(error_cap, max(300, int(window_tokens * 0.15)))

    def render_pins(kept_ids: Collection[str] = ()) -> str:
        return pins.render(kept_ids=kept_ids, error_cap_chars=error_cap, instructions_cap_chars=instructions_cap)

    carried: list[str] = []  # pinned sections of an earlier summary, when no pins were given
    if pins is None:
        previous = [m for m in whole if is_summary(m)]
        pins = collect_pins([m for m in whole if not is_summary(m)], plan_markdown=plan_markdown)
        carried = [pinned_part(m.content) for m in previous[-1:]]
        if previous and pins.task is not None:  # the task is in the earlier summary's pinned part,
            pins.instructions.insert(0, pins.task)  # carried over: what follows it is later
            pins.task = None
    elif plan_markdown is not None:
        pins.plan_markdown = plan_markdown

    stubbed: list[str] = []
    if summarize is None:  # no summary: the whole body is kept, stubbed to fit the target
        old, kept = [], body
        if target is not None:
            kept, stubbed = stub_to_fit(kept, target - base, count, save_full)
    elif window_tokens and target is not None:
        # room for the summary and the kept tail; the tail gets the same share of the window and
        # of what is there now (Gemini CLI keeps the last 30% of the history), so a manual
        # /compact of a short conversation compacts too
        room = target - base - count_text(render_pins()) - sum(count_text(c) for c in carried)
        split_budget = min(int(tail_fraction * min(window_tokens, max(0, tokens_before - base))),
                           room - SUMMARY_RESERVE_TOKENS)
        stub_limit = room - 300  # the summary is capped to what is left (200 tokens at least)
        large = max(STUB_MIN_TOKENS, int(LARGE_RESULT_FRACTION * window_tokens))
        # the message minimum yields to the target, and to the pins: every compaction ends with a
        # summary message that holds them, so something older than the tail is summarised
        for least in dict.fromkeys((keep_last, 2)):
            split = split_by_tokens(body, max(0, split_budget), least, count)
            old, kept = body[:split], body[split:]
            kept, stubbed = stub_to_fit(kept, stub_limit, count, save_full, large)
            fits = view_tokens(kept, count) <= stub_limit
            if fits and _has_steps(old):
                break
        else:
            if not _has_steps(old):  # keep the last step only
                split = split_by_tokens(body, 0, 0, count)
                old, kept = body[:split], body[split:]
                kept, stubbed = stub_to_fit(kept, stub_limit, count, save_full, large)
    else:
        split = split_point(body, keep_last)
        old, kept = body[:split], body[split:]

    has_old = _has_steps(old)
    plan_pinned = bool(pins.plan_markdown and pins.plan_markdown.strip())
    if summarize is None or not has_old:
        if summarize is not None and old:  # only user messages would be summarised: keep them
            kept, old = old + kept, []
        if not (pruned or aggregated or stubbed):
            unchanged.notice = "Nothing to compact yet: the conversation is shorter than the part kept verbatim."
            return unchanged
        kept, refreshed = refresh_summaries(kept, render_pins, carried)
        if refreshed is not None and plan_pinned:
            kept = without_stale_plan(kept)
        new_records = [*systems, *kept]
        tokens_after = base + view_tokens(kept, count)
        if tokens_after >= tokens_before:
            unchanged.notice = "Nothing to compact yet: the conversation is shorter than the part kept verbatim."
            return unchanged
        return _result(messages, records, new_records, as_dicts, tokens_before, tokens_after, min_saving,
                       summary="", summary_message=refreshed, old=[], kept=kept, pruned=pruned,
                       aggregated=aggregated, stubbed=stubbed,
                       pinned=pinned_names(pins, [m.id for m in kept], carried) if refreshed else [],
                       unchanged=unchanged)

    failure = ""
    try:
        budget = summary_budget_tokens or (window_tokens if window_tokens else None)
        summary = (summarize(summary_request(old, focus, budget_tokens=budget, count_text=count_text)) or "").strip()
        if not summary:
            failure = "Compaction failed: the model returned an empty summary"
    except Exception as exc:  # any summariser failure leaves the context as it was
        summary, failure = "", f"Compaction failed: the summary call failed ({type(exc).__name__}: {exc})"
    if failure and not fallback_digest:
        unchanged.notice = failure + "; context unchanged."
        return unchanged
    if failure:  # the request must fit: a list of the older steps built by code stands in
        summary = digest_summary(old)

    if plan_pinned:
        kept = without_stale_plan(kept)
    kept_ids = [m.id for m in kept]
    pinned_text = "\n\n".join([*carried, render_pins(kept_ids)])
    summary_cap = SUMMARY_CAP_TOKENS
    if target is not None:
        room = target - base - view_tokens(kept, count) - count_text(pinned_text) - 64
        summary_cap = max(200, min(summary_cap, room))
    summary_text = cap_tokens(summary, summary_cap, count)
    # the mode the conversation stated last goes with the summary when its message was summarised
    kept_mode = any(isinstance(m, UserMessage) and m.mode is not None for m in kept)
    summary_message = UserMessage(content=build_summary_text(pinned_text, summary_text), origin="summary",
                                  mode=None if kept_mode else pins.mode)
    new_records = [*systems, summary_message, *kept]
    tokens_after = base + view_tokens([summary_message, *kept], count)
    return _result(messages, records, new_records, as_dicts, tokens_before, tokens_after, min_saving,
                   summary=summary, summary_message=summary_message, old=old, kept=kept, pruned=pruned,
                   aggregated=aggregated, stubbed=stubbed, pinned=pinned_names(pins, kept_ids, carried),
                   unchanged=unchanged)


def _has_steps(messages: Sequence[Message]) -> bool:
    """Whether ``messages`` hold anything but user messages (a step to summarise)."""
    return any(not isinstance(m, UserMessage) for m in messages)


def _result(messages: Sequence[Any], records: list[Message], new_records: list[Message], as_dicts: bool,
            tokens_before: int, tokens_after: int, min_saving: float, *, summary: str,
            summary_message: UserMessage | None, old: list[Message], kept: list[Message], pruned: list[str],
            aggregated: list[str], stubbed: list[str], pinned: list[str],
            unchanged: CompactionResult) -> CompactionResult:
    """The ``CompactionResult`` of a finished pass, or ``unchanged`` with a notice when it saves
    less than ``min_saving``."""
    saved = (tokens_before - tokens_after) / tokens_before if tokens_before else 0.0
    if saved < min_saving:
        unchanged.notice = (f"Compaction skipped: it would save only {max(saved, 0.0):.0%} of the context "
                            f"({tokens_before} -> {tokens_after} tokens); context unchanged.")
        return unchanged
    kept_ids = {m.id for m in kept}
    if as_dicts:
        origin = {id(r): d for r, d in zip(records, messages)}
        view: list[Any] = [origin[id(m)] if id(m) in origin else to_dicts([m])[0] for m in new_records]
    else:
        view = new_records
    what = "summarised the older part" if old else "rewrote the view without a summary"
    return CompactionResult(
        view=view, summary=summary, summary_message=summary_message, tokens_before=tokens_before,
        tokens_after=tokens_after, summarized_ids=[m.id for m in old],
        pruned_ids=[i for i in pruned if i in kept_ids], aggregated_ids=aggregated, stubbed_ids=stubbed,
        pinned=pinned, ok=True,
        notice=f"Compacted the context ({what}): {tokens_before} -> {tokens_after} tokens ({saved:.0%} saved).")


