"""``dreamd setup``: one idempotent command that makes a working installation, and its undo.

What it sets up (each step a plan over what is on disk, computed by :mod:`.plan` before anything
is touched, then printed or applied by :mod:`.main`):

- **hooks** (:mod:`.hooks`): the five events in ``~/.claude/settings.json`` run the *absolute*
  command of the dreamd that ran setup (Claude Code's PATH need not hold it), each with a
  timeout, merged with the hooks already there; a stale ``dreamd hook`` entry is repointed.
- **mcp** (:mod:`.mcp`): ``claude mcp add --scope user dreamd -- <dreamd> mcp`` when the
  ``claude`` CLI is on PATH, else the exact command is printed.
- **config** (:mod:`.roots`): the dreamd config's ``[daemon] roots`` cover Claude Code's
  project memories and every ``--root``; the rest of the user's file is kept as written.
- **service** (:mod:`.service`): a systemd user unit where a user manager answers, a launchd
  agent on macOS, else the exact command that starts ``dreamd run``.
- **plugin** (``--plugin``): instead of hooks and MCP (the plugin brings both), the command
  the plugin's launcher runs is recorded in ``<state>/plugin-command``.

Invariants:

- ``--dry-run`` prints every change (a unified diff per file, each command it would run) and
  touches nothing. A run on a set-up machine changes nothing and says so.
- Every file is written atomically after its previous bytes are saved in the state file
  (:mod:`.state`, ``<state>/setup.json``) and a backup copy; ``--undo`` puts back the bytes
  that were there before the first setup — byte for byte — when the file is still as setup left
  it, and otherwise removes only what setup added, so an edit made since is never lost.
- A settings file or config that does not parse is refused with one line, never rewritten.
"""
