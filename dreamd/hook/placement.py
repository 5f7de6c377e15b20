"""Which memory directory a session, an MCP server or a command in some directory uses (DESIGN §5).

One rule for the hook, ``dreamd mcp`` and every CLI command run without a directory argument,
so one project feeds one directory wherever in it an agent starts. First match wins:

1. the nearest managed ``.memory`` (one holding ``manifest.json``) from the working directory up
   to the git root (only the working directory itself outside a repository). A ``manifest.json``
   that is there but unusable (a FIFO, a directory, a link to a device or out of the directory)
   still marks the project's directory: the session goes there and its job is deferred and
   reported naming the manifest (:func:`manifest_problem`), never to another directory;
2. ``[daemon] projects``: the entry for the working directory or its nearest configured ancestor;
3. Claude Code's own auto-memory directory of the project (:mod:`dreamd.hook.claude_paths`:
   keyed by the git root, so ``webapp/src`` and ``webapp`` share it), when it lies inside the
   configured ``roots`` — zero configuration; it is adopted on first use.

A session the hook cannot place (auto-memory off, moved outside the roots, no working
directory) is counted in ``<state>/unplaced.json`` (:func:`note_unplaced`), so ``dreamd status``
and ``dreamd doctor`` show it instead of only ``hook.log``. That file is small and bounded, written
atomically (temp file + rename) and read with a size cap.

Only light standard-library modules are imported: the hook resolves this at every call.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path

from dreamd.hook import claude_paths

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the hook must not pay for importing typing
if TYPE_CHECKING:
    from typing import Any

DOT_MEMORY = ".memory"
MANIFEST = "manifest.json"
DEFAULT_ROOTS = ("~/.claude/projects/*/memory", "~/code/*/.memory")
"""``[daemon] roots`` without a config file (a test pins it to ``dreamd.config``'s default)."""
UNPLACED_NAME = "unplaced.json"
UNPLACED_MAX_BYTES = 16 * 1024
UNPLACED_RECENT = 5
"""How many of the latest unplaced sessions the state file keeps (with reason and cwd)."""

AUTO_MEMORY = "Claude Code auto-memory"
DOT_SOURCE = "project .memory"
CONFIGURED = "[daemon] projects"


class Target:
    """Where a session's memory goes: the directory, which rule chose it, and whether the
    daemon should adopt it on first use (Claude Code's auto-memory directory)."""

    __slots__ = ("adopt", "auto_dir", "memory_dir", "source")

    def __init__(self, memory_dir: Path, source: str, auto_dir: Path | None, adopt: bool) -> None:
        self.memory_dir = memory_dir
        self.source = source
        self.auto_dir = auto_dir
        self.adopt = adopt


def _expand(path: str, env: Mapping[str, str]) -> str:
    return os.path.expanduser(claude_paths.expand_home(path, env))


def has_manifest(memory_dir: Path) -> bool:
    """Whether ``memory_dir`` holds a ``manifest.json`` entry of any kind (not followed, never
    opened: a FIFO or a link to ``/dev/zero`` is seen without blocking or reading)."""
    try:
        os.lstat(memory_dir / MANIFEST)
    except (OSError, ValueError):
        return False
    return True


def manifest_problem(memory_dir: Path) -> str | None:
    """Why ``memory_dir``'s ``manifest.json`` cannot be read as the store's manifest (one line
    naming it), or None when it is a regular file (or a link to one inside the directory; what
    it says is the store's to check)."""
    import stat

    path = memory_dir / MANIFEST
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return f"{path} is missing"
    except OSError as exc:
        return f"{path} cannot be examined ({exc.strerror or exc})"
    except ValueError as exc:  # a NUL in the path
        return f"{path} cannot be examined ({exc})"
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.path.realpath(path)
            st = os.stat(path)
        except OSError:
            return f"{path} is a dangling symbolic link"
        if os.path.dirname(target) != os.path.realpath(memory_dir):
            return f"{path} is a symbolic link out of the directory (to {target})"
    if not stat.S_ISREG(st.st_mode):
        kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
                else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        return f"{path} is {kind}, not a regular file"
    return None


def nearest_dot_memory(start: str) -> Path | None:
    """The nearest managed ``.memory`` from ``start`` up to its git root (``start`` only outside
    a repository); a symlinked ``.memory`` counts only when it has a manifest like any other,
    and a manifest that is unusable still counts (:func:`has_manifest`)."""
    current = os.path.normpath(start)
    stop = claude_paths.git_root(current) or current
    while True:
        candidate = Path(current) / DOT_MEMORY
        if has_manifest(candidate):
            return candidate
        if current == stop:
            return None
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def configured_dir(project: str, projects: Mapping[Path, Path], env: Mapping[str, str]) -> Path | None:
    """The ``[daemon] projects`` entry for ``project`` (nearest configured ancestor wins)."""
    candidates = {os.path.normpath(project), os.path.realpath(project)}
    best: tuple[int, Path] | None = None
    for key, memory_dir in projects.items():
        key_text = _expand(os.fspath(key), env)
        for base in {os.path.normpath(key_text), os.path.realpath(key_text)}:
            prefix = base.rstrip(os.sep) + os.sep
            if any(c == base or c.startswith(prefix) for c in candidates) and (
                best is None or len(base) > best[0]
            ):
                best = (len(base), Path(_expand(os.fspath(memory_dir), env)))
    return best[1] if best is not None else None


def memory_dir_for(project: str, projects: Mapping[Path, Path], env: Mapping[str, str]) -> Path | None:
    """Rules 1 and 2 only: the nearest managed ``.memory``, else the configured directory."""
    expanded = _expand(project, env)
    if not os.path.isabs(expanded):
        return None
    return nearest_dot_memory(expanded) or configured_dir(expanded, projects, env)


def place(
    cwd: str | None,
    *,
    projects: Mapping[Path, Path],
    roots: tuple[str, ...] | list[str] | None,
    env: Mapping[str, str],
    transcript: str | None = None,
    check_roots: bool = True,
) -> tuple[Target | None, str]:
    """The memory directory for work in ``cwd`` (the module's rule), or None and the reason.

    ``check_roots`` refuses an auto-memory directory outside the daemon's allowlist (its job
    would only land in ``failed/``); readers skip the check, they only read managed folders.
    """
    if not isinstance(cwd, str) or not cwd:
        return None, "no working directory (no cwd in the payload and no CLAUDE_PROJECT_DIR)"
    expanded = _expand(cwd, env)
    if not os.path.isabs(expanded):
        return None, f"project {cwd!r} is not an absolute path here"
    auto, how = claude_paths.auto_memory_dir(expanded, transcript, env)
    dot = nearest_dot_memory(expanded)
    if dot is not None:
        return Target(dot, DOT_SOURCE, auto, False), "managed"
    configured = configured_dir(expanded, projects, env)
    if configured is not None:
        return Target(configured, CONFIGURED, auto, False), "configured"
    if auto is None:
        return None, how
    if check_roots:
        from memory.roots import dir_allowed

        patterns = roots if roots is not None else DEFAULT_ROOTS
        if not dir_allowed(auto, [_expand(r, env) for r in patterns]):
            return None, f"Claude Code auto-memory {auto} is outside [daemon] roots"
    return Target(auto, f"{AUTO_MEMORY} ({how})", auto, True), "auto-memory"


# ----------------------------------------------------------------------------- unplaced sessions


def unplaced_path(state_dir: Path) -> Path:
    return state_dir / UNPLACED_NAME


def read_unplaced(state_dir: Path) -> dict[str, Any]:
    """The unplaced-sessions state: ``{"count", "first_at", "last_at", "recent": [...]}``
    (``{}`` when there is none or it is unreadable, oversized or not a JSON object)."""
    try:
        fd = os.open(unplaced_path(state_dir), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return {}
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return {}
        data = os.read(fd, UNPLACED_MAX_BYTES + 1)
    except OSError:
        return {}
    finally:
        os.close(fd)
    if len(data) > UNPLACED_MAX_BYTES:
        return {}
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return {}
    if not isinstance(value, dict) or not isinstance(value.get("count"), int):
        return {}
    recent = value.get("recent")
    value["recent"] = [r for r in recent if isinstance(r, dict)][-UNPLACED_RECENT:] if isinstance(recent, list) else []
    return value


def _redacted(value: str) -> str:
    """A payload value with its secrets replaced (issue 22; an unplaced session is rare, so the
    redactor's import is affordable here); one that holds a token only as a part of a longer
    identifier (``s-ghp_…``, which the shapes do not start inside) is replaced whole."""
    from memory.redact import MARKER, name_kinds, redact

    out = redact(value)[0]
    if out == value:
        kinds = name_kinds(value)
        if kinds:
            return MARKER.format(kind=kinds[0])
    return out


def note_unplaced(state_dir: Path, *, reason: str, cwd: object, session_id: object, event: object,
                  transcript: object = None) -> None:
    """Count one session the hook could not place, keeping the latest few with their reason
    (a session already among the latest is moved to the end, not counted again).

    Read-modify-write without a lock: two hooks at the same instant may count one; the file is
    always whole (rename), and the latest reason is what the user needs. The payload's values
    (cwd, session id, event, transcript path, a reason quoting them) are written redacted. The
    transcript's path is kept so the session can be handed in again once it can be placed
    (:func:`describe_unplaced` says how). Never raises.
    """
    try:
        state = read_unplaced(state_dir)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        entry = {
            "at": now,
            "reason": str(reason)[:500],
            "cwd": str(cwd)[:1000] if cwd else None,
            "session_id": str(session_id)[:128] if session_id else None,
            "hook": str(event)[:64] if event else None,
            "transcript": str(transcript)[:4096] if transcript else None,
        }
        entry = {k: _redacted(v) if isinstance(v, str) else v for k, v in entry.items()}
        recent = state.get("recent", [])
        again = bool(session_id) and any(r.get("session_id") == entry["session_id"] for r in recent)
        out = {
            # a session's every Stop comes here: count sessions, not calls
            "count": int(state.get("count", 0)) + (0 if again else 1),
            "first_at": state.get("first_at") or now,
            "last_at": now,
            "recent": [*(r for r in recent if not again or r.get("session_id") != entry["session_id"]), entry][-UNPLACED_RECENT:],
        }
        state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = unplaced_path(state_dir)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, json.dumps(out, ensure_ascii=False).encode("utf-8", "replace"))
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except Exception:
        pass


def describe_unplaced(state: Mapping[str, Any]) -> str | None:
    """One line for ``status``/``doctor``: how many sessions were not placed, the latest why/where."""
    count = state.get("count")
    if not isinstance(count, int) or count <= 0:
        return None
    recent = state.get("recent") or [{}]
    last = recent[-1] if isinstance(recent[-1], dict) else {}
    where = f" (cwd {last['cwd']})" if last.get("cwd") else ""
    again = ""
    if isinstance(last.get("transcript"), str):
        import shlex

        again = (f"; Claude Code keeps its transcript: once it can be placed, hand it in with "
                 f"dreamd submit {shlex.quote(last['transcript'])} --memory-dir DIR "
                 f"(status --json lists the latest {UNPLACED_RECENT})")
    return (
        f"{count} session(s) the hook could not place since {state.get('first_at', '?')}; "
        f"last at {state.get('last_at', '?')}: {last.get('reason', '?')}{where}{again}"
    )
