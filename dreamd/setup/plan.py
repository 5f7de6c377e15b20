"""The plan of a ``dreamd setup`` or ``--undo``: what each step would change, nothing written.

A plan is a list of :class:`Step` values (files with their old and new bytes, commands to run,
notes to print) computed from what is on disk and what the service manager and the ``claude``
CLI say. :mod:`dreamd.setup.main` prints it (``--dry-run``) or applies it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dreamd.setup import mcp, state
from dreamd.setup.command import HOOK_TIMEOUTS, hook_command
from dreamd.setup.hooks import (
    merge_hooks,
    remove_dreamd_hooks,
    remove_hooks,
)
from dreamd.setup.roots import DEFAULT_ROOTS, merge_roots, wanted_roots
from dreamd.setup.service import (
    AGENT_LABEL,
    UNIT_NAME,
    Manager,
    Runner,
    detect_manager,
    plist_path,
    render_plist,
    render_unit,
    service_environment,
    start_hint,
    unit_path,
    write_paths,
)

MAX_FILE_BYTES = 16 * 1024 * 1024
PLUGIN_COMMAND = "plugin-command"
"""``<state>/plugin-command``: what the plugin's launcher (``plugin/bin/dreamd``) runs."""


@dataclass
class FileChange:
    path: Path
    what: str
    before: bytes | None
    after: bytes | None
    mode: int = 0o644

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass
class Step:
    name: str
    files: list[FileChange] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)
    post_commands: list[list[str]] = field(default_factory=list)
    """Run after the files are written (undo: after they are restored)."""
    notes: list[str] = field(default_factory=list)
    unchanged: str = ""

    @property
    def changes(self) -> bool:
        return bool(self.commands or self.post_commands or any(f.changed for f in self.files))


@dataclass(frozen=True)
class Options:
    argv: tuple[str, ...]
    roots: tuple[str, ...] = ()
    plugin: bool = False
    dry_run: bool = False
    config: Path | None = None


def read_file(path: Path) -> bytes | None:
    """A file's bytes (None when absent); a symlink is read as the file it names, a FIFO or an
    oversized file is refused."""
    from memory.errors import ConfigError

    try:
        with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NONBLOCK)) as fh:
            if not os.path.isfile(path):
                raise ConfigError(f"{path}: not a regular file; not touched")
            data = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(f"{path}: over {MAX_FILE_BYTES} bytes; not touched")
    return data


def _claude_settings(env: Mapping[str, str]) -> Path:
    from dreamd.hook.claude_paths import config_dir

    return config_dir(env) / "settings.json"


def state_dir_of(env: Mapping[str, str]) -> Path:
    from memory.spool.queue import state_home

    return state_home(env)


def _which(name: str, env: Mapping[str, str]) -> str | None:
    return shutil.which(name, path=env.get("PATH", os.defpath))


def _repo_root() -> Path | None:
    """The source checkout this dreamd runs from, when it holds the plugin's marketplace."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / ".claude-plugin" / "marketplace.json").is_file() else None


# --------------------------------------------------------------------------- planning setup


def _real(path: Path) -> Path:
    """A settings file or config that is a symlink (a dotfiles repository) is written where it
    points, so the link stays."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def plan_hooks(opts: Options, env: Mapping[str, str]) -> Step:
    path = _real(_claude_settings(env))
    before = read_file(path)
    command = hook_command(opts.argv)
    after = merge_hooks(before, command, where=str(path))
    step = Step("hooks", files=[FileChange(path, "settings", before, after)])
    step.unchanged = f"{path} already runs {command} for all {len(HOOK_TIMEOUTS)} events"
    if _plugin_installed(env):
        step.notes.append(
            "the dreamd plugin is installed and runs these hooks too: every session would be sent "
            f"twice; {shlex.join([*opts.argv, 'setup', '--plugin'])} keeps the plugin's only, "
            "`claude plugin uninstall dreamd@dreamd` keeps these"
        )
    return step


def plan_mcp(opts: Options, env: Mapping[str, str]) -> tuple[Step, dict[str, Any] | None]:
    step = Step("mcp")
    entry = mcp.user_server(env)
    if mcp.registered_as(entry, opts.argv):
        step.unchanged = f"the MCP server is registered for the user as {shlex.join(mcp.server_argv(opts.argv))}"
        return step, None
    claude = _which("claude", env)
    if claude is None:
        step.notes.append(
            "no `claude` CLI on PATH: register the MCP server with "
            + shlex.join(mcp.add_command("claude", opts.argv))
        )
        return step, None
    if entry is not None:
        step.commands.append(mcp.remove_command(claude))
    step.commands.append(mcp.add_command(claude, opts.argv))
    return step, {"previous": entry}


