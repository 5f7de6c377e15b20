"""``dreamd setup``: merges, refusals, dry runs, idempotence, undo, each service manager, the
plugin's launcher. The service managers and ``claude`` are a recording fake runner here (no
systemd user manager runs on the test machine); the no-manager path runs the real
``systemctl``; the rendered unit goes through the real ``systemd-analyze verify``. The real
Claude Code CLI runs in ``tests/test_setup_claude.py``.
"""

from __future__ import annotations

import io
import json
import os
import plistlib
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from dreamd.setup.command import dreamd_argv, hook_command
from dreamd.setup.hooks import merge_hooks, remove_hooks
from dreamd.setup.main import Options, setup_main, undo_main
from dreamd.setup.roots import merge_roots, wanted_roots
from dreamd.setup.service import render_unit, subprocess_runner
from memory.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "plugin" / "bin" / "dreamd"
DREAMD = ("/opt/dreamd venv/bin/dreamd",)
OTHER = {"hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "other-tool"}]}]},
         "model": "opus"}  # fmt: skip


class FakeRunner:
    """Answers like a machine with the given service manager; records what it was asked."""

    def __init__(self, manager: str = "systemd", *, running: bool = False) -> None:
        self.manager = manager
        self.running = running
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str]) -> tuple[int, str]:
        argv = list(argv)
        self.calls.append(argv)
        if argv[:2] == ["systemctl", "--user"]:
            if self.manager != "systemd":
                return 1, "Failed to connect to bus: No medium found"
            if argv[2] == "is-active":
                return (0, "active") if self.running else (3, "inactive")
            if argv[2] == "is-enabled":
                return (0, "enabled") if self.running else (1, "disabled")
            return 0, ""
        if argv[0] == "launchctl":
            if argv[1] == "print":
                return (0, "state = running") if self.running else (113, "not found")
            return 0, ""
        return 127, f"{argv[0]}: not found"

    def actions(self) -> list[list[str]]:
        """The calls that change something (not the questions)."""
        asks = ("show-environment", "is-active", "is-enabled", "print", "version")
        return [c for c in self.calls if not any(a in c for a in asks)]


def home_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "PATH": "/usr/bin:/bin"}


def run_setup(env: dict[str, str], runner: FakeRunner, platform: str = "linux", **opts: object) -> str:
    out = io.StringIO()
    options = Options(argv=DREAMD, **opts)  # type: ignore[arg-type]
    assert setup_main(options, env=env, runner=runner, out=out, platform=platform) == 0, out.getvalue()
    return out.getvalue()


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --------------------------------------------------------------------------- settings.json


def test_merge_keeps_other_tools_hooks_and_a_second_merge_changes_no_byte() -> None:
    command = hook_command(DREAMD)
    assert command == "'/opt/dreamd venv/bin/dreamd' hook"
    merged = merge_hooks(json.dumps(OTHER).encode(), command, where="s")
    settings = json.loads(merged)
    assert settings["model"] == "opus"
    assert settings["hooks"]["Stop"][0] == OTHER["hooks"]["Stop"][0]
    timeouts = {e: g[-1]["hooks"][0]["timeout"] for e, g in settings["hooks"].items()}
    assert timeouts == {"Stop": 30, "SessionStart": 10, "UserPromptSubmit": 10, "PreCompact": 30, "SessionEnd": 30}
    assert all(g[-1]["hooks"][0]["command"] == command for g in settings["hooks"].values())
    assert merge_hooks(merged, command, where="s") is merged
    assert remove_hooks(merged, command, where="s") == (json.dumps(OTHER, indent=2) + "\n").encode()


