"""What setup changed, so ``--undo`` can put it back: ``<state>/setup.json`` (mode 0600).

``{"format": 1, "argv": [...], "files": {path: {"what": …, "before": base64 | null,
"after": sha256, "made_dirs": [dir, …]}}, "mcp": {"previous": entry | null} | null, "service": {"manager": …,
"path": …} | null}``. ``before`` is what the file held before the *first* setup that touched
it (null: there was no file), ``after`` the digest of what the latest setup wrote, so undo can
tell a file left as setup wrote it from one changed since. ``made_dirs`` (optional) are the
directories the first write of a new file created, deepest first: undo removes each while it is
empty, so a fresh home is left as it was.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

from memory.fsutil import replace_atomic

STATE_NAME = "setup.json"
BACKUPS = "setup-backups"
FORMAT = 1
MAX_BYTES = 64 * 1024 * 1024


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def encode(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def decode(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def load(state_dir: Path) -> dict[str, Any] | None:
    path = state_dir / STATE_NAME
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    from memory.errors import ConfigError

    try:
        data = json.loads(raw)
    except ValueError:
        raise ConfigError(f"{path}: not valid JSON; undo cannot read what setup changed") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"{path}: not a setup state of format {FORMAT}")
    return data


def save(state_dir: Path, data: dict[str, Any]) -> None:
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    body = json.dumps({"format": FORMAT, **data}, indent=2, sort_keys=True) + "\n"
    replace_atomic(state_dir / STATE_NAME, body.encode("utf-8"), mode=0o600)


def remove(state_dir: Path) -> None:
    (state_dir / STATE_NAME).unlink(missing_ok=True)
