"""``dreamd doctor``'s placement checks: where sessions go, and sessions that go nowhere.

Two ways a user's sessions were lost without a word (issue 20): jobs for a directory outside
``[daemon] roots`` (the daemon fails each one) and sessions the hook could not place at all
(Claude Code's auto-memory moved outside the roots, turned off, no working directory), which
left only a line in ``hook.log``. Each is a doctor line here; ``dreamd status`` shows the same
facts (:func:`dreamd.cli.status.collect_status`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from dreamd.cli.doctor import FAIL, OK, WARN, Check
from dreamd.config import Config

__all__ = ["check_spool_dirs", "check_unplaced", "placement_checks"]


def check_spool_dirs(config: Config) -> Check:
    """FAIL when jobs in the spool name a directory outside the roots (each of them fails)."""
    from dreamd.cli.status import spool_dirs
    from memory.roots import dir_allowed

    outside = {d: c for d, c in spool_dirs(config.daemon.spool).items() if not dir_allowed(d, config.daemon.roots)}
    if not outside:
        return Check(OK, "job directories", "every directory the spool's jobs name is inside [daemon] roots")
    shown = "; ".join(
        f"{d} ({sum(c.values())} job(s), {c['failed']} failed)" for d, c in sorted(outside.items())[:3]
    )
    more = f" and {len(outside) - 3} more" if len(outside) > 3 else ""
    where = config.source or "the config file"
    return Check(
        FAIL, "job directories", f"jobs for directories outside [daemon] roots: {shown}{more}",
        f"add them to [daemon] roots in {where} (or 'dreamd init --add-root DIR'), then 'dreamd retry'",
    )  # fmt: skip


def check_unplaced(env: Mapping[str, str]) -> Check:
    """The sessions the hook could not place: FAIL when the latest was refused by the roots
    (a configuration mistake that loses every session), WARN for the others (auto-memory
    turned off, no working directory: maybe meant, but no memory is kept for them)."""
    from dreamd.hook.placement import describe_unplaced, read_unplaced, unplaced_path
    from memory.spool.queue import state_home

    state_dir = state_home(env)
    state = read_unplaced(state_dir)
    summary = describe_unplaced(state)
    if summary is None:
        return Check(OK, "placement", "the hook placed every session it saw")
    last = state["recent"][-1] if state.get("recent") else {}
    reason = str(last.get("reason", ""))
    fix = (
        "add the directory to [daemon] roots, or map the project in [daemon] projects, or 'dreamd init "
        "--add-root <project>/.memory'"
    )
    clear = f"; then rm {unplaced_path(state_dir)}"
    status = FAIL if "outside [daemon] roots" in reason else WARN
    return Check(status, "placement", summary, fix + clear)


def placement_checks(config: Config, env: Mapping[str, str] | None = None) -> list[Check]:
    return [check_spool_dirs(config), check_unplaced(os.environ if env is None else env)]
