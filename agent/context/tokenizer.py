"""Token counting that never touches the network: OpenAI's tiktoken encodings loaded from files
that ship offline, else a calibrated estimate that does not undercount.

Units: *tokens* are model tokens; *characters* are ``str`` lengths (code points), never bytes.

Encodings. ``cl100k_base`` and ``o200k_base`` are tiktoken's BPE encodings. Their rank files are
bundled with litellm (``litellm/litellm_core_utils/tokenizers/``, named like tiktoken's cache:
the SHA-1 of the file's URL; litellm points ``TIKTOKEN_CACHE_DIR`` there when it is imported).
This module finds that folder with ``importlib.util.find_spec`` (litellm is not imported: its
import costs seconds), also looks in tiktoken's own cache folders (``TIKTOKEN_CACHE_DIR``,
``DATA_GYM_CACHE_DIR``, ``<tmp>/data-gym-cache``), checks the file's SHA-256 against the one
tiktoken expects, and builds the ``tiktoken.Encoding`` itself. ``tiktoken.get_encoding`` is never
called: with a missing or stale cache file it downloads, which hangs offline. Each encoding is
loaded once per process (thread-safe; cl100k takes about 0.15 s, o200k 0.3 s), on first use.

Fallback. When tiktoken or the file is missing, ``estimate_tokens`` counts pieces the way
cl100k's pre-tokenizer splits text (syllable-sized chunks of words, 1-3 digit groups,
punctuation runs, newlines, space runs, runs of non-ASCII characters), unbroken runs that look
random (base64, keys: few vowels) at 1.2 characters a token and hex runs at 1.5, plus 1.2 tokens per non-ASCII
character, times 1.05. It was calibrated on real samples (pytest output with tracebacks, logs,
JSON, Python source, git diffs, English and other prose: ``tests/agent/data/token_samples``) and
on random base64, hex, letters and UUIDs, so that it is at or above both cl100k and o200k on each
whole sample (by 5% or more) and on every 300-character slice of them, and it stayed at or above
them on every 2,000-character slice of this repository's text files; on prose and source it
overcounts by 25-45%, the price of never undercounting dense text.

Which encoding: ``encoding_for_model``; which models are OpenAI's: ``is_openai_model`` (both read
the model name only, so a scripted provider taking a model's identity counts like that model).
"""

from __future__ import annotations

import binascii
import hashlib
import importlib.util
import math
import os
import re
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

CL100K = "cl100k_base"
O200K = "o200k_base"
#: Name of the tokenizer used when no encoding can be loaded.
ESTIMATE = "estimate"

_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
_ENDOFTEXT, _FIM_PREFIX, _FIM_MIDDLE, _FIM_SUFFIX, _ENDOFPROMPT = (
    "<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|endofprompt|>")


@dataclass(frozen=True)
class _EncodingSpec:
    """What ``tiktoken_ext.openai_public`` (tiktoken 0.14, MIT) builds an encoding from; the test
    suite checks these against tiktoken's own constructors."""

    sha256: str
    pat_str: str
    special_tokens: dict[str, int]


