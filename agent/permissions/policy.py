"""The permission policy: whether one tool call runs, asks the user, or is denied (``decide``).

Modes (DESIGN.md 6): read tools always run; mutating tools run in auto-edit and full-auto; exec
tools run in full-auto; read-only denies both; ask asks for both (``gate``). Deny rules beat
everything, the mode included; allow rules (and session grants) answer instead of the user; an
edit under ``.git/`` asks like a command outside full-auto. Headless runs never prompt: a call that
would ask is denied with a message naming the flag that would allow it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..config.settings import PermissionMode
from ..tools.base import Capability
from .grants import COMMAND_TOOLS, grant_gap_note, grant_gaps
from ..tools.names import parse_name

if TYPE_CHECKING:
    from .rules import PermissionRules

Access = Literal["allow", "ask", "deny"]


@dataclass(frozen=True)
class PermissionVerdict:
    """The policy's answer for one call: ``access``, for a denial the error ``message`` for the
    model, and ``note``."""

    access: Access
    message: str = ""
    #: Why the call asks although a session grant would cover its tool (``grants.grant_gap_note``).
    note: str = ""


def decide(tool_name: str, capability: Capability, arguments: object, *, mode: PermissionMode,
           rules: "PermissionRules | None", workspace: Path, interactive: bool) -> PermissionVerdict:
    """Decide one call of ``tool_name`` (decoded ``arguments``): deny rules, then the mode gate
    answered by allow rules, then the ``.git/`` protection; "ask" becomes a denial when
    ``interactive`` is False (headless runs never prompt). A session grant of a command tool
    (bash) does not answer for a line the risk analysis flags (``grants.grant_gaps``): that call
    asks, with the reason in ``note``."""
    access = gate(capability, mode)
    note = ""
    if rules is not None:
        ruling = rules.check(tool_name, arguments)
        if ruling.verdict == "deny":
            return PermissionVerdict("deny", ruling.message)
        if ruling.verdict == "allow" and access == "ask":
            gaps = _grant_gaps(tool_name, arguments, workspace, rules) if ruling.grant else []
            if gaps:
                note = grant_gap_note(tool_name, gaps)
            else:
                access = "allow"
    protected = False
    if access == "allow" and mode != PermissionMode.FULL_AUTO \
            and touches_protected_path(capability, arguments, workspace):
        access, protected = "ask", True  # .git/ holds hooks and config that run commands: an edit there is exec
    if access == "deny" or (access == "ask" and not interactive):
        if protected and not interactive:
            message = (f"{DENIAL_PREFIX}: {tool_name} would change a file under .git/, where git keeps hooks "
                       "and config that run commands, so it needs approval like a command, and headless "
                       "runs never prompt. Leave .git/ alone, or ask the user to rerun with "
                       "--permission-mode full-auto.")
            return PermissionVerdict("deny", message, note)
        message = denial_message(tool_name, capability, mode, headless=not interactive)
        return PermissionVerdict("deny", message + (f" Note: {note}." if note else ""), note)
    return PermissionVerdict(access, note=note)


def _grant_gaps(tool_name: str, arguments: object, workspace: Path, rules: "PermissionRules") -> list[str]:
    command = arguments.get("command") if isinstance(arguments, dict) else None
    if tool_name not in COMMAND_TOOLS or not isinstance(command, str):
        return []
    return grant_gaps(command, Path(workspace), rules.session_prefixes)


def gate(capability: Capability, mode: PermissionMode) -> Access:
    """Return ``allow``, ``ask`` or ``deny`` for a tool of ``capability`` under ``mode``."""
    if capability == Capability.READ:
        return "allow"
    if mode == PermissionMode.FULL_AUTO:
        return "allow"
    if mode == PermissionMode.READ_ONLY:
        return "deny"
    if mode == PermissionMode.AUTO_EDIT:
        return "allow" if capability == Capability.MUTATING else "ask"
    return "ask"


#: How every denial result text starts (mode, user, deny rule); the TUI labels such calls "denied".
DENIAL_PREFIX = "Permission denied"


def flag_that_allows(capability: Capability) -> str:
    """Return the ``--permission-mode`` value that would let a tool of ``capability`` run."""
    return "--permission-mode auto-edit" if capability == Capability.MUTATING else "--permission-mode full-auto"


def denial_message(tool_name: str, capability: Capability, mode: PermissionMode, *, headless: bool) -> str:
    """Return the error result text for a call the mode does not allow (one or two sentences)."""
    if mode == PermissionMode.READ_ONLY:
        return (f"{DENIAL_PREFIX}: {tool_name} ({capability.value}) is not allowed in read-only mode. "
                f"Use read-only tools, or ask the user to rerun with {flag_that_allows(capability)}.")
    if headless:
        return (f"{DENIAL_PREFIX}: {tool_name} ({capability.value}) needs approval in permission mode "
                f"'{mode.value}', and headless runs never prompt. Rerun with {flag_that_allows(capability)} "
                f"to allow it.")
    return f"{DENIAL_PREFIX}: the user did not allow {tool_name}."


#: Folders whose files can make git (or the app) run commands: editing them is as risky as exec.
PROTECTED_DIRS = (".git",)


def touches_protected_path(capability: Capability, arguments: object, workspace) -> bool:
    """True when a mutating call targets a path inside a protected folder (``.git/``: hooks,
    ``core.fsmonitor`` or aliases in its config run commands on the next git call), so that
    auto-edit asks for it like for a command. ``arguments``: the decoded call arguments."""
    if capability != Capability.MUTATING or not isinstance(arguments, dict):
        return False
    path = arguments.get("path")
    if not isinstance(path, str) or not path.strip():
        return False
    path = parse_name(path)  # the name the tool will open (``\xNN`` escapes read back)
    target = Path(path) if Path(path).is_absolute() else Path(workspace) / path
    try:
        parts = target.resolve().relative_to(Path(workspace).resolve()).parts
    except (ValueError, OSError, RuntimeError):
        parts = Path(path).parts
    return any(part in PROTECTED_DIRS for part in parts)