def _config_path(opts: Options, env: Mapping[str, str]) -> Path:
    from dreamd.config import find_config_file

    path, _ = find_config_file(opts.config, env)
    assert path is not None
    return path


def plan_config(opts: Options, env: Mapping[str, str]) -> Step:
    path = _real(_config_path(opts, env))
    before = read_file(path)
    after = merge_roots(before, wanted_roots(opts.roots, env), env, where=str(path))
    step = Step("config", files=[FileChange(path, "config", before, after)])
    step.unchanged = f"{path}: [daemon] roots already cover {', '.join(wanted_roots(opts.roots, env))}"
    return step


def plan_plugin(opts: Options, env: Mapping[str, str]) -> Step:
    """The command the plugin's launcher runs; and ``settings.json`` without the dreamd hooks a
    plain setup (or a hand edit) put there: the plugin brings all five, and both would send
    every session twice. Other tools' hooks stay; ``--undo`` puts the file back as it was."""
    path = state_dir_of(env) / PLUGIN_COMMAND
    before = read_file(path)
    after = ("\n".join(opts.argv) + "\n").encode("utf-8")
    step = Step("plugin", files=[FileChange(path, "plugin-command", before, after)])
    step.unchanged = f"{path} already names {shlex.join(opts.argv)} for the plugin's launcher"
    settings_path = _real(_claude_settings(env))
    settings = read_file(settings_path)
    if settings is not None:
        without = remove_dreamd_hooks(settings, where=str(settings_path))
        if without != settings:
            step.files.append(FileChange(settings_path, "settings", settings, without))
            step.notes.append(f"{settings_path}: the dreamd hooks there are taken out (the plugin runs them)")
    if not _plugin_installed(env):
        where = _repo_root()
        source = shlex.quote(str(where)) if where else "<path to the dreamd repository>"
        step.notes.append(
            f"install the plugin: claude plugin marketplace add {source} && "
            "claude plugin install dreamd@dreamd"
        )
    return step


def _plugin_installed(env: Mapping[str, str]) -> bool:
    import json

    from dreamd.hook.claude_paths import config_dir

    data = read_file(config_dir(env) / "plugins" / "installed_plugins.json")
    try:
        plugins = json.loads(data or b"{}").get("plugins")
    except (ValueError, AttributeError):
        return False
    return isinstance(plugins, dict) and any(k.startswith("dreamd@") for k in plugins)


def _final_roots_and_spool(config: FileChange, env: Mapping[str, str]) -> tuple[list[str], Path]:
    from dreamd.config import expand_user
    from memory.spool.queue import resolve_spool

    data = tomllib.loads((config.after or b"").decode("utf-8"))
    section = data.get("daemon")
    daemon: dict[str, Any] = section if isinstance(section, dict) else {}
    roots = daemon.get("roots", list(DEFAULT_ROOTS))
    spool = daemon.get("spool")
    configured = Path(expand_user(spool, env)) if isinstance(spool, str) else None
    return [expand_user(r, env) for r in roots], resolve_spool(configured, env)


