"""Preparing a request from a long history: ``Agent.build_request`` and the context budget.

Builds an agent (scripted provider, default tools) whose history holds about 200k tokens: about
800 KB of text in about 1500 messages (user prompts, assistant replies with tool calls, tool
results of varied sizes). Then times, in the same run:

- ``build_request()`` on that history: the first call (nothing cached), then "per turn": one
  step (an assistant tool call and its result) is appended before each call, as in the loop
  (goal: <= 10 ms);
- ``ContextBudget.estimate`` of the same history (system prompt + messages + tool schemas):
  the first call, then per turn after the same appends (goal: <= 1 ms);
- ``json.dumps`` of the request's messages + tools, i.e. what serialising it for the wire
  costs anyway (the reference point).

Printed: median and best per operation in milliseconds over ``--turns`` turns, plus the
history size (messages, characters, estimated tokens).

Usage: python benchmarks/request_prep.py [--messages 1500] [--chars 800000] [--turns 50]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.config.settings import Settings  # noqa: E402
from agent.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage  # noqa: E402
from agent.providers.scripted import ScriptedProvider  # noqa: E402
from agent.runtime.build import build_session  # noqa: E402

try:  # the budget module may be missing on older trees: the benchmark still runs
    from agent.context.context_budget import ContextBudget  # noqa: E402
except ImportError:  # pragma: no cover
    ContextBudget = None  # type: ignore[assignment,misc]


def _text(n: int, seed: int) -> str:
    words = ("def", "return", "self", "value", "config", "handler", "import", "path", "error", "test",
             "λ", "résumé", "data", "line", "{", "}", "(", ")", "=", "+")
    out, i = [], seed
    while sum(map(len, out)) < n:
        out.append(words[i % len(words)])
        i = i * 1103515245 + 12345 & 0x7FFFFFFF
        out.append("\n" if i % 11 == 0 else " ")
    return "".join(out)[:n]


def make_history(messages: int, chars: int) -> list:
    """About ``messages`` records holding about ``chars`` characters in total (tool-heavy)."""
    history: list = []
    per_step = 4  # user or assistant text, assistant call, tool result(s)
    steps = max(1, messages // per_step)
    budget = chars // steps
    for step in range(steps):
        if step % 10 == 0:
            history.append(UserMessage(content=_text(300, step)))
        else:
            history.append(AssistantMessage(content=_text(200, step)))
        calls = [ToolCall(id=f"call_{step}_{k}", name=("bash", "read", "edit")[(step + k) % 3],
                          arguments=json.dumps({"command": _text(80, step + k)})) for k in range(2)]
        history.append(AssistantMessage(content=None, tool_calls=calls))
        for k, call in enumerate(calls):
            size = max(50, budget // 2 - 200 + ((step * 7 + k * 13) % 5 - 2) * budget // 8)
            history.append(ToolResultMessage(tool_call_id=call.id, name=call.name, content=_text(size, step * 3 + k)))
    return history


def one_step(turn: int) -> list:
    """One loop step: an assistant tool call and its result (about 2 KB)."""
    call = ToolCall(id=f"turn_{turn}", name="bash", arguments=json.dumps({"command": f"pytest -q tests/{turn}"}))
    return [AssistantMessage(content=None, tool_calls=[call]),
            ToolResultMessage(tool_call_id=call.id, name="bash", content=_text(2000, turn))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1500)
    parser.add_argument("--chars", type=int, default=800_000)
    parser.add_argument("--turns", type=int, default=50)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="opencli-bench-req-"))
    try:
        ws = tmp / "ws"
        ws.mkdir()
        session = build_session(ws, Settings(model="openai/gpt-4.1", permission_mode="full-auto"),
                                provider=ScriptedProvider([]), interactive=False)
        session.prepare()
        agent = session.agent
        assert agent is not None
        agent.history = make_history(args.messages, args.chars)
        total_chars = sum(len(m.content or "") + sum(len(c.arguments) for c in getattr(m, "tool_calls", []))
                          for m in agent.history)
        initial_messages = len(agent.history)

        t0 = time.perf_counter()
        request = agent.build_request()
        first_build = time.perf_counter() - t0
        tools = request.tools
        budget = ContextBudget(agent.model) if ContextBudget is not None else None
        first_estimate = None
        if budget is not None:
            t0 = time.perf_counter()
            estimate = budget.estimate(agent.system_prompt, agent.history, tools)
            first_estimate = time.perf_counter() - t0

        builds, estimates, dumps = [], [], []
        for turn in range(args.turns):
            agent.history.extend(one_step(turn))
            t0 = time.perf_counter()
            request = agent.build_request()
            builds.append(time.perf_counter() - t0)
            if budget is not None:
                t0 = time.perf_counter()
                estimate = budget.estimate(agent.system_prompt, agent.history, request.tools)
                estimates.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            json.dumps({"messages": request.messages, "tools": request.tools})
            dumps.append(time.perf_counter() - t0)

        print(f"history: {initial_messages} messages, {total_chars:,} characters of content "
              f"(+{args.turns} steps of 2 messages appended, one per turn), {len(request.tools)} tools, "
              f"system prompt {len(agent.system_prompt):,} characters")
        if budget is not None:
            print(f"estimate after the last turn: {estimate.tokens:,} tokens for {agent.model} "
                  f"(approximate={estimate.approximate}, margin x{estimate.margin})")
        print(f"{'operation (ms)':34} {'first':>8} {'median':>8} {'best':>8}   goal")
        print(f"{'build_request()':34} {ms(first_build)} {ms(statistics.median(builds))} {ms(min(builds))}   <= 10 ms")
        if budget is not None and first_estimate is not None:
            print(f"{'ContextBudget.estimate()':34} {ms(first_estimate)} {ms(statistics.median(estimates))} "
                  f"{ms(min(estimates))}   <= 1 ms")
        else:
            print("ContextBudget.estimate()           (agent/context/budget.py missing)")
        print(f"{'json.dumps(messages + tools)':34} {'':>8} {ms(statistics.median(dumps))} {ms(min(dumps))}   (reference)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
