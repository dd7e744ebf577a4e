"""Redacting secrets from what the app writes to disk (journal, saved outputs, logs, history).

Two kinds of finding are replaced by ``[redacted LABEL]``:

- by value: the values of environment variables with secret-looking names (``secret_values``:
  the provider keys such as ``OPENAI_API_KEY``, any ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``...),
  found anywhere, also inside a JSON string;
- by pattern: key formats and credentials (``patterns``: detect-secrets' regex plugins plus ours).

Only what goes to disk is redacted; what the model sees in the live session is unchanged.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
from typing import Any, Mapping

from .patterns import OWN_PATTERNS, all_needles, compile_patterns, detect_secrets_patterns
from .scan import NeedleSet, apply_spans, find_spans, re2

#: Environment variable names whose values are secrets (case-insensitive search in the name).
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
#: Values shorter than this (characters) are not redacted by value (too many false matches).
MIN_SECRET_LEN = 8


def secret_values(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return ``{value: name}`` for environment variables whose name looks secret (``SECRET_NAME``)
    and whose value has at least ``MIN_SECRET_LEN`` characters (``os.environ`` by default)."""
    env = os.environ if environ is None else environ
    return {value: name for name, value in env.items()
            if value and len(value) >= MIN_SECRET_LEN and SECRET_NAME.search(name)}


class Redactor:
    """Replaces secrets in text (``text``), bytes (``data``) and JSON-like values (``value``).

    ``environ``: where the secret values come from (``os.environ`` by default, read once now);
    ``extra``: more ``{value: label}`` to redact (e.g. a key given in the config). Thread-safe
    (immutable after construction)."""

    def __init__(self, environ: Mapping[str, str] | None = None, extra: Mapping[str, str] | None = None) -> None:
        values = dict(secret_values(environ))
        values.update({v: k for v, k in (extra or {}).items() if v and len(v) >= MIN_SECRET_LEN})
        self._values = values
        ordered = sorted(values, key=len, reverse=True)
        self._value_re = re.compile("|".join(re.escape(v) for v in ordered)) if ordered else None
        self._value_re_bytes = (re.compile(b"|".join(re.escape(v.encode("utf-8", "surrogateescape"))
                                                      for v in ordered)) if ordered else None)
        escaped = {json.dumps(v, ensure_ascii=False)[1:-1]: n for v, n in values.items()}
        escaped = {e: n for e, n in escaped.items() if e not in values}
        self._escaped = escaped  # values as they appear inside a JSON string, when that differs
        self._value_bytes = {v.encode("utf-8", "surrogateescape"): n for v, n in values.items()}
        self._needles = _needle_set(tuple(self._value_bytes))
        #: No secret value spans lines: like every pattern but the private key block, each
        #: finding then lies within one line (``StreamRedactor`` relies on it to skip clean data).
        self.line_local = not any(b"\n" in v for v in self._value_bytes)

    @property
    def _patterns(self) -> list:
        """The compiled patterns (built on first use: importing detect-secrets' plugins takes
        about 150 ms, which data holding no needle never pays)."""
        return _compiled_patterns()

    # -- text ------------------------------------------------------------------------------
    def text(self, text: str) -> str:
        """``text`` with every secret replaced by ``[redacted LABEL]``."""
        if not text:
            return text
        if self._value_re is not None:
            text = self._value_re.sub(lambda m: f"[redacted {self._values[m.group(0)]}]", text)
        for escaped, name in self._escaped.items():
            if escaped in text:
                text = text.replace(escaped, f"[redacted {name}]")
        spans = find_spans(text, [(p, c) for p, c, _ in self._patterns], lambda label: f"[redacted {label}]")
        return apply_spans(text, spans)

    def data(self, data: bytes | bytearray | memoryview) -> bytes | bytearray | memoryview:
        """Raw bytes (a saved tool output) with every secret replaced (the replacement is ASCII).

        Returns ``data`` itself (any bytes-like object, not copied) when it holds no needle of a
        pattern and no secret value, which one RE2 pass over its bytes tells; else new ``bytes``.
        """
        if not data:
            return data
        found = self._needles.present(data) if self._needles is not None else None
        if found is not None and not found:
            return data  # every pattern needs one of its needles
        data = bytes(data)
        values = self._value_bytes
        if self._value_re_bytes is not None and (found is None or any((v, True) in found for v in values)):
            replaced = self._value_re_bytes.sub(lambda m: f"[redacted {values[m.group(0)]}]".encode(), data)
            if replaced != data:
                data = replaced
                found = self._needles.present(data) if self._needles is not None else None
        spans = find_spans(data, [(p, c) for p, _, c in self._patterns],
                           lambda label: f"[redacted {label}]".encode(), found=found)
        return apply_spans(data, spans)

    def clean(self, data: bytes | bytearray | memoryview) -> bool:
        """Whether ``data`` (raw bytes) certainly holds nothing to redact: no needle of any
        pattern, no secret value and no ``PRIVATE KEY`` (so no edge of a key block), as one RE2
        pass over its bytes tells (about 1.7 ms per MiB). ``False`` also when that cannot be
        told cheaply (no RE2): then ``data()`` decides."""
        return self._needles is not None and not self._needles.present(data)

    def value(self, value: Any) -> Any:
        """A JSON-like value (dicts, lists, strings...) with every string in it redacted; keys are
        kept. Other values are returned as they are."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(v) for v in value]
        return value


@functools.lru_cache(maxsize=1)
def _compiled_patterns():
    return compile_patterns(list(OWN_PATTERNS) + detect_secrets_patterns())


def _needle_set(values: tuple[bytes, ...]) -> NeedleSet | None:
    """One ``NeedleSet`` of every pattern's needles (``patterns.all_needles``), the secret values
    (exact) and ``PRIVATE KEY`` (exact, for ``Redactor.clean``); ``None`` when RE2 is missing or
    cannot take them, or a pattern has no needles (it must then run on every text)."""
    needles = all_needles()
    if re2 is None or needles is None:
        return None
    try:
        return NeedleSet(needles + [(v, True) for v in values] + [("PRIVATE KEY", True)])
    except (ValueError, re2.error):
        return None


_default_lock = threading.Lock()
_default: tuple[frozenset, Redactor] | None = None


def default_redactor() -> Redactor:
    """A ``Redactor`` for the current ``os.environ`` (rebuilt when its secret values change;
    the compiled patterns are shared)."""
    global _default
    values = frozenset(secret_values().items())
    with _default_lock:
        if _default is None or _default[0] != values:
            _default = (values, Redactor())
        return _default[1]


def redact_text(text: str) -> str:
    """``text`` redacted by the process-wide redactor (for logs and crash files)."""
    return default_redactor().text(text)
