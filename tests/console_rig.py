"""Rig for the console's browser tests: a real ``dreamd ui`` process on 127.0.0.1 and Debian's
Chromium driven by Playwright (``executable_path``; no browser is downloaded).

Chromium comes from ``$DREAMD_CHROMIUM``, else ``chromium`` on PATH. Without it a developer's
run skips the browser tests with the reason; under CI (``CI`` set) it fails them, so a green CI
always means a real browser ran them (``.ci/run`` installs Debian's ``chromium``).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("DREAMD_ARTIFACTS") or REPO / ".cache" / "artifacts") / "console"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
]  # fmt: skip


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
        pytest.fail(f"CI: {reason}", pytrace=False)
    pytest.skip(reason)


def chromium_path() -> str:
    path = os.environ.get("DREAMD_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        _unavailable("Chromium not found (apt-get install chromium, or set DREAMD_CHROMIUM)")
    assert path is not None
    return path


@dataclass
class Console:
    url: str  # with the token
    base: str  # http://127.0.0.1:PORT
    token: str
    proc: subprocess.Popen[str]


def env_for(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DREAMD_", "XDG_"))}
    env.update(HOME=str(tmp / "home"), XDG_CONFIG_HOME=str(tmp / "xdg-config"), XDG_STATE_HOME=str(tmp / "xdg-state"),
               DREAMD_CONFIG=str(tmp / "config.toml"), PYTHONPATH=str(REPO))  # fmt: skip
    return env


def write_config(tmp: Path) -> Path:
    cfg = tmp / "config.toml"
    cfg.write_text(
        "[daemon]\n"
        f'spool = "{tmp / "spool"}"\n'
        f'roots = ["{tmp / "code"}/*/.memory"]\n'
        "tick = \"1s\"\n"
    )
    (tmp / "home").mkdir(exist_ok=True)
    return cfg


def start_console(tmp_path: Path) -> Iterator[Console]:
    write_config(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "dreamd", "ui", "--port", "0"], cwd=REPO, env=env_for(tmp_path),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r"(http://127\.0\.0\.1:(\d+))/\?token=(\S+)", line)
    if m is None:
        proc.kill()
        raise AssertionError(f"dreamd ui printed {line!r}; stderr: {proc.stderr.read() if proc.stderr else ''}")
    try:
        yield Console(url=m.group(0), base=m.group(1), token=m.group(3), proc=proc)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def launch_browser() -> Iterator[object]:
    path = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def shot(page: object, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    out = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(out), full_page=True)  # type: ignore[attr-defined]
    return out
