"""The allowed roots: which memory directories the daemon, the hook and the MCP server may touch.

Roots are config strings (``[daemon] roots``) that may hold ``~`` and globs
(``~/code/*/.memory``). :func:`dir_allowed` decides whether one directory is inside them (a
job's ``memory_dir``, Claude Code's auto-memory found by the hook, a directory an MCP tool
names); :func:`expand_roots` lists the existing directories they match (the daemon's roots
rescan, ``dreamd status``).

A symlink under a root that points elsewhere never extends the roots, and ``*`` never crosses
a ``/``: see :func:`dir_allowed`.

Stdlib only, and nothing ``dreamd hook`` does not already load but ``glob``: the hook checks
Claude Code's auto-memory against the roots on its hot path.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from pathlib import Path

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the hook ~10 ms
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["dir_allowed", "expand_roots"]

_GLOB_CHARS = re.compile(r"[*?\[]")


def _split_pattern(pattern: str) -> tuple[str, list[str]]:
    """Split an expanded root pattern into its real glob-free prefix and the glob segments."""
    parts = Path(pattern).parts
    fixed: list[str] = []
    for i, part in enumerate(parts):
        if _GLOB_CHARS.search(part):
            return os.path.realpath(os.path.join(*fixed)) if fixed else "/", list(parts[i:])
        fixed.append(part)
    return os.path.realpath(os.path.join(*fixed)), []


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def _root_pattern(root: str) -> str | None:
    expanded = os.path.expanduser(root)
    return expanded if os.path.isabs(expanded) else None


def dir_allowed(memory_dir: str | os.PathLike[str], roots: Sequence[str]) -> bool:
    """True when ``memory_dir``'s real path equals, or is inside, a path some root matches.

    A root matches any *real* path whose segments fnmatch the pattern with its glob-free
    prefix resolved, so a directory created later is allowed too. A symlink under a root that
    points elsewhere does not extend the roots — otherwise anyone able to plant a link there
    could aim jobs anywhere: list the real location in ``roots`` to manage it. ``*`` never
    crosses a ``/``. Relative roots match nothing.
    """
    real = os.path.realpath(memory_dir)
    real_parts = Path(real).parts
    for root in roots:
        pattern = _root_pattern(root)
        if pattern is None:
            continue
        prefix, rest = _split_pattern(pattern)
        if not rest:
            if _inside(real, prefix):
                return True
            continue
        prefix_parts = Path(prefix).parts
        depth = len(prefix_parts) + len(rest)
        if (
            len(real_parts) >= depth
            and real_parts[: len(prefix_parts)] == prefix_parts
            and all(
                fnmatch.fnmatchcase(seg, pat)
                for seg, pat in zip(real_parts[len(prefix_parts) : depth], rest, strict=True)
            )
        ):
            return True
    return False


def expand_roots(roots: Sequence[str]) -> list[Path]:
    """Existing directories the root patterns match, resolved, deduplicated and sorted."""
    found: set[str] = set()
    for root in roots:
        pattern = _root_pattern(root)
        if pattern is None:
            continue
        for match in glob.glob(pattern):
            if os.path.isdir(match):
                found.add(os.path.realpath(match))
    return [Path(p) for p in sorted(found)]
