"""Secret redaction: known credential shapes are replaced before text leaves the agent.

The client redacts transcripts and records before a job is written and the daemon redacts
again before any model sees them (defence in depth), so this runs on every submit and must be
cheap on multi-megabyte transcripts. Every pattern has *anchors*, case-sensitive literals that
any match starts with; ``str.find`` locates them at C speed and the compiled regex is only run
anchored at those positions (one pass per pattern, no case-insensitive scan of the whole
text). A match becomes ``[REDACTED:<kind>]``; for ``key = value`` shapes only the value is
replaced, so the text still says what was there.

Replacements never span a quote or a backslash, so redacting JSONL transcript text keeps every
line valid JSON. Patterns are anchored on vendor prefixes or explicit assignments so ordinary
prose and code (``def login(password: str)``, ``token = get_token()``, ``max_tokens: 4096``,
``$TOKEN``) are left alone: an unquoted assigned value must be 8+ characters mixing letters and
digits, a quoted one 6+ characters that is not a placeholder.
"""

from __future__ import annotations

import re
from collections.abc import Callable

MARKER = "[REDACTED:{kind}]"

_PLACEHOLDERS = frozenset(
    {
        "string", "none", "null", "true", "false", "required", "optional", "undefined",
        "changeme", "password", "passwd", "secret", "token", "example", "redacted",
    }
)  # fmt: skip

Judge = Callable[["re.Match[str]", str], "tuple[str, str | None] | None"]
"""Decides on a match: ``(kind, group to replace or None for all)`` or None to keep it."""


class _Pattern:
    """One secret shape (a plain class: no dataclasses import on the hook path)."""

    __slots__ = ("anchors", "judge", "kind", "regex", "value_group")

    def __init__(
        self,
        kind: str,
        regex: re.Pattern[str],
        anchors: tuple[str, ...],
        value_group: str | None = None,
        judge: Judge | None = None,
    ) -> None:
        self.kind = kind
        self.regex = regex
        self.anchors = anchors
        self.value_group = value_group
        self.judge = judge


def _cases(*words: str) -> tuple[str, ...]:
    out: list[str] = []
    for w in words:
        for v in (w, w.capitalize(), w.upper()):
            if v not in out:
                out.append(v)
    return tuple(out)


def _placeholder(value: str) -> bool:
    v = value.lower()
    return v in _PLACEHOLDERS or v.startswith("[redacted") or set(v) <= {"*", "x", ".", "-", "_"}


_KEY_PREFIXES = ("api_", "api-", "api", "access_", "access-", "secret_", "secret-", "private_")


def _judge_credential(m: re.Match[str], text: str) -> tuple[str, str | None] | None:
    word = m.group("word").lower()
    if word.startswith("pass"):
        kind = "password"
    elif word == "secret":
        kind = "secret"
    elif word == "token":
        kind = "token"
    else:  # "key": only api_key / access_key / secret_key / private_key style names
        before = text[max(0, m.start() - 8) : m.start()].lower()
        if not before.endswith(_KEY_PREFIXES):
            return None
        kind = "secret" if before.endswith(("secret_", "secret-")) else "api-key"
    quoted = m.group("qvalue")
    if quoted is not None:
        return None if _placeholder(quoted) else (kind, "qvalue")
    value = m.group("value")
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    if not (has_digit and has_alpha) or _placeholder(value):
        return None
    return kind, "value"


# Token start: not inside a longer identifier, except right after a JSON escape (``\n``, ``\t``)
_IDENT_BEFORE = r"(?:(?<![A-Za-z0-9_-])|(?<=\\[nrt]))"
_IDENT_AFTER = r"(?![A-Za-z0-9_-])"

