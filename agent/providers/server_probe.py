"""Asking a model server on the user's machine or network what it serves, in a second or two.

``ollama_hint()`` offers an Ollama server that answers on its default port to a user about to run
the embedded model; ``server_models(api_base)`` lists the ids an OpenAI-compatible server serves
(named when it does not know the model asked for); ``server_context_window(api_base, model)``
reads the context window such a server says it runs a model with (litellm does not know local
models'). Each is one or two GETs with a time limit and never raises.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

#: Where Ollama listens by default.
OLLAMA_URL = "http://127.0.0.1:11434"


def _get_json(url: str, timeout_s: float) -> Any:
    """The JSON body of ``GET url`` (at most 1 MB read), or None when nothing answers within
    ``timeout_s`` seconds or the body is not JSON."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return json.loads(response.read(1_000_000))
    except (OSError, ValueError):
        return None


def _listed(data: Any, key: str) -> list[dict[str, Any]] | None:
    """The list of objects under ``key`` of a JSON answer, or None when it has none."""
    items = data.get(key) if isinstance(data, dict) else None
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else None


def ollama_models(url: str = OLLAMA_URL, *, timeout_s: float = 0.3) -> list[str] | None:
    """The model names an Ollama server at ``url`` lists (``GET /api/tags``), or None when no
    server answers there within ``timeout_s`` seconds or the answer is not Ollama's."""
    models = _listed(_get_json(f"{url.rstrip('/')}/api/tags", timeout_s), "models")
    return None if models is None else [str(m["name"]) for m in models if m.get("name")]


def ollama_hint(url: str = OLLAMA_URL, *, timeout_s: float = 0.3) -> str | None:
    """A one-line hint to use the Ollama server that answers at ``url`` instead of the embedded
    model (with the ``--model`` to type), or None when none answers."""
    models = ollama_models(url, timeout_s=timeout_s)
    if models is None:
        return None
    if not models:
        return f"An Ollama server answers at {url}: `ollama pull qwen3`, then --model ollama/qwen3 serves you better."
    shown = ", ".join(models[:3]) + (" ..." if len(models) > 3 else "")
    return (f"An Ollama server answers at {url} with {shown}: --model ollama/{models[0]} (or /model "
            f"ollama/{models[0]} here) serves you better than the embedded model.")


def _model_entries(api_base: str, timeout_s: float) -> list[dict[str, Any]] | None:
    """The entries of ``GET {api_base}/models``, or None when the server does not answer that."""
    return _listed(_get_json(f"{api_base.rstrip('/')}/models", timeout_s), "data")


def server_models(api_base: str, *, timeout_s: float = 2.0) -> list[str] | None:
    """The model ids an OpenAI-compatible server at ``api_base`` lists (``GET {api_base}/models``),
    or None when it does not answer that within ``timeout_s`` seconds."""
    entries = _model_entries(api_base, timeout_s)
    return None if entries is None else [str(e["id"]) for e in entries if e.get("id")]


def server_context_window(api_base: str, model: str, *, timeout_s: float = 2.0) -> int | None:
    """The context window (tokens) an OpenAI-compatible server says it runs ``model`` with, or
    None when it does not say: vLLM's ``max_model_len`` and llama.cpp's ``meta.n_ctx_train`` in
    ``GET /models`` (the entry of that id, or the only one), else llama.cpp's ``GET /props``
    (``default_generation_settings.n_ctx``)."""
    name = model.split("/", 1)[1] if model.startswith("openai/") else model
    entries = _model_entries(api_base, timeout_s) or []
    for entry in entries:
        if entry.get("id") != name and len(entries) > 1:
            continue
        meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
        for value in (entry.get("max_model_len"), entry.get("context_length"), meta.get("n_ctx"), meta.get("n_ctx_train")):
            if isinstance(value, int) and value > 0:
                return value
    props = _get_json(f"{api_base.rstrip('/').removesuffix('/v1')}/props", timeout_s)
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    value = settings.get("n_ctx") if isinstance(settings, dict) else None
    return value if isinstance(value, int) and value > 0 else None


__all__ = ["OLLAMA_URL", "ollama_hint", "ollama_models", "server_context_window", "server_models"]
