"""The few config keys the library itself honours, read without the daemon's config loader.

An agent that imports :mod:`memory` must not pay for ``dreamd.config`` (dataclasses, typing,
the full validation), yet ``memory.recall()`` and ``memory.submit()`` must agree with the daemon
about the config file the environment names: ``$DREAMD_CONFIG``, else
``$XDG_CONFIG_HOME/dreamd/config.toml`` when it exists (DESIGN §10). Only the keys asked for are
read, with the same rules and messages as ``dreamd.config``; a file that cannot be read or parsed
is a ConfigError naming it, never a silent fallback. Parsed files are cached by mtime in the
process, and on disk by their text (:func:`parse_toml`, which ``dreamd.config`` reads through too).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path

from memory.errors import ConfigError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the hook path must not import typing
if TYPE_CHECKING:
    from typing import Any

__all__ = ["RecallSettings", "cache_home", "config_data", "config_file", "expand_home", "parse_toml", "recall_settings"]


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
    try:
        data = parse_toml(path.read_bytes().decode("utf-8"), path, env)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from None
    except ValueError as exc:  # UnicodeDecodeError, tomllib.TOMLDecodeError
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    with _lock:
        _cache[path] = (stamp, data)
    return path, data


def cache_home(env: Mapping[str, str]) -> Path:
    """dreamd's derived caches: ``$XDG_CACHE_HOME/dreamd``, else ``~/.cache/dreamd``."""
    xdg = env.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path(expand_home("~/.cache", env))
    return base / "dreamd"


PARSED_CONFIG_FORMAT = 1
MAX_PARSED_CONFIG_BYTES = 1024 * 1024


def _parsed_config_path(file: Path, env: Mapping[str, str]) -> Path:
    import zlib  # a name, not a proof: the cached text is compared whole

    return cache_home(env) / f"config-{zlib.crc32(os.fsencode(os.path.abspath(file))):08x}.json"


def parse_toml(text: str, file: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """``tomllib.loads(text)`` of the config file ``file``, through a derived cache of its last
    parse: the one TOML reader of the config (``dreamd.config`` and :func:`config_data`). A bad
    file raises ``tomllib.TOMLDecodeError`` (a ValueError).

    Importing tomllib compiles its regular expressions: about 40 M instructions, a sixth of
    ``dreamd status``'s start-up beyond the interpreter's, paid by every command and the hook
    (issue 20). The cache (:func:`cache_home`, ``config-<crc>.json``) holds the file's whole text
    and what it parsed to; it is used only when that text equals the file's now, so it can never
    say anything the file does not. Unreadable, foreign-owned, symlinked or oversized caches are
    ignored; one that cannot be written is not kept; a parse that JSON cannot hold (TOML dates)
    is not cached. Errors are never cached: a bad file is parsed, and refused, every time."""
    cache = _parsed_config_path(file, env)
    cached = _read_parsed_config(cache, text)
    if cached is not None:
        return cached
    import tomllib  # no file (or a changed one), no parser

    data = tomllib.loads(text)
    _write_parsed_config(cache, text, data)
    return data


def _read_parsed_config(cache: Path, text: str) -> dict[str, Any] | None:
    from memory.fsutil import open_regular

    try:
        doc = json.loads(open_regular(cache, max_bytes=MAX_PARSED_CONFIG_BYTES))
    except Exception:  # absent, unreadable, unsafe or not JSON: parse the file
        return None
    if (
        isinstance(doc, dict) and doc.get("format") == PARSED_CONFIG_FORMAT
        and doc.get("text") == text and isinstance(doc.get("data"), dict)
    ):  # fmt: skip
        data: dict[str, Any] = doc["data"]
        return data
    return None


def _write_parsed_config(cache: Path, text: str, data: dict[str, Any]) -> None:
    try:
        blob = json.dumps({"format": PARSED_CONFIG_FORMAT, "text": text, "data": data}, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError):  # a TOML date or time: JSON cannot hold it exactly
        return
    if len(blob) > MAX_PARSED_CONFIG_BYTES:
        return
    write_user_cache(cache, blob)


def write_user_cache(path: Path, data: bytes) -> None:
    """Best-effort write of a derived cache file under the user's cache folder: the folder
    is made 0700 (its parent too), a folder that is a link or a file is never written through,
    the file is replaced atomically with mode 0600, and any OSError leaves things as they were
    (a cache that cannot be written is recomputed next time)."""
    import stat

    from memory.fsutil import replace_atomic

    try:
        os.makedirs(path.parent.parent, mode=0o700, exist_ok=True)
        try:
            os.mkdir(path.parent, 0o700)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(path.parent).st_mode):
                return  # a symlink or a file is never written through
        replace_atomic(path, data, mode=0o600, sync_dir=False)
    except OSError:
        return


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
