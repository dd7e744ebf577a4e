"""The history part of a request: repaired and converted to OpenAI-format dicts, incrementally.

A request sends the whole history; repairing and converting it again on every request made a
turn's cost grow with the conversation (issue 18: about 6 ms per request at 5 000 messages).
Records are not changed once appended (``ContextBudget``'s token counts rely on that too), so:

- ``WireCache`` keeps each record's dict (``to_openai``) and gives it to every later request;
- ``RequestHistory`` remembers the last view it was given: when the next view starts with the
  same records (identity) and what was appended does not start with a tool result, only the
  appended records are repaired (``repair_history(..., continues=True)``) and converted; otherwise
  (a compaction, /clear, a late tool result) the whole view is.

The dicts are shared between requests: a provider that changes what it sends (litellm edits some
message dicts in place) sends ``providers.base.detached_messages`` copies instead.
"""

from __future__ import annotations

import operator
from typing import Any, Sequence

from ..context.repair import repair_history
from ..messages import AssistantMessage, Message, ToolResultMessage


class WireCache:
    """Converts records with ``to_openai`` once each; ``messages(records, include_reasoning)``
    returns their dicts, in order (a list of ``dict[str, Any]``, one per record)."""

    def __init__(self) -> None:
        #: record id -> (the record, include_reasoning used, its dict).
        self._dicts: dict[str, tuple[Message, bool, dict[str, Any]]] = {}

    def messages(self, records: Sequence[Message], include_reasoning: bool) -> list[dict[str, Any]]:
        """The OpenAI dicts of ``records``. An assistant record's reasoning content is included
        when ``include_reasoning`` (``AssistantMessage.to_openai``). A record is converted again
        when it is not the object converted under its id (a replaced record) or the flag changed.
        Raises what ``to_openai`` raises (nothing for valid records)."""
        cache = self._dicts
        out: list[dict[str, Any]] = []
        append = out.append
        for record in records:
            entry = cache.get(record.id)
            if entry is not None and entry[0] is record and entry[1] is include_reasoning:
                append(entry[2])
                continue
            if isinstance(record, AssistantMessage):
                wire = record.to_openai(include_reasoning=include_reasoning)
            else:
                wire = record.to_openai()
            cache[record.id] = (record, include_reasoning, wire)
            append(wire)
        return out

    def keep_only(self, records: Sequence[Message]) -> None:
        """Forget the dicts of records not in ``records`` (after a compaction or /clear), once
        the cache holds more than twice as many as ``records``."""
        if len(self._dicts) > 2 * len(records) + 64:
            kept = {record.id for record in records}
            self._dicts = {key: entry for key, entry in self._dicts.items() if key in kept}


class RequestHistory:
    """``messages(view, include_reasoning)``: the OpenAI dicts of ``repair_history(view)``, the
    same list of dicts a full repair and conversion gives, built from the last call's when
    ``view`` extends the last view (see the module docstring). ``view``: the records the model
    sees (no system message). Returns a new list (the dicts in it are shared: do not edit them).
    """

    def __init__(self) -> None:
        self._wire = WireCache()
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
            dicts = self._dicts + self._wire.messages(appended, include_reasoning)
        else:
            repaired = repair_history(view)
            dicts = self._wire.messages(repaired, include_reasoning)
            self._wire.keep_only(repaired)
        self._view, self._repaired, self._dicts = list(view), repaired, dicts
        self._reasoning = include_reasoning
        return list(dicts)
