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
credential word), with the value judged by :mod:`memory.redact.values`. A secret becomes
``[REDACTED:<kind>]`` and nothing of its value stays: no prefix, no suffix, and no part of it
in a record's name (:func:`safe_name`). For ``key = value`` shapes only the value is replaced,
so the text still says what was there.

Commit SHAs, UUIDs, content hashes, versions, base64 in code and ordinary words after
"password" ("password reset flow") are left alone; ``benchmarks/bench_secrets.py`` measures
both sides on a labelled set.
"""

from __future__ import annotations

from memory.redact.context import CONTEXT_DETECTORS
from memory.redact.engine import MARKER, run
from memory.redact.shapes import SHAPE_DETECTORS

DETECTORS = (*SHAPE_DETECTORS, *CONTEXT_DETECTORS)
"""In priority order: a span found earlier is never looked at again."""


def redact(text: str) -> tuple[str, list[str]]:
    """Replace secrets in ``text``; return the new text and the kinds found.

    Kinds are listed once each, in the order first found. Text without secrets comes back
    unchanged (the same object). Redacting already-redacted text changes nothing.
    """
    return run(text, DETECTORS)


def secret_values(text: str) -> list[str]:
    """The substrings :func:`redact` would replace (for checks; never write them anywhere)."""
    values: list[str] = []
    run(text, DETECTORS, values)
    return values


def _alnum(value: str) -> str:
    return "".join(c for c in value.lower() if c.isascii() and c.isalnum())


def safe_name(name: str, *texts: str) -> str:
    """``name`` without any part of a secret found in ``texts`` or in the name itself.

    Record names become file names and MEMORY.md lines, and are derived from text (a slug of
    the description, a model's choice): a name part sharing four characters with a secret is
    dropped ("project-login-admin-s3cr3tpass" → "project-login-admin"). A name with nothing
    left becomes ``redacted-secret``.
    """
    secrets = [
        s for t in (*texts, name.replace("-", " ").replace("_", " ")) for s in secret_values(t)
    ]
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


__all__ = ["DETECTORS", "MARKER", "redact", "safe_name", "secret_values"]
