"""How a command the user ran themself (``!command``, agent/loop/user_command.py) is written
into the conversation, and how a resumed session recognises that message again. Kept apart from
running the command, so reading a session back needs neither the bash tool nor the permission
policy (``--continue`` imports this on the way to its first frame, issue 18)."""

from __future__ import annotations

import re

#: How the command and its output are put to the model.
USER_COMMAND_TEXT = "I ran this command myself:\n$ {command}\n\nIts output:\n{output}"

_COMMAND_PREFIX = USER_COMMAND_TEXT.split("{command}")[0]
_OUTPUT_LABEL = USER_COMMAND_TEXT.split("{command}")[1].split("{output}")[0]
_EXIT_CODE = re.compile(r"\[exit code: (-?\d+)[^\]]*\]\s*\Z")


def parse_user_command(text: object) -> tuple[str, str, int | None] | None:
    """``(command, output, exit code)`` of a user message ``run_user_command`` wrote (its
    ``USER_COMMAND_TEXT``; the exit code from the bash tool's last ``[exit code: N]`` line, None
    when the output has none), or None for any other message content (a resumed session redraws
    such a message as the command's block, as it was shown live)."""
    if not isinstance(text, str) or not text.startswith(_COMMAND_PREFIX):
        return None
    command, found, output = text[len(_COMMAND_PREFIX):].partition(_OUTPUT_LABEL)
    if not found:
        return None
    match = _EXIT_CODE.search(output)
    return command, output, int(match.group(1)) if match else None
