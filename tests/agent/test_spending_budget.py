"""The session budget: ``--max-tokens`` / ``--max-cost`` stop the run before its next step with
stop reason ``budget`` (exit 6, the reason on stderr); figures from the scripted ``usage`` and
litellm's bundled prices; a limit already reached stops the next turn at once."""

from __future__ import annotations

import json
import threading

import pytest

from agent.events import GuardTriggered, ModelCallFinished
from agent.observability.pricing import call_cost_usd
from agent.observability.spending import Spending
from tests.helpers import Recorder, make_session
from tui.cli import main


def steps(n, prompt_tokens, completion_tokens=0):
    return [{"tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}, "id": f"c{i}"}],
             "usage": {"prompt_tokens": prompt_tokens + i, "completion_tokens": completion_tokens}}
            for i in range(n)] + [{"content": "done"}]


def test_budget_stop_by_tokens_before_the_next_step(tmp_path):
    session, provider = make_session(tmp_path, steps(5, 600), files={"a.txt": "alpha\n"},
                                     budget={"max_tokens": 1000})
    rec = Recorder()
    result = session.run_turn("task", rec, threading.Event())
    assert result.stop_reason == "budget"
    assert len(provider.requests) == 2  # 600 + 601 tokens: no third call
    [guard] = rec.of(GuardTriggered)
    assert guard.guard == "budget"
    assert "1201 tokens used of --max-tokens 1000" in guard.message and result.final_text == guard.message
    assert session.agent.spending.tokens == 1201
    # the limit is still reached: the next turn stops at once, without calling the model
    again = Recorder()
    assert session.run_turn("more", again, threading.Event()).stop_reason == "budget"
    assert len(provider.requests) == 2 and not again.of(ModelCallFinished)


def test_budget_stop_by_cost_with_a_known_price(tmp_path):
    # gpt-4.1: $2 per million prompt tokens, $8 per million completion tokens (litellm's file)
    session, provider = make_session(tmp_path, steps(5, 10000, 500), files={"a.txt": "alpha\n"},
                                     budget={"max_cost_usd": 0.05})
    rec = Recorder()
    assert session.run_turn("task", rec, threading.Event()).stop_reason == "budget"
    costs = [e.cost_usd for e in rec.of(ModelCallFinished)]
    assert costs[0] == pytest.approx(10000 * 2e-6 + 500 * 8e-6)  # $0.024 per call
    assert len(provider.requests) == 3  # $0.024, $0.048, then $0.072 >= $0.05: stop
    message = rec.of(GuardTriggered)[0].message
    assert "$0.0720 spent of --max-cost $0.0500" in message


def test_an_unknown_model_costs_null_and_never_reaches_a_cost_limit(tmp_path):
    session, provider = make_session(tmp_path, steps(2, 10000, 500), files={"a.txt": "alpha\n"},
                                     model="openai/house-model-7b", budget={"max_cost_usd": 0.0001})
    rec = Recorder()
    assert session.run_turn("task", rec, threading.Event()).stop_reason == "done"
    assert [e.cost_usd for e in rec.of(ModelCallFinished)] == [None, None, None]
    assert session.agent.spending.cost_usd == 0.0 and session.agent.spending.unpriced_calls == 3
    assert call_cost_usd("openai/house-model-7b", 1, 1) is None


def test_headless_budget_exit_code_6_with_the_reason_on_stderr(tmp_path, capsys):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    replay = tmp_path / "r.json"
    replay.write_text(json.dumps(steps(4, 700)))
    code = main(["run", "task", "--output-format", "json", "--replay", str(replay), "-C", str(ws),
                 "--model", "openai/gpt-4.1", "--permission-mode", "full-auto", "--max-tokens", "1000"])
    out, err = capsys.readouterr()
    events = [json.loads(line) for line in out.splitlines()]
    assert code == 6
    assert events[-1]["type"] == "turn_finished" and events[-1]["stop_reason"] == "budget"
    assert [e["guard"] for e in events if e["type"] == "guard_triggered"] == ["budget"]
    assert "opencli-tui: stopped: budget reached: 1401 tokens used of --max-tokens 1000" in err


