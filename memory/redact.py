"""Secret redaction: known credential shapes are replaced before text leaves the agent.

The client redacts transcripts and records before a job is written and the daemon redacts
again before any model sees them (defence in depth), so this runs on every submit and must be
cheap on multi-megabyte transcripts. Every pattern has *anchors*, lower-case literals that any
match starts with; ``str.find`` over the lower-cased text locates them at C speed (each anchor
once per call, shared by the patterns that use it) and the compiled regex is only run anchored
at those positions: no regex ever scans the whole text. A match becomes ``[REDACTED:<kind>]``; for ``key = value`` shapes only the value is
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


def _placeholder(value: str) -> bool:
    v = value.lower()
    return v in _PLACEHOLDERS or v.startswith("[redacted") or set(v) <= {"*", "x", ".", "-", "_"}


_KEY_PREFIXES = ("api_", "api-", "api", "access_", "access-", "secret_", "secret-", "private_")


_CJK_WORDS = {"密码": "password", "口令": "password", "密钥": "secret", "秘钥": "secret", "令牌": "token"}


def _judge_credential(m: re.Match[str], text: str) -> tuple[str, str | None] | None:
    word = m.group("word").lower()
    if word.startswith("pass"):
        kind = "password"
    elif word == "secret":
        kind = "secret"
    elif word == "token":
        kind = "token"
    elif word in _CJK_WORDS:
        kind = _CJK_WORDS[word]
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
# CJK text and full-width punctuation end an assigned value ("密码：abc12345，记得改").
_CJK_STOP = "\u3000-\u303f\uff00-\uffef\u4e00-\u9fff"

_PATTERNS: tuple[_Pattern, ...] = (
    _Pattern(
        "private-key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[A-Za-z0-9+/=\s\\:,.-]{0,32768}?"
            r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"
        ),
        ("-----begin ",),
    ),
    _Pattern("anthropic-key", re.compile(rf"{_IDENT_BEFORE}sk-ant-[A-Za-z0-9_-]{{20,}}"), ("sk-",)),
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
        ("gh", "github_pat_"),
    ),
    _Pattern(
        "npm-token", re.compile(rf"{_IDENT_BEFORE}npm_[A-Za-z0-9]{{36}}{_IDENT_AFTER}"), ("npm_",)
    ),
    _Pattern(
        "pypi-token", re.compile(rf"{_IDENT_BEFORE}pypi-AgE[A-Za-z0-9_-]{{40,}}{_IDENT_AFTER}"), ("pypi-",)
    ),
    _Pattern(
        "gitlab-token", re.compile(rf"{_IDENT_BEFORE}glpat-[A-Za-z0-9_-]{{20,}}{_IDENT_AFTER}"), ("glpat-",)
    ),
    _Pattern(
        "huggingface-token",
        re.compile(rf"{_IDENT_BEFORE}hf_(?=[A-Za-z0-9]*[0-9])[A-Za-z0-9]{{30,}}{_IDENT_AFTER}"),
        ("hf_",),
    ),
    _Pattern(
        "stripe-key",
        re.compile(rf"{_IDENT_BEFORE}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{{16,}}{_IDENT_AFTER}"),
        ("sk_", "rk_"),
    ),
    _Pattern(
        "sendgrid-key",
        re.compile(rf"{_IDENT_BEFORE}SG\.[A-Za-z0-9_-]{{16,}}\.[A-Za-z0-9_-]{{16,}}{_IDENT_AFTER}"),
        ("sg.",),
    ),
    _Pattern(
        "aws-access-key",
        re.compile(r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))A[KS]IA[0-9A-Z]{16}(?![A-Za-z0-9])"),
        ("akia", "asia"),
    ),
    _Pattern(
        "aws-secret-key",
        re.compile(
            r"(?:(?<=[aA][wW][sS]_)(?i:secret_access_key|secret_key)|(?i:secretaccesskey))"
            r"\\?[\"']?\s*[:=]\s*\\?[\"']?"
            r"(?P<value>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        ("secret",),
        value_group="value",
    ),
    _Pattern(
        "google-api-key",
        re.compile(rf"{_IDENT_BEFORE}AIza[0-9A-Za-z_-]{{35}}{_IDENT_AFTER}"),
        ("aiza",),
    ),
    _Pattern(
        "slack-token",
        re.compile(rf"{_IDENT_BEFORE}xox[abpr]-[0-9A-Za-z-]{{10,}}{_IDENT_AFTER}"),
        ("xox",),
    ),
    _Pattern(
        "jwt",
        re.compile(
            rf"{_IDENT_BEFORE}eyJ[A-Za-z0-9_-]{{10,}}\.eyJ[A-Za-z0-9_-]{{10,}}\.[A-Za-z0-9_-]{{10,}}"
        ),
        ("eyj",),
    ),
    _Pattern(
        "bearer-token",
        re.compile(
            r"(?i:authorization)\\?[\"']?\s*[:=]\s*\\?[\"']?(?i:bearer)\s+"
            r"(?P<value>[A-Za-z0-9._~+/=-]{8,})"
        ),
        ("authorization",),
        value_group="value",
    ),
    _Pattern(
        "id-number",
        re.compile(
            r"(?:(?i:passport(?:\s+(?:number|no\.?|#))?|social\s+security\s+number|ssn)"
            r"|护照号码?|身份证号码?|社保号)"
            r"(?:\s*(?:[:=：#]|是|is)\s*|\s+)(?P<value>[A-Za-z]{0,3}[0-9][0-9 -]{4,18}[0-9Xx])(?![A-Za-z0-9])"
        ),
        ("passport", "social", "ssn", "护照号", "身份证号", "社保号"),
        value_group="value",
    ),
    _Pattern(
        "credential",
        re.compile(
            r"(?P<word>(?i:pass(?:word|wd|phrase)|secret|token|key)|密码|口令|密钥|秘钥|令牌)(?![A-Za-z0-9_-])"
            r"\\?[\"']?\s*(?:[:=]|：|是)\s*"
            r"(?:(?P<q>\\?[\"'])(?P<qvalue>[^\s\"'\\]{6,200})(?P=q)"
            rf"|(?P<value>[^\s\"'\\`,;(){{}}\[\]<>$%{_CJK_STOP}]{{8,200}})(?![^\s\"'\\`,;)}}\]>{_CJK_STOP}]))"
        ),
        ("pass", "secret", "token", "key", "密码", "口令", "密钥", "秘钥", "令牌"),
        judge=_judge_credential,
    ),
)


class _Anchors:
    """Where anchors occur in one text, found once each and shared between patterns.

    Anchors are lower-case and searched in ``text.lower()``: one scan finds every casing.
    ``lower()`` keeps positions unless a character expands (e.g. U+0130), in which case the
    lengths differ and a case-insensitive regex search is used instead.
    """

    __slots__ = ("_cache", "_lowered", "text")

    def __init__(self, text: str) -> None:
        self.reset(text)

    def reset(self, text: str) -> None:
        self.text = text
        lowered = text.lower()
        self._lowered = lowered if len(lowered) == len(text) else None
        self._cache: dict[str, list[int]] = {}

    def positions(self, anchors: tuple[str, ...]) -> list[int]:
        found: set[int] = set()
        for anchor in anchors:
            hits = self._cache.get(anchor)
            if hits is None:
                hits = self._cache[anchor] = self._find(anchor)
            found.update(hits)
        return sorted(found)

    def _find(self, anchor: str) -> list[int]:
        if self._lowered is None:
            return [m.start() for m in re.finditer(re.escape(anchor), self.text, re.IGNORECASE)]
        hits = []
        i = self._lowered.find(anchor)
        while i != -1:
            hits.append(i)
            i = self._lowered.find(anchor, i + 1)
        return hits


def _apply(pat: _Pattern, anchors: _Anchors, kinds: list[str]) -> None:
    text = anchors.text
    pieces: list[str] = []
    last = 0
    for pos in anchors.positions(pat.anchors):
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
    if pieces:
        pieces.append(text[last:])
        anchors.reset("".join(pieces))


def redact(text: str) -> tuple[str, list[str]]:
    """Replace known secret shapes in ``text``; return the new text and the kinds found.

    Kinds are listed once each, in the order first found. Text without secrets comes back
    unchanged (the same object). Redacting already-redacted text changes nothing.
    """
    kinds: list[str] = []
    anchors = _Anchors(text)
    for pat in _PATTERNS:
        _apply(pat, anchors, kinds)
    return anchors.text, kinds
