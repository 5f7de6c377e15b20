"""Redaction of whole records and store changes: name, description, title, metadata, body.

The store calls :func:`memory.store.change.redact_change` on every commit (``memory.store.change.apply_change``), so
no write path (extraction, remember from the CLI, the library or MCP, dream results) can put a
secret in a record file, its name or a MEMORY.md line, whatever its caller did first. Kept out
of :mod:`memory.redact` so the hook, which only redacts text, does not import the store.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from memory.redact import found_secrets, redact_found, safe_name, scrub_fragments

if TYPE_CHECKING:
    from memory.store.records import Record

R = TypeVar("R", bound="Record")

_MARKER_RE = re.compile(r"\[REDACTED:[^\]]*\]")

_CLEAN: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
"""Records this module found clean, by identity (frozen, so still clean): extraction redacts its records and the
store's commit redacts every record again, and the second scan found nothing, at a sixth of a
committing job's time. Held weakly: a record nobody holds any more is forgotten."""


def _walk(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {k: _walk(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, change) for v in value]
    return value


def redact_words(text: str) -> str:
    """``text`` redacted, a value joined to a word by "-" included.

    The redactor reads ``tok-ghp_…`` as one word; record and file names join their words so,
    and error lines quote them ("name 'tok-ghp_…' must match …"), so those are looked for with
    "-" read as a space too, and every part of what is found goes (issue 22)."""
    out, _kinds, found = redact_found(text)
    joined = found_secrets(text.replace("-", " "))
    return scrub_fragments(out, found + joined)[0] if joined else out


def clean_name(name: str, description: str, *texts: str) -> str:
    """``name``, or when a part of it held a secret, a name made from the redacted description.

    ``description`` and ``texts`` are the record's UNREDACTED text: only there can the check
    see the secret a name shares a part with (issue 22). Dropping the parts that match
    (:func:`memory.redact.safe_name`) can keep a value's short tail ("admin-pw-tr0ub4dor-3x"
    became "admin-pw-3x"), so no part of such a name stays; ``redacted-secret`` when the
    description leaves nothing either.
    """
    from memory.store.records import slugify

    if safe_name(name, description, *texts) == name:
        return name
    secrets = [s for t in (description, *texts, name) for s in redact_found(t)[2]]
    plain, _ = scrub_fragments(redact_found(description)[0], secrets)
    words = " ".join(_MARKER_RE.sub(" ", plain).split())
    slug = slugify(words) if words else "redacted-secret"
    if safe_name(slug, description, *texts, name) != slug:
        return "redacted-secret"
    return slug


def redact_record(rec: R, *, keep_name: bool = False) -> tuple[R, list[str]]:
    """``rec`` with secrets replaced everywhere, and the kinds found (the same object if none).

    ``keep_name``: the name is a key that already exists (a replace), not one being chosen.
    """
    if _CLEAN.get(id(rec)) is rec:
        return rec, []
    kinds: list[str] = []
    secrets: list[tuple[str, str]] = []
    redacted: dict[str, str] = {}

    def first_pass(text: str) -> str:
        out, found, values = redact_found(text)
        kinds.extend(k for k in found if k not in kinds)
        secrets.extend(values)
        redacted[text] = out
        return text

    def second_pass(text: str) -> str:
        out, cut = scrub_fragments(redacted[text], secrets)
        kinds.extend(k for k in cut if k not in kinds)
        return out

    # A secret found whole in one field is scrubbed from all of them, cut or not: a description
    # cut from the body's first line may hold the first half of the body's token (issue 22).
    fields = (rec.description, rec.body, rec.title, dict(rec.extra) if rec.extra else rec.extra)
    for value in fields:
        _walk(value, first_pass)
    description, body, title, extra = (_walk(v, second_pass) for v in fields)
    if keep_name:
        name = rec.name
    elif not secrets and safe_name(rec.name) == rec.name:
        # the fields were just read and hold no secret, so only the name's own readings can
        # (clean_name would read description, body and title again: a third of a job's CPU)
        name = rec.name
    else:
        name = clean_name(rec.name, rec.description, rec.body, rec.title or "")
    if not kinds and name == rec.name:
        if not keep_name:  # a kept name was not checked: such a record is clean only as a replace
            _CLEAN[id(rec)] = rec
        return rec, []
    if name != rec.name and "name" not in kinds:
        kinds.append("name")
    return rec.replace(name=name, description=description, body=body, title=title, extra=extra), kinds