def plan_service(
    opts: Options, env: Mapping[str, str], runner: Runner, platform: str, config: FileChange
) -> tuple[Step, Manager]:
    manager = detect_manager(runner, platform=platform)
    step = Step("service")
    environment = service_environment(config.path, env)
    if manager.kind == "systemd":
        path = unit_path(env)
        roots, spool = _final_roots_and_spool(config, env)
        text = render_unit(opts.argv, environment=environment, read_write=write_paths(roots, spool, env))
        change = FileChange(path, "unit", read_file(path), text.encode("utf-8"))
        step.files.append(change)
        if change.changed:
            step.post_commands += [
                ["systemctl", "--user", "daemon-reload"],
                ["systemctl", "--user", "enable", UNIT_NAME],
                ["systemctl", "--user", "restart", UNIT_NAME],
            ]
        else:
            active = runner(["systemctl", "--user", "is-active", UNIT_NAME])[1].strip()
            enabled = runner(["systemctl", "--user", "is-enabled", UNIT_NAME])[1].strip()
            if (active, enabled) != ("active", "enabled"):
                step.post_commands.append(["systemctl", "--user", "enable", "--now", UNIT_NAME])
        step.unchanged = f"{path} is installed, enabled and running"
    elif manager.kind == "launchd":
        path = plist_path(env)
        home = env.get("HOME") or os.path.expanduser("~")
        change = FileChange(path, "plist", read_file(path), render_plist(opts.argv, environment=environment, home=home))
        step.files.append(change)
        target = f"gui/{os.getuid()}"
        loaded = runner(["launchctl", "print", f"{target}/{AGENT_LABEL}"])[0] == 0
        if change.changed and loaded:
            step.post_commands.append(["launchctl", "bootout", f"{target}/{AGENT_LABEL}"])
        if change.changed or not loaded:
            step.post_commands.append(["launchctl", "bootstrap", target, str(path)])
        step.unchanged = f"{path} is installed and loaded"
    else:
        from dreamd.status.collect import daemon_status

        alive = daemon_status(_final_roots_and_spool(config, env)[1])
        running = ""
        if alive.get("running"):
            running = f"; a dreamd daemon runs now (pid {alive.get('pid')}), unsupervised"
        step.notes.append(
            f"no service manager here ({manager.detail}){running}: start the daemon yourself and "
            f"keep it running: {start_hint(opts.argv, state_dir_of(env))}"
        )
    return step, manager


def plan_setup(
    opts: Options, env: Mapping[str, str], runner: Runner, platform: str
) -> tuple[list[Step], dict[str, Any]]:
    """Every step of a setup, and what the state file records beyond the files."""
    extra: dict[str, Any] = {}
    steps: list[Step] = []
    if opts.plugin:
        steps.append(plan_plugin(opts, env))
    else:
        steps.append(plan_hooks(opts, env))
        mcp_step, mcp_record = plan_mcp(opts, env)
        steps.append(mcp_step)
        if mcp_record is not None:
            extra["mcp"] = mcp_record
    config = plan_config(opts, env)
    steps.append(config)
    service, manager = plan_service(opts, env, runner, platform, config.files[0])
    steps.append(service)
    if manager.kind != "none":
        extra["service"] = {"manager": manager.kind, "path": str(service.files[0].path)}
    return steps, extra


# --------------------------------------------------------------------------- planning undo


def plan_undo(recorded: Mapping[str, Any], env: Mapping[str, str]) -> list[Step]:
    argv = list(recorded.get("argv") or [])
    steps: list[Step] = []
    service = recorded.get("service") or {}
    files = Step("files")
    svc = Step("service")
    if service.get("manager") == "systemd":
        svc.commands.append(["systemctl", "--user", "disable", "--now", UNIT_NAME])
        files.post_commands.append(["systemctl", "--user", "daemon-reload"])
    elif service.get("manager") == "launchd":
        svc.commands.append(["launchctl", "bootout", f"gui/{os.getuid()}/{AGENT_LABEL}"])
    if svc.changes:
        steps.append(svc)
    record = recorded.get("mcp")
    if record is not None:
        step = Step("mcp")
        entry = mcp.user_server(env)
        claude = _which("claude", env)
        if not mcp.registered_as(entry, argv):
            step.notes.append("the MCP server's registration changed since setup: left as it is")
        else:
            commands = [mcp.remove_command(claude or "claude")]
            if record.get("previous"):
                commands.append(mcp.restore_command(claude or "claude", record["previous"]))
            if claude is None:
                step.notes.append("no `claude` CLI on PATH: run " + " && ".join(shlex.join(c) for c in commands))
            else:
                step.commands += commands
        steps.append(step)
    for name, info in sorted((recorded.get("files") or {}).items()):
        path = Path(name)
        current = read_file(path)
        before = state.decode(info.get("before"))
        if current == before:
            continue
        if current is not None and state.digest(current) == info.get("after"):
            files.files.append(FileChange(path, info.get("what", "file"), current, before))
        elif info.get("what") == "settings" and current is not None and argv:
            after = remove_hooks(current, hook_command(argv), where=str(path))
            files.files.append(FileChange(path, "settings", current, after))
            files.notes.append(f"{path} changed since setup: only the hooks setup added are taken out")
        else:
            files.notes.append(f"{path} changed since setup: left as it is")
    steps.append(files)
    return steps
