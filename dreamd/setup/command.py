"""Which ``dreamd`` setup writes into hooks, the MCP registration, the unit and the plugin file.

Always an absolute command, because Claude Code, systemd and launchd run it with a PATH of
their own: the script that runs (``sys.argv[0]`` made absolute: ``~/.local/bin/dreamd`` for
pipx, ``.venv/bin/dreamd`` for a venv), or ``<python> -m dreamd`` when started that way. The
interpreter's path is kept as given, never resolved: a venv's ``bin/python`` is a symlink to
the base interpreter, which does not see the venv's packages.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

HOOK_TIMEOUTS = {
    "SessionStart": 10,
    "UserPromptSubmit": 10,
    "Stop": 30,
    "PreCompact": 30,
    "SessionEnd": 30,
}
"""The README's hooks: seconds Claude Code waits for each event (it cancels a SessionEnd hook
after 1.5 s by default; a prompt must never wait long)."""


def dreamd_argv(argv0: str, executable: str) -> list[str]:
    """The absolute command that runs this dreamd (see the module docstring)."""
    if os.path.basename(argv0) in ("__main__.py", "-m", "-c") or not argv0:
        return [os.path.abspath(executable), "-m", "dreamd"]
    return [os.path.abspath(argv0)]


def hook_command(argv: Sequence[str]) -> str:
    """The hook's command line: Claude Code runs it with ``sh -c``."""
    return shlex.join([*argv, "hook"])
