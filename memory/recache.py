"""Regular expressions with large Unicode classes, compiled once per interpreter version.

``re.compile`` turns a character class into a bitmap in pure Python, one loop step per code
point: the Chinese ranges of :mod:`memory.retrieval.tokens` (28,000 code points, five classes)
cost every process that tokenizes about 80 M instructions, most of a cold ``dreamd recall``
beyond the interpreter's own start-up and a large part of the hook's (issue 20). What
``re.compile`` produces is a pure function of the pattern, its flags and the interpreter, so
:func:`compile` keeps it: ``$XDG_CACHE_HOME/dreamd/regex-<interpreter>-<sre magic>.marshal``
(default ``~/.cache/dreamd``) maps ``(pattern, flags)`` to the compiled program, and a process
that finds its pattern there hands the program to ``_sre.compile`` (what ``re.compile`` ends
with) instead of compiling it again.

Invariants:

- Derived, rebuildable, never authoritative: the cache is keyed by the exact pattern text, the
  flags, the interpreter's version and the regex engine's magic number, and ``_sre`` validates
  every program it is given; anything missing, unreadable, foreign-owned, symlinked, oversized
  or refused falls back to ``re.compile``. Deleting the file costs one compile per pattern.
- It never changes what a pattern matches: the program kept is the one ``re.compile`` built
  for that pattern on this interpreter (``tests/test_recache.py`` compares them).
- Writing is best-effort (0600 in a 0700 folder): a process that cannot write compiles.

Stdlib only; ``marshal`` and ``_sre`` are built in.
"""

from __future__ import annotations

import os
import re
import sys
import threading

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the hook must not pay for importing typing
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = ["MAX_CACHE_BYTES", "cache_file", "compile"]

MAX_CACHE_BYTES = 4 * 1024 * 1024
_FORMAT = 1
_lock = threading.Lock()
_programs: dict[tuple[str, int], tuple[Any, ...]] | None = None


def cache_file(env: Any = None) -> Path:
    """Where this interpreter's compiled programs are kept."""
    import _sre  # type: ignore[import-not-found]

    from memory.settings import cache_home

    tag = sys.implementation.cache_tag or sys.implementation.name
    return cache_home(os.environ if env is None else env) / f"regex-{tag}-{_sre.MAGIC}.marshal"


def compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, the program read from the cache when it holds one."""
    global _programs
    try:
        import _sre

        with _lock:
            if _programs is None:
                _programs = _read()
            kept = _programs.get((pattern, flags))
        if kept is not None:
            final_flags, code, groups, groupindex, indexgroup = kept
            compiled: re.Pattern[str] = _sre.compile(pattern, final_flags, code, groups, groupindex, indexgroup)
            return compiled
        program = _program(pattern, flags)
        compiled = _sre.compile(pattern, *program)
    except Exception:  # an interpreter whose re internals differ, or a refused program
        return re.compile(pattern, flags)
    with _lock:
        assert _programs is not None
        _programs[(pattern, flags)] = program
        _write(_programs)
    return compiled


def _program(pattern: str, flags: int) -> tuple[Any, ...]:
    """What ``re._compiler.compile`` hands ``_sre.compile`` after the pattern (CPython 3.11+)."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    parsed = _parser.parse(pattern, flags)
    code = _compiler._code(parsed, flags)
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    return (int(flags | parsed.state.flags), [int(c) for c in code], parsed.state.groups - 1, groupindex, tuple(indexgroup))


def _read() -> dict[tuple[str, int], tuple[Any, ...]]:
    import marshal

    from memory.fsutil import open_regular

    try:
        doc = marshal.loads(open_regular(cache_file(), max_bytes=MAX_CACHE_BYTES))
    except Exception:  # absent, unsafe, truncated or not ours: compile
        return {}
    if not isinstance(doc, dict) or doc.get("format") != _FORMAT or doc.get("version") != sys.version:
        return {}
    programs = doc.get("programs")
    if not isinstance(programs, dict):
        return {}
    return {
        key: value for key, value in programs.items()
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str) and isinstance(key[1], int)
        and isinstance(value, tuple) and len(value) == 5
    }  # fmt: skip


def _write(programs: dict[tuple[str, int], tuple[Any, ...]]) -> None:
    import marshal
    import stat

    from memory.fsutil import replace_atomic

    try:
        path = cache_file()
        data = marshal.dumps({"format": _FORMAT, "version": sys.version, "programs": programs})
        if len(data) > MAX_CACHE_BYTES:
            return
        os.makedirs(path.parent.parent, mode=0o700, exist_ok=True)
        try:
            os.mkdir(path.parent, 0o700)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(path.parent).st_mode):
                return  # a symlink or a file is never written through
        replace_atomic(path, data, mode=0o600, sync_dir=False)
    except (OSError, ValueError):
        return
