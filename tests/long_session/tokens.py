"""Token counting for the judge, independent of the code under test.

Units: *tokens* are model tokens of a tiktoken encoding; *characters* are ``str`` lengths.

The encodings are loaded offline from the tiktoken files litellm bundles
(``litellm/litellm_core_utils/tokenizers/``, found with ``importlib.util.find_spec`` so litellm
itself is not imported): ``o200k_base`` for the GPT-4o/4.1/o-series families, ``cl100k_base`` for
the rest. tiktoken never downloads here: its cache folder is pointed at those files while the
encoding loads. When neither tiktoken nor the files are available the counter falls back to a
conservative estimate, ``ceil(characters / FALLBACK_CHARS_PER_TOKEN)`` (2.4 characters per token,
the dense end of what logs and test output measure), and says so in ``TokenCounter.method``.

A request is counted the way OpenAI's cookbook counts chat messages: 3 tokens of framing per
message plus the tokens of its role, text content, reasoning content (when the message carries
it), tool call ids, names and argument strings; 3 tokens priming the reply; the tool schemas as
compact JSON text (larger than the provider's internal rendering of them, so never an
undercount).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

#: Characters per token of the fallback estimate (dense text: logs, test output, numbers).
FALLBACK_CHARS_PER_TOKEN = 2.4
#: Framing tokens per message and for the reply priming (OpenAI cookbook).
TOKENS_PER_MESSAGE = 3
REPLY_PRIMING_TOKENS = 3


def encoding_for(model: str) -> str:
    """Return the tiktoken encoding name for a litellm ``model`` name (``openai/gpt-4.1`` ->
    ``o200k_base``; anything else not of the 4o/4.1/o-series -> ``cl100k_base``)."""
    name = model.lower().rsplit("/", 1)[-1]
    if name.startswith(("gpt-4o", "gpt-4.1", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")):
        return "o200k_base"
    return "cl100k_base"


def bundled_tokenizer_dir() -> Path | None:
    """The folder of tiktoken files shipped inside litellm, or ``None`` when not installed."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers"
    return folder if folder.is_dir() else None


@lru_cache(maxsize=4)
def _load(encoding: str):
    """Load ``encoding`` offline, or return ``None`` (never downloads)."""
    folder = bundled_tokenizer_dir()
    if folder is None:
        return None
    try:
        import tiktoken
    except ImportError:
        return None
    saved = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    try:
        return tiktoken.get_encoding(encoding)
    except Exception:  # a missing or mismatched file: tiktoken would otherwise download
        return None
    finally:
        if saved is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = saved


class TokenCounter:
    """Counts tokens of text and of whole requests for one model.

    ``method`` says how: ``"tiktoken o200k_base"`` (real) or ``"estimate chars/2.4"`` (fallback);
    ``exact`` is True for a real tokenizer.
    """

    def __init__(self, model: str) -> None:
        self.encoding_name = encoding_for(model)
        self._encoding = _load(self.encoding_name)
        self.exact = self._encoding is not None
        self.method = (f"tiktoken {self.encoding_name}" if self.exact
                       else f"estimate chars/{FALLBACK_CHARS_PER_TOKEN} (no offline tokenizer found)")
        self._cache: dict[str, int] = {}

    def text(self, text: str) -> int:
        """Tokens of ``text`` (0 for the empty string)."""
        if not text:
            return 0
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        if self._encoding is not None:
            count = len(self._encoding.encode(text, disallowed_special=()))
        else:
            count = math.ceil(len(text) / FALLBACK_CHARS_PER_TOKEN)
        if len(self._cache) < 200_000:
            self._cache[text] = count
        return count

    def message(self, message: dict[str, Any]) -> int:
        """Tokens of one OpenAI-format message dict as sent (see the module docstring)."""
        total = TOKENS_PER_MESSAGE + self.text(str(message.get("role") or ""))
        total += self.text(content_text(message))
        if message.get("reasoning_content"):
            total += self.text(str(message["reasoning_content"]))
        if message.get("name"):
            total += 1 + self.text(str(message["name"]))
        if message.get("tool_call_id"):
            total += self.text(str(message["tool_call_id"]))
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            total += self.text(str(call.get("id") or "")) + self.text(str(function.get("name") or ""))
            arguments = function.get("arguments")
            total += self.text(arguments if isinstance(arguments, str) else json.dumps(arguments))
        return total

    def request(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> int:
        """Tokens of a whole request: every message, the reply priming and the tool schemas."""
        total = REPLY_PRIMING_TOKENS + sum(self.message(m) for m in messages)
        if tools:
            total += self.text(json.dumps(list(tools), separators=(",", ":")))
        return total


def content_text(message: dict[str, Any]) -> str:
    """The text of a message's ``content`` (a string, or the text parts of a list; ``""`` if none)."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text") or "") for part in content if isinstance(part, dict))
    return str(content)
