"""The secret patterns: detect-secrets' regex plugins (pattern detectors only) plus a few of ours.

detect-secrets (Yelp, Apache-2.0) keeps a maintained list of key formats as the ``denylist`` of
its ``RegexBasedDetector`` plugins. We take those regexes from the installed package, for the
plugins named in ``DETECT_SECRETS_PLUGINS``; the entropy plugins (they flag git SHAs and hashes),
the keyword plugin (its per-file-type heuristics are for source scanning) and the public-IP and
Artifactory plugins (they match ordinary words and addresses) are left out. Ours cover what those
miss: any ``sk-...`` key, private key blocks whole, URL passwords, ``NAME=value`` lines of
secret-named variables and quoted ``"password": "..."`` values. When detect-secrets is not
installed, ours alone are used.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass

#: ``module.ClassName`` of the detect-secrets plugins whose regexes are used.
DETECT_SECRETS_PLUGINS = (
    "aws.AWSKeyDetector", "azure_storage_key.AzureStorageKeyDetector", "basic_auth.BasicAuthDetector",
    "discord.DiscordBotTokenDetector", "github_token.GitHubTokenDetector", "gitlab_token.GitLabTokenDetector",
    "jwt.JwtTokenDetector", "mailchimp.MailchimpDetector", "npm.NpmDetector", "openai.OpenAIDetector",
    "pypi_token.PypiTokenDetector", "sendgrid.SendGridDetector", "slack.SlackDetector",
    "square_oauth.SquareOAuthDetector", "stripe.StripeDetector", "twilio.TwilioKeyDetector",
)

_NAME = r"[A-Za-z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL)[A-Za-z0-9_]*"


@dataclass(frozen=True)
class SecretPattern:
    """One pattern: ``label`` (shown in the replacement), ``regex`` (str form) and ``group``: the
    group holding the secret (0 = the whole match, which is replaced; else only that group)."""

    label: str
    regex: str
    group: int = 0
    #: Lowercase strings one of which every match contains: the regex is skipped for a text that
    #: has none of them (a cheap ``in`` test instead of a regex scan). Empty: always run.
    needles: tuple[str, ...] = ()
    #: Matches may span lines (the pattern then scans the whole text when a needle occurs).
    multiline: bool = False
    #: ``needles`` are looked for in the text as it is, not lower-cased (upper-case names).
    exact_needles: bool = False
    #: Lowercase strings one of which the text must contain besides ``needles`` (checked with
    #: ``in``, not used to pick lines).
    requires: tuple[str, ...] = ()
    #: The regex is matched against the lower-cased text (it is written in lower case; faster
    #: than ``(?i)``); the spans found apply to the text as it is.
    on_lowered: bool = False


#: Our own patterns (applied before detect-secrets' ones).
_KEYWORDS = ("pass", "secret", "key", "token", "credential")

OWN_PATTERNS = (
    SecretPattern("private key", r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
                                 r"[\s\S]{0,20000}?-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----", 0,
                  ("private key",), multiline=True),
    SecretPattern("URL password", r"://[^\s:/?#@\"'<>]{1,200}:([^\s/?#@\"'<>]{1,200})@", 1, ("://",)),
    SecretPattern("API key", r"\bsk-(?:ant-|proj-|or-v1-)?[A-Za-z0-9_-]{20,}", 0, ("sk-",)),
    SecretPattern("AWS key", r"\b(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}\b", 0,
                  ("a3t", "abia", "acca", "akia", "asia")),
    SecretPattern("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9_]{36,}|github_pat_[A-Za-z0-9_]{22,})", 0,
                  ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    SecretPattern("secret variable", r"(?<![A-Za-z0-9_])" + _NAME + r"=[\"']?((?=[^\s\"']*[A-Za-z])[^\s\"']{6,})", 1,
                  ("PASS", "SECRET", "KEY", "TOKEN", "CREDENTIAL"), exact_needles=True),
    SecretPattern("secret value", r"(?:password|passwd|secret|api_?key|access_?token|auth_?token)[\"']?\s*[:=]\s*"
                                  r"[\"']([^\"'\s]{6,})[\"']", 1,
                  ('"', "'"), requires=_KEYWORDS,
                  on_lowered=True),
)

#: ``needles`` of detect-secrets' plugins (by class name; an upper-case tuple is matched exactly);
#: the others always run.
_GITLAB = ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "gr1348941", "glcbt-", "glimt-", "glptt-", "glagent-", "gloas-")
PLUGIN_NEEDLES = {
    "AWSKeyDetector": ("a3t", "abia", "acca", "akia", "asia", "aws"), "AzureStorageKeyDetector": ("accountkey=",),
    "BasicAuthDetector": ("://",), "GitHubTokenDetector": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "GitLabTokenDetector": _GITLAB, "JwtTokenDetector": ("eyj",), "MailchimpDetector": ("-us",),
    "NpmDetector": ("_authtoken",), "OpenAIDetector": ("t3blbkfj",), "PypiTokenDetector": ("pypi-",),
    "SendGridDetector": ("sg.",), "SlackDetector": ("xox", "hooks.slack.com"), "SquareOAuthDetector": ("sq0csp-",),
    "StripeDetector": ("k_live_",), "TwilioKeyDetector": ("AC", "SK"), "DiscordBotTokenDetector": (".",),
}


def detect_secrets_patterns() -> list[SecretPattern]:
    """The regexes of ``DETECT_SECRETS_PLUGINS`` from the installed detect-secrets (empty when it
    is not installed). Each keeps its first group as the secret when it has one."""
    try:
        importlib.import_module("detect_secrets")
    except ImportError:
        return []
    found: list[SecretPattern] = []
    for name in DETECT_SECRETS_PLUGINS:
        module_name, class_name = name.rsplit(".", 1)
        try:
            plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module_name}"), class_name)()
            denylist = list(plugin.denylist)
        except Exception:  # noqa: BLE001 - a plugin renamed in another version is skipped
            continue
        label = getattr(plugin, "secret_type", class_name)
        needles, exact = _plugin_needles(class_name)
        for compiled in denylist:
            regex = ("(?i)" if compiled.flags & re.IGNORECASE else "") + compiled.pattern
            found.append(SecretPattern(label, regex, 1 if compiled.groups else 0, needles, exact_needles=exact))
    return found


def _plugin_needles(class_name: str) -> tuple[tuple[str, ...], bool]:
    """A detect-secrets plugin's ``needles`` and whether they are exact (all upper-case)."""
    needles = PLUGIN_NEEDLES.get(class_name, ())
    return needles, bool(needles) and all(n.isupper() for n in needles)


