"""Claude Code for real: the pinned CLI, its hooks calling ``dreamd hook``, dreamd as the daemon.

Every test runs ``claude -p`` (``tests/claude_cli.py``) in an isolated HOME whose
``~/.claude/settings.json`` points all five hooks at this checkout's ``dreamd hook`` with
timeouts, against the loopback fake Messages API. There is no dreamd config at all: the spool,
the hook log and the roots are the defaults inside that HOME. The daemon is ``dreamd once``
where draining the spool is all that matters, and ``dreamd run`` where it must be running while
Claude Code writes its own memory files.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.claude_cli import ClaudeHome, claude_binary, project_key
from tests.fake_anthropic import FakeAnthropic, Request, ScriptItem, message

REPO = Path(__file__).resolve().parents[1]
HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd")
HOOK_ERRORS = ("hook_non_blocking_error", "hook_blocking_error", "hook_error", "hook_cancelled")


def hooks_settings() -> dict[str, Any]:
    """The README's hooks snippet, as printed, with this checkout's interpreter as ``dreamd``."""
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("### Claude Code") :]
    snippet = json.loads(section[section.index("```json") + 7 : section.index("```\n", 10)])
    assert sorted(snippet["hooks"]) == sorted(HOOK_EVENTS)
    for groups in snippet["hooks"].values():
        for entry in groups[0]["hooks"]:
            assert entry["command"] == "dreamd hook" and entry["timeout"] > 0
            entry["command"] = f"{sys.executable} -m dreamd hook"
    return {**snippet, "permissions": {"allow": ["Read", "Write", "Edit"]}}


def _tool_results(req: Request) -> int:
    count = 0
    for msg in req.body.get("messages") or []:
        content = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(content, list):
            count += sum(
                1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
            )
    return count


def _is_main(req: Request) -> bool:
    return bool(req.body.get("tools")) if isinstance(req.body, dict) else False


class Rig:
    """One isolated Claude Code user: HOME, the fake API, and dreamd's default paths."""

    def __init__(self, root: Path, responder: Callable[[Request], ScriptItem]) -> None:
        self.root = root
        self.fake = FakeAnthropic(responder=responder)
        self.home = ClaudeHome(home=root / "home", exe=claude_binary(), base_url=self.fake.url)
        self.home.settings = hooks_settings()
        self.project = root / "project"
        self.project.mkdir(parents=True)
        self.state = self.home.home / ".local" / "state" / "dreamd"
        self.spool = self.state / "spool"

    @property
    def memdir(self) -> Path:
        return self.home.claude_dir / "projects" / project_key(self.project) / "memory"

    def env(self) -> dict[str, str]:
        return self.home.env()

    def claude(self, *args: str) -> str:
        run = self.home.run("-p", *args, "--permission-mode", "acceptEdits", cwd=self.project)
        assert run.returncode == 0, run.stderr
        return run.stdout

    def dreamd(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "dreamd", *args], cwd=REPO, env=self.env(),
            capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip

    def hook_log(self) -> list[dict[str, Any]]:
        path = self.state / "hook.log"
        return [json.loads(line) for line in path.read_text().splitlines()]

    def jobs(self, queue: str) -> list[str]:
        folder = self.spool / queue
        return sorted(p.name for p in folder.iterdir()) if folder.exists() else []

    def bodies(self, since: int = 0) -> list[str]:
        """The serialized bodies of the main (tool-carrying) requests from ``since`` on."""
        return [
            json.dumps(r.body, ensure_ascii=False)
            for r in self.fake.requests[since:]
            if _is_main(r)
        ]

    def assert_no_hook_errors(self) -> None:
        for transcript in self.home.transcripts():
            text = transcript.read_text()
            for marker in HOOK_ERRORS:
                assert marker not in text, f"{transcript.name} records {marker}"
        assert [e for e in self.hook_log() if e.get("outcome") == "error"] == []


@pytest.fixture
def rig_factory(tmp_path: Path) -> Iterator[Callable[[Callable[[Request], ScriptItem]], Rig]]:
    rigs: list[Rig] = []

    def make(responder: Callable[[Request], ScriptItem]) -> Rig:
        rig = Rig(tmp_path / f"rig{len(rigs)}", responder)
        rigs.append(rig)
        return rig

    try:
        yield make
    finally:
        for rig in rigs:
            rig.fake.close()


def _plain(req: Request) -> ScriptItem:
    return message("Noted." if _is_main(req) else "ok")


