"""Fault injection: the real headless agent against a fake OpenAI-compatible server on 127.0.0.1.

Each fault asserts the exit code, the one-line reason on stderr (or the error result the model
got) and that the session journal is intact and loads with every record.
"""

from __future__ import annotations

import json

from tests.faults.conftest import assert_journal_intact
from tests.faults.fake_server import Reply, error_reply, text_reply, tool_reply

OK = text_reply("All done: x is 1.")


def test_fault_429_retry_after_is_honoured(fault_run):
    result = fault_run([error_reply(429, "Rate limit reached", err_type="rate_limit_error",
                                    headers={"Retry-After": "2"}), OK])
    assert result.code == 0, result.stderr
    (first, _), (second, _) = result.server.requests
    assert second - first >= 1.9  # the 2 s asked for, not the 1 s of the default backoff
    retried = result.of_type("step_retried")
    assert retried == [{"type": "step_retried", "attempt": 2, "reason": retried[0]["reason"],
                        "discard_partial": False}]
    assert "Rate limit reached" in retried[0]["reason"]
    countdown = [e for e in result.of_type("notice") if e.get("retry_in_s") is not None]
    assert countdown and "retrying in 2 s as the provider asked" in countdown[0]["message"]
    assert result.finished["final_text"] == "All done: x is 1."
    assert_journal_intact(result)


def test_fault_429_retry_after_past_the_retry_time_stops_with_exit_1(fault_run):
    result = fault_run([error_reply(429, "Rate limit reached", headers={"Retry-After": "300"}), OK])
    assert result.code == 1
    assert len(result.server.requests) == 1  # not retried: the wait is over max_retry_time
    assert result.reason_line.startswith("opencli-tui: error: rate limited")
    assert "asked to wait 300 s" in result.reason_line and "max_retry_time = 120 s" in result.reason_line
    assert result.finished["stop_reason"] == "error"
    assert_journal_intact(result)


def test_fault_repeated_429_gives_up_after_max_retry_time(fault_run):
    limited = [error_reply(429, "Rate limit reached", headers={"retry-after-ms": "1500"}) for _ in range(4)]
    result = fault_run(limited + [OK], env={"OPENCLI_MAX_RETRY_TIME": "2.5"})
    assert result.code == 1
    assert len(result.server.requests) == 2  # the second wait would pass 2.5 s
    assert "gave up after 1 retry" in result.reason_line and "max_retry_time = 2.5 s" in result.reason_line
    assert_journal_intact(result)


def test_fault_500_then_success(fault_run):
    result = fault_run([error_reply(500, "Internal error in the upstream"), OK])
    assert result.code == 0, result.stderr
    assert len(result.server.requests) == 2
    assert result.of_type("step_retried")[0]["attempt"] == 2
    assert result.finished["stop_reason"] == "done"
    messages = assert_journal_intact(result)
    assert [m.role for m in messages] == ["user", "assistant"]


def test_fault_401_stops_at_once_with_exit_1(fault_run):
    result = fault_run([error_reply(401, "Incorrect API key provided", err_type="invalid_request_error",
                                    code="invalid_api_key"), OK])
    assert result.code == 1
    assert len(result.server.requests) == 1
    assert result.reason_line.startswith("opencli-tui: error: authentication failed")
    assert "Incorrect API key provided" in result.reason_line
    assert result.of_type("step_retried") == []
    assert_journal_intact(result)


def test_fault_400_context_length_stops_with_exit_1(fault_run):
    too_long = error_reply(400, "This model's maximum context length is 8192 tokens. However, your messages "
                                "resulted in 9000 tokens.", err_type="invalid_request_error",
                           code="context_length_exceeded")
    result = fault_run([too_long, too_long, OK])
    assert result.code == 1
    assert "context window" in result.reason_line
    assert "maximum context length is 8192 tokens" in result.reason_line
    assert_journal_intact(result)


def test_fault_empty_stream_is_retried_once_then_exit_1(fault_run):
    result = fault_run([Reply(chunks=[]), Reply(chunks=[]), OK])
    assert result.code == 1
    assert len(result.server.requests) == 2
    assert "empty reply" in result.reason_line
    assert_journal_intact(result)


def test_fault_stream_cut_mid_tool_call_is_retried_without_its_partial(fault_run):
    result = fault_run([
        tool_reply("read", '{"path": "a.py"}', text="Reading the file.", cut_after=2),
        tool_reply("read", '{"path": "a.py"}', call_id="call_2"),
        OK,
    ])
    assert result.code == 0, result.stderr
    retried = result.of_type("step_retried")
    assert len(retried) == 1 and retried[0]["discard_partial"] is True
    assert "Stream ended before a finish_reason" in retried[0]["reason"]
    started = result.of_type("tool_call_started")
    assert [(e["id"], e["arguments"]) for e in started] == [("call_2", {"path": "a.py"})]
    messages = assert_journal_intact(result)
    calls = [tc.id for m in messages if m.role == "assistant" for tc in m.tool_calls]
    assert calls == ["call_2"]  # the cut attempt left nothing in the journal


def test_fault_malformed_tool_call_json_becomes_an_error_result(fault_run):
    result = fault_run([tool_reply("read", '{"path": "a.py"'), OK])
    assert result.code == 0, result.stderr
    finished = result.of_type("tool_call_finished")[0]
    assert finished["is_error"] and "JSON" in finished["output"]
    assert result.of_type("tool_call_started")[0]["arguments"] == '{"path": "a.py"'
    messages = assert_journal_intact(result)
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]


