"""The system prompt: identity, working directory, tool-usage rules, project instructions.

Project instructions come from ``AGENTS.md`` and ``CLAUDE.md`` at the workspace root (the
convention of Codex / Claude Code). The ``think`` tool is mentioned only when it is registered.
The prompt is the same in Plan and Act mode (a session builds it once and journals it, see
agent/runtime/agent_builder.py): when the plan tools are registered it says that a ``<mode>`` block at the
start of a user message states the mode (``MODES_NOTE``), and the mode's rules come there.
"""

from __future__ import annotations

import platform
from pathlib import Path

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTIONS_CHARS = 20000

_RULES = """\
You are opencli-tui, a coding agent working in the user's repository from their terminal. You act
through tools, observe their results, and continue until the task is done; then answer briefly.

Rules:
- Read before you change: use glob and grep to find code, read to see it (read pages with offset
  and limit). Never guess file contents.
- Change files with edit (exact, unique old_string) or write (whole new files). Keep changes
  minimal and in the style of the surrounding code.
- Use bash for builds, tests and git inspection. Commands run in the working directory, without
  stdin, under a time limit.
- Paths are relative to the working directory; you cannot leave it.
- When a tool returns an error, read it and change your approach instead of repeating the call.
- When you are done, say what you changed and how you verified it, in a few lines."""


MODES_NOTE = """\
Modes: you start in Act mode (do the work). A user message may begin with a <mode> block written
by opencli-tui, not by the user: it switches to Plan mode (read-only: explore, then submit_plan)
or back to Act mode, with the rules of that mode, which hold until another <mode> block.
While carrying out an approved plan, mark its steps with update_plan."""


def load_project_instructions(workspace: Path) -> str:
    """Return the text of AGENTS.md / CLAUDE.md at ``workspace`` (each capped at 20 000 characters),
    headed by its file name, or an empty string when neither exists or is readable."""
    parts = []
    for name in INSTRUCTION_FILES:
        path = Path(workspace) / name
        try:
            if path.is_file():
                text = path.read_text(encoding="utf-8", errors="replace")[:MAX_INSTRUCTIONS_CHARS]
                parts.append(f"## {name}\n{text.strip()}")
        except OSError:
            continue
    return "\n\n".join(parts)


def build_system_prompt(workspace: Path, tool_names: list[str], *, git_snapshot: str = "",
                        reminder_rules: str = "", extra: str = "") -> str:
    """Return the system prompt for ``workspace`` with the registered ``tool_names``.

    ``reminder_rules`` (from ``reminders.system_prompt_rules``, the same list the reminders use),
    ``git_snapshot`` (already rendered text) and ``extra`` are added when non-empty.
    """
    lines = [_RULES, "", f"Working directory: {Path(workspace)}",
             f"Platform: {platform.system()} {platform.release()}",
             f"Tools: {', '.join(tool_names)}"]
    if "think" in tool_names:
        lines.append("Use think to reason step by step before a difficult decision; it changes nothing.")
    if "submit_plan" in tool_names:
        lines += ["", MODES_NOTE]
    if reminder_rules:
        lines += ["", reminder_rules]
    if git_snapshot:
        lines += ["", git_snapshot]
    instructions = load_project_instructions(workspace)
    if instructions:
        lines += ["", "# Project instructions", instructions]
    if extra:
        lines += ["", extra]
    return "\n".join(lines)
