"""Loading and validating a ``--replay`` file (DESIGN.md 5: the replay format).

The whole file is checked against pydantic models when it is loaded, so a bad entry is reported
before the run starts, in one line naming the file, the reply's index and the field
(``reply 0, field tool_calls: Input should be a valid list``), instead of failing mid-run. Keys
a reply does not know are ignored, so files written for a later version still replay; a reply
that has keys but none of the known ones (a typo such as ``{"contnet": "x"}``) is refused.
The replies are returned as the plain dicts that were read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError, model_validator

from ..messages import json_loads

#: The error kinds a reply may script, with the message the provider raises for each.
ERROR_MESSAGES = {
    "rate_limit": "rate limited by the provider (429)",
    "server": "the provider returned a server error (500)",
    "auth": "authentication failed: check your API key",
    "not_found": "model not found",
    "network": "network error: could not reach the provider",
    "timeout": "the provider did not answer in time",
    "context_window": "the request exceeds the model's context window",
    "empty": "the provider returned an empty reply",
}

#: The keys a reply may carry (DESIGN.md 5); a reply with keys but none of these is refused.
REPLY_KEYS = ("content", "reasoning_content", "tool_calls", "usage", "finish_reason", "error", "for", "task")
#: The keys that say who consumes a reply, not what it holds: a reply with only these and
#: unknown keys (``{"for": "subagent", "contnet": "x"}``) is refused like a reply of unknown keys.
ROUTING_KEYS = ("for", "task")

ErrorKind = Literal["rate_limit", "server", "auth", "not_found", "network", "timeout",
                    "context_window", "empty"]


class ReplayError(Exception):
    """A replay file that cannot be used; the message names the file and the problem."""


class ScriptedToolCall(BaseModel):
    """One scripted tool call: ``name``, ``arguments`` (an object, or a raw string sent as-is,
    default ``{}``) and an optional ``id`` (generated when absent)."""

    model_config = ConfigDict(extra="ignore")

    name: StrictStr
    arguments: dict[str, Any] | StrictStr = Field(default_factory=dict)
    id: StrictStr | None = None


class ScriptedUsage(BaseModel):
    """Token usage a reply reports, as a provider would (tokens)."""

    model_config = ConfigDict(extra="ignore")

    prompt_tokens: StrictInt = Field(0, ge=0)
    completion_tokens: StrictInt = Field(0, ge=0)
    cached_prompt_tokens: StrictInt | None = Field(None, ge=0)
    cache_creation_tokens: StrictInt | None = Field(None, ge=0)


class ScriptedReply(BaseModel):
    """One reply of a replay file (DESIGN.md 5); every key is optional, unknown keys are ignored."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    content: StrictStr | None = None
    reasoning_content: StrictStr | None = None
    tool_calls: list[ScriptedToolCall] | None = None
    usage: ScriptedUsage | None = None
    finish_reason: StrictStr | None = None
    error: ErrorKind | None = None
    for_: Literal["summary", "subagent"] | None = Field(default=None, alias="for")
    task: StrictInt | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _task_needs_subagent(self) -> "ScriptedReply":
        if self.task is not None and self.for_ != "subagent":
            raise ValueError('"task" numbers a sub-agent\'s reply: it needs "for": "subagent"')
        return self


def load_replay_file(path: Path) -> list[dict[str, Any]]:
    """Read and validate a ``--replay`` file: a JSON list of reply objects.

    ``path``: the file. Returns the replies in order, as the dicts read. Raises ``ReplayError``
    (one line naming the file) when the file is missing, not JSON, not a list of objects, or
    holds a reply that breaks the format: a wrong type or value (the reply's 0-based index and
    the field path are named, e.g. ``reply 2, field tool_calls[0].name``), an unknown error kind,
    or keys of which none is a reply key. An empty object ``{}`` stays an empty reply.
    """
    try:
        data = json_loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReplayError(f"cannot read replay file {path}: {exc.strerror or exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReplayError(f"replay file {path} is not valid JSON: {exc}") from exc
    if not isinstance(data, list):
        raise ReplayError(f"replay file {path} must hold a JSON list of reply objects")
    for index, reply in enumerate(data):
        check_reply(reply, index, path)
    return data


def check_reply(reply: Any, index: int, path: Path | str) -> None:
    """Validate one reply (the ``index``-th, 0-based, of the file at ``path``).

    Raises ``ReplayError`` with one line naming the file, the index and the first bad field.
    """
    where = f"replay file {path}: reply {index}"
    if not isinstance(reply, dict):
        raise ReplayError(f"{where} must be a JSON object, not {_json_type(reply)}")
    payload = [key for key in reply if key not in ROUTING_KEYS]
    if payload and not any(key in REPLY_KEYS for key in payload):
        unknown = ", ".join(repr(key) for key in payload)
        raise ReplayError(f"{where} has no known key (unknown: {unknown}; "
                          f"a reply has {', '.join(REPLY_KEYS)})")
    try:
        ScriptedReply.model_validate(reply)
    except ValidationError as exc:
        raise ReplayError(f"{where}, {_first_problem(exc)}") from None


def _first_problem(exc: ValidationError) -> str:
    """``field tool_calls[0].name: Field required`` for the first error pydantic reports.

    A field typed as a union reports one error per member; the first is the one kept, with the
    union's member names dropped from the path.
    """
    error = exc.errors(include_url=False)[0]
    field = ""
    for part in error["loc"]:
        if isinstance(part, int):
            field += f"[{part}]"
        elif part in ScriptedReply.model_fields or part in ScriptedToolCall.model_fields \
                or part in ScriptedUsage.model_fields or part == "for":
            field += f".{part}" if field else part
    message = error["msg"]
    if error["type"] == "literal_error" and field == "error":
        message = f"unknown error {error.get('input')!r} (one of {', '.join(ERROR_MESSAGES)})"
    return f"field {field or '(reply)'}: {message}"


def _json_type(value: Any) -> str:
    names = {str: "a string", int: "a number", float: "a number", bool: "a boolean",
             list: "a list", type(None): "null"}
    return names.get(type(value), type(value).__name__)