_SPECS: dict[str, _EncodingSpec] = {
    CL100K: _EncodingSpec(
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=(r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
                 r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""),
        special_tokens={_ENDOFTEXT: 100257, _FIM_PREFIX: 100258, _FIM_MIDDLE: 100259, _FIM_SUFFIX: 100260,
                        _ENDOFPROMPT: 100276},
    ),
    O200K: _EncodingSpec(
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str="|".join([
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]),
        special_tokens={_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    ),
}

#: Bare model names (the last ``/`` segment, lower case) that are OpenAI models.
OPENAI_MODEL_PREFIXES = ("gpt-", "chatgpt-", "o1", "o3", "o4", "codex-", "ft:gpt-", "text-embedding-",
                         "computer-use-")
#: ``gpt-`` names that are not OpenAI's (EleutherAI, AI Sweden: GPT-2 style vocabularies).
_NOT_OPENAI_PREFIXES = ("gpt-j", "gpt-neo", "gpt-sw3")
#: OpenAI model names tokenized with o200k_base (tiktoken's ``MODEL_PREFIX_TO_ENCODING`` plus the
#: newer families; gpt-oss uses o200k_harmony, which is o200k_base plus special tokens). Other
#: OpenAI models (gpt-4, gpt-3.5-turbo, embeddings) and unknown Azure deployments use cl100k_base.
O200K_MODEL_PREFIXES = ("gpt-4o", "chatgpt-4o", "ft:gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4",
                        "codex-", "gpt-oss", "gpt-realtime", "gpt-audio", "computer-use-")


def _bare_name(model: str) -> str:
    return model.lower().rsplit("/", 1)[-1]


def is_openai_model(model: str | None) -> bool:
    """Whether ``model`` (a litellm model name) is tokenized with OpenAI's encodings.

    Decided from the name alone: the last ``/`` segment names an OpenAI model (``gpt-4.1``,
    ``openai/gpt-4o``, ``openrouter/openai/gpt-4o``, ``groq/openai/gpt-oss-120b``, ``o3-mini``),
    or the provider is ``azure/`` (deployment names are free text; Azure OpenAI serves OpenAI
    models). ``openai/<other name>`` is an OpenAI-compatible server running some other model
    (vLLM, LM Studio), so it is not. ``None`` or ``""`` -> False.
    """
    if not model:
        return False
    name = _bare_name(model)
    if name.startswith(OPENAI_MODEL_PREFIXES) and not name.startswith(_NOT_OPENAI_PREFIXES):
        return True
    return model.lower().startswith("azure/")


def encoding_for_model(model: str | None) -> str:
    """The encoding that counts ``model``'s tokens: ``O200K`` for OpenAI's o200k families (see
    ``O200K_MODEL_PREFIXES``), else ``CL100K`` (other OpenAI models, and the base of the estimate
    for every non-OpenAI model)."""
    if model and is_openai_model(model) and _bare_name(model).startswith(O200K_MODEL_PREFIXES):
        return O200K
    return CL100K


# ---------------------------------------------------------------------------------- loading
_lock = threading.Lock()
_encodings: dict[str, Any] = {}  # name -> tiktoken.Encoding, or None when it cannot be loaded
_problems: dict[str, str] = {}  # name -> why it could not be loaded


def bundled_tokenizer_dir() -> Path | None:
    """litellm's folder of bundled tokenizer files, found without importing litellm; ``None``
    when litellm is not installed or has no such folder."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        folder = Path(location) / "litellm_core_utils" / "tokenizers"
        if folder.is_dir():
            return folder
    return None


def _candidate_files(name: str) -> list[Path]:
    """Where the rank file of encoding ``name`` may be, most trusted first (tiktoken's cache name:
    the SHA-1 of the file's URL)."""
    key = hashlib.sha1(_URL.format(name).encode()).hexdigest()
    folders = [bundled_tokenizer_dir()]
    for var in ("CUSTOM_TIKTOKEN_CACHE_DIR", "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(var):
            folders.append(Path(os.environ[var]))
    folders.append(Path(tempfile.gettempdir()) / "data-gym-cache")
    seen: set[Path] = set()
    out = []
    for folder in folders:
        if folder is not None and folder not in seen:
            seen.add(folder)
            out.append(folder / key)
    return out


def _import_tiktoken() -> Any:
    import tiktoken

    return tiktoken


#: Bytes of a rank file parsed per step of ``parse_ranks`` (about 4 ms of work each).
PARSE_STEP_BYTES = 1 << 16


def parse_ranks(data: bytes) -> dict[bytes, int]:
    """The ``{token bytes: rank}`` of a tiktoken rank file (lines of ``BASE64 RANK``), what
    ``tiktoken.load.load_tiktoken_bpe`` builds, with C-level splitting and decoding (about half
    the time of a per-line loop: o200k's 200 000 lines in 0.25 s instead of 0.45 s). It runs off
    the event loop but shares the GIL with it, and one C call holds the GIL to its end: so the
    file is parsed ``PARSE_STEP_BYTES`` at a time (one step at once held it 65 ms to split and
    140 ms to decode; a step holds it about 4 ms). Raises ``ValueError`` for a malformed file."""
    ranks: dict[bytes, int] = {}
    start, size = 0, len(data)
    while start < size:
        end = data.find(b"\n", min(size, start + PARSE_STEP_BYTES))
        end = size if end < 0 else end + 1
        fields = data[start:end].split()
        if len(fields) % 2:
            raise ValueError("a rank file line without a rank")
        ranks.update(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2])))
        start = end
    return ranks