def test_a_stale_dreamd_hook_is_repointed_not_doubled() -> None:
    stale = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "dreamd hook"}]}],
                       "SessionEnd": [{"hooks": [{"type": "command", "command": "/old/venv/bin/python -m dreamd hook", "timeout": 5}]}]}}  # fmt: skip
    settings = json.loads(merge_hooks(json.dumps(stale).encode(), "/new/dreamd hook", where="s"))
    assert settings["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "/new/dreamd hook", "timeout": 30}]}]
    assert settings["hooks"]["SessionEnd"][0]["hooks"][0] == {"type": "command", "command": "/new/dreamd hook", "timeout": 5}
    assert len(settings["hooks"]["SessionStart"]) == 1


@pytest.mark.parametrize("body", [b'{"hooks": {', b"[1, 2]", b'{"hooks": []}', b"\xff\xfe"])
def test_settings_that_are_not_usable_json_are_refused_in_one_line_and_left_alone(
    tmp_path: Path, body: bytes
) -> None:
    env = home_env(tmp_path)
    settings = Path(env["HOME"], ".claude", "settings.json")
    settings.parent.mkdir()
    settings.write_bytes(body)
    proc = subprocess.run(
        [sys.executable, "-m", "dreamd", "setup"], env=env, cwd=tmp_path,
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 1 and proc.stdout == ""
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"dreamd: {settings}: ")
    assert settings.read_bytes() == body
    assert tree(Path(env["HOME"])) == {".claude/settings.json": body}


# --------------------------------------------------------------------------- the whole command


def test_dry_run_prints_every_change_as_a_diff_and_touches_nothing(tmp_path: Path) -> None:
    env = home_env(tmp_path)
    home = Path(env["HOME"])
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps(OTHER))
    before = tree(home)
    runner = FakeRunner("systemd")
    out = run_setup(env, runner, dry_run=True, roots=(str(home / "work"),))
    assert tree(home) == before and runner.actions() == []
    assert f"--- a{home}/.claude/settings.json\n+++ b{home}/.claude/settings.json\n" in out
    assert f"--- /dev/null\n+++ b{home}/.config/dreamd/config.toml\n" in out
    assert f"+++ b{home}/.config/systemd/user/dreamd.service\n" in out
    assert "+ExecStart=\"/opt/dreamd venv/bin/dreamd\" run\n" in out
    assert f"+ReadWritePaths=-{home}/work\n" in out
    assert "would run: systemctl --user enable dreamd.service\n" in out
    assert out.endswith("dry run: nothing was changed (6 change(s) planned)\n")


def test_systemd_setup_is_idempotent_and_undo_restores_everything_byte_for_byte(
    tmp_path: Path,
) -> None:
    env = home_env(tmp_path)
    home = Path(env["HOME"])
    (home / ".claude").mkdir()
    original = json.dumps(OTHER).encode()
    (home / ".claude" / "settings.json").write_bytes(original)
    (home / ".config" / "dreamd").mkdir(parents=True)
    (home / ".config" / "dreamd" / "config.toml").write_text("# mine\n[gates]\nthreshold = 3\n")
    before = tree(home)
    runner = FakeRunner("systemd")
    out = run_setup(env, runner)
    assert runner.actions() == [
        ["systemctl", "--user", "daemon-reload"],
        ["systemctl", "--user", "enable", "dreamd.service"],
        ["systemctl", "--user", "restart", "dreamd.service"],
    ]
    unit = (home / ".config" / "systemd" / "user" / "dreamd.service").read_text()
    assert 'ExecStart="/opt/dreamd venv/bin/dreamd" run\n' in unit
    assert f"Environment=DREAMD_CONFIG={home}/.config/dreamd/config.toml\n" in unit
    assert "no `claude` CLI on PATH: register the MCP server with claude mcp add --scope user dreamd -- '/opt/dreamd venv/bin/dreamd' mcp" in out
    # its roots are the defaults, which cover Claude Code's memories: the file stays as it is
    assert "config   unchanged: " in out

    settled = FakeRunner("systemd", running=True)
    again = run_setup(env, settled)
    assert settled.actions() == [] and again.endswith("nothing to change: already set up\n")

    out = io.StringIO()
    assert undo_main(env=env, runner=settled, out=out) == 0, out.getvalue()
    assert settled.actions() == [
        ["systemctl", "--user", "disable", "--now", "dreamd.service"],
        ["systemctl", "--user", "daemon-reload"],
    ]
    after = tree(home)
    assert {k: v for k, v in after.items() if not k.startswith(".local/state/dreamd/setup-backups/")} == before
    assert not (home / ".local" / "state" / "dreamd" / "setup.json").exists()