def all_needles() -> list[tuple[str, bool]] | None:
    """The ``(needle, exact)`` pairs of every pattern that ``OWN_PATTERNS`` and
    ``detect_secrets_patterns()`` can give (its ``needles`` and ``requires``), known without
    importing detect-secrets, so data holding none of them can skip the patterns altogether.
    ``None`` when some pattern has neither (it must run on every text)."""
    pairs: list[tuple[str, bool]] = []
    for pattern in OWN_PATTERNS:
        if not pattern.needles and not pattern.requires:
            return None
        pairs += [(n, pattern.exact_needles) for n in pattern.needles] + [(n, False) for n in pattern.requires]
    for name in DETECT_SECRETS_PLUGINS:
        needles, exact = _plugin_needles(name.rsplit(".", 1)[1])
        if not needles:
            return None
        pairs += [(n, exact) for n in needles]
    return pairs


def compile_patterns(patterns: list[SecretPattern]) -> list[tuple[SecretPattern, re.Pattern[str], re.Pattern[bytes]]]:
    """Each pattern compiled for text and for bytes (the saved outputs are redacted as bytes)."""
    out = []
    for pattern in patterns:
        try:
            text = re.compile(pattern.regex)
            raw = re.compile(pattern.regex.encode("ascii"))
        except (re.error, UnicodeEncodeError):
            continue
        out.append((pattern, text, raw))
    return out
