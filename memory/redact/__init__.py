"""Secret redaction: one redactor for every way text enters dreamd.

The client and the hook redact transcripts and records before a job is written (and before the
hook's transcript cache); the daemon redacts again before any model sees them and before every
record write (extraction, remember from the CLI, the library and MCP, dream results, adopted
files in the next generation); ``dreamd sync`` refuses to push what still holds a secret. So
this runs on every submit and must be cheap on multi-megabyte transcripts (see
:mod:`memory.redact.engine`: detectors only look near literal anchors).

Detection is by shape (:mod:`memory.redact.shapes`: vendor prefixes, private key armour of every
kind, webhook URLs, bot tokens) and by context (:mod:`memory.redact.context`: a credential word
in English or Chinese followed by a value in any phrasing, user/password pairs, credentials in
URLs, ``Authorization`` headers, AWS secret keys near AWS context, random-looking tokens near a
credential word), and by layout (:mod:`memory.redact.structure`: values on the lines after
their word, key pairs, seed phrases, key files, both sides of a password change), by
the clause (:mod:`memory.redact.clause`: a strong-password-shaped token anywhere on a line that
names a credential, a made-up or generated value anywhere in a clause that names one, a value
cut over line breaks next to its word), and
by the structure of code and config (:mod:`memory.redact.literals`: name/value pairs, CSV
columns, literals given to a client, key armour in string literals, JSON Web Keys, DSNs
without ``://``, the rest of a wrapped token, strong-password-shaped values in config and shell
blocks whatever their key), with the value judged by
:mod:`memory.redact.values`. A secret becomes
``[REDACTED:<kind>]`` and nothing of its value stays: no prefix, no suffix, and no part of it
in a record's name (:func:`safe_name`). For ``key = value`` shapes only the value is replaced,
so the text still says what was there.

A text a transcript carries in pieces or JSON-escaped (text blocks, a tool result in pieces or
that is itself JSON) is redacted as the text it is by :mod:`memory.redact.carried`, which puts
each replacement back where the pieces and escapes were: the hook's path.

Commit SHAs, UUIDs, content hashes, versions, base64 in code and ordinary words after
"password" ("password reset flow") are left alone; ``benchmarks/bench_secrets.py`` measures
both sides on a labelled set.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.redact.clause import CLAUSE_DETECTORS
from memory.redact.context import CONTEXT_DETECTORS, says_a_credential
from memory.redact.engine import MARKER, run
from memory.redact.literals import LITERAL_DETECTORS, WRAP_DETECTORS
from memory.redact.prose import PROSE_DETECTORS
from memory.redact.shapes import SHAPE_DETECTORS
from memory.redact.structure import KEY_FILE_DETECTORS, STRUCTURE_DETECTORS

DETECTORS = (
    *SHAPE_DETECTORS,
    *KEY_FILE_DETECTORS,
    *CONTEXT_DETECTORS,
    *LITERAL_DETECTORS,
    *PROSE_DETECTORS,
    *STRUCTURE_DETECTORS,
    *CLAUSE_DETECTORS,
    *WRAP_DETECTORS,
)
"""In priority order: a span found earlier is never looked at again."""


def redact(text: str) -> tuple[str, list[str]]:
    """Replace secrets in ``text``; return the new text and the kinds found.

    Kinds are listed once each, in the order first found. Text without secrets comes back
    unchanged (the same object). Redacting already-redacted text changes nothing.
    """
    return run(text, DETECTORS)


def redact_found(text: str) -> tuple[str, list[str], list[tuple[str, str]]]:
    """:func:`redact`, plus the ``(value, kind)`` of each substring it replaced (for
    :func:`scrub_fragments`; never write them anywhere)."""
    found: list[tuple[str, str]] = []
    out, kinds = run(text, DETECTORS, found)
    return out, kinds, found


def _readings(name: str) -> tuple[str, str, str]:
    """A name as it is, with its hyphens as spaces (``deploy-ghp_…``: a token starts after a
    space, not inside a longer identifier) and with its underscores too (``admin-pw-Tr0ub4dor``:
    "admin pw Tr0ub4dor")."""
    hyphens = name.replace("-", " ")
    return name, hyphens, hyphens.replace("_", " ")


def name_kinds(name: str) -> list[str]:
    """The kinds of secret a file or record name holds, in any of its :func:`_readings` (one
    redaction of the three, a line each: a name holds no line break)."""
    return redact("\n".join(_readings(name.replace("\n", " "))))[1]


def found_secrets(text: str) -> list[tuple[str, str]]:
    """``(value, kind)`` of each substring :func:`redact` would replace."""
    return redact_found(text)[2]


def secret_values(text: str) -> list[str]:
    """The substrings :func:`redact` would replace (for checks; never write them anywhere)."""
    return [value for value, _kind in found_secrets(text)]


_TURN_TAIL = 160
_TURN_HEAD = 240
_TURN_REACH = 40
"""A secret said across two turns starts within this many characters of the second one."""


def redact_turns(
    texts: Sequence[str], roles: Sequence[str] | None = None, *, redacted: bool = False
) -> list[str]:
    """Each turn of a conversation redacted, and a secret split across two turns as well.

    "the staging password is" in one turn and the value alone in the next (or in the same
    speaker's next turn, after the other side's "go ahead"): each redacted alone, neither holds
    a secret. The end of a turn and the start of the next one of the same ``roles`` entry (the
    next turn at all without ``roles``) are redacted joined by a space; what that finds near
    the start of the second (within :data:`_TURN_REACH` characters) is replaced there.
    ``redacted``: each text is redacted already (the hook's lines), only the joins are read."""
    out = list(texts) if redacted else [redact(t)[0] for t in texts]
    for i in range(len(out)):
        j = i + 1
        if roles is not None:
            j = next((k for k in range(i + 1, len(out)) if roles[k] == roles[i]), len(out))
        if j >= len(out) or not out[i].strip() or not out[j].strip():
            continue
        tail = out[i][-_TURN_TAIL:]
        if not says_a_credential(tail):
            continue
        second = out[j]
        cut = min(len(second), _TURN_HEAD)
        while cut < len(second) and cut < 2 * _TURN_HEAD and not second[cut].isspace():
            cut += 1  # never inside a token
        head = second[:cut]
        joined = redact(tail + " " + head)[0]
        if not joined.startswith(tail + " "):
            continue  # what joining found lies in the first turn: its own redaction decided
        new_head = joined[len(tail) + 1 :]
        if new_head == head:
            continue
        first = next(k for k, (a, b) in enumerate(zip(head, new_head, strict=False)) if a != b)
        if first <= _TURN_REACH + len(head) - len(head.lstrip()):
            out[j] = new_head + second[cut:]
    return out


FRAGMENT = 8
"""A run this long that also occurs in a secret is part of that secret."""


def scrub_fragments(text: str, secrets: list[tuple[str, str]]) -> tuple[str, list[str]]:
    """``text`` with every part of a known secret replaced by its marker, and the kinds found.

    A field cut from a longer text (a description cut at 200 characters, a name at 64, a quote
    an extractor shortened) can end with the first half of a token, which the redactor, seeing
    it cut, no longer recognises: ``secrets`` are the ``(value, kind)`` pairs found in the whole
    text (:func:`found_secrets`), and any run of :data:`FRAGMENT` or more characters of one of
    them goes, as does a whole value of six or more. Linear in ``text`` (one dictionary look-up
    per position) and in the secrets' length.
    """
    grams: dict[str, str] = {}
    whole: dict[str, str] = {}
    for value, kind in secrets:
        if len(value) >= FRAGMENT:
            for i in range(len(value) - FRAGMENT + 1):
                grams.setdefault(value[i : i + FRAGMENT], kind)
        elif len(value) >= 6:
            whole.setdefault(value, kind)
    if not grams and not whole:
        return text, []
    spans: list[tuple[int, int, str]] = []
    n = len(text)
    i = 0
    while i <= n - FRAGMENT:
        gram_kind = grams.get(text[i : i + FRAGMENT])
        if gram_kind is None:
            i += 1
            continue
        j = i + FRAGMENT
        while j < n and text[j - FRAGMENT + 1 : j + 1] in grams:
            j += 1
        spans.append((i, j, gram_kind))
        i = j
    for value, kind in whole.items():
        at = text.find(value)
        while at != -1:
            spans.append((at, at + len(value), kind))
            at = text.find(value, at + len(value))
    if not spans:
        return text, []
    pieces: list[str] = []
    kinds: list[str] = []
    last = 0
    for start, end, kind in sorted(spans):
        if start < last:
            continue
        pieces += [text[last:start], MARKER.format(kind=kind)]
        last = end
        if kind not in kinds:
            kinds.append(kind)
    pieces.append(text[last:])
    return "".join(pieces), kinds


def _alnum(value: str) -> str:
    return "".join(c for c in value.lower() if c.isascii() and c.isalnum())


def safe_name(name: str, *texts: str) -> str:
    """``name`` without any part of a secret found in ``texts`` or in the name itself.

    Record names become file names and MEMORY.md lines, and are derived from text (a slug of
    the description, a model's choice): a name part sharing four characters with a secret is
    dropped ("project-login-admin-s3cr3tpass" → "project-login-admin"). A name with nothing
    left becomes ``redacted-secret``.
    """
    secrets = [s for t in (*texts, *_readings(name)) for s in secret_values(t)]
    keys = [k for k in (_alnum(s) for s in secrets) if len(k) >= 2]
    if not keys:
        return name
    parts = name.split("-")
    low = [_alnum(p) for p in parts]
    drop = set()
    for i, part in enumerate(low):
        if any(part[k : k + 4] in key for key in keys for k in range(len(part) - 3)):
            drop.add(i)
        for j in range(i + 1, len(parts) + 1):
            run = "".join(low[i:j])
            if (len(run) >= 4 or run in keys) and any(run in key for key in keys):
                drop.update(range(i, j))
    if not drop:
        return name
    out = "-".join(p for i, p in enumerate(parts) if i not in drop and p).strip("-_")
    return out or "redacted-secret"


__all__ = [
    "DETECTORS",
    "FRAGMENT",
    "MARKER",
    "found_secrets",
    "name_kinds",
    "redact",
    "redact_found",
    "redact_turns",
    "safe_name",
    "scrub_fragments",
    "secret_values",
]
