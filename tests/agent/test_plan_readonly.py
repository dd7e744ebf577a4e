"""The planning pass is read-only (issue 4): every tool stays offered (one tool list for Plan and
Act mode, so the prompt cache holds), the loop refuses every call that is not read-capability, the
Plan mode message names what runs, and the write attempts models make leave a real git repository
exactly as it was (``git status --porcelain`` empty, HEAD and branch unchanged)."""

from __future__ import annotations

import dataclasses
import subprocess
import threading
from pathlib import Path

import pytest

from agent.config.settings import Settings
from agent.events import ToolCallFinished
from agent.providers.scripted import ScriptedProvider
from agent.runtime.build import build_session
from agent.tools.base import Capability
from tests import helpers

GOOD_PLAN = {
    "title": "Rename the greeting",
    "steps": [
        {"description": "Change the greeting in a.py", "files": ["a.py"], "rationale": "the task"},
        {"description": "Update the README", "files": ["README.md"], "rationale": "keep docs true"},
        {"description": "Run the tests", "files": [], "rationale": "verify"},
    ],
    "risks": ["callers match the old text"],
    "assumptions": ["nothing else prints it"],
}
SUBMIT = {"tool_calls": [{"name": "submit_plan", "arguments": GOOD_PLAN}]}

#: What a model tries when it wants to change things anyway: every call must be refused.
WRITE_ATTEMPTS = [
    ("write", {"path": "new.txt", "content": "x"}),
    ("write", {"path": "a.py", "content": "overwritten\n"}),
    ("edit", {"path": "a.py", "old_string": "hello", "new_string": "bye"}),
    ("bash", {"command": "echo x > f.txt"}),
    ("bash", {"command": "echo x >> a.py"}),
    ("bash", {"command": "cat > f.txt <<'EOF'\nx\nEOF"}),
    ("bash", {"command": "echo x | tee f.txt"}),
    ("bash", {"command": "sed -i 's/hello/bye/' a.py"}),
    ("bash", {"command": "git commit -am wip --allow-empty"}),
    ("bash", {"command": "git checkout -b other"}),
    ("bash", {"command": "python -c \"open('f.txt','w').write('x')\""}),
    ("bash", {"command": "python3 - <<'EOF'\nopen('f.txt', 'w').write('x')\nEOF"}),
    ("bash", {"command": "touch f.txt"}),
    ("bash", {"command": "rm a.py"}),
    ("bash", {"command": "mkdir d && mv a.py d/"}),
    ("bash", {"command": "cat a.py"}),  # harmless, still exec: refused too
    ("Bash", {"command": "touch f.txt"}),  # a name that does not exist
    ("shell", {"command": "touch f.txt"}),
]
USABLE = "You may use: read, grep, glob, think, submit_plan, update_plan, task."


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo,
                         capture_output=True, text=True, check=True)
    return out.stdout


@pytest.fixture
def repo(tmp_path) -> Path:
    ws = tmp_path / "repo"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    (ws / "a.py").write_text("print('hello')\n")
    (ws / "README.md").write_text("# demo\n" + "hello line\n" * 200)
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "init")
    return ws


def state(repo: Path) -> tuple[str, str, str]:
    return (git(repo, "status", "--porcelain", "--untracked-files=all"), git(repo, "rev-parse", "HEAD"),
            git(repo, "rev-parse", "--abbrev-ref", "HEAD"))


def session_for(ws: Path, replies, model="openai/gpt-4.1", **settings):
    settings.setdefault("permission_mode", "full-auto")  # the most permissive mode: planning must still refuse
    settings.setdefault("sandbox", {"mode": "off"})  # Plan mode without an OS sandbox: no bash (tests/sandbox: with)
    provider = ScriptedProvider(replies)
    session = build_session(ws, Settings(model=model, **settings), provider=provider, interactive=False)
    return session, provider


class Recorder(helpers.Recorder):
    def results(self):
        """Tool results other than submit_plan's."""
        return [e for e in self.of(ToolCallFinished) if e.name != "submit_plan"]


def offered(request) -> list[str]:
    return [t["function"]["name"] for t in request.tools]


@pytest.mark.parametrize("model,think,usable", [
    ("openai/gpt-4.1", ["think"], "read, grep, glob, think, submit_plan, task"),  # no native reasoning: think
    ("openai/o3-mini", [], "read, grep, glob, submit_plan, task"),
])
def test_every_tool_is_offered_and_the_mode_message_names_what_runs(repo, model, think, usable):
    session, provider = session_for(repo, [
        {"tool_calls": [{"name": "glob", "arguments": {"pattern": "*.py"}}]}, SUBMIT], model=model)
    result = session.plan_turn("rename the greeting", Recorder(), threading.Event())
    assert result.plan is not None and result.source == "submit_plan"
    everything = ["read", "write", "edit", "bash", "grep", "glob", *think, "submit_plan", "update_plan", "task"]
    for request in provider.requests:
        assert offered(request) == everything
        assert "# Plan mode" not in request.messages[0]["content"]  # the system prompt is the session's
        assert request.messages[0] == provider.requests[0].messages[0]
    task = provider.requests[0].messages[1]
    assert task["role"] == "user" and task["content"].startswith("<mode>\n# Plan mode\n")
    assert f"Only these tools run: {usable}. Any other call is refused." in task["content"]
    assert task["content"].endswith("</mode>\n\nrename the greeting")


