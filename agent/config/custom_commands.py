"""Custom slash commands: prompts kept as markdown files, typed as ``/NAME args``.

A file ``NAME.md`` in the project's ``.opencli/commands/`` or in ``commands/`` beside the user
config file (``~/.config/opencli/commands/``) is the command ``/NAME`` (Claude Code's custom
commands work the same way). Its text is the prompt sent to the model, with ``$ARGUMENTS``
replaced by what follows the name (appended after a blank line when the text does not use it).
The description shown by ``/help`` and Tab is the file's first line, without a leading ``#``.
A project command wins over a user one of the same name; the built-in commands cannot be
replaced. A command is only a prompt: typing it runs nothing but a turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .files import user_config_path

#: Files larger than this are not commands (bytes).
MAX_COMMAND_BYTES = 64 * 1024
_NAME = re.compile(r"^[A-Za-z][\w-]*$")


@dataclass(frozen=True)
class CustomCommand:
    """One custom command: ``name`` (no slash), the prompt ``template``, a one-line
    ``description`` and the ``source`` file."""

    name: str
    template: str
    description: str
    source: Path

    def prompt(self, arguments: str) -> str:
        """The prompt to send for ``/name arguments``."""
        arguments = arguments.strip()
        if "$ARGUMENTS" in self.template:
            return self.template.replace("$ARGUMENTS", arguments)
        return f"{self.template.rstrip()}\n\n{arguments}" if arguments else self.template


def command_folders(workspace: Path) -> list[Path]:
    """Where commands are looked for, lowest precedence first: the user's, then the project's."""
    return [user_config_path().parent / "commands", Path(workspace) / ".opencli" / "commands"]


def load_custom_commands(workspace: Path, reserved: set[str] | frozenset[str] = frozenset()) -> list[CustomCommand]:
    """The custom commands of ``workspace``, sorted by name; names in ``reserved`` (the built-in
    commands), names that are not ``[A-Za-z][\\w-]*``, unreadable, empty or oversized files are
    left out. Never raises."""
    found: dict[str, CustomCommand] = {}
    for folder in command_folders(workspace):
        try:
            files = sorted(folder.glob("*.md")) if folder.is_dir() else []
        except OSError:
            continue
        for path in files:
            name = path.stem.lower()
            if not _NAME.match(name) or name in reserved:
                continue
            try:
                if path.stat().st_size > MAX_COMMAND_BYTES:
                    continue
                text = path.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                continue
            if text:
                first = text.splitlines()[0].lstrip("#").strip()
                found[name] = CustomCommand(name, text, first[:80] or f"prompt from {path.name}", path)
    return [found[name] for name in sorted(found)]


__all__ = ["CustomCommand", "command_folders", "load_custom_commands"]
