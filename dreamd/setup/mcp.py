"""The MCP server's registration with Claude Code, for the user (every project).

Read from Claude Code's own file (``~/.claude.json``, or ``$CLAUDE_CONFIG_DIR/.claude.json``:
top-level ``mcpServers``), written only through the ``claude`` CLI (``claude mcp add --scope
user``), which owns that file. A ``dreamd`` entry running another command is replaced and kept
in the setup state, so ``--undo`` can put it back (``claude mcp add-json``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from dreamd.hook.claude_paths import expand_home

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from typing import Any

SERVER = "dreamd"
MAX_BYTES = 16 * 1024 * 1024


def claude_json(env: Mapping[str, str]) -> Path:
    named = env.get("CLAUDE_CONFIG_DIR", "")
    if named and os.path.isabs(expand_home(named, env)):
        return Path(expand_home(named, env)) / ".claude.json"
    return Path(expand_home("~/.claude.json", env))


def user_server(env: Mapping[str, str]) -> dict[str, Any] | None:
    """The user-scope ``dreamd`` server as Claude Code keeps it, or None."""
    try:
        with open(claude_json(env), "rb") as f:
            data = json.loads(f.read(MAX_BYTES))
    except (OSError, ValueError):
        return None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    entry = servers.get(SERVER) if isinstance(servers, dict) else None
    return entry if isinstance(entry, dict) else None


def server_argv(argv: Sequence[str]) -> list[str]:
    return [*argv, "mcp"]


def registered_as(entry: Mapping[str, Any] | None, argv: Sequence[str]) -> bool:
    if entry is None:
        return False
    want = server_argv(argv)
    return bool(entry.get("command") == want[0] and list(entry.get("args") or []) == want[1:])


def add_command(claude: str, argv: Sequence[str]) -> list[str]:
    return [claude, "mcp", "add", "--scope", "user", SERVER, "--", *server_argv(argv)]


def remove_command(claude: str) -> list[str]:
    return [claude, "mcp", "remove", "--scope", "user", SERVER]


def restore_command(claude: str, entry: Mapping[str, Any]) -> list[str]:
    return [claude, "mcp", "add-json", "--scope", "user", SERVER, json.dumps(entry)]
