"""Import litellm once, offline-safe and quiet.

litellm costs about 4 s to import, so it is imported lazily (the TUI does it in a worker after the
first paint). Before the import we set ``LITELLM_LOCAL_MODEL_COST_MAP=True`` (no fetch of the model
cost map) and ``LITELLM_OFFLINE_MODE`` / ``HF_HUB_OFFLINE`` (no tokenizer downloads: without them
the token counter for llama-named models waits 23-100 s on a Hugging Face download); after it,
``suppress_debug_info`` (an unknown provider would otherwise print over the Textual screen) and
``disable_hf_tokenizer_download``. Values the user already set in the environment are kept.
"""

from __future__ import annotations

import os
import threading
from types import ModuleType

_lock = threading.Lock()
_module: ModuleType | None = None

OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
    "HF_HUB_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


def load_litellm() -> ModuleType:
    """Return the ``litellm`` module, importing and configuring it on first call (thread-safe).

    Also registers the ``embedded/`` custom provider when its module is importable.
    Raises ``ImportError`` if litellm is not installed.
    """
    global _module
    with _lock:
        if _module is not None:
            return _module
        for key, value in OFFLINE_ENV.items():
            os.environ.setdefault(key, value)
        import litellm

        litellm.suppress_debug_info = True
        litellm.drop_params = True
        litellm.telemetry = False
        if hasattr(litellm, "disable_hf_tokenizer_download"):
            litellm.disable_hf_tokenizer_download = True
        try:
            from .embedded.provider import register_embedded_provider
        except ImportError:  # pragma: no cover - the module ships with the package
            pass
        else:
            register_embedded_provider()
        _module = litellm
        return litellm


def is_loaded() -> bool:
    """True once ``load_litellm`` has finished."""
    return _module is not None