def _load(name: str) -> Any:
    """Build encoding ``name`` from a local rank file; raise ``LookupError``/``ImportError`` with
    the reason when that is not possible. Never uses the network."""
    spec = _SPECS[name]
    tiktoken = _import_tiktoken()
    for path in _candidate_files(name):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() != spec.sha256:
            continue  # a partial or foreign file: tiktoken would re-download it; skip it
        ranks = parse_ranks(data)
        encoding = tiktoken.Encoding(name, pat_str=spec.pat_str, mergeable_ranks=ranks,
                                     special_tokens=dict(spec.special_tokens))
        # The encoder (Rust) holds its own copy of the ranks; the Python dict is kept only to
        # pickle the Encoding, which we never do: 28 MB for o200k (issue 18's memory goal).
        encoding._mergeable_ranks = {}
        return encoding
    raise LookupError(f"no {name} rank file with the expected hash in "
                      + ", ".join(str(p.parent) for p in _candidate_files(name)))


def load_encoding(name: str) -> Any:
    """The ``tiktoken.Encoding`` named ``name`` (``CL100K`` or ``O200K``), loaded on first call
    and kept for the process; ``None`` when tiktoken is not installed or no verified rank file is
    found (``encoding_problem(name)`` says why). Thread-safe; never raises for those cases.
    Raises ``KeyError`` for an encoding name this module does not know."""
    if name in _encodings:
        return _encodings[name]
    if name not in _SPECS:
        raise KeyError(name)
    with _lock:
        if name not in _encodings:
            try:
                _encodings[name] = _load(name)
            except Exception as exc:  # ImportError, LookupError, a corrupt file: count without it
                _encodings[name] = None
                _problems[name] = f"{type(exc).__name__}: {exc}"
        return _encodings[name]


def encoding_problem(name: str) -> str | None:
    """Why encoding ``name`` could not be loaded (after ``load_encoding`` tried), else ``None``."""
    return _problems.get(name)


def clear_encoding_cache() -> None:
    """Forget loaded encodings and cached tokenizers (tests that simulate a missing tiktoken)."""
    with _lock:
        _encodings.clear()
        _problems.clear()
        _tokenizers.clear()


# ---------------------------------------------------------------------------------- estimate
_PUNCT = r"""!-/:-@\[-`{-~"""
_CONSONANT = "bcdfghj-np-tv-z"
#: One match = one token of the estimate; long runs are split into several matches.
_PIECE = re.compile(
    r"'(?:[sdmtSDMT]|ll|ve|re)"                                           # contractions
    rf"| ?[A-Z]?(?:[{_CONSONANT}]{{0,2}}[aeiouy]{{1,2}}){{1,2}}[{_CONSONANT}]{{0,2}}"  # 1-2 syllables
    rf"| ?[A-Z]?[{_CONSONANT}]{{1,2}}"                                     # consonants left over
    r"| ?[A-Z]{1,3}"                                                      # capitals
    r"|[0-9]{1,3}"                                                        # digits: groups of 1-3, as in cl100k
    rf"| ?[{_PUNCT}]{{1,3}}"                                               # punctuation, 3 characters a token at most
    r"|\n"                                                                # every newline
    r"|[^\S\n]{1,16}"                                                     # other whitespace runs
    r"|[^\x00-\x7f]+"                                                     # a run of non-ASCII characters
)
#: Unbroken runs that may be random (base64, keys, hashes): counted at RANDOM_RUN_CHARS characters
#: per token when fewer than RANDOM_VOWEL_SHARE of their letters are vowels (English and code: 35-40%,
#: random letters and base64: about 19%; random lower-case text runs at 1.8 characters per cl100k
#: token, base64 at 1.4).
_RUN = re.compile(r"[A-Za-z0-9+/=_\-]{16,}")
_HEX = re.compile(r"[0-9a-f]+|[0-9A-F]+")
_VOWELS = frozenset("aeiouAEIOU")
RANDOM_VOWEL_SHARE = 0.25
RANDOM_RUN_CHARS = 1.2
#: Hex runs (hashes, ids) at this many characters per token (random hex: 1.76 per cl100k token).
HEX_RUN_CHARS = 1.5
#: Tokens per non-ASCII character on top of its run's piece (cl100k: up to 1.08 for Hebrew and
#: Devanagari, 0.8-0.9 for CJK, Greek and Hangul, 0.4 for Cyrillic).
NON_ASCII_TOKENS = 1.2
#: Final multiplier of the estimate (headroom for text unlike the calibration samples).
ESTIMATE_FACTOR = 1.05


