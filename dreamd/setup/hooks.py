"""The hooks in Claude Code's ``settings.json``: merged in, and taken out again (pure).

Claude Code's settings shape: ``{"hooks": {"<Event>": [{"matcher"?: …, "hooks": [{"type":
"command", "command": …, "timeout": …}]}]}}``. Setup adds one group per event running the
absolute dreamd command, keeps every other tool's hooks as they are, and repoints an entry
that already runs some other ``dreamd hook`` (the README's old bare ``dreamd hook``, a moved
venv) instead of adding a second one, so a session is never enqueued twice. Output is JSON
indented by two spaces; a file with nothing to change is returned byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from dreamd.setup.command import HOOK_TIMEOUTS
from memory.errors import ConfigError

MAX_SETTINGS_BYTES = 1024 * 1024


def runs_dreamd_hook(command: object) -> bool:
    """A hook command that runs some ``dreamd hook`` (a path, ``python -m dreamd``, the plugin's
    launcher): what setup repoints and what doctor runs."""
    if not isinstance(command, str):
        return False
    words = command.replace('"', " ").replace("'", " ").split()
    return "hook" in words and any(
        w == "dreamd" or w.endswith("/dreamd") for w in words[: words.index("hook")]
    )


def parse_settings(data: bytes | None, where: str) -> dict[str, Any]:
    """``settings.json`` as a dict ({} when absent); anything else is refused in one line."""
    if data is None or not data.strip():
        return {}
    if len(data) > MAX_SETTINGS_BYTES:
        raise ConfigError(f"{where}: over {MAX_SETTINGS_BYTES} bytes; not touched")
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{where}: not UTF-8 (byte {exc.start}); fix or move it, then run dreamd setup again") from None
    except ValueError as exc:
        raise ConfigError(f"{where}: not valid JSON ({exc}); fix or move it, then run dreamd setup again") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: not a JSON object (got {type(value).__name__}); not touched")
    hooks = value.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise ConfigError(f'{where}: "hooks" is not an object; not touched')
    for event in HOOK_TIMEOUTS:
        groups = hooks.get(event) if isinstance(hooks, dict) else None
        if groups is not None and not isinstance(groups, list):
            raise ConfigError(f'{where}: "hooks.{event}" is not a list; not touched')
    return value


def _render(settings: dict[str, Any]) -> bytes:
    return (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def merge_hooks(data: bytes | None, command: str, *, where: str) -> bytes:
    """``settings.json`` running ``command`` for every event of :data:`HOOK_TIMEOUTS`."""
    settings = parse_settings(data, where)
    hooks = settings.setdefault("hooks", {})
    changed = False
    for event, timeout in HOOK_TIMEOUTS.items():
        groups = hooks.setdefault(event, [])
        ours = [
            entry
            for group in groups
            if isinstance(group, dict) and isinstance(group.get("hooks"), list)
            for entry in group["hooks"]
            if isinstance(entry, dict) and runs_dreamd_hook(entry.get("command"))
        ]
        if not ours:
            groups.append({"hooks": [{"type": "command", "command": command, "timeout": timeout}]})
            changed = True
            continue
        for entry in ours:
            if entry.get("command") != command or entry.get("type") != "command":
                entry.update(type="command", command=command)
                changed = True
            if not isinstance(entry.get("timeout"), int | float) or entry["timeout"] <= 0:
                entry["timeout"] = timeout
                changed = True
    if not changed and data is not None:
        return data
    return _render(settings)


def remove_hooks(data: bytes, command: str, *, where: str) -> bytes:
    """``settings.json`` without the entries running ``command`` (an undo after the file was
    changed since setup): groups and events left empty go too, everything else stays."""
    return _without(data, lambda c: c == command, where=where)


def remove_dreamd_hooks(data: bytes, *, where: str) -> bytes:
    """``settings.json`` without any entry that runs some ``dreamd hook`` (setup ``--plugin``:
    the plugin brings the hooks, and a second set would send every session twice)."""
    return _without(data, runs_dreamd_hook, where=where)


def _without(data: bytes, drop: Callable[[object], bool], *, where: str) -> bytes:
    settings = parse_settings(data, where)
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return data
    changed = False
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            entries = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(entries, list):
                kept_groups.append(group)
                continue
            kept = [e for e in entries if not (isinstance(e, dict) and drop(e.get("command")))]
            if len(kept) != len(entries):
                changed = True
            if kept:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not changed:
        return data
    if not hooks:
        del settings["hooks"]
    return _render(settings)
