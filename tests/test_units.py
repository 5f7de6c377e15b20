"""Service definitions: systemd units pass `systemd-analyze verify` warning-free; the launchd
plist parses and restarts on crash only.

`systemd-analyze verify` refuses a unit whose ExecStart binary does not exist, and dreamd is
not installed at ~/.local/bin on the test machine, so each test verifies a copy of the unit
written into tmp_path with ExecStart pointing at /bin/true. Everything else is byte-identical
to the shipped file. Warnings (unknown keys, unparsable values) do not change the exit code of
verify, so the tests also require empty output.
"""

from __future__ import annotations

import getpass
import os
import plistlib
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
USER_UNIT = REPO / "systemd" / "dreamd.service"
SYSTEM_UNIT = REPO / "systemd" / "dreamd@.service"
PLIST = REPO / "systemd" / "com.dreamd.agent.plist"
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
TRUE = shutil.which("true") or "/bin/true"

needs_analyze = pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="systemd-analyze not installed")


def unit_keys(path: Path) -> dict[str, list[str]]:
    """``Key -> [values]`` over all sections (systemd allows repeated keys)."""
    keys: dict[str, list[str]] = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        key, _, value = line.partition("=")
        keys.setdefault(key.strip(), []).append(value.strip())
    return keys


def with_exec_start(text: str, original: str) -> str:
    assert f"ExecStart={original} run" in text
    return text.replace(f"ExecStart={original} run", f"ExecStart={TRUE} run")


def verify(unit: Path, *, user: bool, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    args = [str(SYSTEMD_ANALYZE), "verify"]
    if user:
        runtime = tmp_path / "runtime"
        runtime.mkdir(mode=0o700, exist_ok=True)
        env["XDG_RUNTIME_DIR"] = str(runtime)  # a user manager needs one, even for verify
        args.append("--user")
    return subprocess.run(
        [*args, str(unit)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60
    )


@needs_analyze
def test_user_unit_verifies_clean(tmp_path: Path) -> None:
    unit = tmp_path / "dreamd.service"
    unit.write_text(with_exec_start(USER_UNIT.read_text(), "%h/.local/bin/dreamd"))
    result = verify(unit, user=True, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout + result.stderr == ""


@needs_analyze
def test_system_template_instance_verifies_clean(tmp_path: Path) -> None:
    unit = tmp_path / f"dreamd@{getpass.getuser()}.service"
    unit.write_text(with_exec_start(SYSTEM_UNIT.read_text(), "/home/%i/.local/bin/dreamd"))
    result = verify(unit, user=False, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout + result.stderr == ""


@needs_analyze
def test_verify_catches_a_typo_so_the_clean_checks_can_fail(tmp_path: Path) -> None:
    unit = tmp_path / "dreamd.service"
    text = with_exec_start(USER_UNIT.read_text(), "%h/.local/bin/dreamd")
    unit.write_text(text.replace("WatchdogSec=60", "WatchdogSec=sixty"))
    result = verify(unit, user=True, tmp_path=tmp_path)
    assert "sixty" in result.stderr


def test_user_unit_contract() -> None:
    keys = unit_keys(USER_UNIT)
    expected = {
        "Type": ["notify"],
        "NotifyAccess": ["main"],
        "ExecStart": ["%h/.local/bin/dreamd run"],
        "WatchdogSec": ["60"],
        "Restart": ["on-failure"],
        "KillSignal": ["SIGTERM"],
        "TimeoutStopSec": ["15"],
        "NoNewPrivileges": ["yes"],
        "ProtectSystem": ["strict"],
        "PrivateTmp": ["yes"],
        "ProtectKernelTunables": ["yes"],
        "RestrictSUIDSGID": ["yes"],
        "LockPersonality": ["yes"],
        "MemoryDenyWriteExecute": ["yes"],
        "SystemCallArchitectures": ["native"],
        "SystemCallFilter": ["@system-service"],
        "SystemCallErrorNumber": ["EPERM"],
        "WantedBy": ["default.target"],
    }
    for key, value in expected.items():
        assert keys.get(key) == value, key
    assert "RestartSec" in keys
    rw = keys["ReadWritePaths"][0].split()
    assert rw == ["%S/dreamd", "-%h/.claude/projects", "-%h/code"]


def test_system_unit_runs_as_the_instance_user() -> None:
    keys = unit_keys(SYSTEM_UNIT)
    assert keys["User"] == ["%i"]
    assert keys["Type"] == ["notify"]
    assert keys["WatchdogSec"] == ["60"]
    assert keys["Restart"] == ["on-failure"]
    assert keys["ProtectSystem"] == ["strict"]
    assert keys["WantedBy"] == ["multi-user.target"]
    assert all("/home/%i/" in p for p in keys["ReadWritePaths"][0].split())
    assert "%h" not in "".join(v for vs in keys.values() for v in vs)  # %h is root's home here


def test_launchd_plist_restarts_on_crash_only() -> None:
    with PLIST.open("rb") as f:
        plist = plistlib.load(f)
    assert plist["Label"] == "com.dreamd.agent"
    assert plist["ProgramArguments"] == ["__HOME__/.local/bin/dreamd", "run"]
    assert plist["KeepAlive"] == {"SuccessfulExit": False}
    assert plist["RunAtLoad"] is True
    assert plist["StandardOutPath"] == "__HOME__/Library/Logs/dreamd/dreamd.log"
    assert plist["StandardErrorPath"] == "__HOME__/Library/Logs/dreamd/dreamd.err.log"
    assert plist["EnvironmentVariables"]["PYTHONUNBUFFERED"] == "1"
    assert plist["Umask"] == 0o077


def test_launchd_plist_after_install_substitution_has_only_absolute_paths() -> None:
    """The documented `sed s|__HOME__|$HOME|g` leaves no placeholder and no relative path."""
    text = PLIST.read_text().replace("__HOME__", "/Users/alice")
    plist = plistlib.loads(text.encode())
    assert "__HOME__" not in text
    paths = [
        plist["ProgramArguments"][0],
        plist["StandardOutPath"],
        plist["StandardErrorPath"],
        plist["WorkingDirectory"],
    ]
    assert all(p.startswith("/Users/alice/") or p == "/Users/alice" for p in paths)