def estimate_tokens(text: str) -> int:
    """Calibrated token estimate of ``text`` (characters) that does not undercount cl100k/o200k
    on dense text (module docstring). About 2 ms per 20,000 characters. 0 for ``""``."""
    if not text:
        return 0
    pieces: float = len(_PIECE.findall(text))
    for match in _RUN.finditer(text):
        run = match.group()
        if _HEX.fullmatch(run):
            chars_per_token = HEX_RUN_CHARS
        else:
            letters = sum(1 for ch in run if ch.isalpha())
            if not letters or sum(1 for ch in run if ch in _VOWELS) >= RANDOM_VOWEL_SHARE * letters:
                continue
            chars_per_token = RANDOM_RUN_CHARS
        pieces += max(0.0, len(run) / chars_per_token - len(_PIECE.findall(run)))
    non_ascii = len(text) - len(text.encode("ascii", "ignore"))
    return math.ceil((pieces + NON_ASCII_TOKENS * non_ascii) * ESTIMATE_FACTOR)


# ---------------------------------------------------------------------------------- tokenizers
@dataclass(frozen=True)
class Tokenizer:
    """A text counter. ``count(text) -> tokens`` (never raises for a ``str``); ``name``:
    ``CL100K``, ``O200K`` or ``ESTIMATE``; ``exact``: counts are the encoding's own (False for the
    estimate). Counts ignore special-token syntax (``<|endoftext|>`` in a text is counted as text)."""

    name: str
    count: Callable[[str], int]
    exact: bool


_tokenizers: dict[str, Tokenizer] = {}
ESTIMATOR = Tokenizer(ESTIMATE, estimate_tokens, exact=False)


def tokenizer_for_encoding(name: str) -> Tokenizer:
    """The ``Tokenizer`` of encoding ``name``; ``ESTIMATOR`` when it cannot be loaded. For ``O200K``
    without its file, cl100k is used times 1.05 (o200k counted up to 2% more than cl100k on the
    calibration samples), flagged not exact."""
    cached = _tokenizers.get(name)
    if cached is not None:
        return cached
    encoding = load_encoding(name)
    if encoding is not None:
        encode = encoding.encode_ordinary
        tokenizer = Tokenizer(name, lambda text: len(encode(text)) if text else 0, exact=True)
    elif name == O200K and load_encoding(CL100K) is not None:
        cl100k = tokenizer_for_encoding(CL100K).count
        tokenizer = Tokenizer(CL100K, lambda text: math.ceil(cl100k(text) * 1.05), exact=False)
    else:
        tokenizer = ESTIMATOR
    _tokenizers[name] = tokenizer
    return tokenizer


def tokenizer_for_model(model: str | None) -> Tokenizer:
    """The ``Tokenizer`` for ``model``: its OpenAI encoding (``encoding_for_model``) when one loads,
    else the estimate. Non-OpenAI models get cl100k here; the caller applies their margin."""
    return tokenizer_for_encoding(encoding_for_model(model))


__all__ = [
    "CL100K", "ESTIMATE", "ESTIMATOR", "O200K", "O200K_MODEL_PREFIXES", "OPENAI_MODEL_PREFIXES", "Tokenizer",
    "bundled_tokenizer_dir", "clear_encoding_cache", "encoding_for_model", "encoding_problem", "estimate_tokens",
    "is_openai_model", "load_encoding", "tokenizer_for_encoding", "tokenizer_for_model",
]
