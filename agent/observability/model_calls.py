"""Measuring model calls: ``CallMeter`` times one request (sent → first chunk → end of stream),
takes its tokens (the provider's usage, else a local estimate, marked), prices it
(``pricing``), adds it to the session's ``Spending`` and emits ``ModelCallFinished``."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from ..events import Emit, ModelCallFinished
from ..messages import Usage
from .pricing import call_cost_usd
from .spending import Spending


def _chars_to_tokens(text: str) -> int:
    return (len(text) + 3) // 4


@dataclass
class CallMeter:
    """What is known about a model call before it is sent: ``model`` (litellm name), ``turn``
    and ``step`` (1-based; step 0 outside a step), ``purpose`` (``main``, ``summary``, ``refine``,
    ``reflexion``, ``subagent``), the session's ``spending`` (None: not counted), the local
    estimate of the request's size ``prompt_estimate`` (tokens) and ``count_text`` (text ->
    tokens) to estimate a reply the provider reported no usage for."""

    model: str
    turn: int = 0
    step: int = 0
    purpose: str = "main"
    spending: Spending | None = None
    prompt_estimate: int = 0
    count_text: Callable[[str], int] = field(default=_chars_to_tokens)
    clock: Callable[[], float] = field(default=time.monotonic)

    def start(self) -> "CallTimer":
        """Start timing one attempt (call it just before the request is sent)."""
        return CallTimer(self, self.clock())


@dataclass
class CallTimer:
    """One attempt being timed: ``chunk()`` at every streamed chunk, then ``finish(...)`` once."""

    meter: CallMeter
    started: float
    first_chunk: float | None = None
    done: bool = False

    def chunk(self) -> None:
        """A streamed chunk came (the first one sets the time to first token)."""
        if self.first_chunk is None:
            self.first_chunk = self.meter.clock()

    def finish(self, emit: Emit, *, usage: Usage | None, reply_text: str = "", outcome: str = "ok",
               error: str = "") -> ModelCallFinished | None:
        """Emit the call's ``ModelCallFinished`` and add it to the spending; returns the event
        (None when already finished). ``usage``: what the provider reported (None: estimated from
        ``prompt_estimate`` and ``reply_text``, except for a failed call with no chunk, which
        counts no tokens); ``outcome``: ``ok``, ``error``, ``cancelled``; ``error``: one line."""
        if self.done:
            return None
        self.done = True
        meter = self.meter
        ended = meter.clock()
        estimated = False
        cached = None
        if usage is not None:
            prompt, completion, cached = usage.prompt_tokens, usage.completion_tokens, usage.cached_prompt_tokens
        elif outcome == "error" and self.first_chunk is None:
            prompt = completion = 0
        else:
            prompt, completion, estimated = meter.prompt_estimate, meter.count_text(reply_text) if reply_text else 0, True
        cost = call_cost_usd(meter.model, prompt, completion, cached)
        if meter.spending is not None:
            meter.spending.add(prompt, completion, cost)
        event = ModelCallFinished(
            turn=meter.turn, step=meter.step, model=meter.model, purpose=meter.purpose, prompt_tokens=prompt,
            completion_tokens=completion, cached_prompt_tokens=cached, latency_s=round(ended - self.started, 4),
            ttft_s=None if self.first_chunk is None else round(self.first_chunk - self.started, 4),
            cost_usd=None if cost is None else round(cost, 8), outcome=outcome, usage_estimated=estimated,
            error=" ".join(error.split())[:300])
        emit(event)
        return event


def meter_for(agent: object, purpose: str, prompt_estimate: int = 0) -> CallMeter:
    """A ``CallMeter`` for a call ``agent`` (a ``loop.agent.Agent``) makes outside its main loop
    (``summary``, ``refine``, ``reflexion``...): its model, turn, step, spending and token counter.
    ``prompt_estimate``: the request's size in tokens, used when the provider reports none."""
    budget = getattr(agent, "budget", None)
    return CallMeter(getattr(agent, "model", ""), getattr(agent, "turn_number", 0), getattr(agent, "step_number", 0),
                     purpose, getattr(agent, "spending", None), prompt_estimate,
                     budget.text_tokens if budget is not None else _chars_to_tokens)
