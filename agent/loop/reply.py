"""Assemble a streamed model reply into an ``AssistantMessage``."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..messages import AssistantMessage, ToolCall, Usage, new_id
from ..providers.base import StreamDelta


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
