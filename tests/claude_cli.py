"""The real Claude Code CLI for tests: installed from npm once, run headless against a fake API.

``claude_binary()`` installs ``@anthropic-ai/claude-code`` at the pinned :data:`VERSION` into a
cache folder (``$DREAMD_TEST_CACHE``, else ``<repo>/.cache``) with the machine's ``npm`` and
returns the native executable. Nothing is downloaded by the tests beyond that one package from
the npm registry; the CLI itself only ever talks to the fake Messages server on 127.0.0.1
(``tests/fake_anthropic.py``, which streams SSE as the CLI expects).

When the CLI cannot be installed, a developer's run skips with the reason; under CI (``CI`` set)
it fails, so a green CI always means the real client was exercised.

``ClaudeHome`` lays out an isolated ``HOME`` (settings with hooks, no login, no telemetry) and runs
``claude -p`` in it; each run's stdout, stderr and exit code are returned for assertions.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

VERSION = "2.1.332"
PACKAGE = "@anthropic-ai/claude-code"
REPO = Path(__file__).resolve().parents[1]


def cache_root() -> Path:
    return Path(os.environ.get("DREAMD_TEST_CACHE") or REPO / ".cache")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"real Claude Code CLI unavailable under CI: {reason}", pytrace=False)
    pytest.skip(f"real Claude Code CLI unavailable: {reason}")


def install(version: str = VERSION) -> Path:
    """Install (once, under a lock shared by parallel runs) and return the ``claude`` executable."""
    prefix = cache_root() / f"claude-code-{version}"
    exe = prefix / "node_modules" / ".bin" / "claude"
    if exe.exists():
        return exe
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH (apt-get install npm)")
    prefix.mkdir(parents=True, exist_ok=True)
    with FileLock(str(prefix) + ".lock", timeout=600):
        if exe.exists():
            return exe
        proc = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--no-save", "--prefix", str(prefix),
             f"{PACKAGE}@{version}"],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        if proc.returncode != 0 or not exe.exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            raise RuntimeError(f"npm install {PACKAGE}@{version} failed: {' | '.join(tail)}")
    return exe


def claude_binary() -> Path:
    """The pinned CLI, or a skip (developer) / failure (CI) naming why it is missing."""
    try:
        exe = install()
        probe = subprocess.run(
            [str(exe), "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        _unavailable(str(exc))
        raise  # unreachable: _unavailable raises
    if probe.returncode != 0 or VERSION not in probe.stdout:
        _unavailable(f"{exe} --version printed {probe.stdout.strip()!r} (exit {probe.returncode})")
    return exe


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


@dataclass
class ClaudeHome:
    """An isolated HOME for the CLI: ``settings`` is written to ``~/.claude/settings.json``."""

    home: Path
    exe: Path
    base_url: str
    settings: dict[str, Any] = field(default_factory=dict)
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def claude_dir(self) -> Path:
        return self.home / ".claude"

    def write_settings(self) -> None:
        self.claude_dir.mkdir(parents=True, exist_ok=True)
        (self.claude_dir / "settings.json").write_text(json.dumps(self.settings, indent=2))

    def env(self) -> dict[str, str]:
        env = {
            "HOME": str(self.home),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "ANTHROPIC_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-test-fake-key-0000",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
        }
        env.update(self.extra_env)
        return env

    def run(self, *args: str, cwd: Path, timeout: float = 120) -> Run:
        """``claude ARGS`` headless in ``cwd``; returns what it printed."""
        self.write_settings()
        proc = subprocess.run(
            [str(self.exe), *args], cwd=cwd, env=self.env(), capture_output=True, text=True,
            timeout=timeout, stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
        return Run(proc.returncode, proc.stdout, proc.stderr)

    def transcripts(self) -> list[Path]:
        """Every session file the CLI wrote under ``~/.claude/projects``."""
        return sorted((self.claude_dir / "projects").glob("*/*.jsonl"))


def project_key(path: Path) -> str:
    """Claude Code's folder name for a project: every non-alphanumeric character becomes '-'."""
    return "".join(c if c.isalnum() else "-" for c in str(path))
