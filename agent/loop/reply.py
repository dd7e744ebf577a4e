"""Assemble a streamed model reply into an ``AssistantMessage``; one streamed attempt of a call."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ..events import Emit, Notice, ReasoningDelta, TextDelta
from ..messages import AssistantMessage, ToolCall, Usage, new_id
from ..observability.model_calls import CallMeter, CallTimer
from ..providers.base import ModelRequest, Provider, ProviderError, StreamDelta


@dataclass
class _PartialCall:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ReplyAssembler:
    """Collects ``StreamDelta`` items (text, reasoning, tool-call fragments, usage, finish).

    Tool-call fragments are grouped by ``index`` and their argument pieces concatenated in order,
    as OpenAI-style streams deliver them.
    """

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, _PartialCall] = {}
        self.usage: Usage | None = None
        self.finish_reason: str | None = None

    def add(self, delta: StreamDelta) -> None:
        """Fold one delta into the reply."""
        if delta.kind == "text":
            self.text.append(delta.text)
        elif delta.kind == "reasoning":
            self.reasoning.append(delta.text)
        elif delta.kind == "tool_call":
            call = self.calls.setdefault(delta.index, _PartialCall())
            if delta.id:
                call.id = delta.id
            if delta.name:
                call.name = delta.name
            if delta.arguments:
                call.arguments.append(delta.arguments)
        elif delta.kind == "usage":
            self.usage = Usage(prompt_tokens=delta.prompt_tokens, completion_tokens=delta.completion_tokens,
                               cached_prompt_tokens=delta.cached_prompt_tokens,
                               cache_creation_tokens=delta.cache_creation_tokens)
        elif delta.kind == "finish":
            self.finish_reason = delta.finish_reason or self.finish_reason

    def streamed_text(self) -> str:
        """Everything the reply streamed so far (text, reasoning, tool names and arguments), for
        estimating its tokens when the provider reports no usage."""
        calls = "".join(c.name + "".join(c.arguments) for c in self.calls.values())
        return "".join(self.reasoning) + "".join(self.text) + calls

    @property
    def is_empty(self) -> bool:
        """True when the reply has neither text nor tool calls (reasoning alone counts as empty)."""
        return not "".join(self.text).strip() and not self.calls

    def build(self, model: str, *, keep_tool_calls: bool = True) -> AssistantMessage:
        """Return the assembled message. With ``keep_tool_calls=False`` (a cancelled stream) the
        unfinished tool calls are dropped so none is left without a result."""
        calls = []
        if keep_tool_calls:
            for index in sorted(self.calls):
                partial = self.calls[index]
                calls.append(ToolCall(id=partial.id or new_id("call"), name=partial.name,
                                      arguments="".join(partial.arguments)))
        return AssistantMessage(
            content="".join(self.text) or None,
            reasoning_content="".join(self.reasoning) or None,
            tool_calls=calls,
            usage=self.usage,
            finish_reason=self.finish_reason,
            model=model,
        )


class StreamedAttempt:
    """One attempt at a model call, as ``call_with_retries`` calls it: streams ``request`` from
    ``provider``, emits the text and reasoning deltas as they come and "waiting for the model"
    notices while the provider is silent, and returns the assembled ``AssistantMessage``.

    ``emitted_partial`` tells, after a failed call, whether that attempt had emitted any text or
    reasoning delta (a retry must then tell the UI to drop them). Raises ``ProviderError`` for a
    failed call and for an empty reply (kind ``empty``); a cancelled stream returns what came,
    without its unfinished tool calls.

    ``meter`` (optional): each attempt is measured and emitted as a ``ModelCallFinished``
    (``observability.model_calls``), failed and cancelled ones included.
    """

    def __init__(self, provider: Provider, request: ModelRequest, model: str, emit: Emit,
                 cancel: threading.Event, meter: CallMeter | None = None) -> None:
        self.provider = provider
        self.request = request
        self.model = model
        self.emit = emit
        self.cancel = cancel
        self.meter = meter
        self.emitted_partial = False

    def __call__(self) -> AssistantMessage:
        self.emitted_partial = False
        assembler = ReplyAssembler()
        timer = self.meter.start() if self.meter is not None else None
        try:
            reply = self._stream(assembler, timer)
        except BaseException as exc:
            if timer is not None:
                outcome = "cancelled" if self.cancel.is_set() else "error"
                timer.finish(self.emit, usage=assembler.usage, reply_text=assembler.streamed_text(),
                             outcome=outcome, error=getattr(exc, "message", "") or str(exc) or type(exc).__name__)
            raise
        if timer is not None:
            timer.finish(self.emit, usage=assembler.usage, reply_text=assembler.streamed_text(),
                         outcome="cancelled" if self.cancel.is_set() else "ok")
        return reply

    def _stream(self, assembler: ReplyAssembler, timer: CallTimer | None) -> AssistantMessage:
        wait_key: str | None = None
        for delta in self.provider.stream(self.request, self.cancel):
            if delta.kind == "waiting":
                wait_key = wait_key or new_id("wait")
                self.emit(Notice(message=waiting_text(delta.waited_s, delta.phase), key=wait_key,
                                 waiting_s=round(delta.waited_s, 1)))
                continue
            wait_key = None
            if timer is not None:
                timer.chunk()
            assembler.add(delta)
            if delta.kind == "text" and delta.text:
                self.emitted_partial = True
                self.emit(TextDelta(text=delta.text))
            elif delta.kind == "reasoning" and delta.text:
                self.emitted_partial = True
                self.emit(ReasoningDelta(text=delta.text))
            if self.cancel.is_set():
                break
        if self.cancel.is_set():
            return assembler.build(self.model, keep_tool_calls=False)
        if assembler.is_empty:
            raise ProviderError("empty", "the model returned an empty reply")
        return assembler.build(self.model)


def waiting_text(seconds: float, phase: str) -> str:
    """The "waiting for the model (N s)" line for a silence of ``seconds``; ``phase`` is
    ``first_token`` (no reply yet) or ``next_chunk`` (the reply stopped coming)."""
    text = f"waiting for the model ({seconds:.0f} s)"
    return text if phase != "next_chunk" else text + ", its reply paused"
