"""The context budget (agent/context/budget.py, agent/context/tokenizer.py): exact tiktoken counts
loaded offline, the non-OpenAI margin, the calibrated fallback estimate, per-message caching,
reconciliation with reported usage (case C22) and the reserved output."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agent.context import budget as budget_mod
from agent.context import tokenizer as tok_mod
from agent.context.budget import (
    EMBEDDED_MARGIN, MESSAGE_OVERHEAD_TOKENS, NON_OPENAI_MARGIN, REPLY_PRIMING_TOKENS, chars_to_tokens,
    count_text_tokens, margin_for_model, max_prompt_tokens, message_chars, message_text, message_tokens,
    reserved_output,
)
from agent.context.context_budget import BudgetEstimate, ContextBudget, request_tokens
from agent.context.tokenizer import is_openai_model
from agent.context.tokenizer import CL100K, ESTIMATE, O200K, encoding_for_model, estimate_tokens, load_encoding
from agent.messages import AssistantMessage, ToolCall, ToolResultMessage, Usage, UserMessage

SAMPLES = Path(__file__).parent / "data" / "token_samples"
TOOLS = [{"type": "function", "function": {"name": "read", "description": "Read a file.",
                                           "parameters": {"type": "object", "properties": {}}}}]
SYSTEM = "You are a coding agent." * 10
GPT41, GPT4, CLAUDE = "openai/gpt-4.1", "gpt-4", "anthropic/claude-sonnet-4"


def cl100k(text: str) -> int:
    return len(load_encoding(CL100K).encode_ordinary(text))


def o200k(text: str) -> int:
    return len(load_encoding(O200K).encode_ordinary(text))


def history(steps: int = 5) -> list:
    out: list = [UserMessage(content="fix the failing test in src/app.py")]
    for i in range(steps):
        call = ToolCall(id=f"call_{i}", name="bash", arguments=f'{{"command": "pytest -q -k t{i}"}}')
        out.append(AssistantMessage(content=f"step {i}", tool_calls=[call]))
        out.append(ToolResultMessage(tool_call_id=call.id, name="bash", content="E   assert 1 == 2\n" * (10 * (i % 7) + 1)))
    return out


@pytest.fixture
def no_encodings(monkeypatch):
    """tiktoken cannot be imported: every count falls back to the estimate. The loaded encodings
    are forgotten before and after, so other tests load the real ones again."""
    def missing():
        raise ImportError("No module named 'tiktoken'")

    tok_mod.clear_encoding_cache()
    monkeypatch.setattr(tok_mod, "_import_tiktoken", missing)
    yield
    tok_mod.clear_encoding_cache()


# -- encodings: exact, offline, from the bundled files -------------------------------------------


def test_cl100k_counts_known_strings_exactly():
    """Token ids from OpenAI's tiktoken cookbook, and counts of typical tool output."""
    assert load_encoding(CL100K).encode_ordinary("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0]
    assert count_text_tokens("tiktoken is great!", GPT4) == 6
    assert count_text_tokens("hello world", GPT4) == 2
    assert count_text_tokens("FAILED tests/test_app.py::test_parse - AssertionError: assert 1 == 2", GPT4) == 17
    assert count_text_tokens("", GPT4) == 0
    assert count_text_tokens("<|endoftext|>", GPT4) == cl100k("<|endoftext|>") > 1  # special syntax is text


def test_o200k_is_used_for_the_newer_openai_models():
    text = "FAILED tests/test_app.py::test_parse - AssertionError: assert 1 == 2"
    assert count_text_tokens(text, GPT41) == o200k(text) == 18 != cl100k(text)
    assert count_text_tokens("代理读取文件", "gpt-4o-mini") == 3
    assert count_text_tokens("代理读取文件", GPT4) == 5
    assert ContextBudget(GPT41).tokenizer == O200K and ContextBudget(GPT4).tokenizer == CL100K


@pytest.mark.parametrize("model, encoding", [
    ("openai/gpt-4.1", O200K), ("gpt-4o", O200K), ("gpt-4o-mini", O200K), ("o3-mini", O200K), ("o1", O200K),
    ("openai/gpt-5", O200K), ("azure/gpt-4.1-mini", O200K), ("openrouter/openai/gpt-4o", O200K),
    ("groq/openai/gpt-oss-120b", O200K), ("ollama/gpt-oss:20b", O200K), ("chatgpt-4o-latest", O200K),
    ("gpt-4", CL100K), ("gpt-4-turbo", CL100K), ("gpt-3.5-turbo", CL100K), ("azure/my-deployment", CL100K),
    ("anthropic/claude-sonnet-4", CL100K), ("gemini/gemini-2.5-flash", CL100K), (None, CL100K),
])
def test_encoding_follows_the_model_name(model, encoding):
    assert encoding_for_model(model) == encoding


@pytest.mark.parametrize("model, expected", [
    ("openai/gpt-4.1", True), ("gpt-4o", True), ("o3-mini", True), ("azure/my-deployment", True),
    ("openrouter/openai/gpt-4o", True), ("groq/openai/gpt-oss-120b", True), ("ollama/gpt-oss:20b", True),
    ("text-embedding-3-small", True), ("anthropic/claude-sonnet-4", False),
    ("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", False), ("gemini/gemini-2.0-flash", False),
    ("ollama/llama3", False), ("embedded/smollm2", False), ("deepseek/deepseek-chat", False), (None, False),
    ("openai/qwen3-coder", False),  # an OpenAI-compatible server running another model
    ("azure_ai/mistral-large", False), ("huggingface/EleutherAI/gpt-j-6b", False),
])
def test_is_openai_model(model, expected):
    assert is_openai_model(model) is expected


def test_encoding_specs_match_tiktokens_own_constructors(monkeypatch):
    """Our pattern strings and special tokens are tiktoken's (built from the same file)."""
    from tiktoken_ext import openai_public

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: {})
    for name, build in ((CL100K, openai_public.cl100k_base), (O200K, openai_public.o200k_base)):
        theirs = build()
        ours = tok_mod._SPECS[name]
        assert (ours.pat_str, ours.special_tokens) == (theirs["pat_str"], theirs["special_tokens"])


