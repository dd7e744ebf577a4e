"""Offering to run a command the sandbox refused again, unsandboxed, with the user's approval
(Act mode, ``ask`` permission mode, a user to ask): ``offer_unsandboxed``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

#: The first line of the result of a command run again unsandboxed.
RERUN_HEADER = "[the sandbox refused the command; the user approved running it again unsandboxed:]"
#: Added to the refused result when the user declines the unsandboxed run.
DECLINED_TEXT = "[the user declined to run it unsandboxed]"


def should_offer(output: Any, ctx: Any, permission_mode: str) -> bool:
    """Whether a finished call's ``output`` (a ``ToolOutput``) is a sandbox refusal to offer
    again unsandboxed: the tool marked it (``metadata["sandbox_refused"]``), its sandbox
    (``ctx.sandbox``) can ask the user and is not read-only (the planning pass and a read-only
    Act mode never run anything unsandboxed), and ``permission_mode`` is ``ask``."""
    policy = getattr(ctx, "sandbox", None)
    if policy is None or policy.plan or policy.mode.value == "read-only":
        return False
    return bool(output.metadata.get("sandbox_refused")) and policy.can_ask \
        and str(getattr(permission_mode, "value", permission_mode)) == "ask"


def prompt_note(policy: Any) -> str:
    """The permission prompt's note for the unsandboxed run of a call ``policy`` refused."""
    net = "a network connection, " if not policy.network else ""
    return (f"the {policy.mode.value} sandbox refused something this command tried (a write outside "
            f"{policy.allowed_text()}, a change to git's config, hooks or info, {net}or a Unix socket such as "
            "docker's or ssh-agent's); allowing runs the whole command again unsandboxed, once (every "
            "unsandboxed rerun asks: t and p count as once here)")


def offer_unsandboxed(output: Any, ctx: Any, ask: Callable[[Any, str], Any],
                      run: Callable[[Any], Any]) -> Any:
    """Ask (``ask(unsandboxed_ctx, note)`` returns a ``PermissionDecision`` or None when the turn
    was cancelled) and, when allowed, ``run(unsandboxed_ctx)``: returns the new output with
    ``RERUN_HEADER`` first, else ``output`` with ``DECLINED_TEXT`` appended.

    Every unsandboxed rerun asks: a session answer (``t`` / ``p``) counts as once here. A
    remembered answer was tried and taken back: no analysis of a command line can tell what a
    refused command would do unsandboxed (``python3 -c`` deletes, ``$(git rev-parse --git-path
    hooks)``, ``cd .gi?``), so only the user's look at each command decides."""
    unsandboxed = replace(ctx, sandbox=None)
    decision = ask(unsandboxed, prompt_note(ctx.sandbox))
    if decision is None or not decision.allow:
        reason = f" The user said: {decision.reason.strip()}" if decision is not None and decision.reason.strip() else ""
        return output.model_copy(update={"text": f"{output.text}\n{DECLINED_TEXT}{reason}"})
    rerun = run(unsandboxed)
    return rerun.model_copy(update={"text": f"{RERUN_HEADER}\n{rerun.text}",
                                    "metadata": {**rerun.metadata, "sandbox": "off", "rerun_unsandboxed": True}})
