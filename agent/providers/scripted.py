"""A scripted provider: replays a list of replies, recording every request it receives.

Used by the tests and by ``--replay FILE`` (DESIGN.md section 5). A reply is a dict with optional
keys ``content``, ``reasoning_content`` (streamed in chunks of about 4 characters),
``tool_calls`` (``[{"name", "arguments": object | raw string, "id"?}]``), ``usage``
(``{"prompt_tokens", "completion_tokens"}``, optionally ``"cached_prompt_tokens"`` and
``"cache_creation_tokens"``: prompt-cache reads and writes as a provider reports them), ``finish_reason`` and ``error`` (one of
``rate_limit``, ``server``, ``auth``, ``not_found``, ``network``, ``timeout``, ``context_window``,
``empty``). Replies marked ``"for": "summary"`` are kept for compaction's summarisation calls;
replies marked ``"for": "subagent"`` for sub-agents' requests (``purpose == "subagent"``): one
that also says ``"task": N`` only for the N-th sub-agent the parent asked for (1-based,
``ModelRequest.task_index``), one without a number for any sub-agent, in order; a sub-agent
takes its own numbered replies first.
An error reply is consumed like any other; a retry takes the next reply. A reply that has keys but
none of these (a typo such as ``[{"contnet": "x"}]``) is refused when the file is loaded
(``replay_file``, which validates the whole file).

A tool call without an ``id`` gets ``call_<N>_<index>``, N counting the provider's calls and
continuing after the highest N already in the conversation it is sent (and after the resumed
journal's, ``continue_ids_after``), so a session never holds the same generated id twice; a
scripted ``id`` is used as written. A sub-agent's calls are numbered on their own,
``call_t<task>_<N>_<index>``, so parallel sub-agents get the same ids in every run.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any, Iterable, Iterator

from .base import ModelRequest, ProviderError, StreamDelta
from .replay_file import ERROR_MESSAGES as _ERROR_MESSAGES
from .replay_file import REPLY_KEYS, ReplayError, load_replay_file
from .request_check import RequestChecker

__all__ = ["CHUNK_CHARS", "PLACEHOLDER_SUMMARY", "REPLY_KEYS", "ReplayError", "ScriptedProvider",
           "highest_generated_id", "load_replay_file"]

CHUNK_CHARS = 4
#: A generated tool-call id: ``call_<provider call number>_<index in the reply>``.
_GENERATED_ID_RE = re.compile(r"call_(\d+)_\d+")
PLACEHOLDER_SUMMARY = "Summary placeholder: no summary reply was scripted."

class ScriptedProvider:
    """Replays scripted replies in order; ``requests`` records every request received.

    ``log_path`` (``--replay-log``) appends each request as one JSON line
    ``{"purpose", "model", "messages", "tools"}``, plus ``"reasoning_effort"`` when the request carries one. ``instant_retries`` tells the loop not to sleep
    between retries.
    """

    def __init__(self, replies: list[dict[str, Any]], *, log_path: Path | None = None,
                 instant_retries: bool = True) -> None:
        self._main = [r for r in replies if r.get("for") not in ("summary", "subagent")]
        self._summary = [r for r in replies if r.get("for") == "summary"]
        self._subagent = [r for r in replies if r.get("for") == "subagent"]
        self.requests: list[ModelRequest] = []
        self.log_path = Path(log_path) if log_path else None
        self.instant_retries = instant_retries
        self._lock = threading.Lock()
        self._call_counter = 0
        self._subagent_calls: dict[int, int] = {}  # sub-agent index -> its calls so far
        self._checker = RequestChecker()  # request_check on each request, from where the last one ended

    def continue_ids_after(self, ids: Iterable[str]) -> None:
        """Generate tool-call ids after every ``call_N_i`` among ``ids`` (a resumed session's
        whole journal, including calls a compaction took out of the conversation)."""
        with self._lock:
            self._call_counter = max(self._call_counter, highest_generated_id(ids))

    @property
    def remaining(self) -> int:
        """Number of main-loop replies not consumed yet."""
        return len(self._main)

    def _record(self, request: ModelRequest) -> None:
        self.requests.append(request)
        if self.log_path:
            from ..secrets.private_files import open_private
            from ..secrets.redact import default_redactor

            record = {"purpose": request.purpose, "model": request.model,
                      "messages": request.messages, "tools": request.tools}
            if request.reasoning_effort is not None:  # an extension of the replay log: only when sent
                record["reasoning_effort"] = request.reasoning_effort
            if request.task_index is not None:
                record["task"] = request.task_index
            line = json.dumps(default_redactor().value(record))  # a file on disk: 0600, secrets redacted
            with os.fdopen(open_private(self.log_path), "a", encoding="utf-8") as fh:
                fh.write(line + "\n")

    def stream(self, request: ModelRequest, cancel: threading.Event) -> Iterator[StreamDelta]:
        """Yield the next scripted reply as deltas; raise ``ProviderError`` for error replies.

        When the main list is exhausted, raises ``ProviderError("unknown", ...)`` saying so. A
        request that fails ``request_check.check_request`` (unpaired tool calls, an orphan result,
        an empty message, a conversation that starts with an assistant or tool message) raises
        ``InvalidRequest``: the core built a bad request, or a test built a bad history.
        """
        with self._lock:
            self._record(request)
            checked_from = self._checker.check(request.messages, request.purpose, request.task_index)
            if request.purpose == "subagent":
                reply = self._next_subagent_reply(request.task_index)
            else:
                queue = self._summary if request.purpose == "summary" else self._main
                if not queue:
                    if request.purpose == "summary":
                        reply = {"content": PLACEHOLDER_SUMMARY}
                    else:
                        raise ProviderError("unknown", "the replay script has no more replies")
                else:
                    reply = queue.pop(0)
            if request.purpose == "subagent":  # a count per sub-agent: parallel runs keep their ids
                task = request.task_index or 0
                self._subagent_calls[task] = self._subagent_calls.get(task, 0) + 1
                id_prefix = f"call_t{task}_{self._subagent_calls[task]}"
            else:
                # The messages before ``checked_from`` were counted by an earlier request (the
                # counter only grows), so only the rest is read.
                self._call_counter = max(self._call_counter, _highest_generated(request.messages[checked_from:])) + 1
                id_prefix = f"call_{self._call_counter}"
        if reply.get("error"):
            kind = reply["error"]
            raise ProviderError(kind, _ERROR_MESSAGES[kind])
        yield from self._stream_reply(reply, id_prefix, cancel)

    def _next_subagent_reply(self, task_index: int | None) -> dict[str, Any]:
        """Take the next ``"for": "subagent"`` reply for sub-agent ``task_index``: its first
        numbered one, else the first unnumbered one. Raises ``ProviderError`` when none is left."""
        queue = self._subagent
        for position, reply in enumerate(queue):
            if task_index is not None and reply.get("task") == task_index:
                return queue.pop(position)
        for position, reply in enumerate(queue):
            if reply.get("task") is None:
                return queue.pop(position)
        who = f"sub-agent {task_index}" if task_index is not None else "sub-agents"
        raise ProviderError("unknown", f"the replay script has no more replies for {who}")

    def _stream_reply(self, reply: dict[str, Any], id_prefix: str,
                      cancel: threading.Event) -> Iterator[StreamDelta]:
        for kind, key in (("reasoning", "reasoning_content"), ("text", "content")):
            text = reply.get(key) or ""
            for i in range(0, len(text), CHUNK_CHARS):
                if cancel.is_set():
                    return
                yield StreamDelta(kind=kind, text=text[i:i + CHUNK_CHARS])
        for index, call in enumerate(reply.get("tool_calls") or []):
            if cancel.is_set():
                return
            args = call.get("arguments", {})
            raw = args if isinstance(args, str) else json.dumps(args)
            call_id = call.get("id") or f"{id_prefix}_{index}"
            yield StreamDelta(kind="tool_call", index=index, id=call_id, name=call.get("name", ""))
            for i in range(0, len(raw), CHUNK_CHARS * 4):
                yield StreamDelta(kind="tool_call", index=index, arguments=raw[i:i + CHUNK_CHARS * 4])
        usage = reply.get("usage")
        if usage:
            yield StreamDelta(kind="usage", prompt_tokens=int(usage.get("prompt_tokens", 0)),
                              completion_tokens=int(usage.get("completion_tokens", 0)),
                              cached_prompt_tokens=_optional_int(usage.get("cached_prompt_tokens")),
                              cache_creation_tokens=_optional_int(usage.get("cache_creation_tokens")))
        finish = reply.get("finish_reason") or ("tool_calls" if reply.get("tool_calls") else "stop")
        yield StreamDelta(kind="finish", finish_reason=finish)


def _highest_generated(messages: list[dict[str, Any]]) -> int:
    """The highest call number N of a ``call_N_i`` tool-call id in ``messages`` (0 when none)."""
    return highest_generated_id(str(call.get("id") or "") for message in messages
                                if message.get("role") == "assistant"
                                for call in message.get("tool_calls") or ())


def highest_generated_id(ids: Iterable[str]) -> int:
    """The highest call number N among ids of the generated form ``call_N_i`` (0 when none)."""
    highest = 0
    for call_id in ids:
        match = _GENERATED_ID_RE.fullmatch(call_id)
        if match:
            highest = max(highest, int(match.group(1)))
    return highest


def _optional_int(value: Any) -> int | None:
    """``int(value)``, or ``None`` when the script left the field out (or gave null)."""
    return None if value is None else int(value)
