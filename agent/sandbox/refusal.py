"""Telling the model that the sandbox refused something: ``refusal_note`` reads a finished
sandboxed command's output and exit code and returns the plain line the tool result gains."""

from __future__ import annotations

import re

from .policy import SandboxMode, SandboxPolicy

#: What a refused write, connect or socket looks like in a command's output (EACCES, EPERM,
#: EROFS as the C library, Python, git, pip and npm print them).
REFUSAL_PATTERN = re.compile(
    r"permission denied|operation not permitted|read-only file system|EACCES|EPERM|EROFS"
    r"|PermissionError|cannot open .* for writing",
    re.IGNORECASE)


def looks_refused(output: str, exit_code: int | None) -> bool:
    """Whether a sandboxed command's ``output`` (what it printed) and ``exit_code`` (non-zero
    required) suggest the sandbox refused it."""
    return bool(exit_code) and REFUSAL_PATTERN.search(output) is not None


def refusal_note(policy: SandboxPolicy, *, interactive: bool) -> str:
    """The line added to the result of a command ``policy`` refused: which sandbox, where writes
    are allowed, what to do instead (Plan mode: put the step in the plan; headless: the flag
    that runs commands unsandboxed; Act mode under a read-only sandbox: propose the step, naming
    that mode). ``interactive``: the user can be asked."""
    net = "" if policy.network else "; the network is off"
    text = (f"[sandbox: the {policy.mode.value} sandbox refused writes outside {policy.allowed_text()}{net} "
            "(the OS sandbox, not file permissions).")
    if policy.plan:
        text += " In Plan mode, propose the step in the plan instead of running it."
    elif policy.mode is SandboxMode.READ_ONLY:
        text += (" Act mode runs commands read-only here (`--sandbox read-only` or the read-only permission "
                 "mode): propose the step to the user instead of running it.")
    elif not interactive:
        text += " Running it unsandboxed needs `--sandbox off`."
    return text + "]"


def git_file_refusal(policy: SandboxPolicy | None, tool_name: str, touches_git: bool) -> str | None:
    """The error result of a file tool call (``write`` / ``edit``) that would change a file under
    ``.git/`` (``touches_git``, from ``permissions.policy.touches_protected_path``) while commands
    run under ``policy``, else None. The sandbox keeps git's config, hooks and info read-only for
    commands (a hook or ``core.fsmonitor`` planted there would run later, unsandboxed); the file
    tools are not a way around it: in full-auto the loop asks the user for such a call (headless:
    this refusal), the other modes ask already (``permissions.policy``)."""
    if policy is None or not policy.available or not touches_git:
        return None
    return (f"Refused: {tool_name} would change a file under .git/. While the {policy.mode.value} sandbox is on, "
            "git's config, hooks and attributes stay read-only (they can run programs on the next git call), "
            "for commands and file tools alike. git commands themselves (git add, git commit) work; ask the user "
            "to change the repository's git configuration if the task needs it.")