def test_undo_on_a_fresh_home_takes_out_the_directories_setup_made_and_keeps_one_holding_anything_else(
    tmp_path: Path,
) -> None:
    env = home_env(tmp_path)
    home = Path(env["HOME"])
    (home / ".config").mkdir()
    run_setup(env, FakeRunner("systemd"))
    assert (home / ".config" / "dreamd" / "config.toml").is_file()
    assert (home / ".config" / "systemd" / "user" / "dreamd.service").is_file()
    (home / ".config" / "systemd" / "user" / "other.service").write_text("[Unit]\n")
    out = io.StringIO()
    assert undo_main(env=env, runner=FakeRunner("systemd", running=True), out=out) == 0, out.getvalue()
    said = out.getvalue()
    assert not (home / ".config" / "dreamd").exists(), said
    assert f"removed {home}/.config/dreamd/ (setup created it)" in said
    # setup made systemd/user for its unit, but the user has put another unit there since
    assert (home / ".config" / "systemd" / "user" / "other.service").is_file()
    assert not (home / ".config" / "systemd" / "user" / "dreamd.service").exists()
    assert (home / ".config").is_dir()  # there before setup


def test_undo_after_claude_code_changed_the_settings_takes_out_only_dreamds_hooks(
    tmp_path: Path,
) -> None:
    env = home_env(tmp_path)
    settings = Path(env["HOME"], ".claude", "settings.json")
    run_setup(env, FakeRunner("none"))
    changed = json.loads(settings.read_text())
    changed["enabledPlugins"] = {"other@market": True}
    settings.write_text(json.dumps(changed))
    out = io.StringIO()
    assert undo_main(env=env, runner=FakeRunner("none"), out=out) == 0
    assert json.loads(settings.read_text()) == {"enabledPlugins": {"other@market": True}}
    assert "changed since setup: only the hooks setup added are taken out" in out.getvalue()


def test_launchd_agent_is_written_from_the_template_and_bootstrapped(tmp_path: Path) -> None:
    env = home_env(tmp_path)
    home = Path(env["HOME"])
    runner = FakeRunner("launchd")
    run_setup(env, runner, platform="darwin")
    plist = plistlib.loads((home / "Library" / "LaunchAgents" / "com.dreamd.agent.plist").read_bytes())
    assert plist["ProgramArguments"] == [*DREAMD, "run"]
    assert plist["Label"] == "com.dreamd.agent" and plist["KeepAlive"] == {"SuccessfulExit": False}
    assert plist["StandardOutPath"] == f"{home}/Library/Logs/dreamd/dreamd.log"
    assert plist["EnvironmentVariables"]["DREAMD_CONFIG"] == f"{home}/.config/dreamd/config.toml"
    assert "__HOME__" not in json.dumps(plist)
    assert (home / "Library" / "Logs" / "dreamd").is_dir()
    assert runner.actions() == [["launchctl", "bootstrap", f"gui/{os.getuid()}", str(home / "Library" / "LaunchAgents" / "com.dreamd.agent.plist")]]
    loaded = FakeRunner("launchd", running=True)
    assert run_setup(env, loaded, platform="darwin").endswith("nothing to change: already set up\n")
    out = io.StringIO()
    assert undo_main(env=env, runner=loaded, out=out) == 0
    assert loaded.actions() == [["launchctl", "bootout", f"gui/{os.getuid()}/com.dreamd.agent"]]
    assert not (home / "Library" / "LaunchAgents" / "com.dreamd.agent.plist").exists()


def test_without_a_service_manager_setup_says_exactly_how_to_start_dreamd_run(tmp_path: Path) -> None:
    """The real ``systemctl``, with no user bus to reach (as on this machine and in CI)."""
    env = home_env(tmp_path)
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    env.update(PATH=os.environ.get("PATH", "/usr/bin:/bin"), XDG_RUNTIME_DIR=str(runtime))
    out = io.StringIO()
    opts = Options(argv=DREAMD)
    assert setup_main(opts, env=env, runner=subprocess_runner(env), out=out, platform="linux") == 0
    [line] = [x for x in out.getvalue().splitlines() if x.startswith("service")]
    state = Path(env["HOME"], ".local", "state", "dreamd")
    assert "no service manager here (systemctl --user: " in line
    assert f"nohup '/opt/dreamd venv/bin/dreamd' run >> {state}/daemon.log 2>&1 &" in line
    assert not Path(env["HOME"], ".config", "systemd").exists()


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_the_unit_setup_writes_verifies_clean(tmp_path: Path) -> None:
    exe = tmp_path / "bin dir" / "dreamd"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    unit = tmp_path / "dreamd.service"
    unit.write_text(render_unit([str(exe)], environment={"DREAMD_CONFIG": "/x/c 100%.toml"},
                                read_write=[str(tmp_path / "work")]))  # fmt: skip
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    proc = subprocess.run(
        ["systemd-analyze", "verify", "--user", str(unit)], capture_output=True, text=True,
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)}, cwd=tmp_path, timeout=60, check=False,
    )  # fmt: skip
    assert (proc.returncode, proc.stdout + proc.stderr) == (0, "")
    assert f'ExecStart="{exe}" run' in unit.read_text()
    assert 'Environment="DREAMD_CONFIG=/x/c 100%%.toml"' in unit.read_text()


