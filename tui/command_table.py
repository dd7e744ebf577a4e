"""The slash commands that exist and how they are typed.

``parse_command(text)`` recognises ``/name args``; ``COMMANDS`` lists what exists (the help
screen shows it); ``complete_command(text)`` completes a command name being typed (Tab in the
prompt). A line that starts with ``//`` is sent to the model with one slash removed (a way to
start a prompt with '/').
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.config.custom_commands import CustomCommand


_COMMAND = re.compile(r"^/([A-Za-z][\w-]*)(?:\s+(.*))?$", re.DOTALL)
_NAME_PREFIX = re.compile(r"/([A-Za-z][\w-]*)?")


@dataclass(frozen=True)
class Command:
    """One slash command: ``name`` (without the slash), usage text and a one-line description."""

    name: str
    usage: str
    description: str


COMMANDS: list[Command] = [
    Command("help", "/help", "keys and commands"),
    Command("clear", "/clear", "start a new conversation (clears the screen)"),
    Command("model", "/model NAME", "switch the model, e.g. /model anthropic/claude-sonnet-4-5"),
    Command("plan", "/plan TASK", "plan TASK read-only, then review, edit and approve the plan"),
    Command("compact", "/compact [FOCUS]", "compact the context now (FOCUS: what the summary must keep)"),
    Command("undo", "/undo", "restore the files the last turn changed"),
    Command("resume", "/resume [ID]", "resume a saved session of this project (a picker without ID)"),
    Command("sessions", "/sessions", "list this project's saved sessions (date, size, first prompt); delete one"),
    Command("mcp", "/mcp", "the MCP servers: status, tools; restart one or approve a project's server"),
    Command("stats", "/stats", "this session's figures: tokens, cost, time in model and tools, slowest tools"),
    Command("budget", "/budget [cost USD | tokens N | off]",
            "show the session's spending and limits, or change them for this session"),
    Command("quit", "/quit", "leave the app"),
]

COMMANDS_BY_NAME = {c.name: c for c in COMMANDS}
#: The custom commands of the open session's project (``agent.config.custom_commands``), by name:
#: ``set_custom_commands`` fills it when a session opens.
CUSTOM: dict[str, "CustomCommand"] = {}


def set_custom_commands(commands: "list[CustomCommand]") -> None:
    """Make ``commands`` the custom commands Tab, ``/help`` and the dispatcher know."""
    CUSTOM.clear()
    CUSTOM.update({c.name: c for c in commands if c.name not in COMMANDS_BY_NAME})


def all_commands() -> list[Command]:
    """The built-in commands, then the custom ones (``/NAME [ARGS]``, their first line)."""
    return COMMANDS + [Command(c.name, f"/{c.name} [ARGS]", f"{c.description} (custom: {c.source.name})")
                       for c in CUSTOM.values()]
_ALIASES = {"exit": "quit", "q": "quit", "h": "help", "?": "help", "new": "clear"}


def parse_command(text: str) -> tuple[str, str] | None:
    """Return ``(name, args)`` when ``text`` is a slash command, else None.

    ``name`` is lower-cased with aliases resolved; ``args`` is stripped ('' when absent).
    ``//text`` and text that does not look like a command (``/ foo``) are not commands.
    """
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    match = _COMMAND.match(stripped)
    if not match:
        return None
    name = match.group(1).lower()
    return _ALIASES.get(name, name), (match.group(2) or "").strip()


def shell_line(text: str) -> str | None:
    """The command of a ``!command`` line (stripped; "" for a lone ``!``), else None. ``!!text``
    is not a command: it is sent to the model with one ``!`` removed (``unescape_prompt``)."""
    stripped = text.strip()
    if not stripped.startswith("!") or stripped.startswith("!!"):
        return None
    return stripped[1:].strip()


def unescape_prompt(text: str) -> str:
    """Return the prompt to send: ``//foo`` becomes ``/foo``, ``!!foo`` ``!foo``; other text is
    unchanged."""
    stripped = text.strip()
    return stripped[1:] if stripped.startswith(("//", "!!")) else text


@dataclass(frozen=True)
class CommandCompletion:
    """What Tab does to a command name being typed.

    ``text`` is the new prompt text (the input itself when there is nothing to add);
    ``candidates`` are the commands that match the typed prefix, in table order: one when the
    completion is unique (``text`` then ends with the name and a space), several when the prefix
    is ambiguous (``text`` is extended to their longest common prefix), none when nothing
    matches (``text`` is unchanged).
    """

    text: str
    candidates: tuple[Command, ...]


def complete_command(text: str) -> CommandCompletion | None:
    """Complete the slash command name in ``text`` from ``COMMANDS``.

    ``text`` must be exactly ``/`` plus the start of a name (no spaces, no second line, not
    ``//``); otherwise the result is None (there is no command name to complete). Matching
    ignores case; aliases (``/q``, ``/exit``) are not offered. See ``CommandCompletion``.
    """
    match = _NAME_PREFIX.fullmatch(text)
    if match is None:
        return None
    prefix = (match.group(1) or "").lower()
    candidates = tuple(c for c in all_commands() if c.name.startswith(prefix))
    if not candidates:
        return CommandCompletion(text, ())
    if len(candidates) == 1:
        return CommandCompletion(f"/{candidates[0].name} ", candidates)
    common = os.path.commonprefix([c.name for c in candidates])
    return CommandCompletion(f"/{common}" if len(common) > len(prefix) else text, candidates)


def command_rows() -> list[tuple[str, str]]:
    """Return ``(usage, description)`` for every command (custom ones too), for the help screen."""
    return [(c.usage, c.description) for c in all_commands()]
