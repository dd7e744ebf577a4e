"""Checking a model name and its API key before anything starts, in milliseconds.

Importing litellm takes seconds, so a missing key or a mistyped model would otherwise be found
only when the first request fails. ``model_problem(model, api_base=..., environ=...)`` reads the
facts litellm ships without importing it: its bundled model list
(``model_prices_and_context_window_backup.json``: which provider serves a bare name such as
``gpt-4.1``) and the provider names of its ``LlmProviders`` enum (read from
``litellm/types/utils.py`` as text). Where a file is missing or its format changed, that check is
skipped: the first request then reports the problem, as before.

Asking a running server (Ollama, an ``--api-base``) is ``server_probe``.

The key variables per provider are the ones litellm reads (``OPENAI_API_KEY``...). With an
``api_base`` (a local or self-hosted server) no key is required and any model name is allowed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterator, Mapping

#: The environment variables litellm reads for each provider's key (any one of them will do).
KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY", "OR_API_KEY"),
    "xai": ("XAI_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_API_KEY"),
    "fireworks_ai": ("FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY", "FIREWORKSAI_API_KEY"),
    "cohere": ("COHERE_API_KEY", "CO_API_KEY"),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "cerebras": ("CEREBRAS_API_KEY",),
}
#: Providers that run on the user's machine or network: no key needed.
LOCAL_PROVIDERS = frozenset({"ollama", "ollama_chat", "lm_studio", "llamafile", "hosted_vllm", "vllm",
                             "xinference", "docker_model_runner", "lemonade", "embedded"})
_ENUM_MEMBER = re.compile(r'^\s+[A-Z][A-Z0-9_]* = "([a-z0-9_.\-]+)"', re.MULTILINE)


@dataclass(frozen=True)
class ModelProblem:
    """Why ``model`` cannot run as configured: ``kind`` (``missing_key`` or ``unknown_model``) and
    a one-line ``message`` that repeats the name given and says what to do."""

    kind: str
    message: str


def model_problem(model: str, *, api_base: str | None = None,
                  environ: Mapping[str, str] | None = None) -> ModelProblem | None:
    """The problem with running ``model`` (a litellm name), or None when it looks runnable or
    cannot be checked. ``api_base``: a server URL (then no key is needed and any name goes);
    ``environ``: the environment (default ``os.environ``). Never imports litellm; never raises."""
    environ = os.environ if environ is None else environ
    name = model.strip()
    if not name or name.startswith("embedded/") or api_base:
        return None
    provider = _provider_of(name)
    if provider is None:
        return ModelProblem("unknown_model", (
            f"unknown model {name!r}: litellm knows no model of that name and no provider prefix names "
            "one; give provider/model, e.g. openai/gpt-4.1, anthropic/claude-sonnet-4-5, "
            "gemini/gemini-2.5-flash, ollama/qwen3 (or --api-base URL for an OpenAI-compatible server)"))
    if provider in LOCAL_PROVIDERS:
        return None
    variables = KEY_VARIABLES.get(provider)
    if variables and not any(environ.get(var) for var in variables):
        return ModelProblem("missing_key", (
            f"no API key for {name!r}: set {' or '.join(variables)} (or choose another model with --model; "
            "--model embedded/smollm2-135m runs offline)"))
    return None


def bundled_context_window(model: str) -> int | None:
    """The context window (input tokens) litellm's bundled model list gives ``model`` (a bare
    name or ``provider/name``), or None when it has none. Reads the file; never imports litellm."""
    for entry in _bundled_entries(model):
        window = entry.get("max_input_tokens") or entry.get("max_tokens")
        if isinstance(window, int) and window > 0:
            return window
    return None


def bundled_model_facts(model: str) -> dict | None:
    """The entry of litellm's bundled model list for ``model`` (a bare name or
    ``provider/name``): context window, per-token prices...; None when it has none. Reads the
    file; never imports litellm."""
    return next(_bundled_entries(model), None)


def _bundled_entries(model: str) -> Iterator[dict]:
    """The entries of litellm's bundled model list for ``model`` as written, then for its bare
    name (``provider/name`` -> ``name``), those that exist."""
    models = _litellm_models()
    if not models:
        return
    for key in (model, model.partition("/")[2]):
        entry = models.get(key) if key else None
        if isinstance(entry, dict):
            yield entry


def _provider_of(name: str) -> str | None:
    """The provider serving ``name``: its prefix when litellm knows it, the provider litellm's
    model list gives a bare name, ``""`` when the facts cannot be read (not checked), None when
    litellm does not know the name."""
    prefix, _, rest = name.partition("/")
    providers = _litellm_providers()
    models = _litellm_models()
    if rest:
        if providers is None or prefix in providers or prefix in LOCAL_PROVIDERS or prefix in KEY_VARIABLES:
            return prefix
        return None
    if models is None:
        return ""
    entry = models.get(name)
    provider = entry.get("litellm_provider") if isinstance(entry, dict) else None
    return str(provider) if provider else None


@lru_cache(maxsize=1)
def _litellm_dir() -> Path | None:
    try:
        spec = importlib.util.find_spec("litellm")  # finds the package without importing it
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations else None


@lru_cache(maxsize=1)
def _litellm_models() -> dict | None:
    """litellm's bundled model list (name -> facts), or None when it cannot be read."""
    folder = _litellm_dir()
    try:
        data = json.loads((folder / "model_prices_and_context_window_backup.json").read_text("utf-8")) if folder else None
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@lru_cache(maxsize=1)
def _litellm_providers() -> frozenset[str] | None:
    """The provider names of litellm's ``LlmProviders`` enum, or None when they cannot be read."""
    folder = _litellm_dir()
    try:
        source = (folder / "types" / "utils.py").read_text("utf-8") if folder else ""
    except OSError:
        return None
    start = source.find("class LlmProviders(")
    if start < 0:
        return None
    end = source.find("\nclass ", start + 1)
    names = frozenset(_ENUM_MEMBER.findall(source[start:end if end > 0 else None]))
    return names if len(names) > 20 else None  # a format we do not recognise: do not guess


__all__ = ["KEY_VARIABLES", "LOCAL_PROVIDERS", "ModelProblem", "bundled_context_window", "bundled_model_facts",
           "model_problem"]
