"""The service that keeps ``dreamd run`` alive: a systemd user unit, a launchd agent, or words.

The unit and the plist are the shipped templates (``units/``, linked from ``systemd/`` in the
repository) with the absolute dreamd command in place of ``~/.local/bin/dreamd`` and the
environment that makes the daemon read the config and spool the hooks use. systemd's unit
also gets a ``ReadWritePaths=`` for every root outside the defaults (``ProtectSystem=strict``
makes the rest of the home read-only for the daemon).

Which manager: systemd when ``systemctl --user`` answers (a user manager runs), launchd on
macOS, else none — and then setup prints the exact command that starts the daemon. Commands go
through a :data:`Runner` so tests drive every branch with a fake.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from memory.values import FrozenValue

Runner = Callable[[Sequence[str]], tuple[int, str]]
"""Runs one command: ``(exit code, stdout and stderr)``; exit 127 when it is not found."""

UNIT_NAME = "dreamd.service"
AGENT_LABEL = "com.dreamd.agent"
TEMPLATE_EXEC = "%h/.local/bin/dreamd"
DEFAULT_RW_PREFIXES = ("~/.claude/projects", "~/code")
"""The template's ``ReadWritePaths=`` beyond the state directory (``-%h/.claude/projects
-%h/code``)."""


RUN_USER = Path("/run/user")
"""Where systemd puts each user's runtime directory (``/run/user/UID``, ``$XDG_RUNTIME_DIR``)."""


def subprocess_runner(env: Mapping[str, str], *, timeout: float = 60.0) -> Runner:
    def run(argv: Sequence[str]) -> tuple[int, str]:
        import subprocess  # here: doctor imports this module, and may run nothing (start-up, issue 20)

        try:
            proc = subprocess.run(
                list(argv), env=dict(env), capture_output=True, text=True, timeout=timeout,
                stdin=subprocess.DEVNULL, check=False,
            )  # fmt: skip
        except FileNotFoundError:
            return 127, f"{argv[0]}: not found"
        except (OSError, subprocess.TimeoutExpired) as exc:
            return 126, str(exc)
        return proc.returncode, (proc.stdout + proc.stderr).strip()

    return run


def template(name: str) -> str:
    from importlib import resources  # doctor imports this module for its checks, not the units

    return resources.files("dreamd.setup").joinpath("units", name).read_text(encoding="utf-8")


class Manager(FrozenValue):
    """Which service manager runs here: ``systemd``, ``launchd`` or ``none`` (and why)."""

    __slots__ = ("kind", "detail")  # noqa: RUF023 (field order)
    kind: str
    detail: str

    def __init__(self, kind: str, detail: str = "") -> None:
        self.set_fields(kind=kind, detail=detail)


def no_user_manager(env: Mapping[str, str], *, run_user: Path = RUN_USER) -> str | None:
    """Why ``systemctl --user`` cannot reach a user manager in ``env``, judged without running it;
    None when it might (then only asking it tells).

    ``systemctl --user`` connects to the manager's private socket
    ``$XDG_RUNTIME_DIR/systemd/private``, else to the session bus: ``$DBUS_SESSION_BUS_ADDRESS``,
    else ``$XDG_RUNTIME_DIR/bus``. With no bus address and none of those sockets there (nor in
    ``/run/user/UID``, where a newer systemd looks when ``$XDG_RUNTIME_DIR`` is unset), it can
    only fail to connect. Paths are looked at with ``lstat``: nothing is opened or followed."""
    if env.get("DBUS_SESSION_BUS_ADDRESS", "").strip():
        return None
    runtime = env.get("XDG_RUNTIME_DIR", "")
    dirs = [Path(runtime)] if runtime else []
    dirs.append(run_user / str(os.getuid()))
    sockets = [d / name for d in dirs for name in ("systemd/private", "bus")]
    if any(os.path.lexists(s) for s in sockets):
        return None
    unset = "$DBUS_SESSION_BUS_ADDRESS" + ("" if runtime else " and $XDG_RUNTIME_DIR") + " unset"
    return f"no user manager to connect to ({unset}; nothing at {', '.join(map(str, dict.fromkeys(sockets)))})"


def detect_manager(
    runner: Runner, *, platform: str = sys.platform, env: Mapping[str, str] | None = None, run_user: Path = RUN_USER
) -> Manager:
    """The service manager here. With ``env`` (the real runner's case: doctor), ``systemctl`` is
    not even started when :func:`no_user_manager` shows it could reach none."""
    if platform == "darwin":
        code, out = runner(["launchctl", "version"])
        if code != 127:
            return Manager("launchd")
        return Manager("none", "launchctl not found")
    if env is not None and (unreachable := no_user_manager(env, run_user=run_user)) is not None:
        return Manager("none", f"systemctl --user: {unreachable}")
    code, out = runner(["systemctl", "--user", "show-environment"])
    if code == 0:
        return Manager("systemd")
    said = out.splitlines()[0] if out else f"exit {code}"
    return Manager("none", f"systemctl --user: {said}")


