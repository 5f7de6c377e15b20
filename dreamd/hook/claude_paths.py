"""Where Claude Code keeps things: its config folder, its settings, a project's auto-memory.

Claude Code (2.1.x) stores a project's sessions in ``<config>/projects/<key>/`` and its
auto-memory in ``<config>/projects/<key>/memory/``, where ``<config>`` is
``$CLAUDE_CONFIG_DIR`` else ``~/.claude`` and ``<key>`` is the project path with every
non-alphanumeric character replaced by ``-``. The memory folder is keyed by the git root when
the session runs inside a repository (all sessions of one repository share one memory), the
session folder by the working directory. ``autoMemoryDirectory`` in a settings file moves the
memory elsewhere; ``autoMemoryEnabled: false`` (or ``CLAUDE_CODE_DISABLE_AUTO_MEMORY``) turns
it off, and then nothing of Claude Code's own reads it.

Only the standard library's light modules are imported: ``dreamd hook`` resolves this at every
hook call.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

SETTINGS_FILES = ("settings.json",)
PROJECT_SETTINGS_FILES = (".claude/settings.json", ".claude/settings.local.json")
MAX_SETTINGS_BYTES = 1024 * 1024


def expand_home(path: str, env: Mapping[str, str]) -> str:
    """``~`` → ``$HOME`` from ``env`` (tests pass their own environment)."""
    if path == "~" or path.startswith("~/"):
        home = env.get("HOME") or os.path.expanduser("~")
        return home + path[1:]
    return path


def config_dir(env: Mapping[str, str]) -> Path:
    """Claude Code's own folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    named = env.get("CLAUDE_CONFIG_DIR", "")
    if named and os.path.isabs(expand_home(named, env)):
        return Path(expand_home(named, env))
    return Path(expand_home("~/.claude", env))


def project_key(path: str) -> str:
    """The folder name Claude Code gives a project: non-alphanumerics become ``-``."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in path)


def git_root(start: str) -> str | None:
    """The nearest ancestor of ``start`` (itself included) holding ``.git``; None outside a repo."""
    current = os.path.normpath(start)
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def read_settings(path: Path) -> dict[str, object]:
    """One settings file as a dict; {} when it is missing, unreadable, oversized or not JSON.

    Claude Code ignores a broken settings file the same way, so a hook must not fail on one.
    """
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_SETTINGS_BYTES + 1)
    except OSError:
        return {}
    if len(data) > MAX_SETTINGS_BYTES:
        return {}
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def merged_settings(project: str | None, env: Mapping[str, str]) -> dict[str, object]:
    """User settings, then the project's shared and local settings (later files win)."""
    merged: dict[str, object] = {}
    base = config_dir(env)
    for name in SETTINGS_FILES:
        merged.update(read_settings(base / name))
    if project:
        for rel in PROJECT_SETTINGS_FILES:
            merged.update(read_settings(Path(project) / rel))
    return merged


def auto_memory_dir(
    cwd: str, transcript_path: str | None, env: Mapping[str, str]
) -> tuple[Path | None, str]:
    """Claude Code's auto-memory directory for a session in ``cwd``, and how it was found.

    Returns ``(None, reason)`` when auto-memory is turned off or ``autoMemoryDirectory`` is not
    usable. The project folder is the git root's key; outside a repository, the folder of the
    session's transcript when it lies directly under ``<config>/projects/`` (Claude Code named
    it, so long or unusual paths need no guessing), else the key of ``cwd``.
    """
    root = git_root(cwd)
    project = root or cwd
    settings = merged_settings(project, env)
    if env.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "").lower() in ("1", "true", "yes"):
        return None, "auto-memory disabled by CLAUDE_CODE_DISABLE_AUTO_MEMORY"
    if settings.get("autoMemoryEnabled") is False:
        return None, "auto-memory disabled by autoMemoryEnabled=false"
    configured = settings.get("autoMemoryDirectory")
    if isinstance(configured, str) and configured.strip():
        expanded = expand_home(configured.strip(), env)
        if not os.path.isabs(expanded):
            return None, f"autoMemoryDirectory {configured!r} is not an absolute path"
        return Path(os.path.normpath(expanded)), "autoMemoryDirectory"
    projects = config_dir(env) / "projects"
    if root is None and transcript_path:
        folder = Path(expand_home(transcript_path, env)).parent
        if folder.parent == projects:
            return folder / "memory", "transcript folder"
    how = "git root" if root is not None else "cwd"
    return projects / project_key(project) / "memory", how