def test_encodings_load_offline_without_litellm_or_the_network(tmp_path):
    """In a fresh process with sockets refused, Hugging Face and litellm offline switches set and
    tiktoken's own cache pointed at an empty folder (where ``tiktoken.get_encoding`` would try to
    download), both encodings load from litellm's bundled files, litellm is not imported, and
    tiktoken agrees with what litellm's copy of it counts."""
    script = r"""
import socket, sys
def refuse(*a, **k):
    raise AssertionError("network used")
socket.socket.connect = refuse
socket.create_connection = refuse
from agent.context import tokenizer as t
from agent.context.budget import count_text_tokens
assert t.bundled_tokenizer_dir() is not None
assert t.load_encoding(t.CL100K) is not None, t.encoding_problem(t.CL100K)
assert t.load_encoding(t.O200K) is not None, t.encoding_problem(t.O200K)
assert count_text_tokens("tiktoken is great!", "gpt-4") == 6
assert count_text_tokens("tiktoken is great!", "anthropic/claude-sonnet-4") == 8
assert "litellm" not in sys.modules
print("ok")
"""
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "HF_HUB_OFFLINE": "1", "LITELLM_OFFLINE_MODE": "true", "PYTHONPATH": str(Path.cwd())}
    env.pop("DATA_GYM_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    assert list(tmp_path.iterdir()) == []  # nothing written to tiktoken's cache


def test_a_file_with_the_wrong_hash_is_not_used(monkeypatch, tmp_path):
    """A truncated rank file in tiktoken's cache is skipped (tiktoken would re-download it)."""
    tok_mod.clear_encoding_cache()
    bundled = tok_mod.bundled_tokenizer_dir()
    monkeypatch.setattr(tok_mod, "bundled_tokenizer_dir", lambda: None)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tok_mod.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    real = next(p for p in tok_mod._candidate_files(CL100K) if p.parent == tmp_path)
    real.write_bytes((bundled / real.name).read_bytes()[:1000])
    try:
        assert load_encoding(CL100K) is None
        assert "expected hash" in tok_mod.encoding_problem(CL100K)
        assert ContextBudget(GPT4).tokenizer == ESTIMATE
        # The whole file in the same place is used.
        tok_mod.clear_encoding_cache()
        real.write_bytes((bundled / real.name).read_bytes())
        assert ContextBudget(GPT4).tokenizer == CL100K
        # o200k missing, cl100k there: cl100k times 1.05, not flagged exact.
        o200k_only = tok_mod.tokenizer_for_encoding(O200K)
        assert o200k_only.name == CL100K and not o200k_only.exact
        assert o200k_only.count("hello world " * 100) == math.ceil(cl100k("hello world " * 100) * 1.05)
    finally:
        tok_mod.clear_encoding_cache()


def test_loading_is_once_per_process_and_thread_safe(monkeypatch):
    tok_mod.clear_encoding_cache()
    calls = []
    real = tok_mod._load

    def counting(name):
        calls.append(name)
        return real(name)

    monkeypatch.setattr(tok_mod, "_load", counting)
    results: list = []
    threads = [threading.Thread(target=lambda: results.append(load_encoding(CL100K))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [CL100K]
    assert len(results) == 8 and all(r is results[0] is not None for r in results)


# -- the fallback estimate: calibrated on real samples, never undercounting ------------------------


def sample_texts() -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(SAMPLES.glob("*.txt"))}


def test_samples_cover_the_dense_kinds_of_text():
    kinds = {name.split("_")[0] for name in sample_texts()}
    assert {"pytest", "log", "json", "python", "prose", "diff"} <= kinds
    assert any("Traceback" in t or "Error" in t for n, t in sample_texts().items() if n.startswith("pytest"))


def random_texts() -> dict[str, str]:
    """Dense text with no structure: base64, a JWT, hex, UUIDs, random letters (seeded)."""
    import base64
    import random
    import string
    import uuid

    rnd = random.Random(7)
    blob = bytes(rnd.randrange(256) for _ in range(3000))
    return {
        "random_base64": base64.b64encode(blob).decode(),
        "random_jwt": ".".join(base64.urlsafe_b64encode(blob[:n]).decode().rstrip("=") for n in (36, 300, 64)),
        "random_hex": blob.hex(),
        "random_uuids": "\n".join(str(uuid.UUID(int=rnd.getrandbits(128))) for _ in range(100)),
        "random_letters": "".join(rnd.choice(string.ascii_letters) for _ in range(4000)),
        "random_lowercase": "".join(rnd.choice(string.ascii_lowercase) for _ in range(4000)),
    }


def test_estimate_never_undercounts_cl100k_or_o200k_on_real_samples(capsys):
    """Calibration: the fallback is >= both encodings on every sample kind (and on random
    base64, hex, letters), whole (with 5% to spare) and in every 300-character slice; the measured
    ratios are printed (``pytest -s``)."""
    rows = []
    for name, text in {**sample_texts(), **random_texts()}.items():
        exact = max(cl100k(text), o200k(text))
        estimate = estimate_tokens(text)
        rows.append(f"{name:24} {len(text):6} chars  cl100k {cl100k(text):5}  {len(text) / cl100k(text):4.2f} "
                    f"chars/token  o200k {o200k(text):5}  estimate {estimate:5} ({estimate / exact:4.2f}x)")
        assert estimate >= 1.05 * exact, name
        for start in range(0, len(text), 300):
            part = text[start:start + 300]
            assert estimate_tokens(part) >= max(cl100k(part), o200k(part)), (name, start, part)
    with capsys.disabled():
        print("\n" + "\n".join(rows))


def test_dense_text_runs_below_four_characters_per_token():
    """Why characters/4 was wrong: logs and test output are denser, so it undercounted them."""
    for name in ("log_dpkg", "pytest_vv_tracebacks", "pytest_q_short", "json_cases", "log_alternatives"):
        text = sample_texts()[name]
        assert len(text) / cl100k(text) < 3.4, name
        assert chars_to_tokens(len(text)) < cl100k(text) <= count_text_tokens(text, GPT4)


def test_the_estimate_stands_in_when_tiktoken_is_missing(no_encodings):
    text = sample_texts()["pytest_vv_tracebacks"]
    assert load_encoding(CL100K) is None and "tiktoken" in tok_mod.encoding_problem(CL100K)
    budget = ContextBudget(GPT4)
    assert budget.tokenizer == ESTIMATE
    msg = UserMessage(content=text)
    assert budget.message_tokens(msg) == estimate_tokens(text) + MESSAGE_OVERHEAD_TOKENS
    assert count_text_tokens(text, CLAUDE) == math.ceil(estimate_tokens(text) * NON_OPENAI_MARGIN)
    est = budget.estimate(SYSTEM, [msg], TOOLS)
    assert est.tokenizer == ESTIMATE and est.approximate
    assert est.tokens >= len(text) / 3.3  # still above the real cl100k count of dense text


def test_estimate_edge_cases():
    assert estimate_tokens("") == 0
    assert estimate_tokens("a") >= 1
    assert estimate_tokens("\n" * 50) >= 1
    assert estimate_tokens("🚀" * 10) >= 10


# -- the margin for models that are not OpenAI's ---------------------------------------------------


def test_margin_follows_the_model_and_can_be_overridden():
    assert ContextBudget(GPT41).margin == 1.0 == margin_for_model("azure/prod")
    assert ContextBudget(CLAUDE).margin == NON_OPENAI_MARGIN == 1.25
    assert ContextBudget(None).margin == NON_OPENAI_MARGIN
    assert ContextBudget("embedded/smollm2-135m").margin == EMBEDDED_MARGIN == 1.55
    assert ContextBudget(GPT41, margin=1.3).margin == 1.3
    with pytest.raises(ValueError):
        ContextBudget(margin=0.9)


def test_non_openai_models_count_cl100k_times_the_margin():
    text = sample_texts()["log_dpkg"]
    assert count_text_tokens(text, CLAUDE) == math.ceil(cl100k(text) * 1.25)
    assert count_text_tokens(text, "gemini/gemini-2.5-pro") == math.ceil(cl100k(text) * 1.25)
    msg = ToolResultMessage(tool_call_id="c1", name="bash", content=text)
    expected = math.ceil((cl100k("c1\n" + text) + MESSAGE_OVERHEAD_TOKENS) * 1.25)
    assert ContextBudget(CLAUDE).message_tokens(msg) == expected == message_tokens(msg, model=CLAUDE)
    assert message_tokens(msg) == expected  # no model: an unknown one, counted the same way


def test_the_margin_covers_the_non_openai_tokenizers_that_ship_offline():
    """NON_OPENAI_MARGIN is the largest ratio (to cl100k) of the Claude and DeepSeek tokenizers
    bundled with litellm over the calibration samples, rounded up."""
    tokenizers = pytest.importorskip("tokenizers")
    folder = tok_mod.bundled_tokenizer_dir()
    ratios = {}
    for vendor in ("anthropic", "deepseek"):
        tokenizer = tokenizers.Tokenizer.from_file(str(folder / f"{vendor}_tokenizer.json"))
        ratios[vendor] = max(len(tokenizer.encode(t, add_special_tokens=False).ids) / cl100k(t)
                             for t in sample_texts().values())
    assert max(ratios.values()) <= NON_OPENAI_MARGIN
    assert max(ratios.values()) > 1.15  # the old margin was not enough


def test_the_embedded_margin_covers_smollm2s_tokenizer():
    """EMBEDDED_MARGIN covers the embedded model's own tokenizer (SmolLM2, 49k vocabulary), read
    from its GGUF file without loading the weights (needs the [local] extra)."""
    llama_cpp = pytest.importorskip("llama_cpp")
    from agent.providers.embedded.model import EmbeddedModelMissing, find_model_path

    try:
        path = find_model_path()
    except EmbeddedModelMissing:
        pytest.skip("the embedded model is not installed")
    vocab = llama_cpp.Llama(str(path), vocab_only=True, verbose=False)
    ratios = [len(vocab.tokenize(t.encode(), add_bos=False, special=False)) / cl100k(t)
              for t in sample_texts().values()]
    assert NON_OPENAI_MARGIN < max(ratios) <= EMBEDDED_MARGIN


# -- counting a request ----------------------------------------------------------------------------


def test_message_text_and_chars_are_what_is_sent():
    call = ToolCall(id="c1", name="read", arguments='{"path": "a.py"}')
    assistant = AssistantMessage(content="hi", reasoning_content="thinking...", tool_calls=[call])
    assert message_chars(assistant) == 2 + len("c1") + len("read") + len('{"path": "a.py"}')
    assert message_chars(assistant, include_reasoning=True) == message_chars(assistant) + len("thinking...")
    assert message_text(assistant) == 'hi\nc1\nread\n{"path": "a.py"}'
    assert message_chars(ToolResultMessage(tool_call_id="c1", name="read", content="abc")) == 3 + 2
    assert message_chars(UserMessage(content="héllo")) == 5  # characters, not bytes
    with pytest.raises(TypeError):
        message_chars(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        message_tokens(object())  # type: ignore[arg-type]


def test_chars_to_tokens_is_kept_for_old_callers():
    assert [chars_to_tokens(n) for n in (0, 1, 3, 4, 5, 8, 9)] == [0, 1, 1, 1, 2, 2, 3]
    assert chars_to_tokens(-3) == 0


def test_estimate_counts_each_part_with_the_models_tokenizer():
    msgs = history()
    est = ContextBudget(GPT4).estimate(SYSTEM, msgs, TOOLS)
    tools_json = json.dumps(TOOLS, separators=(",", ":"), ensure_ascii=False)
    expected = (cl100k(SYSTEM) + MESSAGE_OVERHEAD_TOKENS + cl100k(tools_json) + REPLY_PRIMING_TOKENS
                + sum(cl100k(message_text(m)) + MESSAGE_OVERHEAD_TOKENS for m in msgs))
    assert isinstance(est, BudgetEstimate)
    assert est.tokens == expected == est.estimated_tokens
    assert est.approximate and est.reported_tokens is None and est.margin == 1.0 and est.tokenizer == CL100K
    assert request_tokens(SYSTEM, msgs, TOOLS, model=GPT4) == expected


def test_message_counts_add_up_to_the_request():
    """The one counting: fixed parts + per-message figures == the request, margin included."""
    msgs = history()
    for model in (GPT41, CLAUDE):
        budget = ContextBudget(model)
        total = budget.fixed_tokens(SYSTEM, TOOLS) + sum(budget.message_tokens(m) for m in msgs)
        assert budget.estimate(SYSTEM, msgs, TOOLS).tokens == total == budget.request_tokens(SYSTEM, msgs, TOOLS)
        assert total == request_tokens(SYSTEM, msgs, TOOLS, model=model)
    raw = ContextBudget(CLAUDE, margin=1.0)
    claude = ContextBudget(CLAUDE)
    for m in msgs:
        assert claude.message_tokens(m) == math.ceil(raw.message_tokens(m) * NON_OPENAI_MARGIN)
    assert claude.text_tokens("hello world") == math.ceil(2 * NON_OPENAI_MARGIN)


def test_reasoning_is_counted_only_when_sent_back():
    msg = AssistantMessage(content="done", reasoning_content="let me think about the failing test " * 20)
    assert ContextBudget(GPT41, include_reasoning=True).message_tokens(msg) > ContextBudget(GPT41).message_tokens(msg)
    assert (ContextBudget(GPT41, include_reasoning=True).message_tokens(msg)
            == message_tokens(msg, include_reasoning=True, model=GPT41))


def test_each_message_is_counted_once(monkeypatch):
    counted: list[str] = []
    real = ContextBudget._count

    def spy(self, text):
        counted.append(text)
        return real(self, text)

    monkeypatch.setattr(ContextBudget, "_count", spy)
    meter = ContextBudget(GPT41)
    msgs = history(20)
    first = meter.estimate(SYSTEM, msgs, TOOLS)
    assert len(counted) == len(msgs) + 2  # every message, the system prompt, the tools
    counted.clear()
    assert meter.estimate(SYSTEM, msgs, TOOLS) == first
    assert counted == []
    msgs.append(UserMessage(content="and now the docs"))
    meter.estimate(SYSTEM, msgs, TOOLS)
    assert counted == ["and now the docs"]
    counted.clear()
    assert meter.request_tokens(SYSTEM, msgs, TOOLS) == meter.estimate(SYSTEM, msgs, TOOLS).tokens
    assert counted == []
    # Every message counted once in the total: equal to a fresh meter's figure.
    assert meter.estimate(SYSTEM, msgs, TOOLS) == ContextBudget(GPT41).estimate(SYSTEM, msgs, TOOLS)


def test_rewritten_history_is_not_served_from_a_stale_sum():
    meter = ContextBudget(GPT41)
    msgs = history(10)
    meter.estimate(SYSTEM, msgs, TOOLS)
    rewritten = [UserMessage(content="summary of earlier work")] + msgs[-4:]  # as after a compaction
    assert meter.estimate(SYSTEM, rewritten, TOOLS) == ContextBudget(GPT41).estimate(SYSTEM, rewritten, TOOLS)
    # A record replaced in place by a copy with the same id but other content is counted again.
    copy = msgs[3].model_copy(update={"content": "y" * 5000})
    changed = msgs[:3] + [copy] + msgs[4:]
    assert copy.id == msgs[3].id
    assert meter.estimate(SYSTEM, changed, TOOLS) == ContextBudget(GPT41).estimate(SYSTEM, changed, TOOLS)


def test_system_prompt_and_tools_count():
    meter = ContextBudget(GPT4)
    base = meter.estimate("", [], None).tokens
    assert base == MESSAGE_OVERHEAD_TOKENS + REPLY_PRIMING_TOKENS  # empty prompt, no tools
    assert meter.estimate("hello world", [], None).tokens == base + 2
    assert meter.estimate("", [], TOOLS).tokens == base + cl100k(json.dumps(TOOLS, separators=(",", ":")))


def test_a_custom_counter_replaces_the_tokenizer_and_a_failing_one_falls_back():
    budget = ContextBudget(GPT4, text_counter=lambda text: 1000)
    assert budget.tokenizer == "custom"
    assert budget.message_tokens(UserMessage(content="x")) == 1000 + MESSAGE_OVERHEAD_TOKENS

    def broken(text):
        raise RuntimeError("tokenizer unavailable")

    budget = ContextBudget(GPT4, text_counter=broken)
    assert budget.message_tokens(UserMessage(content="hello world")) == 2 + MESSAGE_OVERHEAD_TOKENS
    assert budget.tokenizer == CL100K


def test_counting_a_20kb_tool_output_is_cheap_and_cached():
    text = (sample_texts()["pytest_vv_tracebacks"] * 3)[:20_000]
    budget = ContextBudget(GPT41)
    msg = ToolResultMessage(tool_call_id="c1", name="bash", content=text)
    first = budget.message_tokens(msg)
    assert first == o200k("c1\n" + text) + MESSAGE_OVERHEAD_TOKENS
    assert budget._tokens[msg.id] == (msg, first)  # cached by id: later estimates reuse it


# -- reconciliation --------------------------------------------------------------------------------


def test_reconciled_figure_replaces_the_local_count():
    meter = ContextBudget(GPT41)
    msgs = history(3)
    local = meter.estimate(SYSTEM, msgs, TOOLS)
    meter.reconcile(local.tokens + 123, len(msgs))
    assert meter.used_prompt_tokens == local.tokens + 123
    again = meter.estimate(SYSTEM, msgs, TOOLS)
    assert again.tokens == local.tokens + 123
    assert not again.approximate and again.reported_tokens == local.tokens + 123 and again.estimated_tokens == 0
    new = [AssistantMessage(content="done"), UserMessage(content="thanks, one more thing")]
    msgs += new
    later = meter.estimate(SYSTEM, msgs, TOOLS)
    assert later.tokens == local.tokens + 123 + sum(meter.message_tokens(m) for m in new)
    assert later.tokens == local.tokens + 123 + sum(message_tokens(m, model=GPT41) for m in new)
    assert later.approximate
    assert meter.request_tokens(SYSTEM, msgs, TOOLS) == ContextBudget(GPT41).estimate(SYSTEM, msgs, TOOLS).tokens


def test_reconcile_is_dropped_when_the_prefix_or_prompt_changes():
    meter = ContextBudget(GPT41)
    msgs = history(3)
    meter.estimate(SYSTEM, msgs, TOOLS)
    meter.reconcile(99_999, len(msgs))
    fresh = ContextBudget(GPT41)
    compacted = [UserMessage(content="summary")] + msgs[-2:]
    assert meter.estimate(SYSTEM, compacted, TOOLS) == fresh.estimate(SYSTEM, compacted, TOOLS)
    assert meter.estimate(SYSTEM + " changed", msgs, TOOLS).tokens != 99_999
    assert meter.estimate(SYSTEM, msgs, TOOLS).tokens == 99_999
    meter.reset()
    assert meter.used_prompt_tokens is None
    assert meter.estimate(SYSTEM, msgs, TOOLS).approximate


def test_reconcile_with_explicit_messages_and_bad_input():
    meter = ContextBudget(GPT41)
    msgs = history(2)
    meter.estimate(SYSTEM, msgs, TOOLS)
    meter.reconcile(500, 2, messages=msgs)  # the call covered only the first two messages
    est = meter.estimate(SYSTEM, msgs, TOOLS)
    assert est.tokens == 500 + sum(meter.message_tokens(m) for m in msgs[2:])
    with pytest.raises(ValueError):
        meter.reconcile(-1, 0)
    with pytest.raises(ValueError):
        meter.reconcile(10, len(msgs) + 1)


def test_large_history_sum_stays_exact_across_turns():
    meter = ContextBudget(CLAUDE)
    msgs = history(400)  # 1201 messages
    for _ in range(5):
        msgs += history(1)[1:]
        est = meter.estimate(SYSTEM, msgs, TOOLS)
        assert est.tokens == ContextBudget(CLAUDE).request_tokens(SYSTEM, msgs, TOOLS)


def test_c22_non_openai_count_is_approximate_then_reconciled_with_reported_usage():
    """C22 (litellm issue 8140): a local count for a Bedrock Claude model differs from what the
    provider reports. Before the call the count is flagged approximate and carries the margin;
    after the (mocked) usage the used figure is exactly the reported prompt tokens, and the figure
    a compaction trigger reads is the reported number plus counts of newer messages."""
    model = "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0"
    messages = [UserMessage(content="happiness")]
    meter = ContextBudget(model)

    before = meter.estimate("", messages, [])
    unmargined = ContextBudget(model, margin=1.0)
    assert before.approximate
    assert before.margin == NON_OPENAI_MARGIN
    assert before.tokens == (math.ceil((0 + MESSAGE_OVERHEAD_TOKENS) * NON_OPENAI_MARGIN)
                             + math.ceil(unmargined.message_tokens(messages[0]) * NON_OPENAI_MARGIN)
                             + REPLY_PRIMING_TOKENS)
    assert before.tokens > unmargined.estimate("", messages, []).tokens
    assert meter.used_prompt_tokens is None

    local = unmargined.estimate("", messages, []).tokens  # what an OpenAI-style counter would say
    mock_usage = Usage(prompt_tokens=local + 7, completion_tokens=5)  # any value != local
    meter.reconcile(mock_usage.prompt_tokens, len(messages))
    assert meter.used_prompt_tokens == mock_usage.prompt_tokens

    after = meter.estimate("", messages, [])
    assert after.tokens == mock_usage.prompt_tokens and not after.approximate  # not the stale local count

    reply = AssistantMessage(content="Happiness is a state of well-being.", usage=mock_usage)
    follow_up = UserMessage(content="and in French?")
    messages += [reply, follow_up]
    trigger_input = meter.estimate("", messages, [])
    new_part = sum(math.ceil(unmargined.message_tokens(m) * NON_OPENAI_MARGIN) for m in (reply, follow_up))
    assert trigger_input.tokens == mock_usage.prompt_tokens + new_part
    assert trigger_input.reported_tokens == mock_usage.prompt_tokens
    assert trigger_input.approximate  # the new messages are still local counts
    # A threshold check on this figure sees more than the stale local count would have.
    stale_local = ContextBudget(model).estimate("", messages, []).tokens
    assert stale_local < trigger_input.tokens


# -- reserved output -------------------------------------------------------------------------------


def test_reserved_output_and_the_largest_prompt():
    assert reserved_output(200_000) == 8192 and max_prompt_tokens(200_000) == 191_808
    assert reserved_output(16_000) == 3200 and max_prompt_tokens(16_000) == 12_800  # 20% of a small window
    assert max_prompt_tokens(4096, max_tokens=256) == 3840  # the reply cap sent (embedded model)
    assert max_prompt_tokens(128_000, reserved_output_tokens=20_000) == 108_000  # the setting
    assert max_prompt_tokens(128_000, max_tokens=32_000, reserved_output_tokens=20_000) == 96_000  # the larger
    assert max_prompt_tokens(128_000, reserved_output_tokens=0) == 128_000
    assert max_prompt_tokens(1000, max_tokens=4000) == 0
    with pytest.raises(ValueError):
        max_prompt_tokens(1000, reserved_output_tokens=-1)


def test_reserved_output_setting_is_read_from_the_compaction_section(monkeypatch):
    from agent.config.settings import Settings

    assert Settings().compaction.reserved_output_tokens is None
    monkeypatch.setenv("OPENCLI_COMPACTION__RESERVED_OUTPUT_TOKENS", "4096")
    settings = Settings()
    assert max_prompt_tokens(16_000, reserved_output_tokens=settings.compaction.reserved_output_tokens) == 11_904


# -- the same counting for every provider ----------------------------------------------------------


def test_scripted_sessions_count_like_the_real_model(tmp_path):
    """The scripted provider (tests, --replay) gets the tokenizer and margin of the model whose
    identity it takes, so long-session tests measure real tokens; DeepSeek's reasoning, sent back
    in every request, is counted too."""
    from agent.config.settings import Settings
    from agent.providers.scripted import ScriptedProvider
    from agent.runtime.build import build_session

    for model, tokenizer, margin, reasoning in ((GPT41, O200K, 1.0, False), (CLAUDE, CL100K, 1.25, False),
                                                 ("deepseek/deepseek-reasoner", CL100K, 1.25, True)):
        session = build_session(tmp_path, Settings(model=model), provider=ScriptedProvider([]), interactive=False)
        session.prepare()
        budget = session.agent.budget
        assert (budget.tokenizer, budget.margin, budget.include_reasoning) == (tokenizer, margin, reasoning)
        assert budget.text_counter is None
        session.close()


def test_litellm_counts_openai_models_with_the_same_encodings():
    """litellm's token_counter (offline switches set by the loader) uses the same encodings for
    OpenAI models, so it adds nothing on the hot path. It encodes in 1024-character chunks, so on
    longer texts it drifts by up to a token per chunk where our count is exact."""
    from agent.providers.model_info import token_counter_for

    text = sample_texts()["pytest_vv_tracebacks"]
    for model in ("gpt-4", "gpt-4o"):
        litellm_count = token_counter_for(model)
        assert litellm_count(text[:1000]) == count_text_tokens(text[:1000], model)
        assert abs(litellm_count(text) - count_text_tokens(text, model)) <= len(text) // 1024 + 1


def test_a_prepared_session_has_its_encoding_loaded(tmp_path):
    """The encoding loads while the session is prepared, not on the first request."""
    from agent.config.settings import Settings
    from agent.providers.scripted import ScriptedProvider
    from agent.runtime.build import build_session

    tok_mod.clear_encoding_cache()
    session = build_session(tmp_path, Settings(model="gpt-4o"), provider=ScriptedProvider([]), interactive=False)
    session.prepare()
    assert tok_mod._encodings.get(O200K) is not None
    session.close()


def test_the_rank_file_parse_is_what_the_per_line_loop_built(monkeypatch: pytest.MonkeyPatch):
    """parse_ranks (C splitting and decoding, a step at a time) gives the dict the per-line loop
    gave, for the real cl100k file, with steps of any size (a step ends at a line's end); a line
    without a rank is refused."""
    import base64

    from agent.context import tokenizer

    path = next(p for p in tokenizer._candidate_files(CL100K) if p.is_file())
    data = path.read_bytes()
    slow = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in data.splitlines() if line)}
    assert tokenizer.parse_ranks(data) == slow and len(slow) > 100_000
    for step in (1, 7, 4096):
        monkeypatch.setattr(tokenizer, "PARSE_STEP_BYTES", step)
        small = data[:data.rfind(b"\n", 0, 50_000) + 1]
        expected = {base64.b64decode(t): int(r) for t, r in (line.split() for line in small.splitlines() if line)}
        assert tokenizer.parse_ranks(small) == expected
        assert tokenizer.parse_ranks(small.rstrip(b"\n")) == expected, "no newline at the end"
        with pytest.raises(ValueError):
            tokenizer.parse_ranks(b"YQ== 0\nYg==\n")
