"""Import litellm once, offline-safe and quiet.

litellm costs about 4 s to import, so it is imported lazily (the TUI does it in a worker after the
first paint). Before the import we set ``LITELLM_LOCAL_MODEL_COST_MAP=True`` (no fetch of the model
cost map) and ``LITELLM_OFFLINE_MODE`` / ``HF_HUB_OFFLINE`` (no tokenizer downloads: without them
the token counter for llama-named models waits 23-100 s on a Hugging Face download); after it,
``suppress_debug_info`` (an unknown provider would otherwise print over the Textual screen) and
``disable_hf_tokenizer_download``. Values the user already set in the environment are kept.

Streaming cost (issue 18): litellm logs every streamed chunk by default (a thread pool task that
runs ``asyncio.run()`` per chunk: a third of the CPU of a stream). We register none of its logging
callbacks, so ``disable_streaming_logging`` is set. It also prices every streamed call as it
starts, counting the whole request with its own tokenizer (2-3 s the first time, to load the
encoding; then a walk of the whole history per call) only to put a cost in the stream's hidden
params, which nothing of ours reads (``agent/observability/pricing.py`` prices from usage):
``_skip_stream_pricing`` returns no cost for a stream instead.
``start_background_import`` begins the import in a daemon thread at process start, so the first
message after start-up waits less for it; automatic full garbage collections are paused while it
runs (``agent.gc_pause``).
"""

from __future__ import annotations

import os
import threading
from types import ModuleType
from typing import Any

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
        litellm.disable_streaming_logging = True  # no per-chunk success logging (we log ourselves)
        if hasattr(litellm, "disable_hf_tokenizer_download"):
            litellm.disable_hf_tokenizer_download = True
        _skip_stream_pricing()
        try:
            from .embedded.provider import register_embedded_provider
        except ImportError:  # pragma: no cover - the module ships with the package
            pass
        else:
            register_embedded_provider()
        _module = litellm
        return litellm


def _skip_stream_pricing() -> None:
    """Make litellm's ``Logging.response_cost_calculator`` return None for a stream (module
    docstring); any other result is priced as before. Does nothing when litellm's internals moved."""
    try:
        from litellm.litellm_core_utils.litellm_logging import Logging
        from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper
    except ImportError:  # pragma: no cover - another litellm layout: keep its behaviour
        return
    original = Logging.response_cost_calculator
    if getattr(original, "_opencli_stream_skip", False):
        return

    def response_cost_calculator(self: Any, result: object, *args: Any, **kwargs: Any) -> Any:
        if isinstance(result, CustomStreamWrapper):
            return None
        return original(self, result, *args, **kwargs)

    response_cost_calculator._opencli_stream_skip = True  # type: ignore[attr-defined]
    Logging.response_cost_calculator = response_cost_calculator  # type: ignore[method-assign]


def start_background_import() -> threading.Thread:
    """Start ``load_litellm`` in a daemon thread and return the thread (it swallows ImportError:
    the caller's own ``load_litellm`` call reports it). A later ``load_litellm`` waits for it."""

    def run() -> None:
        from ..gc_pause import pause_full_collections, resume_full_collections

        # The import makes ~800 000 objects; each automatic full collection on the way re-scans
        # all of them with the GIL held (0.1-0.2 s stalls of the UI, one a second): none until
        # it is done, then its objects are frozen out of the collector's sight.
        pause_full_collections()
        try:
            load_litellm()
        except Exception:  # noqa: BLE001 - reported by the next load_litellm() call
            pass
        finally:
            resume_full_collections()

    thread = threading.Thread(target=run, name="opencli-litellm-import", daemon=True)
    thread.start()
    return thread


def is_loaded() -> bool:
    """True once ``load_litellm`` has finished."""
    return _module is not None
