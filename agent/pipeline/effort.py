"""The effort hint of a turn (``reasoning.effort``, ``reasoning.send_effort``).

``choose_effort(kind, task, configured)``: ``auto`` picks by the kind of work (the planning pass
and refine: ``high``; a short question that reads like a read-only one: ``low``; otherwise
``medium``); any other value is used as it is. ``accepts_effort`` says whether the hint may be
sent to a model. ``EffortKeeper`` holds the hint fixed between compaction boundaries for models
whose prompt cache depends on it (Anthropic's thinking budget).
"""

from __future__ import annotations

import re
from typing import Any, Literal

TurnKind = Literal["plan", "act", "refine", "reflexion"]

#: At most this many characters make a "short" question.
SHORT_QUESTION_CHARS = 200
#: Words that ask for a change: such a prompt is never a read-only question.
_CHANGE_WORDS = re.compile(
    r"\b(fix|add|implement|write|create|change|edit|refactor|rename|remove|delete|update|make|build|run|"
    r"install|commit|replace|move|port|migrate|convert|generate)\b", re.IGNORECASE)
_QUESTION_START = re.compile(r"^\s*(what|why|how|where|which|who|when|is|are|does|do|can|explain|show|list|describe)\b",
                             re.IGNORECASE)


def is_short_question(task: str) -> bool:
    """True when ``task`` reads like a short read-only question: at most ``SHORT_QUESTION_CHARS``
    characters, a question (ends with ``?`` or starts with what/why/how/explain...) and no word
    that asks for a change."""
    text = task.strip()
    if not text or len(text) > SHORT_QUESTION_CHARS or _CHANGE_WORDS.search(text):
        return False
    return text.endswith("?") or bool(_QUESTION_START.match(text))


def choose_effort(kind: TurnKind, task: str, configured: str) -> str:
    """The effort (``low``, ``medium``, ``high``) for a turn of ``kind`` on ``task`` when the
    setting is ``configured`` (``auto`` or one of the three)."""
    if configured != "auto":
        return configured
    if kind in ("plan", "refine"):
        return "high"
    if kind == "act" and is_short_question(task):
        return "low"
    return "medium"


def accepts_effort(model: str, supports_reasoning: bool, send_effort: str, *, ask_litellm: bool) -> bool:
    """Whether the effort hint may go to ``model``: ``send_effort`` ``on`` always, ``off`` never;
    ``auto`` when the model info says it reasons (``supports_reasoning``) or, with
    ``ask_litellm``, ``litellm.supports_reasoning`` says so. litellm's list of a model's OpenAI
    parameters is not asked: it names ``reasoning_effort`` for models that reject it (gpt-4.1,
    gpt-4o-mini). Never raises."""
    if send_effort == "on":
        return True
    if send_effort == "off" or model.startswith("embedded/"):
        return False
    if supports_reasoning:
        return True
    if not ask_litellm:
        return False
    try:
        from ..providers.litellm_loader import load_litellm

        litellm: Any = load_litellm()
        return bool(litellm.supports_reasoning(model=model))
    except Exception:  # noqa: BLE001 - an unknown model takes no hint
        return False


def is_cache_sensitive(model: str) -> bool:
    """True for models whose prompt cache breaks when the thinking budget changes (Anthropic)."""
    lowered = model.lower()
    return lowered.startswith(("anthropic/", "bedrock/anthropic", "vertex_ai/claude")) or "claude" in lowered


class EffortKeeper:
    """Keeps the hint of a cache-sensitive model fixed between compaction boundaries.

    ``settle(model, wanted, boundary)`` returns the effort to send: ``wanted``, except for a
    cache-sensitive model whose last hint was chosen at the same ``boundary`` (any value that
    changes at a compaction, e.g. the compactor's mark): then that earlier hint.
    """

    def __init__(self) -> None:
        self._last: tuple[str, Any, str] | None = None  # (model, boundary, effort)

    def settle(self, model: str, wanted: str | None, boundary: Any) -> str | None:
        """See the class docstring. ``wanted`` None (nothing to send) is returned as it is."""
        if wanted is None or not is_cache_sensitive(model):
            return wanted
        if self._last is not None and self._last[0] == model and self._last[1] == boundary:
            return self._last[2]
        self._last = (model, boundary, wanted)
        return wanted
