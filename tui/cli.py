"""The ``opencli-tui`` command: the TUI by default, ``run`` for a headless task.

Exit codes of ``run`` (DESIGN.md 5a): 0 done, 1 error (a crash too), 2 usage or configuration
error, 3 max turns, 4 stuck, 130 cancelled, 143 interrupted by SIGTERM / SIGHUP. After a crash (an
uncaught exception) the terminal is restored, the traceback goes to a private file in the user's
state folder (``tui.crash``) and one line on stderr names it. Textual is imported only when the TUI starts, and litellm only
when a model is first needed.

Sessions: ``--continue`` resumes this project's latest session; ``--resume ID`` a given one (a
unique id prefix works). ``--resume`` without an id opens the TUI's session picker (a new session
until one is chosen); ``run --resume`` without an id lists recent sessions on stderr and exits 2,
so scripts always name the session (``run --resume ID "task"``; the id is in the ``session_id``
field of ``turn_started`` / ``turn_finished``). An unknown id, no session to continue, or a
session open in another instance exit 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from .signals import install_headless_handlers
from .startup import SessionRequest, StartupError, open_session

EXIT_USAGE = 2
#: ``--resume`` given without an id.
PICK = ""


def _common_flags(parser: argparse.ArgumentParser, *, suppress_defaults: bool = False) -> None:
    """Add the flags shared by the TUI and ``run``. On the ``run`` subparser the defaults are
    suppressed, so a flag given before ``run`` is not overwritten by the subparser's default."""
    add = parser.add_argument
    if suppress_defaults:
        def add(*names, **kwargs):  # noqa: E306 - a local wrapper keeps one flag list
            kwargs["default"] = argparse.SUPPRESS
            return parser.add_argument(*names, **kwargs)
    add("--model", help="litellm model name, e.g. openai/gpt-4.1, anthropic/claude-sonnet-4-5, "
                                        "ollama/qwen3, embedded/smollm2-135m")
    add("--api-base", help="base URL of an OpenAI-compatible server")
    add("--max-turns", type=int, metavar="N", help="stop after N steps with tool calls (default 50)")
    add("--permission-mode", choices=["ask", "auto-edit", "full-auto", "read-only"],
                        help="which tool calls run without asking (default ask)")
    add("--replay", type=Path, metavar="FILE",
                        help="use the scripted provider with the replies in FILE (JSON list)")
    add("--replay-log", type=Path, metavar="FILE",
                        help="append every request the scripted provider receives to FILE (JSONL)")
    add("-C", "--cwd", type=Path, metavar="DIR", help="workspace directory (default: current)")
    add("--plan", action="store_true",
                        help="Plan mode: explore read-only and propose a plan (run: print it and exit 0)")
    add("--yes", action="store_true",
                        help="with --plan only: carry out the plan without asking (permissions still follow "
                             "--permission-mode)")
    add("--continue", dest="continue_", action="store_true",
                        help="continue the latest session of this project")
    add("--compaction", choices=["off", "auto", "manual"],
        help="context compaction: auto at the threshold (default), manual (/compact only) or off")
    add("--verify", action="store_true",
        help="after a run that changed files, run the tests (verify.command or detected) and hand failures "
             "back for another round; run: exit 5 when they still fail")
    add("--resume", nargs="?", const=PICK, metavar="ID",
                        help="continue session ID or a unique prefix of it (without ID: the TUI opens a "
                             "session picker; run lists recent sessions and exits 2)")
    # The session's budget (sub-agents included) and its log.
    add("--max-cost", type=float, metavar="USD",
        help="stop once the session's model calls cost this many US dollars (exit 6 in run)")
    add("--max-tokens", type=int, metavar="N",
        help="stop once the session's model calls used N tokens, prompt + completion (exit 6 in run)")
    add("--debug", action="store_true",
        help="run: also print each session log record (model and tool calls...) to stderr, one line each")
    add("--approve-mcp", action="append", metavar="NAME",
        help="start the project's MCP server NAME for this run without a remembered approval (repeatable)")
    add("--sandbox", choices=["auto", "off", "read-only", "workspace-write"],
        help="OS sandbox of bash commands: auto (default: Plan read-only, Act workspace-write where "
             "available), off, or always read-only / workspace-write")


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser (``run`` subcommand for headless use)."""
    parser = argparse.ArgumentParser(
        prog="opencli-tui",
        description="A full-screen terminal coding agent. Without a command it opens the TUI.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    _common_flags(parser)
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", help="run one task headless and exit with a code that says how it ended")
    run.add_argument("task", nargs="?", help="the task for the agent")
    run.add_argument("--output-format", choices=["text", "json"], default="text",
                     help="text (rich) or json (one event per line)")
    _common_flags(run, suppress_defaults=True)
    sessions = sub.add_parser("sessions", help="list this project's saved sessions (id, date, size, first prompt)")
    sessions.add_argument("--delete", metavar="ID", help="delete this session (its journal and saved outputs)")
    sessions.add_argument("-C", dest="cwd", type=Path, default=argparse.SUPPRESS, help="the project folder")
    sessions.add_argument("action", nargs="?", choices=["stats"],
                          help="stats [ID]: the figures of session ID (default: the latest) from its session log")
    sessions.add_argument("ref", nargs="?", metavar="ID", help="with stats: the session id or a unique prefix")
    mcp = sub.add_parser("mcp", help="list the MCP servers, approve or revoke a project's server")
    mcp.add_argument("action", choices=["list", "approve", "revoke"])
    mcp.add_argument("name", nargs="?", metavar="NAME", help="the server (approve, revoke)")
    mcp.add_argument("-C", dest="cwd", type=Path, default=argparse.SUPPRESS, help="the project folder")
    return parser


def _flags(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "model": args.model,
        "api_base": args.api_base,
        "max_turns": args.max_turns,
        "permission_mode": args.permission_mode,
        "compaction": {"mode": args.compaction} if args.compaction else None,
        "budget": {key: value for key, value in (("max_cost_usd", getattr(args, "max_cost", None)),
                                                  ("max_tokens", getattr(args, "max_tokens", None)))
                   if value is not None} or None,
        "verify": {"enabled": True} if getattr(args, "verify", False) else None,
        "sandbox": {"mode": args.sandbox} if args.sandbox else None,
    }


def _take_task_from_resume(args: argparse.Namespace, workspace: Path) -> None:
    """``run --resume WORD`` with no task: WORD is a session id when it names one (or a unique
    prefix of one), else it is the task and ``--resume`` has no id (the listing follows)."""
    if args.resume in (None, PICK):
        return
    from agent.session.resume import SessionNotFoundError, find_session

    try:
        find_session(workspace, args.resume)
    except SessionNotFoundError:
        args.task, args.resume = args.resume, PICK


def _resume_target(args: argparse.Namespace, workspace: Path) -> tuple[str | None, str | None]:
    """Return ``(resume, problem)``: the ``build_session(resume=...)`` value for the session flags
    and, for a usage error, the message to print (exit 2)."""
    if args.continue_ and args.resume is not None:
        return None, "opencli-tui: error: use either --continue or --resume, not both"
    if args.continue_:
        return "latest", None
    if args.resume != PICK:
        return args.resume, None
    if args.command != "run":
        return None, None  # the TUI opens its session picker (see main)
    from agent.session.resume import format_session_list, list_sessions

    recent = list_sessions(workspace, limit=10)
    listing = format_session_list(recent) if recent else "(this project has no saved session)"
    return None, ("opencli-tui: error: run --resume needs a session id (or use --continue for the latest); "
                  "recent sessions:\n" + listing)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point. Returns the process exit code (also passed to ``sys.exit`` by the script).

    Ctrl+C before the TUI takes the terminal (while settings load or modules import) ends the
    program quietly with 130, as a shell reports SIGINT, instead of a traceback."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`opencli-tui sessions | head -1`): it had enough
        _silence_stdout()
        return 0
    except Exception as exc:  # noqa: BLE001 - any crash: a report file and one line
        from .crash import crash_line, write_crash_report

        print(crash_line(exc, write_crash_report(exc, where=_where(argv))), file=sys.stderr)
        return 1


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush of a closed pipe cannot raise."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _where(argv: Sequence[str] | None) -> str:
    return "run" if "run" in list(argv if argv is not None else sys.argv[1:]) else "tui"


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        from importlib.metadata import version

        print(f"opencli-tui {version('opencli-tui')}")
        return 0
    if args.replay_log is not None and args.replay is None:
        parser.error("--replay-log needs --replay")
    if args.yes and not args.plan:
        print("opencli-tui: error: --yes needs --plan (it approves the plan; it does not change permissions)",
              file=sys.stderr)
        return EXIT_USAGE
    workspace = (args.cwd or Path(os.getcwd())).expanduser()
    if args.command == "run" and args.task is None:
        _take_task_from_resume(args, workspace)  # `run --resume WORD`: WORD may be the task
    if args.command == "run" and args.task is None and args.resume != PICK:
        print("opencli-tui: error: run needs a task: opencli-tui run \"what the agent should do\"", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "run" and args.task is not None and not args.task.strip():
        print("opencli-tui: error: the task is empty: say what the agent should do", file=sys.stderr)
        return EXIT_USAGE
    if not workspace.is_dir():
        print(f"opencli-tui: error: workspace {workspace} is not a directory", file=sys.stderr)
        return EXIT_USAGE

    if args.command == "sessions" and getattr(args, "action", None) == "stats":
        from .sessions_cli import run_stats_command

        return run_stats_command(workspace, args.ref)
    if args.command == "sessions":
        from .sessions_cli import run_sessions_command

        return run_sessions_command(workspace, args.delete)
    if args.command == "mcp":
        from .mcp_cli import run_mcp_command

        return run_mcp_command(workspace, args.action, args.name)
    resume, problem = _resume_target(args, workspace)
    if problem is not None:
        print(problem, file=sys.stderr)
        return EXIT_USAGE
    request = SessionRequest(workspace=workspace, flags=_flags(args), replay=args.replay,
                             replay_log=args.replay_log, interactive=args.command != "run",
                             resume=resume, model=args.model, approve_mcp=tuple(args.approve_mcp or ()))

    if args.command == "run":
        try:
            session, notices = open_session(request)
        except StartupError as exc:
            print(exc, file=sys.stderr)
            return EXIT_USAGE
        session.verify_granted = bool(getattr(args, "verify", False))  # --verify: permission to run the tests
        from .headless import run_headless

        install_headless_handlers()
        try:
            return run_headless(session, args.task, output_format=args.output_format, notices=notices,
                                plan=args.plan, execute_plan=args.yes, debug=args.debug)
        finally:
            session.close()  # releases the journal lock

    if not (sys.stdin.isatty() and sys.stdout.isatty()):  # Textual would draw into a pipe and wait
        print("opencli-tui: error: the TUI needs a terminal (stdin and stdout); in scripts and pipes use "
              'opencli-tui run "TASK" (add --output-format json for events)', file=sys.stderr)
        return EXIT_USAGE
    # The TUI paints first and opens the session in a worker (tui/startup.py says why); the theme
    # is peeked from the config files so the first frame already has the right colours.
    from agent.config.files import peek_setting

    from .app import OpenCLIApp

    app = OpenCLIApp(start=lambda: open_session(request), theme_hint=peek_setting(workspace, "theme"),
                     start_in_plan_mode=bool(args.plan))
    app.pick_session_at_start = args.resume == PICK and not args.continue_
    try:
        app.run()
    finally:
        if app.session is not None:
            app.session.close()
    crashed = getattr(app, "_exception", None)  # Textual restored the terminal and printed it
    if crashed is not None:
        from .crash import crash_line, write_crash_report

        print(crash_line(crashed, write_crash_report(crashed, where="tui")), file=sys.stderr)
        return 1
    if app.startup_error is not None:
        print(app.startup_error, file=sys.stderr)
        return EXIT_USAGE
    return int(app.return_code or 0)