def test_zero_config_preference_is_extracted_and_reaches_the_next_session(
    rig_factory: Callable[[Callable[[Request], ScriptItem]], Rig],
) -> None:
    rig = rig_factory(_plain)
    rig.claude("Remember: I prefer tabs over spaces for indentation.")
    queued = rig.jobs("new")
    assert queued, rig.hook_log()
    once = rig.dreamd("once")
    assert once.returncode == 0, once.stderr
    assert rig.jobs("failed") == [] and rig.jobs("new") == []
    assert set(queued) <= set(rig.jobs("done"))

    manifest = json.loads((rig.memdir / "manifest.json").read_text())
    [record] = [r for r in manifest["records"] if "tabs" in r["description"].lower()]
    assert record["type"] == "user"
    index = (rig.memdir / "MEMORY.md").read_text()
    pointer = next(line for line in index.splitlines() if record["file"] in line)

    before = len(rig.fake.requests)
    rig.claude("Which indentation should the new module use?")
    assert any(pointer in body for body in rig.bodies(before)), "MEMORY.md did not reach the model"
    rig.assert_no_hook_errors()
    decisions = {(e["hook"], e.get("source")) for e in rig.hook_log()}
    assert ("Stop", "Claude Code auto-memory (transcript folder)") in decisions


def test_dot_memory_reaches_the_model_through_session_start_and_user_prompt_submit(
    rig_factory: Callable[[Callable[[Request], ScriptItem]], Rig],
) -> None:
    rig = rig_factory(_plain)
    memory = rig.project / ".memory"
    assert rig.dreamd("init", "--add-root", str(memory)).returncode == 0
    added = rig.dreamd(
        "remember", str(memory), "--name", "release-window", "--type", "project",
        "--description", "Releases ship on Thursdays after the freeze",
        "--body", "Cut the release branch on Wednesday evening.",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert rig.dreamd("once").returncode == 0
    index = (memory / "MEMORY.md").read_text()
    assert "release-window" in index

    before = len(rig.fake.requests)
    rig.claude("When do releases ship?")
    bodies = rig.bodies(before)
    assert any("Releases ship on Thursdays after the freeze" in b for b in bodies)
    assert any(index.splitlines()[-1] in b for b in bodies), "SessionStart index missing"
    assert any("<relevant_memories>" in b and "Cut the release branch" in b for b in bodies)
    rig.assert_no_hook_errors()
    assert not (rig.state / "hook-sessions").exists() or not list(
        (rig.state / "hook-sessions").iterdir()
    ), "SessionEnd keeps no per-session state"


def _tool(step: int, name: str, tool_input: dict[str, str]) -> ScriptItem:
    """One tool call with an id unique in the conversation (Claude Code rejects repeats)."""
    block = {"type": "tool_use", "id": f"toolu_step{step}", "name": name, "input": tool_input}
    return message(None, stop_reason="tool_use", blocks=[block])


def _writes_its_own_memory(memdir: Callable[[], Path]) -> Callable[[Request], ScriptItem]:
    """Answer like a model saving a memory: Write the file, Read then Write MEMORY.md, done."""
    body = (
        "---\nname: feedback-db-tests\ndescription: Integration tests hit a real database\n"
        "metadata:\n  type: feedback\n---\nNever mock the database in integration tests.\n"
        "**Why:** mocks hid a broken migration.\n"
    )

    def respond(req: Request) -> ScriptItem:
        if not _is_main(req) or "save that" not in json.dumps(req.body.get("messages")):
            return _plain(req)
        step = _tool_results(req)
        target = memdir()
        if step == 0:
            return _tool(
                step, "Write", {"file_path": str(target / "feedback_db_tests.md"), "content": body}
            )
        if step == 1:
            return _tool(step, "Read", {"file_path": str(target / "MEMORY.md")})
        if step == 2:
            index_path = target / "MEMORY.md"
            index = index_path.read_text() if index_path.exists() else ""
            pointer = "- [DB tests](feedback_db_tests.md) — real database, never mocks\n"
            return _tool(step, "Write", {"file_path": str(index_path), "content": index + pointer})
        return message("Saved to memory.")

    return respond


def _wait(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


def test_a_memory_claude_code_writes_survives_a_concurrent_job_commit(
    rig_factory: Callable[[Callable[[Request], ScriptItem]], Rig],
) -> None:
    holder: dict[str, Rig] = {}
    rig = rig_factory(_writes_its_own_memory(lambda: holder["rig"].memdir))
    holder["rig"] = rig
    daemon = subprocess.Popen(
        [sys.executable, "-m", "dreamd", "run"], cwd=REPO, env=rig.env(),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        rig.claude("Remember: I prefer tabs over spaces for indentation.")
        assert _wait(lambda: (rig.memdir / "manifest.json").exists() and not rig.jobs("new"), 30)
        rig.claude("From now on, never mock the database in integration tests; save that.")
        assert (rig.memdir / "feedback_db_tests.md").exists()
        assert _wait(lambda: not rig.jobs("new") and not rig.jobs("cur"), 30)

        def adopted() -> bool:
            manifest = json.loads((rig.memdir / "manifest.json").read_text())
            return "feedback_db_tests.md" in {r["file"] for r in manifest["records"]}

        assert _wait(adopted, 15), "the file Claude Code wrote is not in the manifest"
        kept = [(rig.memdir / "MEMORY.md").read_text()] + [
            p.read_text(errors="replace")
            for p in (rig.memdir / ".history").rglob("*")
            if p.is_file() and p.name.startswith("MEMORY")
        ]
        assert any("real database, never mocks" in text for text in kept), "pointer edit lost"
        rig.assert_no_hook_errors()
    finally:
        daemon.send_signal(signal.SIGTERM)
        out, _ = daemon.communicate(timeout=30)
        assert daemon.returncode == 0, out[-2000:]
    assert rig.jobs("failed") == []


def test_a_forked_session_at_stop_time_never_fails_a_job(
    rig_factory: Callable[[Callable[[Request], ScriptItem]], Rig],
) -> None:
    rig = rig_factory(_plain)
    rig.claude("Remember: deploys go out on Fridays after the code freeze.")
    [original] = rig.home.transcripts()
    rig.claude("--resume", original.stem, "--fork-session", "And what about hotfixes?")
    assert len(rig.home.transcripts()) == 2
    once = rig.dreamd("once")
    assert once.returncode == 0, once.stderr
    assert rig.jobs("failed") == [], [
        (rig.spool / "failed" / name).read_text() for name in rig.jobs("failed")
    ]
    assert rig.jobs("done") and rig.jobs("new") == []
    rig.assert_no_hook_errors()
    assert os.path.isfile(rig.memdir / "manifest.json")


def _release_window(rig: Rig, memory: Path) -> None:
    assert rig.dreamd("init", "--add-root", str(memory)).returncode == 0
    added = rig.dreamd(
        "remember", str(memory), "--name", "release-window", "--type", "project",
        "--description", "Releases ship on Thursdays after the freeze",
        "--body", "Cut the release branch on Wednesday evening.",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr


def test_a_session_in_a_subdirectory_uses_the_repositorys_dot_memory(
    rig_factory: Callable[[Callable[[Request], ScriptItem]], Rig],
) -> None:
    """Item 4 of issue 20: in ``webapp/src`` the hook used the git root's auto-memory directory
    instead of ``webapp/.memory``, so one repository fed two directories."""
    rig = rig_factory(_plain)
    subprocess.run(["git", "init", "-q", str(rig.project)], check=True)
    memory = rig.project / ".memory"
    _release_window(rig, memory)
    src = rig.project / "src" / "deep"
    src.mkdir(parents=True)

    before = len(rig.fake.requests)
    run = rig.home.run("-p", "When do releases ship?", "--permission-mode", "acceptEdits", cwd=src)
    assert run.returncode == 0, run.stderr
    assert any("<relevant_memories>" in b and "Cut the release branch" in b for b in rig.bodies(before))
    stops = [e for e in rig.hook_log() if e.get("hook") in ("Stop", "SessionEnd") and e.get("jobs")]
    assert stops and {e["memory_dir"] for e in stops} == {str(memory)}, rig.hook_log()
    assert {e["source"] for e in stops} == {"project .memory"}
    rig.assert_no_hook_errors()


def test_a_record_is_injected_once_per_conversation_across_continue_resume_and_fork(
    rig_factory: Callable[[Callable[[Request], ScriptItem]], Rig],
) -> None:
    """Item 7 of issue 20: ``claude -c`` injected the same ``<relevant_memories>`` block again.
    Claude Code 2.1.332 keeps the session id across --continue and --resume (and copies the
    conversation under a new id for --fork-session), but every ``-p`` run ends in SessionEnd."""
    rig = rig_factory(_plain)
    _release_window(rig, rig.project / ".memory")
    rig.claude("When do releases ship?")
    rig.claude("--continue", "When do releases ship? Tell me again.")
    [transcript] = rig.home.transcripts()
    session = json.loads(transcript.read_text().splitlines()[0])["sessionId"]
    rig.claude("--resume", session, "When do releases ship? A third time.")
    rig.claude("--resume", session, "--fork-session", "When do releases ship? Once more.")
    mains = [json.dumps(r.body) for r in rig.fake.requests if _is_main(r)]
    assert len(mains) == 4
    assert [m.count("<relevant_memories>") for m in mains] == [1, 1, 1, 1]
    assert [m.count("Cut the release branch on Wednesday evening.") for m in mains] == [1, 1, 1, 1]
    assert len(rig.home.transcripts()) == 2  # the fork is a new file under a new id
    rig.assert_no_hook_errors()
