"""The dreamd config setup writes: ``[daemon] roots`` covering what it sets up (pure).

A missing config becomes a short file with ``[daemon] roots`` (the defaults plus each
``--root DIR`` as ``DIR/*/.memory``). An existing one is edited with tomlkit, which keeps the
user's comments, order and spelling: only patterns it lacks are appended to ``roots`` (a file
without ``roots`` gets the defaults written out first, since they applied until now).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence

from dreamd.config import SCHEMA, expand_user
from memory.errors import ConfigError

DEFAULT_ROOTS: tuple[str, ...] = tuple(
    next(k.default for k in SCHEMA if (k.section, k.name) == ("daemon", "roots"))
)
CLAUDE_ROOT = "~/.claude/projects/*/memory"

HEADER = """\
# dreamd configuration, written by `dreamd setup` (`dreamd setup --undo` takes it back).
# Every key not set here keeps its default: see config.toml in the dreamd repository.
"""


def root_pattern(directory: str, env: Mapping[str, str]) -> str:
    """``--root DIR`` as a roots pattern: the ``.memory`` of every project in DIR, ``~``-relative
    when DIR is under the home directory."""
    path = os.path.abspath(expand_user(directory, env))
    home = env.get("HOME") or os.path.expanduser("~")
    if path == home or path.startswith(home.rstrip("/") + "/"):
        path = "~" + path[len(home.rstrip("/")) :]
    return f"{path.rstrip('/')}/*/.memory"


def wanted_roots(extra_dirs: Sequence[str], env: Mapping[str, str]) -> list[str]:
    return [CLAUDE_ROOT, *(root_pattern(d, env) for d in extra_dirs)]


def merge_roots(
    data: bytes | None, wanted: Sequence[str], env: Mapping[str, str], *, where: str
) -> bytes:
    """The config with every ``wanted`` pattern in ``[daemon] roots``; unchanged bytes when all
    are there. A file that is not valid TOML is refused in one line."""
    if data is None:
        roots = list(DEFAULT_ROOTS)
        roots += [p for p in wanted if _norm(p, env) not in {_norm(r, env) for r in roots}]
        import tomlkit

        doc = tomlkit.document()
        daemon = tomlkit.table()
        daemon["roots"] = roots
        doc["daemon"] = daemon
        return (HEADER + "\n" + tomlkit.dumps(doc)).encode("utf-8")
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{where}: not valid TOML ({exc}); fix it, then run dreamd setup again") from None
    section = parsed.get("daemon", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{where}: daemon is not a table; fix it, then run dreamd setup again")
    current = section.get("roots", list(DEFAULT_ROOTS))
    if not isinstance(current, list) or not all(isinstance(r, str) for r in current):
        raise ConfigError(f"{where}: [daemon] roots is not a list of strings; fix it first")
    have = {_norm(r, env) for r in current}
    missing = [p for p in wanted if _norm(p, env) not in have]
    if not missing:
        return data
    import tomlkit

    doc = tomlkit.parse(data.decode("utf-8"))
    if "daemon" not in doc:
        doc["daemon"] = tomlkit.table()
    table = doc["daemon"]
    if "roots" in table:
        array = table["roots"]
        for pattern in missing:
            array.append(pattern)
    else:
        table["roots"] = [*current, *missing]
    return tomlkit.dumps(doc).encode("utf-8")


def _norm(pattern: str, env: Mapping[str, str]) -> str:
    return os.path.normpath(expand_user(pattern, env))