def test_config_merge_keeps_the_users_file_and_refuses_invalid_toml() -> None:
    env = {"HOME": "/home/me"}
    want = wanted_roots(["/home/me/work"], env)
    text = b'# my config\n[daemon]\nroots = ["~/notes/*/.memory"]  # mine\nworkers = 3\n'
    merged = merge_roots(text, want, env, where="c").decode()
    assert merged == ('# my config\n[daemon]\nroots = ["~/notes/*/.memory", '
                      '"~/.claude/projects/*/memory", "~/work/*/.memory"]  # mine\nworkers = 3\n')  # fmt: skip
    assert merge_roots(merged.encode(), want, env, where="c") == merged.encode()
    untouched = b"[model]\nbackend = 'offline'\n"
    assert merge_roots(untouched, wanted_roots([], env), env, where="c") is untouched
    with pytest.raises(ConfigError, match=r"^c: not valid TOML"):
        merge_roots(b"[daemon\n", want, env, where="c")


def test_plugin_mode_records_the_command_for_the_launcher_instead_of_hooks(tmp_path: Path) -> None:
    env = home_env(tmp_path)
    out = run_setup(env, FakeRunner("none"), plugin=True)
    state = Path(env["HOME"], ".local", "state", "dreamd")
    assert (state / "plugin-command").read_text() == "/opt/dreamd venv/bin/dreamd\n"
    assert not Path(env["HOME"], ".claude", "settings.json").exists()
    assert "install the plugin: claude plugin marketplace add" in out
    assert undo_main(env=env, runner=FakeRunner("none"), out=io.StringIO()) == 0
    assert not (state / "plugin-command").exists()


def _installed_plugin(env: dict[str, str]) -> None:
    plugins = Path(env["HOME"], ".claude", "plugins")
    plugins.mkdir(parents=True, exist_ok=True)
    (plugins / "installed_plugins.json").write_text(json.dumps(
        {"version": 2, "plugins": {"dreamd@dreamd": [{"scope": "user", "installPath": "/p"}]}}))  # fmt: skip


def test_plugin_mode_takes_the_settings_hooks_out_and_undo_puts_the_file_back_byte_for_byte(tmp_path: Path) -> None:
    """Plain setup, then the plugin: ``setup --plugin`` is the one command that leaves one set of
    hooks (doctor's fix for "sent twice"); undo restores settings.json as it was before both."""
    env = home_env(tmp_path)
    settings = Path(env["HOME"], ".claude", "settings.json")
    settings.parent.mkdir(parents=True)
    original = (json.dumps(OTHER, indent=4) + "\n").encode()
    settings.write_bytes(original)
    run_setup(env, FakeRunner("none"))
    assert hook_command(DREAMD) in settings.read_text()
    _installed_plugin(env)
    out = run_setup(env, FakeRunner("none"), plugin=True)
    assert "the dreamd hooks there are taken out (the plugin runs them)" in out
    kept = json.loads(settings.read_text())
    assert kept["hooks"] == OTHER["hooks"] and kept["model"] == "opus"
    again = run_setup(env, FakeRunner("none"), plugin=True)
    assert "taken out" not in again  # a second run changes nothing
    assert undo_main(env=env, runner=FakeRunner("none"), out=io.StringIO()) == 0
    assert settings.read_bytes() == original
    assert not Path(env["HOME"], ".local", "state", "dreamd", "plugin-command").exists()


def test_plain_setup_with_the_plugin_installed_says_sessions_would_be_sent_twice(tmp_path: Path) -> None:
    env = home_env(tmp_path)
    _installed_plugin(env)
    out = run_setup(env, FakeRunner("none"))
    assert "the dreamd plugin is installed and runs these hooks too: every session would be sent twice" in out
    assert "setup --plugin keeps the plugin's only" in out


