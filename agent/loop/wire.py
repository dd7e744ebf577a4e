"""The history part of a request: repaired and converted to OpenAI-format dicts, incrementally.

A request sends the whole history; repairing and converting it again on every request made a
turn's cost grow with the conversation (issue 18: about 6 ms per request at 5 000 messages).
Records are not changed once appended (``ContextBudget``'s token counts rely on that too), so
``RequestHistory`` remembers the last view it was given, repaired and converted: when the next view
starts with the same records (identity) and what was appended does not start with a tool result,
only the appended records are repaired (``repair_history(..., continues=True)``) and converted, and
the earlier dicts are given to the request again; otherwise (a compaction, /clear, a late tool
result, a replaced record) the whole view is.

The dicts are shared between requests: a provider that changes what it sends (litellm edits some
message dicts in place) sends ``providers.base.detached_messages`` copies instead.
"""

from __future__ import annotations

import operator
from typing import Any, Sequence

from ..context.repair import repair_history
from ..messages import AssistantMessage, Message, ToolResultMessage


def _dicts_of(records: Sequence[Message], include_reasoning: bool) -> list[dict[str, Any]]:
    """``to_openai`` of each record; an assistant record's reasoning content is included when
    ``include_reasoning``."""
    return [record.to_openai(include_reasoning=include_reasoning) if isinstance(record, AssistantMessage)
            else record.to_openai() for record in records]


class RequestHistory:
    """``messages(view, include_reasoning)``: the OpenAI dicts of ``repair_history(view)``, the
    same list of dicts a full repair and conversion gives, built from the last call's when
    ``view`` extends the last view (see the module docstring). ``view``: the records the model
    sees (no system message). Returns a new list (the dicts in it are shared: do not edit them).
    """

    def __init__(self) -> None:
        self._view: list[Message] = []
        self._repaired: list[Message] = []
        self._dicts: list[dict[str, Any]] = []
        self._reasoning: bool | None = None

    def messages(self, view: Sequence[Message], include_reasoning: bool) -> list[dict[str, Any]]:
        """See the class docstring. Raises nothing for valid records."""
        known = len(self._view)
        if (include_reasoning is self._reasoning and known and len(view) >= known
                and (len(view) == known or not isinstance(view[known], ToolResultMessage))
                and all(map(operator.is_, self._view, view))):
            appended = repair_history(view[known:], continues=bool(self._repaired))
            repaired = self._repaired + appended
            dicts = self._dicts + _dicts_of(appended, include_reasoning)
        else:
            repaired = repair_history(view)
            dicts = _dicts_of(repaired, include_reasoning)
        self._view, self._repaired, self._dicts = list(view), repaired, dicts
        self._reasoning = include_reasoning
        return list(dicts)
