"""The environment commands run by the bash tool get: the app's own one without secrets.

Removed by default: the provider keys the app knows (``PROVIDER_KEYS``) and every variable whose
name contains ``KEY``, ``SECRET``, ``TOKEN`` or ``PASSWORD`` (case-insensitive), unless the name is
in the allow list (config ``[bash] env_allow``).
"""

from __future__ import annotations

import os
import re
from typing import Iterable, Mapping

#: Environment variables that hold the providers' API keys (removed even when allowed by name
#: patterns elsewhere; an explicit allow list entry keeps one).
PROVIDER_KEYS = frozenset({
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "DEEPSEEK_API_KEY",
    "MISTRAL_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "AZURE_API_KEY", "AZURE_OPENAI_API_KEY",
    "XAI_API_KEY", "TOGETHER_API_KEY", "TOGETHERAI_API_KEY", "COHERE_API_KEY", "FIREWORKS_API_KEY",
    "HUGGINGFACE_API_KEY", "HF_TOKEN", "PERPLEXITYAI_API_KEY", "OPENCLI_API_KEY", "LITELLM_API_KEY",
    "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "VERTEXAI_CREDENTIALS",
})
#: Names matching this (case-insensitive search) are removed unless allowed.
SECRET_NAME = re.compile(r"KEY|SECRET|TOKEN|PASSWORD", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    """True when a variable called ``name`` is withheld from commands by default."""
    return name in PROVIDER_KEYS or bool(SECRET_NAME.search(name))


def command_environment(environ: Mapping[str, str] | None = None, allow: Iterable[str] = ()) -> dict[str, str]:
    """Return a copy of ``environ`` (``os.environ`` by default) without the secret variables
    (``is_secret_name``); names in ``allow`` (exact, case-sensitive) are kept."""
    env = os.environ if environ is None else environ
    allowed = {name.strip() for name in allow if name and name.strip()}
    return {name: value for name, value in env.items() if name in allowed or not is_secret_name(name)}


def withheld_names(environ: Mapping[str, str] | None = None, allow: Iterable[str] = ()) -> list[str]:
    """The names ``command_environment`` removes from ``environ``, sorted (for a notice)."""
    env = os.environ if environ is None else environ
    kept = command_environment(env, allow)
    return sorted(name for name in env if name not in kept)