def test_a_normal_turn_after_planning_is_told_act_mode(repo):
    session, provider = session_for(repo, [SUBMIT, {"content": "ok"}, {"content": "again"}])
    session.plan_turn("plan it", Recorder(), threading.Event())
    session.run_turn("just answer", Recorder(), threading.Event())
    after = provider.requests[-1]
    assert offered(after) == offered(provider.requests[0]) and after.messages[0] == provider.requests[0].messages[0]
    assert after.messages[-1]["content"].startswith("<mode>\n# Act mode\n")
    assert after.messages[-1]["content"].endswith("</mode>\n\njust answer")
    assert session.agent.config.allowed_capabilities is None
    session.run_turn("and again", Recorder(), threading.Event())  # the mode was stated: no repeat
    assert provider.requests[-1].messages[-1]["content"] == "and again"


@pytest.mark.parametrize("name,args", WRITE_ATTEMPTS, ids=[f"{n}:{str(a)[:30]}" for n, a in WRITE_ATTEMPTS])
def test_write_attempt_is_refused_and_changes_nothing(repo, name, args):
    before = state(repo)
    session, provider = session_for(repo, [{"tool_calls": [{"name": name, "arguments": args}]}, SUBMIT])
    rec = Recorder()
    result = session.plan_turn("do it", rec, threading.Event())
    (refused,) = rec.results()
    assert refused.is_error and refused.output.startswith("Refused:")
    assert USABLE in refused.output
    # The refusal reaches the model, and the pass goes on to a plan.
    assert provider.requests[1].messages[-1]["content"] == refused.output
    assert result.plan is not None
    assert state(repo) == before


def test_whole_corpus_in_one_batch_changes_nothing(repo):
    before = state(repo)
    calls = [{"name": n, "arguments": a} for n, a in WRITE_ATTEMPTS]
    calls.insert(3, {"name": "read", "arguments": {"path": "a.py"}})
    session, provider = session_for(repo, [{"tool_calls": calls}, SUBMIT])
    rec = Recorder()
    result = session.plan_turn("do it", rec, threading.Event())
    finished = rec.results()
    assert len(finished) == len(calls)
    for event in finished:
        if event.name == "read":
            assert not event.is_error and "hello" in event.output
        else:
            assert event.is_error and event.output.startswith("Refused:"), event
    assert result.plan is not None
    assert state(repo) == before


def test_refusal_is_by_capability_even_for_registered_tools(repo):
    """bash, write and edit are registered during the pass (not merely absent): the loop's
    capability check is what refuses them, and its message names their capability."""
    session, _ = session_for(repo, [{"tool_calls": [
        {"name": "bash", "arguments": {"command": "true"}},
        {"name": "write", "arguments": {"path": "x", "content": ""}},
        {"name": "nonexistent", "arguments": {}}]}, SUBMIT])
    rec = Recorder()
    session.plan_turn("t", rec, threading.Event())
    bash, write, unknown = rec.results()
    assert "bash (exec) is not available in Plan mode" in bash.output
    assert "write (mutating) is not available in Plan mode" in write.output
    assert "'nonexistent' is not available in Plan mode" in unknown.output
    assert "bash" not in unknown.output.split("You may use:")[1]


def test_update_plan_during_a_planning_pass_is_an_error_and_changes_nothing(repo):
    session, provider = session_for(repo, [{"tool_calls": [{"name": "update_plan",
                                                            "arguments": {"step": 1, "status": "done"}}]}, SUBMIT])
    rec = Recorder()
    result = session.plan_turn("do it", rec, threading.Event())
    (update,) = rec.results()
    assert update.is_error and "submit it with submit_plan" in update.output
    assert result.plan is not None and session.plan is None


def test_loop_capability_restriction_without_the_planner(repo):
    """``LoopConfig.allowed_capabilities`` alone: every tool stays offered, calls are refused."""
    session, provider = session_for(repo, [
        {"tool_calls": [{"name": "edit", "arguments": {"path": "a.py", "old_string": "hello", "new_string": "x"}}]},
        {"content": "ok"}])
    session.prepare()
    agent = session.agent
    agent.config = dataclasses.replace(agent.config, allowed_capabilities=frozenset({Capability.READ}))
    before = state(repo)
    rec = Recorder()
    agent.run_turn("edit it", rec, threading.Event())
    (finished,) = rec.of(ToolCallFinished)
    assert finished.is_error and "edit (mutating) is not available in this mode" in finished.output
    assert {"edit", "write", "bash", "read"} <= set(offered(provider.requests[0]))
    assert state(repo) == before


def test_truncated_output_saved_during_planning_is_not_a_workspace_change(repo):
    """Saved full outputs go to the app's own folder, excluded from git (DESIGN.md 5b)."""
    before = state(repo)
    session, _ = session_for(repo, [{"tool_calls": [{"name": "grep", "arguments": {"pattern": "hello"}}]}, SUBMIT],
                             max_tool_output=200)
    rec = Recorder()
    session.plan_turn("look", rec, threading.Event())
    (grep,) = rec.results()
    assert not grep.is_error and grep.truncated and grep.saved_path
    assert Path(grep.saved_path).is_file()
    assert state(repo) == before


def test_planning_pass_with_read_only_permission_mode_and_embedded_tool_set(repo):
    """Planning works the same whatever the permission mode (read tools are always allowed)."""
    session, _ = session_for(repo, [{"tool_calls": [{"name": "read", "arguments": {"path": "a.py"}}]}, SUBMIT],
                             permission_mode="read-only")
    rec = Recorder()
    result = session.plan_turn("look", rec, threading.Event())
    assert not rec.results()[0].is_error and result.plan is not None
