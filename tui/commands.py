"""Carrying out a slash command: ``run_command(app, name, args)`` through the app's public methods
(the table and the parsing are in ``command_table``). An unknown command becomes a notice and is
never sent to the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .app import OpenCLIApp
from .command_table import COMMANDS_BY_NAME, CUSTOM


async def run_command(app: "OpenCLIApp", name: str, args: str) -> None:
    """Carry out command ``name`` with ``args`` on ``app``; unknown names give a notice."""
    if name in CUSTOM:  # a prompt kept as a file: it goes where a typed prompt goes (Plan mode plans it)
        prompt = CUSTOM[name].prompt(args)
        if not await app.plan_mode.on_prompt(prompt):
            await app.send_prompt(prompt)
        return
    if name not in COMMANDS_BY_NAME:
        await app.show_notice(f"Unknown command /{name}. Type /help for the list; start with // to send "
                              f"a message beginning with '/'.", kind="warning")
        return
    if name == "undo":
        from .session_commands import undo

        await undo(app)
    elif name == "resume":
        from .resume_view import resume

        await resume(app, args)
    elif name == "sessions":
        from .screens.sessions_screen import SessionsScreen

        app.push_screen(SessionsScreen(app.session.workspace, app.session.session_id))
    elif name == "mcp":
        from .screens.mcp_screen import McpScreen

        app.push_screen(McpScreen(app.session))
    elif name == "stats":
        from .screens.stats_screen import StatsScreen

        app.push_screen(StatsScreen(app.session))
    elif name == "budget":
        from agent.observability.budget_command import apply_budget_command

        spending = getattr(app.session, "session_spending", None)
        if spending is None:
            await app.show_notice("This session has no budget.", kind="warning")
            return
        try:
            await app.show_notice(apply_budget_command(spending(), args), kind="notice")
        except ValueError as exc:
            await app.show_notice(f"/budget: {exc}", kind="warning")
    elif name == "help":
        app.action_help()
    elif name == "quit":
        await app.action_quit()
    elif name == "compact":
        from .context_ui import run_compact  # context management UI

        await run_compact(app, args)
    elif name == "clear":
        if app.runner.running:
            await app.show_notice("A turn is running: press Esc to stop it, then /clear.", kind="warning")
            return
        await app.new_conversation()
    elif name == "model":
        if not args:
            await app.show_notice(f"Current model: {app.session.model}. Usage: /model NAME", kind="notice")
            return
        if app.runner.running:
            await app.show_notice("A turn is running: press Esc to stop it, then /model.", kind="warning")
            return
        await app.switch_model(args.split()[0])
    elif name == "plan":
        await app.plan_mode.plan_task(args)
