"""The ``opencli-tui`` command: the TUI by default, ``run`` for a headless task.

Exit codes of ``run`` (DESIGN.md 5a): 0 done, 1 error, 2 usage or configuration error, 3 max
turns, 4 stuck, 130 cancelled. Textual is imported only when the TUI starts, and litellm only
when a model is first needed.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Sequence

EXIT_USAGE = 2


def _common_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", help="litellm model name, e.g. openai/gpt-4.1, anthropic/claude-sonnet-4-5, "
                                        "ollama/qwen3, embedded/smollm2-135m")
    parser.add_argument("--api-base", help="base URL of an OpenAI-compatible server")
    parser.add_argument("--max-turns", type=int, metavar="N", help="stop after N steps with tool calls (default 50)")
    parser.add_argument("--permission-mode", choices=["ask", "auto-edit", "full-auto", "read-only"],
                        help="which tool calls run without asking (default ask)")
    parser.add_argument("--replay", type=Path, metavar="FILE",
                        help="use the scripted provider with the replies in FILE (JSON list)")
    parser.add_argument("--replay-log", type=Path, metavar="FILE",
                        help="append every request the scripted provider receives to FILE (JSONL)")
    parser.add_argument("-C", "--cwd", type=Path, metavar="DIR", help="workspace directory (default: current)")
    parser.add_argument("--plan", action="store_true",
                        help="Plan mode: explore read-only and propose a plan (run: print it and exit 0)")
    parser.add_argument("--yes", action="store_true",
                        help="with --plan only: carry out the plan without asking (permissions still follow "
                             "--permission-mode)")


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser (``run`` subcommand for headless use)."""
    parser = argparse.ArgumentParser(
        prog="opencli-tui",
        description="A full-screen terminal coding agent. Without a command it opens the TUI.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    _common_flags(parser)
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", help="run one task headless and exit with a code that says how it ended")
    run.add_argument("task", help="the task for the agent")
    run.add_argument("--output-format", choices=["text", "json"], default="text",
                     help="text (rich) or json (one event per line)")
    _common_flags(run)
    return parser


def _flags(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "model": args.model,
        "api_base": args.api_base,
        "max_turns": args.max_turns,
        "permission_mode": args.permission_mode,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point. Returns the process exit code (also passed to ``sys.exit`` by the script)."""
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
    if not workspace.is_dir():
        print(f"opencli-tui: error: workspace {workspace} is not a directory", file=sys.stderr)
        return EXIT_USAGE

    from agent.config import ConfigError, load_settings
    from agent.providers.scripted import ReplayError
    from agent.runtime import build_session

    notices: list[str] = []
    try:
        settings = load_settings(workspace, _flags(args), notices)
        session = build_session(workspace, settings, replay=args.replay, replay_log=args.replay_log,
                                interactive=args.command != "run")
    except (ConfigError, ReplayError) as exc:
        print(f"opencli-tui: error: {exc}", file=sys.stderr)
        return EXIT_USAGE

    if args.command == "run":
        from .headless import run_headless

        return run_headless(session, args.task, output_format=args.output_format, notices=notices,
                            plan=args.plan, execute_plan=args.yes)

    from .app import OpenCLIApp

    app = OpenCLIApp(session=session, notices=notices)
    app.run()
    return int(app.return_code or 0)

