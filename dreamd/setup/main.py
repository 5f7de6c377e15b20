"""``dreamd setup`` and ``dreamd setup --undo``: print a plan (:mod:`.plan`) or apply it.

``--dry-run`` prints the plan as unified diffs and commands. Applying records each file's
previous bytes in the state file *before* writing it, so an interrupted setup can still be
undone; a failed command fails its step, the others still run, and the exit code is 1.
"""

from __future__ import annotations

import difflib
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from dreamd.setup import state
from dreamd.setup.plan import FileChange, Options, Step, plan_setup, plan_undo, state_dir_of
from dreamd.setup.service import Runner

__all__ = ["Options", "setup_main", "undo_main"]


# --------------------------------------------------------------------------- printing, applying


def diff(change: FileChange) -> str:
    def lines(data: bytes | None) -> list[str]:
        return [] if data is None else data.decode("utf-8", "replace").splitlines(keepends=True)

    old = "/dev/null" if change.before is None else f"a{change.path}"
    new = "/dev/null" if change.after is None else f"b{change.path}"
    text = "".join(difflib.unified_diff(lines(change.before), lines(change.after), old, new))
    return text if text.endswith("\n") else text + "\n"


def _write(change: FileChange, state_dir: Path, stamp: str) -> str:
    from memory.fsutil import fsync_dir, replace_atomic

    note = ""
    if change.before is not None:
        backups = state_dir / state.BACKUPS
        backups.mkdir(parents=True, exist_ok=True, mode=0o700)
        backup = backups / f"{stamp}-{change.path.name}"
        backup.write_bytes(change.before)
        note = f" (backup {backup})"
    if change.after is None:
        change.path.unlink(missing_ok=True)
        fsync_dir(change.path.parent)
        return "removed " + str(change.path) + note
    change.path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = change.path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = change.mode
    replace_atomic(change.path, change.after, mode=mode)
    return ("wrote " if change.before is not None else "created ") + str(change.path) + note


def _missing_dirs(directory: Path) -> list[str]:
    """The directories a write to a file in ``directory`` creates, deepest first."""
    made: list[str] = []
    while not directory.exists() and directory != directory.parent:
        made.append(str(directory))
        directory = directory.parent
    return made


def _remove_made_dirs(made: Sequence[str]) -> list[str]:
    """Remove what setup created (``made_dirs``, deepest first) while it is empty; a directory
    that now holds anything else, or was replaced by a link, stays."""
    removed: list[str] = []
    for name in made:
        path = Path(name)
        if path.is_symlink() or not path.is_dir():
            break
        try:
            path.rmdir()
        except OSError:  # not empty: someone keeps something there
            break
        removed.append(name)
    return removed


def _run(runner: Runner, command: Sequence[str], out: TextIO) -> bool:
    code, said = runner(command)
    if code == 0:
        out.write(f"  ran {shlex.join(command)}\n")
        return True
    first = said.splitlines()[0] if said else ""
    out.write(f"dreamd setup: {shlex.join(command)} failed (exit {code}): {first}\n")
    return False


def _print_plan(steps: Sequence[Step], out: TextIO) -> int:
    count = 0
    for step in steps:
        for change in step.files:
            if change.changed:
                out.write(diff(change))
                count += 1
        for command in [*step.commands, *step.post_commands]:
            out.write(f"would run: {shlex.join(command)}\n")
            count += 1
        for note in step.notes:
            out.write(f"{step.name}: {note}\n")
    return count


def _write_hook_code(state_dir: Path, out: TextIO) -> None:
    """The redactor's compiled patterns written where the hook reads them
    (:mod:`memory.redact.saved`), so the first hook a user meets does not compile them. A
    cache: one that cannot be written costs the first hook its compile, never setup a step."""
    from memory.redact.saved import code_file, write_code

    try:
        wrote, count = write_code(state_dir)
    except OSError as exc:
        path = code_file(state_dir)
        out.write(f"{'regex':<8} could not write {path}: {exc}; the first hook compiles its patterns\n")
        return
    if wrote:
        out.write(f"{'regex':<8} wrote {code_file(state_dir)} (the hook's {count} compiled patterns)\n")