_PATTERNS: tuple[_Pattern, ...] = (
    _Pattern(
        "private-key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[A-Za-z0-9+/=\s\\:,.-]{0,32768}?"
            r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"
        ),
        ("-----BEGIN ",),
    ),
    _Pattern(
        "anthropic-key", re.compile(rf"{_IDENT_BEFORE}sk-ant-[A-Za-z0-9_-]{{20,}}"), ("sk-ant-",)
    ),
    _Pattern(
        "openai-key",
        re.compile(
            rf"{_IDENT_BEFORE}sk-(?!ant-)(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{{20,}}{_IDENT_AFTER}"
        ),
        ("sk-",),
    ),
    _Pattern(
        "github-token",
        re.compile(
            rf"{_IDENT_BEFORE}(?:gh[pousr]_[A-Za-z0-9]{{30,}}|github_pat_[A-Za-z0-9_]{{22,}}){_IDENT_AFTER}"
        ),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _Pattern(
        "aws-access-key",
        re.compile(r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))A[KS]IA[0-9A-Z]{16}(?![A-Za-z0-9])"),
        ("AKIA", "ASIA"),
    ),
    _Pattern(
        "aws-secret-key",
        re.compile(
            r"(?i:aws_secret_access_key|aws_secret_key|secretaccesskey)\\?[\"']?\s*[:=]\s*\\?[\"']?"
            r"(?P<value>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        (*_cases("aws_secret"), "SecretAccessKey", "secretAccessKey"),
        value_group="value",
    ),
    _Pattern(
        "google-api-key",
        re.compile(rf"{_IDENT_BEFORE}AIza[0-9A-Za-z_-]{{35}}{_IDENT_AFTER}"),
        ("AIza",),
    ),
    _Pattern(
        "slack-token",
        re.compile(rf"{_IDENT_BEFORE}xox[abpr]-[0-9A-Za-z-]{{10,}}{_IDENT_AFTER}"),
        ("xoxa-", "xoxb-", "xoxp-", "xoxr-"),
    ),
    _Pattern(
        "jwt",
        re.compile(
            rf"{_IDENT_BEFORE}eyJ[A-Za-z0-9_-]{{10,}}\.eyJ[A-Za-z0-9_-]{{10,}}\.[A-Za-z0-9_-]{{10,}}"
        ),
        ("eyJ",),
    ),
    _Pattern(
        "bearer-token",
        re.compile(
            r"(?i:authorization)\\?[\"']?\s*[:=]\s*\\?[\"']?(?i:bearer)\s+"
            r"(?P<value>[A-Za-z0-9._~+/=-]{8,})"
        ),
        _cases("authorization"),
        value_group="value",
    ),
    _Pattern(
        "credential",
        re.compile(
            r"(?P<word>(?i:pass(?:word|wd|phrase)|secret|token|key))(?![A-Za-z0-9_-])"
            r"\\?[\"']?\s*[:=]\s*"
            r"(?:(?P<q>\\?[\"'])(?P<qvalue>[^\s\"'\\]{6,200})(?P=q)"
            r"|(?P<value>[^\s\"'\\`,;(){}\[\]<>$%]{8,200})(?![^\s\"'\\`,;)}\]>]))"
        ),
        _cases("pass", "secret", "token", "key"),
        judge=_judge_credential,
    ),
)


def _anchor_positions(text: str, anchors: tuple[str, ...]) -> list[int]:
    found: set[int] = set()
    for anchor in anchors:
        i = text.find(anchor)
        while i != -1:
            found.add(i)
            i = text.find(anchor, i + 1)
    return sorted(found)


def _apply(pat: _Pattern, text: str, kinds: list[str]) -> str:
    pieces: list[str] = []
    last = 0
    for pos in _anchor_positions(text, pat.anchors):
        if pos < last:
            continue
        m = pat.regex.match(text, pos)
        if m is None:
            continue
        if pat.judge is not None:
            verdict = pat.judge(m, text)
            if verdict is None:
                continue
            kind, group = verdict
        else:
            kind, group = pat.kind, pat.value_group
        start, end = m.span(group) if group else m.span()
        pieces.append(text[last:start])
        pieces.append(MARKER.format(kind=kind))
        last = end
        if kind not in kinds:
            kinds.append(kind)
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def redact(text: str) -> tuple[str, list[str]]:
    """Replace known secret shapes in ``text``; return the new text and the kinds found.

    Kinds are listed once each, in the order first found. Text without secrets comes back
    unchanged (the same object). Redacting already-redacted text changes nothing.
    """
    kinds: list[str] = []
    for pat in _PATTERNS:
        text = _apply(pat, text, kinds)
    return text, kinds