def test_the_command_is_the_script_that_runs_or_python_dash_m() -> None:
    assert dreamd_argv("/home/me/.local/bin/dreamd", "/usr/bin/python3") == ["/home/me/.local/bin/dreamd"]
    assert dreamd_argv("/src/dreamd/__main__.py", "/venv/bin/python") == ["/venv/bin/python", "-m", "dreamd"]


# --------------------------------------------------------------------------- the plugin's launcher


def launch(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LAUNCHER), *args], env=env, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip


def test_the_launcher_runs_the_recorded_command_with_the_arguments_in_order(tmp_path: Path) -> None:
    state = tmp_path / "state" / "dreamd"
    state.mkdir(parents=True)
    tool = tmp_path / "a tool"
    tool.write_text('#!/bin/sh\nfor a in "$@"; do printf "[%s]" "$a"; done\n')
    tool.chmod(0o755)
    (state / "plugin-command").write_text(f"{tool}\n-m\ndreamd\n")
    env = {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"), "PATH": "/usr/bin:/bin"}
    proc = launch(["recall", "a b", ""], env)
    assert (proc.returncode, proc.stdout) == (0, "[-m][dreamd][recall][a b][]")


def test_the_launcher_finds_dreamd_on_path_but_never_itself(tmp_path: Path) -> None:
    other = tmp_path / "bin" / "dreamd"
    other.parent.mkdir()
    other.write_text('#!/bin/sh\necho "real dreamd $*"\n')
    other.chmod(0o755)
    env = {"HOME": str(tmp_path), "PATH": f"{LAUNCHER.parent}:{other.parent}:/usr/bin:/bin"}
    assert launch(["hook"], env).stdout == "real dreamd hook\n"


def test_the_launcher_without_dreamd_fails_with_one_line(tmp_path: Path) -> None:
    (tmp_path / ".local" / "state" / "dreamd").mkdir(parents=True)
    (tmp_path / ".local" / "state" / "dreamd" / "plugin-command").write_text("/gone/dreamd\n")
    env = {"HOME": str(tmp_path), "PATH": f"{LAUNCHER.parent}:/usr/bin:/bin"}
    proc = launch(["hook"], env)
    assert proc.returncode == 1 and proc.stdout == ""
    [line] = proc.stderr.splitlines()
    assert line.startswith("dreamd plugin: no dreamd command found (")
    assert "names /gone/dreamd, which is not an executable file" in line
    assert line.endswith("then run: dreamd setup --plugin")


def test_the_plugin_and_marketplace_manifests_agree() -> None:
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    [entry] = market["plugins"]
    plugin_dir = REPO / entry["source"]
    manifest = json.loads((plugin_dir / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == entry["name"] == "dreamd"
    hooks = json.loads((plugin_dir / "hooks" / "hooks.json").read_text())["hooks"]
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("### Claude Code by hand") :]
    snippet = json.loads(section[section.index("```json") + 7 : section.index("```\n", section.index("```json") + 7)])
    assert {e: g[0]["hooks"][0]["timeout"] for e, g in hooks.items()} == {
        e: g[0]["hooks"][0]["timeout"] for e, g in snippet["hooks"].items()
    }
    assert {g[0]["hooks"][0]["command"] for g in hooks.values()} == {'"${CLAUDE_PLUGIN_ROOT}/bin/dreamd" hook'}
    assert sorted(p.stem for p in (plugin_dir / "commands").glob("*.md")) == ["forget", "recall", "remember", "status"]
    assert os.access(plugin_dir / "bin" / "dreamd", os.X_OK)


def test_a_failing_command_fails_setup_but_the_other_steps_are_still_done(tmp_path: Path) -> None:
    class Refusing(FakeRunner):
        def __call__(self, argv: Sequence[str]) -> tuple[int, str]:
            if list(argv)[2:3] == ["restart"]:
                self.calls.append(list(argv))
                return 1, "Job for dreamd.service failed because the control process exited"
            return super().__call__(argv)

    env = home_env(tmp_path)
    out = io.StringIO()
    assert setup_main(Options(argv=DREAMD), env=env, runner=Refusing("systemd"), out=out, platform="linux") == 1
    text = out.getvalue()
    assert "dreamd setup: systemctl --user restart dreamd.service failed (exit 1): Job for dreamd.service failed" in text
    assert text.endswith("1 step(s) failed (above); the rest is set up, run it again after the fix\n")
    assert Path(env["HOME"], ".claude", "settings.json").exists()
    assert Path(env["HOME"], ".config", "dreamd", "config.toml").exists()