def test_budget_from_the_config_file_and_the_flag_wins(tmp_path, capsys, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text("[budget]\nmax_tokens = 100000\nmax_cost_usd = 5\n")
    monkeypatch.setenv("OPENCLI_CONFIG", str(config))
    from agent.config.loading import load_settings

    settings = load_settings(tmp_path, {"budget": {"max_tokens": 10}})
    assert settings.budget.max_tokens == 10 and settings.budget.max_cost_usd == 5


def test_spending_is_shared_and_thread_safe():
    spending = Spending()
    spending.limits(max_tokens=None, max_cost_usd=None)

    def add_many():
        for _ in range(1000):
            spending.add(1, 1, 0.001)

    threads = [threading.Thread(target=add_many) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert spending.tokens == 8000 and spending.cost_usd == pytest.approx(4.0)
    assert spending.exceeded() is None
    spending.limits(max_tokens=8000, max_cost_usd=None)
    assert "8000 tokens used of --max-tokens 8000" in spending.exceeded()
    with pytest.raises(ValueError):
        spending.limits(-1, None)


def test_a_model_switch_keeps_the_session_total(tmp_path):
    session, _ = make_session(tmp_path, steps(1, 400), files={"a.txt": "alpha\n"}, prepare=True)
    rec = Recorder()
    session.run_turn("task", rec, threading.Event())
    before = session.agent.spending
    session.set_model("openai/gpt-4o-mini")
    calls = rec.of(ModelCallFinished)
    assert session.agent.spending is before
    assert before.tokens == sum(c.prompt_tokens + c.completion_tokens for c in calls) > 400


def test_project_config_may_lower_the_budget_but_not_raise_it(tmp_path, monkeypatch):
    """A cloned repository's ``.opencli.toml`` must not lift the user's spending cap (as it may not
    loosen the permission mode); a lower limit, or one where the user set none, is kept."""
    from agent.config.loading import load_settings

    config = tmp_path / "config.toml"
    config.write_text("[budget]\nmax_tokens = 2500\n")
    monkeypatch.setenv("OPENCLI_CONFIG", str(config))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".opencli.toml").write_text("[budget]\nmax_tokens = 100000000\nmax_cost_usd = 0.5\n")
    notices: list[str] = []
    settings = load_settings(ws, {}, notices=notices)
    assert settings.budget.max_tokens == 2500 and settings.budget.max_cost_usd == 0.5
    assert any("may not raise the budget (max_tokens" in n for n in notices), notices
    (ws / ".opencli.toml").write_text("[budget]\nmax_tokens = 1000\n")
    assert load_settings(ws, {}).budget.max_tokens == 1000


def test_a_bad_budget_flag_names_the_flag_typed(tmp_path, capsys):
    from tui.cli import main

    assert main(["run", "x", "--max-cost", "-1", "-C", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "budget.max_cost_usd=-1.0" in err and "(from flag --max-cost)" in err, err


def test_a_cached_figure_above_the_prompt_reads_as_the_prompt():
    from agent.messages import Usage

    usage = Usage(prompt_tokens=10, completion_tokens=2, cached_prompt_tokens=50)
    assert usage.cached_prompt_tokens == 10 and usage.cache_hit_rate == 1.0
    assert (usage + Usage(prompt_tokens=5, cached_prompt_tokens=1)).cached_prompt_tokens == 11


def test_budget_command_shows_and_changes_the_limits():
    from agent.observability.budget_command import apply_budget_command

    spending = Spending(tokens=1500, cost_usd=0.25)
    spending.limits(1000, None)
    assert apply_budget_command(spending, "") == ("Budget: $0.2500 spent, no cost limit; "
                                                  "1500 tokens of 1000.")
    assert spending.exceeded() is not None
    line = apply_budget_command(spending, "tokens 2k")
    assert spending.max_tokens == 2000 and spending.exceeded() is None and "1500 tokens of 2000" in line
    assert "already reached" in apply_budget_command(spending, "cost $0.20")  # $0.25 spent
    assert spending.max_cost_usd == pytest.approx(0.20) and "spent of --max-cost" in spending.exceeded()
    apply_budget_command(spending, "cost off")
    assert spending.max_cost_usd is None and spending.max_tokens == 2000
    apply_budget_command(spending, "tokens 1_000_000")
    assert spending.max_tokens == 1_000_000
    apply_budget_command(spending, "off")
    assert spending.max_tokens is None and spending.max_cost_usd is None
    for bad in ("cost -1", "tokens lots", "raise", "cost 1 2"):
        with pytest.raises(ValueError, match="usage: /budget"):
            apply_budget_command(spending, bad)
    assert spending.max_tokens is None and spending.max_cost_usd is None  # a bad line changes nothing

