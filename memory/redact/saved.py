"""The redactor's compiled-pattern file written before the first hook needs it, and checked.

The hook keeps the SRE code of the patterns it compiled in ``<state>/hook-regex/`` (one file
per interpreter, :data:`memory.redact.engine.CODE_TAG`; :func:`~memory.redact.engine.load_code`,
:func:`~memory.redact.engine.save_code`), so every hook after the first builds its patterns
from that code instead of compiling them in Python. The first hook ever had to compile and
write it, over the hook's budget (README "The hook's budget after the eleventh round");
``dreamd setup`` and the daemon's start write it here first, for every pattern of the
redactor, through the hook's own calls: the file the hook reads (its name and folder), the
entries ``_sre.compile`` accepts kept and any other compiled afresh, written atomically with
mode 0600 in a 0700 folder, and only when something was missing. ``dreamd doctor`` asks
:func:`check_code` whether it is there and holds every pattern.

Not on the hook path: the hook imports none of this.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]
import contextlib
import importlib
import os
from pathlib import Path

import memory.redact
from memory.redact import engine

CODE_FOLDER = "hook-regex"
"""The hook's folder for the code file, under its state directory (``dreamd.hook.main``)."""


def code_file(state_dir: Path) -> Path:
    """The file the hook reads in ``state_dir`` for this interpreter."""
    return engine.code_path(state_dir / CODE_FOLDER)


def redactor_patterns() -> list[tuple[str, int]]:
    """Every ``(pattern, flags)`` the redactor holds, once each, in the order they were made:
    those of every module of the package, imported here (``carried``, which the hook imports
    and ``memory.redact`` does not, holds some)."""
    for folder in memory.redact.__path__:  # not pkgutil: it imports typing (doctor does not)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py") and not name.startswith("_"):
                importlib.import_module(f"memory.redact.{name[:-3]}")
    return list(dict.fromkeys((lazy.pattern, int(lazy.flags)) for lazy in engine.MADE))


def write_code(state_dir: Path) -> tuple[bool, int]:
    """Make the hook's code file in ``state_dir`` hold every pattern of the redactor: whether
    it was written (False: it held them all already) and how many patterns it holds."""
    valid, total, _why = check_code(state_dir)
    if valid == total:
        return False, total
    path = code_file(state_dir)
    engine.load_code(path)
    for pattern, flags in redactor_patterns():
        engine.compile_pattern(pattern, flags)
    return engine.save_code(path, force=True), total


def check_code(state_dir: Path) -> tuple[int, int, str | None]:
    """How many patterns of the redactor the hook's code file in ``state_dir`` holds in a form
    ``_sre.compile`` accepts, of how many, and why none when it cannot be read (None when it
    was read). Reads only."""
    path = code_file(state_dir)
    patterns = redactor_patterns()
    try:
        loaded = engine.read_code(path)
    except FileNotFoundError:
        return 0, len(patterns), "missing"
    except (OSError, ValueError, EOFError, TypeError) as exc:
        return 0, len(patterns), f"unreadable ({type(exc).__name__})"
    if not isinstance(loaded, dict):
        return 0, len(patterns), "not a code file"
    valid = 0
    for key in patterns:
        entry = loaded.get(key)
        if entry is None:
            continue
        try:
            _sre.compile(key[0], *entry)
        except Exception:  # the hook compiles such an entry afresh
            continue
        valid += 1
    return valid, len(patterns), None


def remove_code(state_dir: Path) -> bool:
    """Take this interpreter's code file out of ``state_dir`` (``dreamd setup --undo``), and its
    folder once empty; whether there was one. A hook run later writes it again."""
    path = code_file(state_dir)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    with contextlib.suppress(OSError):  # it holds another interpreter's file
        path.parent.rmdir()
    return True
