"""A new user's first hour for real: install dreamd, set it up, Claude Code remembers.

A module fixture installs this repository (not editable: a real wheel build, its package data
included) into a fresh venv, as a user's ``pip install .`` would; its dependencies come from
the dev venv through a ``.pth`` file, so the test costs one wheel build, not a download of
every dependency. Each test then starts from an empty HOME with the pinned Claude Code CLI
(``tests/claude_cli.py``; under CI a missing CLI fails the test) on PATH, but *not* dreamd:
whatever the hooks run must work with the PATH Claude Code gets. Nothing in HOME is written by
the test — only by ``dreamd setup``, ``claude plugin …`` and the sessions.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.claude_cli import ClaudeHome, claude_binary, project_key
from tests.fake_anthropic import FakeAnthropic, Request, ScriptItem, message
from tests.test_install_pipx import _checkout

REPO = Path(__file__).resolve().parents[1]
README_HOOKS_BEFORE_SETUP = {
    "hooks": {
        event: [{"hooks": [{"type": "command", "command": "dreamd hook", "timeout": 10}]}]
        for event in ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd")
    }
    | {"Notification": [{"hooks": [{"type": "command", "command": "notify-send claude"}]}]},
    "permissions": {"allow": ["Read"]},
}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``bin/dreamd`` of this repository installed into a fresh venv."""
    root = tmp_path_factory.mktemp("install")
    src = _checkout(root)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    purelib = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    Path(purelib, "dev-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    proc = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "--no-deps", str(src)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return venv / "bin" / "dreamd"


def _plain(req: Request) -> ScriptItem:
    return message("Noted." if req.body.get("tools") else "ok")


class User:
    """One person on a fresh machine: HOME, a project, the CLI on PATH, the fake API."""

    def __init__(self, root: Path, dreamd: Path) -> None:
        self.fake = FakeAnthropic(responder=_plain)
        self.exe = claude_binary()
        self.home = ClaudeHome(home=root / "home", exe=self.exe, base_url=self.fake.url)
        self.home.home.mkdir(parents=True)
        self.project = root / "project"
        self.project.mkdir()
        self.dreamd = dreamd
        self.state = self.home.home / ".local" / "state" / "dreamd"
        self.extra_env: dict[str, str] = {}

    @property
    def settings(self) -> Path:
        return self.home.claude_dir / "settings.json"

    @property
    def memdir(self) -> Path:
        return self.home.claude_dir / "projects" / project_key(self.project) / "memory"

    def env(self) -> dict[str, str]:
        env = self.home.env()
        env["PATH"] = f"{self.exe.parent}:/usr/bin:/bin"  # no dreamd on it
        env.update(self.extra_env)
        return env

    def run(self, *argv: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in argv], cwd=self.project, env=self.env(), capture_output=True,
            text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip

    def claude(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run(self.exe, "-p", *args, "--permission-mode", "acceptEdits")

    def main_bodies(self, since: int) -> list[str]:
        return [
            json.dumps(r.body, ensure_ascii=False)
            for r in self.fake.requests[since:]
            if r.body.get("tools")
        ]

    def hook_log(self) -> list[dict[str, Any]]:
        path = self.state / "hook.log"
        return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []

    def remembers_across_sessions(self) -> None:
        """A preference said in one session is a record the next session's request carries."""
        said = self.claude("Remember: I prefer tabs over spaces for indentation.")
        assert said.returncode == 0, said.stderr
        assert "hook" not in said.stderr.lower(), said.stderr
        assert [e for e in self.hook_log() if e.get("outcome") == "enqueued"], self.hook_log()
        once = self.run(self.dreamd, "once")
        assert once.returncode == 0, once.stderr
        manifest = json.loads((self.memdir / "manifest.json").read_text())
        [record] = [r for r in manifest["records"] if "tabs" in r["description"].lower()]
        pointer = next(
            line for line in (self.memdir / "MEMORY.md").read_text().splitlines()
            if record["file"] in line
        )  # fmt: skip
        before = len(self.fake.requests)
        asked = self.claude("Which indentation should the new module use?")
        assert asked.returncode == 0, asked.stderr
        assert any(pointer in body for body in self.main_bodies(before)), "memory did not come back"


@pytest.fixture
def user(tmp_path: Path, installed: Path) -> Iterator[User]:
    person = User(tmp_path, installed)
    try:
        yield person
    finally:
        person.fake.close()


def test_dreamd_setup_turns_the_readmes_old_hooks_into_working_ones_and_undo_restores_the_bytes(
    user: User,
) -> None:
    user.settings.parent.mkdir(parents=True)
    user.settings.write_text(json.dumps(README_HOOKS_BEFORE_SETUP, indent=4))
    original = user.settings.read_bytes()

    # issue 20 item 1: bare `dreamd hook` is not on Claude Code's PATH; doctor must say so
    lost = user.claude("Remember: I prefer tabs over spaces for indentation.")
    assert "dreamd: not found" in lost.stderr, lost.stderr
    assert not (user.state / "spool" / "new").exists()
    doctor = user.run(user.dreamd, "doctor")
    assert doctor.returncode == 1, doctor.stdout
    assert "FAIL  claude code hooks run: `dreamd hook`" in doctor.stdout
    assert "not found on Claude Code's PATH" in doctor.stdout

    setup = user.run(user.dreamd, "setup")
    assert setup.returncode == 0, setup.stdout + setup.stderr
    settings = json.loads(user.settings.read_text())
    commands = {
        e["command"] for groups in settings["hooks"].values() for g in groups for e in g["hooks"]
    }
    assert commands == {f"{user.dreamd} hook", "notify-send claude"}
    assert settings["permissions"] == {"allow": ["Read"]}
    assert "no service manager here" in setup.stdout and f"{user.dreamd} run" in setup.stdout
    server = json.loads((user.home.home / ".claude.json").read_text())["mcpServers"]["dreamd"]
    assert (server["command"], server["args"]) == (str(user.dreamd), ["mcp"])
    again = user.run(user.dreamd, "setup")
    assert again.returncode == 0 and "nothing to change: already set up" in again.stdout

    doctor = user.run(user.dreamd, "doctor")
    assert "FAIL" not in doctor.stdout, doctor.stdout
    assert f"OK    claude code hooks run: `{user.dreamd} hook` ran" in doctor.stdout
    assert f"OK    mcp server: registered for the user as `{user.dreamd} mcp`" in doctor.stdout

    user.remembers_across_sessions()

    undo = user.run(user.dreamd, "setup", "--undo")
    assert undo.returncode == 0, undo.stdout + undo.stderr
    assert user.settings.read_bytes() == original
    assert "dreamd" not in json.loads((user.home.home / ".claude.json").read_text()).get("mcpServers", {})
    assert not (user.home.home / ".config" / "dreamd" / "config.toml").exists()


def test_the_plugin_installs_from_the_repository_and_its_hooks_carry_memories_to_the_next_session(
    user: User,
) -> None:
    added = user.run(user.exe, "plugin", "marketplace", "add", REPO)
    assert added.returncode == 0, added.stdout + added.stderr
    install = user.run(user.exe, "plugin", "install", "dreamd@dreamd")
    assert install.returncode == 0, install.stdout + install.stderr
    listed = user.run(user.exe, "plugin", "list", "--json")
    [plugin] = [p for p in json.loads(listed.stdout) if p["id"] == "dreamd@dreamd"]
    assert plugin["enabled"] is True and plugin["mcpServers"]["dreamd"]["args"] == ["mcp"]

    # dreamd is not on PATH and not recorded yet: the hooks fail loudly, never silently
    loud = user.claude("Remember: I prefer tabs over spaces for indentation.")
    assert "dreamd plugin: no dreamd command found" in loud.stderr, loud.stderr
    doctor = user.run(user.dreamd, "doctor")
    assert doctor.returncode == 1 and "FAIL  claude code hooks run:" in doctor.stdout

    setup = user.run(user.dreamd, "setup", "--plugin")
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert (user.state / "plugin-command").read_text() == f"{user.dreamd}\n"
    assert "hooks" not in json.loads(user.settings.read_text())
    doctor = user.run(user.dreamd, "doctor")
    assert "OK    claude code hooks: plugin dreamd@dreamd runs dreamd hook for all 5 events" in doctor.stdout
    assert "OK    claude code hooks run:" in doctor.stdout and "FAIL" not in doctor.stdout

    user.remembers_across_sessions()
    assert {e["hook"] for e in user.hook_log()} >= {"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}

    before = len(user.fake.requests)
    status = user.claude("/dreamd:status")
    assert status.returncode == 0, status.stderr
    [body] = user.main_bodies(before)[:1]
    assert "OK    claude code hooks run:" in body and "records 1" in body, body[-3000:]


def test_the_install_line_gives_a_dreamd_that_sets_up_a_fresh_home(installed: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": f"{installed.parent}:/usr/bin:/bin"}
    found = subprocess.run(["sh", "-c", "command -v dreamd && dreamd --help"], env=env,
                           capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert found.returncode == 0 and found.stdout.startswith(f"{installed}\n"), found.stderr
    assert "setup" in found.stdout
    dry = subprocess.run([str(installed), "setup", "--dry-run", "--root", str(home / "work")],
                         env=env, capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    assert f'"command": "{installed} hook"' in dry.stdout
    assert '"~/work/*/.memory"' in dry.stdout and dry.stdout.endswith("planned)\n")
    assert list(home.iterdir()) == []  # a dry run touches nothing
    probe = subprocess.run(
        [str(installed.parent / "python"), "-c",
         "import dreamd.setup.service as s; print(s.__file__); s.template('dreamd.service')"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.startswith(str(installed.parents[1])), "imported from the checkout"


def _slash_responder(req: Request) -> ScriptItem:
    """A model that does what each dreamd slash command asks: one call of the plugin's MCP tool
    the command names (found among the request's tools by its suffix), then one line."""
    messages = req.body.get("messages") or []
    tools = [t["name"] for t in req.body.get("tools") or []]
    last = messages[-1] if messages else {}
    content = last.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
    if any(b.get("type") == "tool_result" for b in blocks):
        said = " ".join(json.dumps(b.get("content")) for b in blocks if b.get("type") == "tool_result")
        return message(f"Done: {said}")
    text = json.dumps(messages, ensure_ascii=False).replace("\\n", " ")  # the command's expansion: in any block
    calls = {
        "`remember` tool": ("__remember", {"type": "project", "description": "The staging database listens on port 6543",
                                           "body": "Staging Postgres: port 6543.", "name": "staging-db-port"}),
        "`recall` tool": ("__recall", {"query": "staging database port"}),
        "Call `forget`": ("__forget", {"name": "staging-db-port"}),
    }  # fmt: skip
    for cue, (suffix, tool_input) in calls.items():
        if cue in text and req.body.get("tools"):
            [name] = [t for t in tools if t.startswith("mcp__") and "dreamd" in t and t.endswith(suffix)]
            return message(None, stop_reason="tool_use", tool_use=[(name, tool_input)])
    return _plain(req)


def test_the_plugins_remember_recall_and_forget_commands_run_its_mcp_tools_in_a_real_session(user: User) -> None:
    """Each slash command of the plugin, run in a real headless session: the prompt it expands to
    makes the model call the plugin's MCP server, which writes, finds and forgets the record."""
    assert user.run(user.exe, "plugin", "marketplace", "add", REPO).returncode == 0
    assert user.run(user.exe, "plugin", "install", "dreamd@dreamd").returncode == 0
    setup = user.run(user.dreamd, "setup", "--plugin")
    assert setup.returncode == 0, setup.stdout + setup.stderr
    user.fake.responder = _slash_responder
    user.extra_env["ENABLE_TOOL_SEARCH"] = "false"  # the MCP tools in every request, not behind ToolSearch

    said = user.claude("/dreamd:remember the staging database listens on port 6543")
    assert said.returncode == 0, said.stderr
    assert "staging-db-port" in said.stdout and "generation" in said.stdout, said.stdout + said.stderr
    manifest = json.loads((user.memdir / "manifest.json").read_text())
    assert [r["name"] for r in manifest["records"]] == ["staging-db-port"]

    found = user.claude("/dreamd:recall staging database port")
    assert found.returncode == 0, found.stderr
    assert "Staging Postgres: port 6543." in found.stdout, found.stdout + found.stderr

    gone = user.claude("/dreamd:forget staging-db-port")
    assert gone.returncode == 0, gone.stderr
    assert json.loads((user.memdir / "manifest.json").read_text())["records"] == []
    assert any(p.name.startswith("staging-db-port") for p in (user.memdir / ".history").iterdir())
