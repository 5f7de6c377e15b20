"""The few config keys the library itself honours, read without the daemon's config loader.

An agent that imports :mod:`memory` must not pay for ``dreamd.config`` (dataclasses, typing,
the full validation), yet ``memory.recall()`` and ``memory.submit()`` must agree with the daemon
about the config file the environment names: ``$DREAMD_CONFIG``, else
``$XDG_CONFIG_HOME/dreamd/config.toml`` when it exists (DESIGN §10). Only the keys asked for are
read, with the same rules and messages as ``dreamd.config``; a file that cannot be read or parsed
is a ConfigError naming it, never a silent fallback. Parsed files are cached by mtime.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path

from memory.errors import ConfigError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the hook path must not import typing
if TYPE_CHECKING:
    from typing import Any

__all__ = ["RecallSettings", "config_data", "config_file", "expand_home", "recall_settings"]


class RecallSettings:
    """``[recall]``: records per recall, bytes and lines shown per record, bytes per session."""

    __slots__ = ("limit", "record_bytes", "record_lines", "session_bytes")

    def __init__(
        self, limit: int = 5, record_bytes: int = 4096, record_lines: int = 200,
        session_bytes: int = 61440,
    ) -> None:  # fmt: skip
        self.limit = limit
        self.record_bytes = record_bytes
        self.record_lines = record_lines
        self.session_bytes = session_bytes

    def __repr__(self) -> str:
        return "RecallSettings(" + ", ".join(f"{k}={getattr(self, k)}" for k in self.__slots__) + ")"


def config_file(env: Mapping[str, str] | None = None) -> Path | None:
    """The dreamd config file the environment names (``$DREAMD_CONFIG``, else
    ``$XDG_CONFIG_HOME/dreamd/config.toml`` when it exists), or None."""
    env = os.environ if env is None else env
    if env.get("DREAMD_CONFIG"):
        return Path(expand_home(env["DREAMD_CONFIG"], env))
    xdg = env.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path(expand_home("~/.config", env))
    path = base / "dreamd" / "config.toml"
    return path if path.exists() else None


def expand_home(path: str, env: Mapping[str, str]) -> str:
    """``~`` or ``~/…`` → ``$HOME`` of ``env`` (else the user's home); any other path as given."""
    if path == "~" or path.startswith("~/"):
        return (env.get("HOME") or os.path.expanduser("~")) + path[1:]
    return path


_cache: dict[Path, tuple[int, dict[str, Any]]] = {}
_lock = threading.Lock()


def config_data(env: Mapping[str, str] | None = None, path: Path | None = None) -> tuple[Path, dict[str, Any]] | None:
    """The parsed config file ``path`` (default: the one the environment names), or None."""
    env = os.environ if env is None else env
    path = config_file(env) if path is None else path
    if path is None:
        return None
    try:
        stamp = os.stat(path).st_mtime_ns
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from None
    with _lock:
        hit = _cache.get(path)
        if hit is not None and hit[0] == stamp:
            return path, hit[1]
    import tomllib

    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    with _lock:
        _cache[path] = (stamp, data)
    return path, data


def recall_settings(env: Mapping[str, str] | None = None) -> RecallSettings:
    """``[recall]`` of the config file (defaults for keys it does not set, or no file)."""
    found = config_data(env)
    if found is None:
        return RecallSettings()
    path, data = found
    table = data.get("recall")
    if table is None:
        return RecallSettings()
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [recall] must be a table")
    values: dict[str, int] = {}
    for key, value in table.items():
        if key not in RecallSettings.__slots__:
            continue  # dreamd.config names unknown keys; the library only reads its own
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{path}: [recall] {key}: expected an integer >= 1, got {value!r}")
        values[key] = value
    return RecallSettings(**values)
