"""A long chat: CPU per short exchange at message 10 against message N (default 5000), and
``--continue`` on an N-message session (issue 18).

A session journal with N messages (short user questions and ~400-character markdown answers,
a ``turn_finished`` after each pair) is written into a temporary data folder. Then:

1. Per-exchange cost, in-process (``OpenCLIApp.run_test`` at 160x48, scripted model replying a
   ~400-character answer in 4-character chunks, no sleeps): CPU of the whole process
   (``time.process_time``: every thread) and wall time from sending a prompt until its turn has
   ended and the screen has refreshed (``refreshed``), for

   - a new session: exchanges 1-10 (the conversation holds at most ~20 messages): "at 10";
   - the N-message session resumed (``--continue`` draws the last
     ``resume_backfill.FIRST_SHOWN_MESSAGES`` messages, the rest when scrolled to), then 10
     exchanges: "at N";
   - with ``--live``: the same, but with every one of the N messages mounted (as a chat that grew
     to N messages in one sitting would have), then 10 exchanges: "at N, live".

   Printed: median CPU and wall per exchange and the ratio to "at 10" (goal <= 1.2).
2. ``--continue`` from outside: the TUI on a 160x48 pseudo-terminal (``benchmarks/peer_stream.py``'s
   driver), from the spawn until the last message's marker is on the terminal, against the first
   paint of an empty session in the same run (goal: <= that + 0.3 s); RSS of both (goal: <= empty +
   150 MB).

Medians over ``--rounds`` (default 3). Nothing is asserted. Usage: python benchmarks/long_chat.py
[--messages N] [--rounds R] [--live] [--skip-continue] [--skip-exchanges]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

ANSWER = ("Here is what I found about **item {i}**: the function `handler_{i}` reads the config and "
          "returns a value; it is called from three places.\n\n- first point about {i}\n- second point\n\n"
          "```python\ndef handler_{i}(x):\n    return x * {i}\n```\n\nThat is all for item {i}, nothing else "
          "changes and the tests still pass.")
LAST_MARKER = "LASTANSWERMARK"


def isolate(data: Path) -> None:
    """Config and session data in ``data``; no API keys; litellm offline."""
    for key in list(os.environ):
        if key.startswith("OPENCLI_") or key.endswith("_API_KEY"):
            del os.environ[key]
    os.environ["OPENCLI_DATA_DIR"] = str(data)
    (data / "none.toml").write_text("")
    os.environ["OPENCLI_CONFIG"] = str(data / "none.toml")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def replies(count: int) -> list[dict]:
    return [{"content": ANSWER.format(i=f"new{n}")} for n in range(count)]


def write_session(ws: Path, messages: int) -> str:
    """Write a session of ``messages`` messages for ``ws``; returns its id."""
    from agent.config.settings import Settings
    from agent.messages import AssistantMessage, UserMessage
    from agent.providers.scripted import ScriptedProvider
    from agent.runtime.build import build_session
    from agent.session.records import EventRecord

    session = build_session(ws, Settings(model="openai/gpt-4.1"), provider=ScriptedProvider([]))
    session.prepare()
    journal = session.journal
    pairs = messages // 2
    for i in range(pairs):
        journal.append_message(UserMessage(content=f"question {i}: what does handler_{i} do?"))
        text = ANSWER.format(i=i) + (f"\n\n{LAST_MARKER}" if i == pairs - 1 else "")
        journal.append_message(AssistantMessage(content=text))
        journal.append(EventRecord.turn_finished("done", time.time()))
    session_id = session.session_id
    session.close()
    return session_id


async def exchanges(session, count: int) -> list[tuple[float, float]]:
    """Run ``count`` short exchanges in the app; (CPU s, wall s) of each."""
    from tui.app import OpenCLIApp

    app = OpenCLIApp(session=session, watch_themes=False)
    out = []
    async with app.run_test(size=(160, 48)) as pilot:
        while not app.runner.prepared:
            await asyncio.sleep(0.02)
        await pilot.pause(0.5)
        for n in range(count):
            cpu, wall = time.process_time(), time.perf_counter()
            await app.send_prompt(f"short question {n}")
            while app.runner.running:
                await asyncio.sleep(0.002)
            await refreshed(app)
            out.append((time.process_time() - cpu, time.perf_counter() - wall))
    return out


async def refreshed(app) -> None:
    """Wait until the screen has refreshed after the pending work. Not ``pilot.pause()``: that
    posts a message to every widget mounted (hidden ones too), a cost of the test harness that
    grows with the conversation and that a user's session does not have."""
    await asyncio.sleep(0)
    done = asyncio.Event()
    app.screen.call_after_refresh(done.set)
    await done.wait()


def run_exchanges(ws: Path, resume: str | None, count: int) -> list[tuple[float, float]]:
    from agent.config.settings import Settings
    from agent.providers.scripted import ScriptedProvider
    from agent.runtime.build import build_session

    session = build_session(ws, Settings(model="openai/gpt-4.1"), provider=ScriptedProvider(replies(count)),
                            resume=resume)
    try:
        return asyncio.run(exchanges(session, count))
    finally:
        session.close()


