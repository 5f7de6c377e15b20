"""What ``dreamd sync`` checks for secrets before a push: each outgoing file read by its structure.

dreamd writes manifest.json and MEMORY.md itself, and both put names dreamd derived (a record's
name, its file ``<name>-<10 hex>.md``) and markers (``[REDACTED:kind]``) next to free text. Read
as one run of prose, a file name after "password" looks like the password and a marker followed
by a file name like a labelled token, so every directory whose descriptions mention a
credential (or held a redacted one) could never sync (issue 22). So the check reads them by
their structure: every string of the manifest's JSON on its own, except the file names dreamd
made; MEMORY.md without its link targets to such files. A real secret in any record's name,
description, title or body, in a hand-written file (whose name is checked too) or in a commit
message is still found.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from memory.redact import redact
from memory.store.layout import OUR_FILE_RE
from memory.store.transaction import INDEX, MANIFEST

_OUR_LINK_RE = re.compile(r"\]\((?P<file>[a-z0-9][a-z0-9_-]{0,63}-[0-9a-f]{10}\.md)\)")
"""A MEMORY.md link target that is a file name dreamd made."""


def _strings(value: Any, key: str = "") -> Iterator[str]:
    if isinstance(value, str):
        if not (key == "file" and OUR_FILE_RE.match(value)):
            yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, k if isinstance(k, str) else "")
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)


def _add(kinds: list[str], found: list[str]) -> None:
    kinds.extend(k for k in found if k not in kinds)


def file_secrets(path: str, data: bytes) -> list[str]:
    """The kinds of secret in the outgoing file ``path`` (its path in the tree) with bytes ``data``."""
    text = data.decode("utf-8", "replace")
    kinds: list[str] = []
    if path == MANIFEST:
        try:
            doc = json.loads(text)
        except ValueError:
            return redact(text)[1]  # not dreamd's manifest: read it whole
        for value in _strings(doc):
            _add(kinds, redact(value)[1])
        return kinds
    if path == INDEX:
        return redact(_OUR_LINK_RE.sub("]()", text))[1]
    if not OUR_FILE_RE.match(path):  # a hand-written file's name is text too ("-" joins words)
        _add(kinds, redact(path.replace("-", " "))[1])
    _add(kinds, redact(text)[1])
    return kinds


def message_secrets(message: str) -> list[str]:
    """The kinds of secret in an outgoing commit's message."""
    return redact(message)[1]


__all__ = ["file_secrets", "message_secrets"]