def test_fault_unknown_tool_becomes_an_error_result(fault_run):
    result = fault_run([tool_reply("frobnicate", '{"level": 3}'), OK])
    assert result.code == 0, result.stderr
    finished = result.of_type("tool_call_finished")[0]
    assert finished["is_error"] and "frobnicate" in finished["output"]
    second_request = result.server.requests[1][1]
    assert second_request["messages"][-1]["role"] == "tool"
    assert_journal_intact(result)


def test_fault_silent_hang_hits_the_first_token_limit(fault_run):
    result = fault_run([Reply(hang_s=40), Reply(hang_s=40), OK],
                       env={"OPENCLI_FIRST_TOKEN_TIMEOUT": "1.5", "OPENCLI_WAIT_NOTICE_AFTER": "0.5",
                            "OPENCLI_MAX_RETRIES": "1"})
    assert result.code == 1
    assert len(result.server.requests) == 2
    assert "no reply from the model within 1.5 s" in result.reason_line
    assert "first_token_timeout" in result.reason_line
    waiting = [line for line in result.stderr.splitlines() if "waiting for the model" in line]
    assert waiting and waiting[0].startswith("opencli-tui: waiting for the model (")
    notices = [e for e in result.of_type("notice") if e.get("waiting_s") is not None]
    assert notices and all(e["waiting_s"] >= 0.5 for e in notices)
    assert_journal_intact(result)


def test_fault_stream_that_goes_silent_hits_the_idle_limit(fault_run):
    stalled = text_reply("Half of the ans")
    stalled.chunks = stalled.chunks[:3]
    stalled.hang_after_s = 40
    result = fault_run([stalled, OK], env={"OPENCLI_STREAM_IDLE_TIMEOUT": "1", "OPENCLI_WAIT_NOTICE_AFTER": "30"})
    assert result.code == 0, result.stderr
    retried = result.of_type("step_retried")[0]
    assert retried["discard_partial"] is True and "stream_idle_timeout" in retried["reason"]
    assert_journal_intact(result)


def test_fault_stream_error_event_says_the_servers_message(fault_run):
    failing = Reply(chunks=[], raw_sse=['data: {"error": "upstream model overloaded"}\n\n'], cut=True)
    result = fault_run([failing, failing], env={"OPENCLI_MAX_RETRIES": "1"})
    assert result.code == 1
    assert "upstream model overloaded" in result.reason_line
    assert "empty reply" not in result.stderr
    assert_journal_intact(result)


def test_fault_server_killed_mid_reply_emits_step_retried(fault_run):
    cut = text_reply("The first attempt says something long that is cut")
    cut.chunks = cut.chunks[:6]
    cut.cut = True
    result = fault_run([cut, OK])
    assert result.code == 0, result.stderr
    types = [e["type"] for e in result.events]
    at = types.index("step_retried")
    assert result.events[at]["discard_partial"] is True
    before = "".join(e["text"] for e in result.events[:at] if e["type"] == "text_delta")
    after = "".join(e["text"] for e in result.events[at:] if e["type"] == "text_delta")
    assert before.startswith("The first") and after == "All done: x is 1."
    assert result.finished["final_text"] == after
    assert_journal_intact(result)


def test_fault_reasoning_is_sent_back_to_an_openai_compatible_reasoner(fault_run):
    result = fault_run([tool_reply("read", '{"path": "a.py"}', reasoning="I should read a.py first."), OK],
                       model="openai/deepseek-reasoner")
    assert result.code == 0, result.stderr
    second = result.server.requests[1][1]["messages"]
    assistant = next(m for m in second if m["role"] == "assistant")
    assert assistant.get("reasoning_content") == "I should read a.py first."
    assert_journal_intact(result)


def test_fault_reasoning_not_sent_back_when_configured_off(fault_run):
    result = fault_run([tool_reply("read", '{"path": "a.py"}', reasoning="I should read a.py first."), OK],
                       model="openai/deepseek-reasoner", env={"OPENCLI_SEND_REASONING": "off"})
    assert result.code == 0, result.stderr
    second = result.server.requests[1][1]["messages"]
    assistant = next(m for m in second if m["role"] == "assistant")
    assert "reasoning_content" not in assistant
    assert json.dumps(second).count("I should read") == 0


def test_fault_unknown_model_at_a_server_lists_the_ids_it_serves(fault_run):
    missing = error_reply(404, "The model `fake` does not exist", err_type="invalid_request_error",
                          code="model_not_found")
    result = fault_run([missing, missing], models=["openai/qwen3-8b", "llama-3.2"])
    assert result.code == 1
    assert "the server at" in result.reason_line and "openai/openai/qwen3-8b" in result.reason_line
    assert "openai/llama-3.2" in result.reason_line
    assert_journal_intact(result)


def test_a_local_servers_context_window_is_asked_of_it(tmp_path, capsys, monkeypatch, isolated_env):
    """litellm does not know a local model's window: the server's /models entry says it (vLLM's
    max_model_len, llama.cpp's meta.n_ctx_train), and context_usage carries it; a server that
    does not say gets a notice naming the setting."""
    import json as _json

    from tests.faults.fake_server import FakeServer, text_reply
    from tui.cli import main

    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeServer([text_reply("hi")], models=["local-model"]) as server:
        server.model_meta = {"max_model_len": 8192}
        assert main(["run", "hi", "--output-format", "json", "--model", "openai/local-model",
                     "--api-base", server.url, "-C", str(ws)]) == 0
    events = [_json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert [e["window_tokens"] for e in events if e["type"] == "context_usage"][-1] == 8192
    with FakeServer([text_reply("hi")]) as server:
        assert main(["run", "hi", "--output-format", "json", "--model", "openai/local-model",
                     "--api-base", server.url, "-C", str(ws)]) == 0
    out, err = capsys.readouterr()
    assert "context window of openai/local-model is unknown" in out + err and "OPENCLI_CONTEXT_WINDOW" in out + err
