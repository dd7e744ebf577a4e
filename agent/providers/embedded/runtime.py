"""``EmbeddedRuntime``: the llama.cpp model run on one worker thread: tokenising, scoring the
actions, grammar-constrained generation, and one reply per request (see the package docstring).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator

from .grammar import action_prefix, answer_grammar, answer_max_chars, arguments_grammar
from .model import EmbeddedConfig, EmbeddedModelMissing, find_model_path
from .prompt import render_chat, to_chatml
from .replies import (
    AnswerReply,
    AnswerStream,
    Reply,
    ToolReply,
    is_repeat,
    last_result_summary,
    parse_arguments,
    tool_rounds,
)
from .tool_specs import ANSWER, ToolSpec, tool_specs

# --------------------------------------------------------------------------- the llama.cpp runner


class _NoRedirect:
    """Stand-in for llama_cpp's ``suppress_stdout_stderr``, which dup2()s file descriptors 1 and 2
    to /dev/null for the whole process while a model loads: under a full-screen UI running in
    another thread that would swallow screen output. Logging is silenced through llama_cpp's
    log callback instead (``verbose=False``)."""

    def __init__(self, disable: bool = True) -> None:
        pass

    def __enter__(self) -> "_NoRedirect":
        return self

    def __exit__(self, *exc: object) -> None:
        return None


@dataclass
class _Generation:
    text: str = ""
    completion_tokens: int = 0
    finish_reason: str = "stop"


class EmbeddedRuntime:
    """The loaded model plus the logic that turns a chat request into one reply.

    One instance per process (``get_runtime()``). The model is loaded on first use, under a
    lock. Every llama.cpp computation (prompt evaluation, scoring, generation) runs on one
    long-lived worker thread (a one-worker executor), one job at a time: a llama.cpp context is not thread-safe, and
    llama.cpp's OpenMP worker pool belongs to the thread that drives it, so alternating threads
    leaves idle pools spinning against the busy one (measured: about 30% fewer tokens/s on
    2 cores). Callers on any thread submit jobs and wait for, or stream, their results.
    """

    def __init__(self, config: EmbeddedConfig | None = None) -> None:
        self.config = config or EmbeddedConfig()
        self._llama: Any = None
        self._load_lock = threading.Lock()
        self._worker: ThreadPoolExecutor | None = None
        self._exiting = threading.Event()
        self._grammars: dict[str, Any] = {}
        self.model_path: Path | None = None
        #: Seconds the last model load took (None until loaded).
        self.load_seconds: float | None = None

    # -- the llama thread --------------------------------------------------------------------

    def _submit(self, job: Callable[[], None]) -> None:
        """Queue ``job`` for the llama thread (started on first use; one worker, so jobs run one
        at a time, in order, always on the same thread)."""
        with self._load_lock:
            if self._worker is None:
                self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embedded-llama")
                # The executor's thread is joined at interpreter exit (it is no daemon): a
                # generation nobody reads any more then stops at its next token instead of running
                # to max_tokens. Threading's exit hooks run before that join (CPython >= 3.9).
                register = getattr(threading, "_register_atexit", None)
                if register is not None:
                    with contextlib.suppress(RuntimeError):
                        register(self._exiting.set)
        self._worker.submit(job)  # jobs report their own errors to whoever waits for them

    def _call(self, fn: Callable[[], Any], timeout_s: float | None = None) -> Any:
        """Run ``fn`` on the llama thread and return its result (or raise its exception).
        Raises ``TimeoutError`` when ``timeout_s`` seconds pass first."""
        box: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)

        def job() -> None:
            try:
                box.put((True, fn()))
            except BaseException as exc:  # handed over to the caller
                box.put((False, exc))

        self._submit(job)
        try:
            ok, value = box.get(timeout=timeout_s)
        except queue.Empty:
            raise TimeoutError("the embedded model is busy") from None
        if ok:
            return value
        raise value

    # -- model -------------------------------------------------------------------------------

    def model(self) -> Any:
        """Return the ``llama_cpp.Llama`` instance, loading it on first call (thread-safe).

        Raises ``EmbeddedModelMissing`` when llama-cpp-python or the model file is missing.
        """
        if self._llama is not None:
            return self._llama
        with self._load_lock:
            if self._llama is not None:
                return self._llama
            path = find_model_path()
            try:
                import llama_cpp
                import llama_cpp._internals as llama_internals
                import llama_cpp.llama as llama_module
            except ImportError as exc:
                raise EmbeddedModelMissing() from exc
            threads = self.config.n_threads or max(1, min(os.cpu_count() or 1, 4))
            started = time.monotonic()
            saved = (llama_module.suppress_stdout_stderr, llama_internals.suppress_stdout_stderr)
            llama_module.suppress_stdout_stderr = _NoRedirect
            llama_internals.suppress_stdout_stderr = _NoRedirect
            try:
                self._llama = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=self.config.context_tokens,
                    n_threads=threads,
                    n_threads_batch=threads,
                    verbose=False,
                )
            finally:
                llama_module.suppress_stdout_stderr, llama_internals.suppress_stdout_stderr = saved
            self.model_path = path
            self.load_seconds = time.monotonic() - started
            # Free the model before interpreter teardown: llama_cpp's own __del__ runs too late
            # then and prints "Exception ignored in Llama.__del__" on exit.
            atexit.register(self.close)
            return self._llama

    def close(self, timeout_s: float = 2.0) -> None:
        """Free the loaded model (it is loaded again on next use). Waits up to ``timeout_s``
        seconds for the running job; if it is still running, leaves the model alone."""
        if self._llama is None:
            return

        def free() -> None:
            llama, self._llama = self._llama, None
            self._grammars.clear()
            if llama is not None:
                with contextlib.suppress(Exception):
                    llama.close()

        try:
            self._call(free, timeout_s)
        except TimeoutError:
            pass
        except RuntimeError:
            # At interpreter exit the executor is shut down (its thread joined) before atexit
            # handlers run: no job can be running, so the model is freed here.
            free()

    def tokenize(self, text: str) -> list[int]:
        """Return the token ids of ``text`` (ChatML special tokens recognised, no BOS added)."""
        return self.model().tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def count_tokens(self, text: str) -> int:
        """Return the number of tokens of ``text`` for this model."""
        return len(self.tokenize(text))

    def _grammar(self, gbnf: str) -> Any:
        from llama_cpp import LlamaGrammar

        grammar = self._grammars.get(gbnf)
        if grammar is None:
            grammar = LlamaGrammar.from_string(gbnf, verbose=False)
            if len(self._grammars) > 64:
                self._grammars.clear()
            self._grammars[gbnf] = grammar
        return grammar

    def score(self, prompt_tokens: list[int], candidates: dict[str, list[int]]) -> dict[str, float]:
        """Return the log-probability (natural log) of each candidate token sequence following
        ``prompt_tokens``. The prompt is evaluated once (its KV cache is reused by the next
        generation); each candidate costs one model step per token after its first."""
        import numpy as np

        llm = self.model()

        def run() -> dict[str, float]:
            n_vocab = llm.n_vocab()

            def last_logprobs() -> Any:
                logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(n_vocab,)).astype(np.float64)
                logits -= logits.max()
                return logits - np.log(np.exp(logits).sum())

            # Reuse whatever prefix of the prompt is still in the KV cache.
            cached = 0
            limit = min(llm.n_tokens, len(prompt_tokens) - 1)
            ids = llm.input_ids
            while cached < limit and ids[cached] == prompt_tokens[cached]:
                cached += 1
            llm.n_tokens = cached
            llm.eval(prompt_tokens[cached:])
            base = last_logprobs()
            scores: dict[str, float] = {}
            for name, tokens in candidates.items():
                llm.n_tokens = len(prompt_tokens)
                total = float(base[tokens[0]])
                for previous, token in zip(tokens, tokens[1:]):
                    llm.eval([previous])
                    total += float(last_logprobs()[token])
                scores[name] = total
            llm.n_tokens = len(prompt_tokens)
            return scores

        return self._call(run)

    def generate(
        self,
        prompt_tokens: list[int],
        *,
        grammar: str | None,
        max_tokens: int,
        temperature: float,
        result: _Generation,
        repeat_penalty: float = 1.0,
    ) -> Iterator[str]:
        """Generate from ``prompt_tokens``, yielding text pieces as they are decoded.

        ``grammar`` (GBNF text or None) constrains the output; ``max_tokens`` caps generated
        tokens; ``repeat_penalty`` > 1 discourages the loops greedy decoding falls into.
        ``result`` receives the full text, the number of generated tokens and the finish reason
        (``stop`` or ``length``).

        The generation runs on the llama thread; closing this iterator early (the consumer
        stopped reading, e.g. the user cancelled) stops it at the next token.
        """
        llm = self.model()
        compiled = self._grammar(grammar) if grammar is not None else None
        pieces: queue.Queue[tuple[str, Any]] = queue.Queue()
        stop = threading.Event()

        def produce() -> None:
            try:
                if stop.is_set():
                    pieces.put(("end", "stop"))
                    return
                stream = llm.create_completion(
                    prompt_tokens,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    top_k=40 if temperature > 0 else 1,
                    repeat_penalty=repeat_penalty,
                    grammar=compiled,
                    stop=["<|im_end|>", "<|im_start|>"],
                    stream=True,
                )
                finish = "stop"
                for chunk in stream:
                    choice = chunk["choices"][0]
                    pieces.put(("token", choice.get("text") or ""))
                    if choice.get("finish_reason"):
                        finish = choice["finish_reason"]
                    if stop.is_set() or self._exiting.is_set():
                        break
                with contextlib.suppress(Exception):
                    stream.close()
                pieces.put(("end", finish))
            except BaseException as exc:  # handed over to the consumer
                pieces.put(("error", exc))

        self._submit(produce)
        try:
            while True:
                kind, value = pieces.get()
                if kind == "token":
                    result.completion_tokens += 1
                    if value:
                        result.text += value
                        yield value
                elif kind == "end":
                    result.finish_reason = "length" if value == "length" else "stop"
                    return
                else:
                    raise value
        finally:
            stop.set()

    # -- one reply ---------------------------------------------------------------------------

    def choose_action(self, prompt: list[int], specs: list[ToolSpec], allow_tools: bool) -> tuple[str, dict[str, float]]:
        """Return the action to take (a tool name or ``answer``) and every candidate's score.

        Each action is scored by the log-probability of ``NAME(`` after the prompt; comparing
        whole names avoids the greedy first-token trap (``g`` of ``grep`` vs ``glob``)."""
        if not allow_tools or not specs:
            return ANSWER, {}
        names = [s.name for s in specs] + [ANSWER]
        candidates = {name: self.tokenize(action_prefix(name)) for name in names}
        scores = self.score(prompt, candidates)
        return max(names, key=lambda n: scores[n]), scores

    def reply(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Answer one chat request; yield events as they happen.

        Inputs: OpenAI-format ``messages`` and ``tools``; ``max_tokens`` caps each generation
        (default ``config.max_reply_tokens``); ``temperature`` (default ``config.temperature``;
        it only affects argument and answer text, the action is always the most likely one).

        Events (dicts):
        - ``{"type": "text", "text": str}``: a piece of the answer;
        - ``{"type": "tool_call", "name": str, "arguments": str}``: the one tool call (JSON text);
        - ``{"type": "end", "finish_reason": "stop"|"tool_calls"|"length",
          "prompt_tokens": int, "completion_tokens": int}``: always last.

        Raises ``EmbeddedModelMissing`` when the model cannot be loaded, ``ContextTooLong`` when
        even the shortest rendering of the prompt does not fit the context.
        """
        cfg = self.config
        max_tokens = int(max_tokens or cfg.max_reply_tokens)
        max_tokens = max(16, min(max_tokens, cfg.context_tokens // 2))
        temperature = cfg.temperature if temperature is None else float(temperature)
        specs = tool_specs(tools)
        budget = min(cfg.prompt_budget_tokens, cfg.context_tokens - max_tokens - 16)
        chat = render_chat(messages, specs, count_tokens=self.count_tokens, budget_tokens=budget)
        prompt = self.tokenize(to_chatml(chat))
        if len(prompt) + max_tokens + 8 > cfg.context_tokens:
            raise ContextTooLong(
                f"the conversation does not fit the embedded model's {cfg.context_tokens}-token context"
            )

        if not specs:  # plain text reply (e.g. a summary request): no grammar
            gen = _Generation()
            for piece in self.generate(prompt, grammar=None, max_tokens=max_tokens,
                                       temperature=temperature, result=gen,
                                       repeat_penalty=cfg.repeat_penalty):
                yield {"type": "text", "text": piece}
            yield {"type": "end", "finish_reason": gen.finish_reason,
                   "prompt_tokens": len(prompt), "completion_tokens": gen.completion_tokens}
            return

        by_name = {s.name: s for s in specs}
        allow_tools = not (cfg.max_tool_steps and tool_rounds(messages) >= cfg.max_tool_steps)
        completion_tokens = 0
        reply: Reply | None = None
        gen = _Generation()
        while reply is None:
            action, _scores = self.choose_action(prompt, specs, allow_tools)
            prefix = self.tokenize(action_prefix(action))
            completion_tokens += len(prefix)
            gen = _Generation()
            if action == ANSWER:
                streamer = AnswerStream()
                for _piece in self.generate(prompt + prefix, grammar=answer_grammar(answer_max_chars(max_tokens)),
                                            max_tokens=max_tokens, temperature=temperature, result=gen,
                                            repeat_penalty=cfg.repeat_penalty):
                    new = streamer.feed('"' + gen.text)
                    if new:
                        yield {"type": "text", "text": new}
                completion_tokens += gen.completion_tokens
                if not streamer.text.strip():
                    text = last_result_summary(messages)
                    yield {"type": "text", "text": text}
                reply = AnswerReply(streamer.text)
                break
            spec = by_name[action]
            for _piece in self.generate(prompt + prefix, grammar=arguments_grammar(spec),
                                        max_tokens=max_tokens, temperature=temperature, result=gen):
                pass
            completion_tokens += gen.completion_tokens
            arguments = parse_arguments(gen.text)
            if arguments is None:  # cut off by max_tokens: report what there is as text
                text = f"{action}({gen.text}"
                yield {"type": "text", "text": text}
                reply = AnswerReply(text)
                break
            candidate = ToolReply(action, arguments)
            if is_repeat(candidate, messages):
                if allow_tools:
                    allow_tools = False  # the same call again would loop: answer instead
                    continue
                text = last_result_summary(messages)
                yield {"type": "text", "text": text}
                reply = AnswerReply(text)
                break
            reply = candidate

        if isinstance(reply, ToolReply):
            yield {"type": "tool_call", "name": reply.name, "arguments": reply.arguments_json()}
            finish = "tool_calls"
        else:
            finish = "length" if gen.finish_reason == "length" else "stop"
        yield {"type": "end", "finish_reason": finish, "prompt_tokens": len(prompt),
               "completion_tokens": completion_tokens}


class ContextTooLong(ValueError):
    """The prompt cannot be made to fit the embedded model's context window."""


_runtime: EmbeddedRuntime | None = None
_runtime_lock = threading.Lock()


def get_runtime() -> EmbeddedRuntime:
    """Return the process-wide ``EmbeddedRuntime`` (created on first call; the model itself is
    loaded on the first generation)."""
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            _runtime = EmbeddedRuntime()
        return _runtime


def configure(**changes: Any) -> EmbeddedConfig:
    """Change the runtime's ``EmbeddedConfig`` fields (see its docstring) and return it.

    ``context_tokens`` and ``n_threads`` only take effect before the model is loaded.
    Raises ``TypeError`` for an unknown field.
    """
    runtime = get_runtime()
    runtime.config = replace(runtime.config, **changes)
    return runtime.config
