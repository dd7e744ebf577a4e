"""C07: an external-change reminder is sent once per real change, never repeated on later,
unrelated tool calls (Claude Code #21650).

The test replays the case's event timeline through the reminder engine and a real file watched by
``ReadFileStamps``, building the message lists the loop sends the model: each step's tool results
in order, with the reminder suffix appended to the step's last result (DESIGN.md 4). It then
inspects every request the way the case says.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent.loop.reminders import ReadFileStamps, ReminderEngine

# A copy of the inputs from shared/cases/cases.json, so the tests run wherever the repo is cloned.
CASES = Path(__file__).resolve().parent / "data" / "cases.json"
TRIO = [
    {"tool": "bash", "args": {"command": "git push"}},
    {"tool": "bash", "args": {"command": "pip install -e ."}},
    {"tool": "grep", "args": {"pattern": "def main", "path": "."}},
]
CAPABILITY = {"bash": "exec", "grep": "read", "read": "read"}
R = "src/config.py changed on disk since you read it"


def pairing_ok(msgs):
    pending = set()
    for m in msgs:
        if m["role"] == "tool":
            if m.get("tool_call_id") not in pending:
                return False
            pending.discard(m["tool_call_id"])
            continue
        if pending:
            return False
        if m["role"] == "assistant":
            pending = {tc["id"] for tc in (m.get("tool_calls") or [])}
    return not pending


EVENTS = [
    {"step": 1, "event": "external_file_modified", "path": "src/config.py"},
    {"step": "2-21", "event": "tool_calls", "calls": TRIO},
    {"step": 22, "event": "external_file_modified", "path": "src/config.py"},
    {"step": 23, "event": "tool_calls", "calls": [{"tool": "bash", "args": {"command": "git status --short"}}]},
]


def timeline():
    """The case's timeline (cases.json when present, else the copy above), one entry per step."""
    events = EVENTS
    if CASES.exists():
        case = next(c for c in json.loads(CASES.read_text()) if c["id"] == "C07")
        events = case["input"]["value"]
    steps = []
    for event in events:
        first, _, last = str(event["step"]).partition("-")
        count = int(last or first) - int(first) + 1
        if event["event"] == "external_file_modified":
            steps += [("change", event["path"])] * count
        else:
            steps += [("calls", [{"tool": c["tool"], "args": c["args"]} for c in event["calls"]])] * count
    return steps


class Loop:
    """The part of the agent loop that reminders touch: tool results + suffix, requests recorded."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.engine = ReminderEngine()
        self.stamps = ReadFileStamps(root)
        self.history = [{"role": "user", "content": "Update the deployment and keep the config as is."}]
        self.requests: list[list[dict]] = []
        self.step_results: list[list[str]] = []
        self.calls = 0
        self.engine.start_turn()

    def model_step(self, calls) -> None:
        self.requests.append([{"role": "system", "content": "..."}, *[dict(m) for m in self.history]])
        ids = []
        for call in calls:
            self.calls += 1
            ids.append(f"call_{self.calls}")
        self.history.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": c["tool"], "arguments": json.dumps(c["args"])}}
            for i, c in zip(ids, calls)]})
        texts: list[str] = []
        results = []
        for call_id, call in zip(ids, calls):
            output = f"output of {call['tool']} {call['args']}"
            if call["tool"] == "read":
                self.stamps.note(call["args"]["path"])
            for path in self.stamps.changed():
                self.engine.on_external_change(path)
            texts += self.engine.on_tool_result(call["tool"], CAPABILITY[call["tool"]], call["args"], False)
            results.append({"role": "tool", "tool_call_id": call_id, "content": output})
        results[-1]["content"] += self.engine.format(texts)
        self.history += results
        self.step_results.append([r["content"] for r in results])

    def final_request(self) -> None:
        self.requests.append([{"role": "system", "content": "..."}, *[dict(m) for m in self.history]])


def test_c07_reminder_once_per_real_change(tmp_path: Path):
    config = tmp_path / "src" / "config.py"
    config.parent.mkdir()
    config.write_text("DEBUG = False\n")
    loop = Loop(tmp_path)
    loop.model_step([{"tool": "read", "args": {"path": "src/config.py"}}])  # step 0: the agent reads it
    mtime = 1_700_000_000_000_000_000
    for kind, value in timeline():
        if kind == "change":
            changed = tmp_path / value
            mtime += 1_000_000_000
            changed.write_text(changed.read_text() + "# edited outside the agent\n")
            os.utime(changed, ns=(mtime, mtime))
        else:
            loop.model_step(value)
    loop.final_request()

    def newly_injected_content(index: int) -> str:
        before = len(loop.requests[index - 1]) if index else 0
        return "\n".join(m.get("content") or "" for m in loop.requests[index][before:])

    def count_r_in_history(req) -> int:
        return sum((m.get("content") or "").count(R) for m in req)

    assert sum(newly_injected_content(i).count(R) for i in range(len(loop.requests))) == 2
    assert max(count_r_in_history(req) for req in loop.requests) <= 2
    assert count_r_in_history(loop.requests[-1]) == 2
    # step_results[0] is the setup read; [1] is step 2 (first results after the change of step 1),
    # [2:21] are steps 3-21, [21] is step 23.
    assert R in loop.step_results[1][-1]
    assert not any(R in content for step in loop.step_results[2:21] for content in step)
    assert R in loop.step_results[21][-1]
    assert all(pairing_ok(req[1:]) for req in loop.requests)
    # Other reminders stay within their own rule: the git one once per turn, on its own trigger.
    git_reminders = [c for step in loop.step_results for c in step if "never commit or push" in c]
    assert len(git_reminders) == 1