def unit_path(env: Mapping[str, str]) -> Path:
    xdg = env.get("XDG_CONFIG_HOME", "")
    home = env.get("HOME") or os.path.expanduser("~")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path(home) / ".config"
    return base / "systemd" / "user" / UNIT_NAME


def plist_path(env: Mapping[str, str]) -> Path:
    home = env.get("HOME") or os.path.expanduser("~")
    return Path(home) / "Library" / "LaunchAgents" / f"{AGENT_LABEL}.plist"


def _systemd_word(word: str) -> str:
    """One ExecStart/Environment word: ``%`` and ``$`` escaped, quoted when it needs it."""
    word = word.replace("%", "%%").replace("$", "$$")
    if re.search(r'[\s"\'\\;]', word) or not word:
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return word


def service_environment(config_file: Path, env: Mapping[str, str]) -> dict[str, str]:
    """What the daemon needs to pick the config and spool the hooks pick in this environment."""
    out = {"DREAMD_CONFIG": str(config_file)}
    for key in ("DREAMD_SPOOL", "XDG_STATE_HOME"):
        value = env.get(key, "")
        if value and os.path.isabs(value):
            out[key] = value
    return out


def glob_free_prefix(pattern: str) -> str:
    """``/home/me/work/*/.memory`` -> ``/home/me/work``: what a root can ever match lies inside."""
    fixed: list[str] = []
    for part in Path(pattern).parts:
        if re.search(r"[*?\[]", part):
            break
        fixed.append(part)
    return os.path.join(*fixed) if fixed else "/"


def write_paths(roots: Sequence[str], spool: Path, env: Mapping[str, str]) -> list[str]:
    """Directories the daemon must write besides the template's: each root's glob-free
    prefix not under a default one, and the spool's parent when it is not in the state dir."""
    home = env.get("HOME") or os.path.expanduser("~")
    defaults = [os.path.join(home, p[2:]) for p in DEFAULT_RW_PREFIXES]
    state = os.path.join(home, ".local", "state", "dreamd")
    out: list[str] = []
    for root in roots:
        if not os.path.isabs(root):
            continue
        prefix = glob_free_prefix(root)
        if prefix == "/" or any(prefix == d or prefix.startswith(d + "/") for d in defaults):
            continue
        if prefix not in out:
            out.append(prefix)
    spool_dir = str(spool.parent)
    if not (spool_dir == state or spool_dir.startswith(state + "/")) and spool_dir not in out:
        out.append(spool_dir)
    return out


def render_unit(
    argv: Sequence[str], *, environment: Mapping[str, str], read_write: Sequence[str]
) -> str:
    """The systemd user unit for ``argv`` (the shipped template, three kinds of lines added)."""
    text = template(UNIT_NAME)
    exec_line = f"ExecStart={TEMPLATE_EXEC} run"
    if exec_line not in text:
        raise RuntimeError(f"units/{UNIT_NAME} has no line {exec_line!r}")
    command = " ".join(_systemd_word(w) for w in [*argv, "run"])
    text = text.replace(exec_line, f"ExecStart={command}")
    env_lines = "".join(
        f"Environment={_systemd_word(f'{k}={v}')}\n" for k, v in environment.items()
    )
    text = text.replace("Environment=PYTHONUNBUFFERED=1\n", "Environment=PYTHONUNBUFFERED=1\n" + env_lines)
    if read_write:
        anchor = "ReadWritePaths=%S/dreamd -%h/.claude/projects -%h/code\n"
        extra = "ReadWritePaths=" + " ".join("-" + _systemd_word(p) for p in read_write) + "\n"
        text = text.replace(anchor, anchor + extra)
    header = "# Written by `dreamd setup` (`dreamd setup --undo` removes it).\n"
    return header + text


def render_plist(argv: Sequence[str], *, environment: Mapping[str, str], home: str) -> bytes:
    """The launchd agent for ``argv``: the shipped plist with the home filled in."""
    import plistlib

    data = plistlib.loads(template(f"{AGENT_LABEL}.plist").replace("__HOME__", home).encode())
    data["ProgramArguments"] = [*argv, "run"]
    data["EnvironmentVariables"] = {**data["EnvironmentVariables"], **environment}
    return plistlib.dumps(data)


def start_hint(argv: Sequence[str], state_dir: Path) -> str:
    """How to run the daemon by hand where no service manager runs."""
    log = state_dir / "daemon.log"
    return (
        f"nohup {shlex.join([*argv, 'run'])} >> {shlex.quote(str(log))} 2>&1 &   "
        "(or keep `dreamd run` open in a terminal or tmux; start it again after a reboot)"
    )
