"""A model call outside the main loop's steps (a compaction summary, a refine or reflexion
review): one request without tools, retried like a main call, measured as a
``ModelCallFinished`` of its own purpose and added to the session's spending."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ..context.pruning import strip_think_tags
from ..events import Emit
from ..messages import AssistantMessage
from ..observability.model_calls import meter_for
from ..providers.base import ModelRequest, ProviderError
from .reply import ReplyAssembler
from .retry import call_with_retries

if TYPE_CHECKING:
    from .agent import Agent


def side_call(agent: "Agent", request: ModelRequest, emit: Emit, cancel: threading.Event) -> AssistantMessage:
    """Send ``request`` (its ``purpose`` names the call) through ``agent``'s provider and return
    the reply with its tool calls dropped and think tags removed from its text. Each attempt
    emits a ``ModelCallFinished`` (tokens as reported, else estimated from the messages' text)
    and is added to ``agent.spending``. Raises ``ProviderError`` when the call still fails after
    the agent's retries, or ``"cancelled"`` when ``cancel`` is set while it streams."""
    prompt_estimate = sum(agent.budget.text_tokens(str(m.get("content") or "")) for m in request.messages)
    meter = meter_for(agent, request.purpose, prompt_estimate)

    def attempt() -> AssistantMessage:
        assembler = ReplyAssembler()
        timer = meter.start()
        try:
            for delta in agent.provider.stream(request, cancel):
                timer.chunk()
                assembler.add(delta)
                if cancel.is_set():
                    raise ProviderError("unknown", "cancelled")
        except BaseException as exc:
            timer.finish(emit, usage=assembler.usage, reply_text=assembler.streamed_text(),
                         outcome="cancelled" if cancel.is_set() else "error", error=str(exc))
            raise
        timer.finish(emit, usage=assembler.usage, reply_text=assembler.streamed_text())
        reply = assembler.build(agent.model, keep_tool_calls=False)
        return reply.model_copy(update={"content": strip_think_tags(reply.content or "")})

    return call_with_retries(attempt, agent.config.retry, emit=emit, cancel=cancel,
                             instant=getattr(agent.provider, "instant_retries", False))
