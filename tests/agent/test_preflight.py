"""A missing API key or an unknown model is found before the session starts, without litellm."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from agent.providers.preflight import model_problem


@pytest.mark.parametrize("model, env, kind", [
    ("openai/gpt-4.1", {}, "missing_key"),
    ("gpt-4.1", {}, "missing_key"),  # a bare name litellm's model list places
    ("claude-sonnet-4-5", {"OPENAI_API_KEY": "k"}, "missing_key"),
    ("gemini/gemini-2.5-flash", {"GOOGLE_API_KEY": "k"}, None),
    ("openai/gpt-4.1", {"OPENAI_API_KEY": "k"}, None),
    ("openai/some-new-model", {"OPENAI_API_KEY": "k"}, None),  # the provider decides its names
    ("nosuch/model", {}, "unknown_model"),
    ("zzz-unknown", {}, "unknown_model"),
    ("ollama/qwen3", {}, None),  # local: no key
    ("embedded/smollm2-135m", {}, None),
    ("openrouter/meta-llama/llama-3-8b", {}, "missing_key"),
])
def test_model_problems(model, env, kind):
    problem = model_problem(model, environ=env)
    assert (problem.kind if problem else None) == kind
    if problem is not None:
        assert repr(model) in problem.message, "the message repeats the name given"


def test_an_api_base_needs_no_key_and_allows_any_name():
    assert model_problem("openai/local-model", api_base="http://127.0.0.1:8080/v1", environ={}) is None
    assert model_problem("nosuch/model", api_base="http://127.0.0.1:8080/v1", environ={}) is None


def test_the_check_does_not_import_litellm():
    code = ("import sys; from agent.providers.preflight import model_problem; "
            "model_problem('gpt-4.1', environ={}); print('litellm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_headless_exits_2_at_once_without_a_key(tmp_path, monkeypatch):
    env = {k: v for k, v in __import__("os").environ.items() if not k.endswith("_API_KEY")}
    env["OPENCLI_CONFIG"] = str(tmp_path / "none.toml")
    env["OPENCLI_DATA_DIR"] = str(tmp_path / "data")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "tui", "run", "hi", "--model", "openai/gpt-4.1",
                           "-C", str(tmp_path)], capture_output=True, text=True, env=env, timeout=60)
    took = time.monotonic() - started
    assert proc.returncode == 2 and "set OPENAI_API_KEY" in proc.stderr
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").rglob("*.jsonl")), "no session"
    assert took < 20  # a hang guard: the check itself takes milliseconds (see the README)


def test_an_ollama_server_on_its_port_is_offered_with_its_models():
    import json as _json
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from agent.providers.server_probe import ollama_hint

    class Tags(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            body = _json.dumps({"models": [{"name": "qwen3:8b"}, {"name": "llama3.2"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Tags)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        hint = ollama_hint(url)
        assert hint is not None and "--model ollama/qwen3:8b" in hint and "llama3.2" in hint
    finally:
        server.shutdown()
    assert ollama_hint(url, timeout_s=0.2) is None, "nothing answers: no hint"


def test_the_embedded_model_says_it_has_read_only_tools_in_an_asking_mode(tmp_path):
    from agent.config.settings import Settings
    from agent.runtime.build import build_session

    session = build_session(tmp_path, Settings(model="embedded/smollm2-135m", permission_mode="ask"),
                            interactive=True)
    notices = session.startup_notices()
    assert any("cannot edit files or run commands" in n and 'tools = "all"' in n for n in notices)
    session.close()
    quiet = build_session(tmp_path, Settings(model="embedded/smollm2-135m", permission_mode="read-only"),
                          interactive=True)
    assert not any("cannot edit files" in n for n in quiet.startup_notices())
    quiet.close()
