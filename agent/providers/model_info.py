"""Model facts from litellm's model map: context window, native reasoning, tool support."""

from __future__ import annotations

from dataclasses import dataclass

from ..config.settings import EMBEDDED_MODEL


@dataclass(frozen=True)
class ModelInfo:
    """What we know about a model. ``context_window`` is in tokens (None when unknown);
    ``known`` is False when litellm has no entry for the model (defaults were used)."""

    model: str
    context_window: int | None
    supports_reasoning: bool
    supports_tools: bool
    known: bool


def lookup_model_info(model: str, *, embedded_context: int = 4096) -> ModelInfo:
    """Return litellm's facts for ``model`` (a litellm model name). Never raises; never uses the
    network (the loader forces the local cost map). Unknown models get ``known=False``."""
    if model.startswith("embedded/") or model == EMBEDDED_MODEL:
        return ModelInfo(model, embedded_context, supports_reasoning=False, supports_tools=True, known=True)
    from .litellm_loader import load_litellm

    litellm = load_litellm()
    try:
        info = litellm.get_model_info(model)
    except Exception:
        return ModelInfo(model, None, supports_reasoning=False, supports_tools=True, known=False)
    window = info.get("max_input_tokens") or info.get("max_tokens")
    reasoning = bool(info.get("supports_reasoning"))
    tools = info.get("supports_function_calling")
    return ModelInfo(model, int(window) if window else None, supports_reasoning=reasoning,
                     supports_tools=True if tools is None else bool(tools), known=True)


def model_name_problem(model: str) -> str | None:
    """Why litellm could not route requests for ``model``, in one line, or None when it can.

    litellm must tell the provider from the name (``openai/gpt-4.1``, ``anthropic/...``,
    ``ollama/...``; a few bare OpenAI names work too); a name it cannot place fails on the first
    request. The embedded model is always fine. Imports litellm (never the network)."""
    if not model.strip():
        return "the model name is empty"
    if model.startswith("embedded/") or model == EMBEDDED_MODEL:
        return None
    from .litellm_loader import load_litellm

    litellm = load_litellm()
    try:
        litellm.get_llm_provider(model)
    except Exception:  # noqa: BLE001 - litellm raises BadRequestError (and others) for unknown names
        return (f"litellm cannot tell which provider serves {model!r}: name it as provider/model, e.g. "
                "openai/gpt-4.1, anthropic/claude-sonnet-4-5, gemini/gemini-2.5-flash, ollama/qwen3")
    return None


def token_counter_for(model: str):
    """Return ``count(text) -> tokens`` using litellm's tokenizer for ``model`` (offline: the
    loader disables tokenizer downloads). Imports litellm. Not what the budget counts with: that
    is ``agent/context/budget.py`` (the same encodings for OpenAI models, without litellm's
    1024-character chunking; kept to cross-check it in the tests)."""
    from .litellm_loader import load_litellm

    litellm = load_litellm()

    def count(text: str) -> int:
        return int(litellm.token_counter(model=model, text=text))

    return count


#: litellm providers that carry a model's reasoning in their own format (Anthropic's signed
#: thinking blocks, Gemini's thought parts): an OpenAI-style ``reasoning_content`` in the history
#: is not what they need back.
NATIVE_THINKING_PROVIDERS = frozenset({"anthropic", "bedrock", "bedrock_converse", "vertex_ai", "vertex_ai_beta",
                                       "gemini"})


def reasoning_content_travels(model: str) -> bool:
    """True when requests to ``model`` (a litellm name, ``provider/model``) take reasoning back as
    the OpenAI-style ``reasoning_content`` of assistant messages (DeepSeek, OpenAI-compatible
    servers...); False for providers with their own thinking format and for the embedded model."""
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    return provider not in NATIVE_THINKING_PROVIDERS and provider != "embedded"