def continue_round(empty_ws: Path, ws: Path, env: dict[str, str], replay: Path) -> dict[str, float]:
    """First paint of a new session in ``empty_ws`` and time to the last message with --continue
    in ``ws`` (whose only session is the long one) (s), RSS (MB)."""
    from peer_stream import Terminal, tree_rss_mb

    out: dict[str, float] = {}
    for tag, folder, extra in (("empty", empty_ws, []), ("continue", ws, ["--continue"])):
        argv = [sys.executable, "-m", "tui", "-C", str(folder), "--replay", str(replay), *extra]
        term = Terminal(argv, env, folder)
        try:
            painted = term.wait_for(b"esc cancel", 120)
            out[f"{tag}_paint"] = painted - term.started
            if tag == "continue":
                out["continue_last"] = term.wait_for(LAST_MARKER.encode(), 300) - term.started
            term.drain(2.0)
            out[f"{tag}_rss_mb"] = tree_rss_mb(term.proc.pid)
        finally:
            term.close()
    return out


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--messages", type=int, default=5000, help="messages in the long session; default 5000")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; default 3")
    parser.add_argument("--live", action="store_true", help="also measure with all N messages mounted")
    parser.add_argument("--skip-continue", action="store_true", help="skip the --continue measurement")
    parser.add_argument("--skip-exchanges", action="store_true", help="skip the per-exchange measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data, ws = Path(tmp) / "data", Path(tmp) / "ws"
        data.mkdir()
        ws.mkdir()
        isolate(data)
        started = time.perf_counter()
        session_id = write_session(ws, args.messages)
        print(f"wrote a {args.messages}-message session in {time.perf_counter() - started:.1f} s", flush=True)
        from tui import resume_backfill

        shown = resume_backfill.FIRST_SHOWN_MESSAGES
        rows: dict[str, list[float]] = {}
        for r in range(0 if args.skip_exchanges else args.rounds):
            variants = [("at 10", None, shown), (f"at {args.messages}", session_id, shown)]
            if args.live:
                variants.append((f"at {args.messages}, live", session_id, args.messages + 10))
            for label, resume, limit in variants:
                resume_backfill.FIRST_SHOWN_MESSAGES = limit
                figures = run_exchanges(ws, resume, 10)
                rows.setdefault(label + " cpu", []).append(median([c for c, _ in figures]))
                rows.setdefault(label + " wall", []).append(median([w for _, w in figures]))
                print(f"round {r + 1} {label}: CPU {rows[label + ' cpu'][-1] * 1000:.0f} ms, "
                      f"wall {rows[label + ' wall'][-1] * 1000:.0f} ms per exchange", flush=True)
            resume_backfill.FIRST_SHOWN_MESSAGES = shown
        cont: list[dict[str, float]] = []
        if not args.skip_continue:
            replay = Path(tmp) / "replay.json"
            replay.write_text(json.dumps(replies(1)))
            env = dict(os.environ, TERM="xterm-256color", COLUMNS="160", LINES="48",
                       PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            # Workspaces of their own: the exchanges above added sessions (and resumed copies of the
            # long one, whose last message is then not the marker) to ``ws``.
            empty_ws, long_ws = Path(tmp) / "ws-empty", Path(tmp) / "ws-continue"
            empty_ws.mkdir()
            long_ws.mkdir()
            write_session(long_ws, args.messages)
            continue_round(empty_ws, long_ws, env, replay)  # warm-up: bytecode cache
            for r in range(args.rounds):
                cont.append(continue_round(empty_ws, long_ws, env, replay))
                print(f"round {r + 1} --continue: " + ", ".join(f"{k} {v:.2f}" for k, v in cont[-1].items()),
                      flush=True)

    print(f"\n{args.rounds} rounds, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; per short exchange "
          f"(median of 10, then of the rounds):")
    base_cpu, base_wall = median(rows.get("at 10 cpu", [])), median(rows.get("at 10 wall", []))
    for label in dict.fromkeys(k.rsplit(" ", 1)[0] for k in rows):
        cpu, wall = median(rows[label + " cpu"]), median(rows[label + " wall"])
        print(f"  {label:<16}: CPU {cpu * 1000:6.0f} ms ({cpu / base_cpu:.2f}x), wall {wall * 1000:6.0f} ms "
              f"({wall / base_wall:.2f}x)  (goal <= 1.2x)")
    if cont:
        def med(key: str) -> float:
            return median([c[key] for c in cont])

        print(f"--continue on {args.messages} messages: last message on screen {med('continue_last'):.2f} s "
              f"(min {min(c['continue_last'] for c in cont):.2f}); empty session first paint {med('empty_paint'):.2f} s; "
              f"difference {med('continue_last') - med('empty_paint'):.2f} s (goal <= 0.3)")
        print(f"RSS: after --continue {med('continue_rss_mb'):.0f} MB, empty session {med('empty_rss_mb'):.0f} MB, "
              f"difference {med('continue_rss_mb') - med('empty_rss_mb'):.0f} MB (goal <= 150)")


if __name__ == "__main__":
    main()
