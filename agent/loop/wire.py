"""Conversation records as the OpenAI-format dicts a request carries, converted once per record.

A request sends the whole history; converting each record again on every request made a turn's
cost grow with the conversation (issue 18: about 6 ms per request at 5 000 messages). Records are
not changed once appended (the token counts of ``ContextBudget`` rely on that too), so the dict of
a record is kept and given to every later request. The dicts are shared between requests: a
provider that changes what it sends (litellm edits some message dicts in place) sends
``providers.base.detached_messages`` copies instead.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..messages import AssistantMessage, Message


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
        if len(cache) > 2 * len(records) + 64:  # records dropped (compaction, /clear): forget them
            kept = {record.id for record in records}
            self._dicts = {key: entry for key, entry in cache.items() if key in kept}
        return out