def setup_main(
    opts: Options, *, env: Mapping[str, str], runner: Runner, out: TextIO, platform: str = sys.platform
) -> int:
    """``dreamd setup``: 0 when everything is (now) set up, 1 when a step failed."""
    steps, extra = plan_setup(opts, env, runner, platform)
    if opts.dry_run:
        count = _print_plan(steps, out)
        out.write(f"dry run: nothing was changed ({count} change(s) planned)\n" if count else "dry run: nothing to change: already set up\n")
        return 0
    state_dir = state_dir_of(env)
    _write_hook_code(state_dir, out)
    recorded = state.load(state_dir) or {}
    files: dict[str, Any] = dict(recorded.get("files") or {})
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    if not any(s.changes for s in steps):
        for step in steps:
            out.write(f"{step.name:<8} unchanged: {step.unchanged}\n" if step.unchanged else "")
            for note in step.notes:
                out.write(f"{step.name:<8} {note}\n")
        out.write("dreamd setup: nothing to change: already set up\n")
        return 0
    failed = 0
    merged = {**recorded, "argv": list(opts.argv), "files": files}
    if "mcp" in extra and "mcp" not in recorded:
        merged["mcp"] = extra["mcp"]
    if "service" in extra:
        merged["service"] = extra["service"]
    for step in steps:
        wrote: list[str] = []
        for change in step.files:
            if not change.changed:
                continue
            key = str(change.path)
            entry = files.get(key) or {"what": change.what, "before": state.encode(change.before)}
            if key not in files and change.before is None:
                made = _missing_dirs(change.path.parent)
                if made:  # taken out again by --undo once they are empty
                    entry["made_dirs"] = made
            entry["after"] = state.digest(change.after or b"")
            files[key] = entry
            state.save(state_dir, merged)
            wrote.append(_write(change, state_dir, stamp))
        if step.name == "service" and extra.get("service", {}).get("manager") == "launchd":
            home = env.get("HOME") or os.path.expanduser("~")
            Path(home, "Library", "Logs", "dreamd").mkdir(parents=True, exist_ok=True)
        if not step.changes:
            out.write(f"{step.name:<8} unchanged: {step.unchanged}\n" if step.unchanged else "")
        for line in wrote:
            out.write(f"{step.name:<8} {line}\n")
        if step.commands or step.post_commands:
            state.save(state_dir, merged)
            out.write(f"{step.name:<8} running:\n")
        for command in [*step.commands, *step.post_commands]:
            if not _run(runner, command, out):
                failed += 1
                break
        for note in step.notes:
            out.write(f"{step.name:<8} {note}\n")
    if failed:
        out.write(f"dreamd setup: {failed} step(s) failed (above); the rest is set up, run it again after the fix\n")
        return 1
    out.write(
        f"dreamd setup: done (undo: {shlex.join([*opts.argv, 'setup', '--undo'])}); check it: "
        f"{shlex.join([*opts.argv, 'doctor'])}\n"
    )
    return 0


def undo_main(*, env: Mapping[str, str], runner: Runner, out: TextIO, dry_run: bool = False) -> int:
    """``dreamd setup --undo``: put back what setup changed; 1 when a step could not be undone."""
    state_dir = state_dir_of(env)
    recorded = state.load(state_dir)
    if recorded is None:
        out.write(f"dreamd setup --undo: nothing to undo ({state_dir / state.STATE_NAME} does not exist)\n")
        return 0
    steps = plan_undo(recorded, env)
    if dry_run:
        count = _print_plan(steps, out)
        out.write(f"dry run: nothing was changed ({count} change(s) planned)\n")
        return 0
    ok = True
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    for step in steps:
        for command in step.commands:
            ok = _run(runner, command, out) and ok
        for change in step.files:
            if change.changed:
                out.write(f"{step.name:<8} {_write(change, state_dir, stamp + '-undo')}\n")
            if change.after is None:
                made = ((recorded.get("files") or {}).get(str(change.path)) or {}).get("made_dirs") or []
                for name in _remove_made_dirs([str(m) for m in made]):
                    out.write(f"{step.name:<8} removed {name}/ (setup created it)\n")
        for command in step.post_commands:
            ok = _run(runner, command, out) and ok
        for note in step.notes:
            out.write(f"{step.name:<8} {note}\n")
    if ok:
        from memory.redact.saved import code_file, remove_code

        if remove_code(state_dir):
            out.write(f"{'regex':<8} removed {code_file(state_dir)}\n")
        state.remove(state_dir)
        out.write("dreamd setup --undo: done\n")
        return 0
    out.write(f"dreamd setup --undo: incomplete; {state_dir / state.STATE_NAME} kept, run it again\n")
    return 1
