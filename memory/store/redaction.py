"""Redaction of whole records and store changes: name, description, title, metadata, body.

The store calls :func:`memory.store.change.redact_change` on every commit (``memory.store.change.apply_change``), so
no write path (extraction, remember from the CLI, the library or MCP, dream results) can put a
secret in a record file, its name or a MEMORY.md line, whatever its caller did first. Kept out
of :mod:`memory.redact` so the hook, which only redacts text, does not import ``dataclasses``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, TypeVar

from memory.redact import redact, safe_name

if TYPE_CHECKING:
    from memory.store.records import Record

R = TypeVar("R", bound="Record")


def _redact_value(value: Any, kinds: list[str]) -> Any:
    if isinstance(value, str):
        out, found = redact(value)
        kinds.extend(k for k in found if k not in kinds)
        return out
    if isinstance(value, dict):
        return {k: _redact_value(v, kinds) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_value(v, kinds) for v in value]
    return value


def redact_record(rec: R, *, keep_name: bool = False) -> tuple[R, list[str]]:
    """``rec`` with secrets replaced everywhere, and the kinds found (the same object if none).

    ``keep_name``: the name is a key that already exists (a replace), not one being chosen.
    """
    kinds: list[str] = []
    description = _redact_value(rec.description, kinds)
    body = _redact_value(rec.body, kinds)
    title = _redact_value(rec.title, kinds)
    extra = _redact_value(dict(rec.extra), kinds) if rec.extra else rec.extra
    name = (
        rec.name if keep_name else safe_name(rec.name, rec.description, rec.body, rec.title or "")
    )
    if not kinds and name == rec.name:
        return rec, []
    if name != rec.name and "name" not in kinds:
        kinds.append("name")
    return dataclasses.replace(
        rec, name=name, description=description, body=body, title=title, extra=extra
    ), kinds
