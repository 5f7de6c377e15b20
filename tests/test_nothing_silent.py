"""Nothing fails silently (issue 20, items 2 and 3 of "What a user hit").

Every test runs the real ``dreamd`` command in a subprocess with an isolated HOME, config and
state, the way a new user meets it: ``init`` outside the roots, jobs that fail because of it,
and sessions the hook cannot place.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from memory.store.transaction import MemoryStore

REPO = Path(__file__).resolve().parents[1]
CONFIG_TEXT = """\
# my dreamd config: this comment and the keys below must survive --add-root
[daemon]
roots = ["{roots}"]  # where my memories live
workers = 1

[recall]
limit = 3
"""


def _env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DREAMD_", "XDG_", "CLAUDE_"))}
    return {
        **clean,
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "PYTHONPATH": str(REPO),
    }


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "cfg" / "dreamd" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(CONFIG_TEXT.format(roots=f"{tmp_path}/code/*/.memory"), encoding="utf-8")
    return path


def dreamd(tmp_path: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dreamd", *args], cwd=REPO, env=_env(tmp_path), input=stdin,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def _conversation(session: str) -> str:
    lines = [
        {"type": "user", "uuid": "u1", "sessionId": session, "timestamp": "2026-11-30T10:00:00Z",
         "message": {"role": "user", "content": "I prefer tabs over spaces for indentation."}},
        {"type": "assistant", "uuid": "u2", "sessionId": session, "timestamp": "2026-11-30T10:00:01Z",
         "message": {"role": "assistant", "id": "m1", "content": [{"type": "text", "text": "Noted."}]}},
    ]  # fmt: skip
    return "".join(json.dumps(line) + "\n" for line in lines)


def _stop(tmp_path: Path, cwd: Path, session: str = "s1") -> subprocess.CompletedProcess[str]:
    transcript = tmp_path / f"{session}.jsonl"
    transcript.write_text(_conversation(session), encoding="utf-8")
    payload = {"hook_event_name": "Stop", "session_id": session, "cwd": str(cwd), "transcript_path": str(transcript)}
    return dreamd(tmp_path, "hook", stdin=json.dumps(payload))


def _status(tmp_path: Path) -> dict[str, Any]:
    done = dreamd(tmp_path, "status", "--json")
    assert done.returncode == 0, done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def test_init_outside_the_roots_refuses_in_one_line_naming_the_key_and_the_file(tmp_path: Path) -> None:
    config = _config(tmp_path)
    before = config.read_bytes()
    target = tmp_path / "work" / "app" / ".memory"
    done = dreamd(tmp_path, "init", str(target))
    assert done.returncode == 1
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert "[daemon] roots" in line and str(config) in line and str(target) in line
    assert "--add-root" in line
    assert not target.exists() and config.read_bytes() == before


def test_init_add_root_adds_the_directory_to_the_config_and_keeps_the_rest(tmp_path: Path) -> None:
    config = _config(tmp_path)
    target = tmp_path / "work" / "app" / ".memory"
    done = dreamd(tmp_path, "init", "--add-root", str(target))
    assert done.returncode == 0, done.stderr
    assert f"added {target} to [daemon] roots in {config}" in done.stdout
    assert MemoryStore(target).read().generation == 0
    text = config.read_text(encoding="utf-8")
    assert text.startswith("# my dreamd config: this comment and the keys below must survive --add-root\n")
    assert "# where my memories live" in text and "workers = 1" in text and "limit = 3" in text
    import tomllib

    assert tomllib.loads(text)["daemon"]["roots"] == [f"{tmp_path}/code/*/.memory", str(target)]
    again = dreamd(tmp_path, "init", "--add-root", str(target))  # idempotent: nothing added twice
    assert again.returncode == 0 and "added" not in again.stdout
    assert config.read_text(encoding="utf-8") == text
    # and the daemon now takes its jobs: a session in that project lands there
    assert _stop(tmp_path, target.parent).returncode == 0
    once = dreamd(tmp_path, "once", "--log-format", "json")
    assert once.returncode == 0, once.stderr
    assert _status(tmp_path)["spool"]["failed"] == 0


def test_jobs_for_a_directory_outside_the_roots_are_counted_listed_and_fail_doctor(tmp_path: Path) -> None:
    """Item 2: a .memory initialised outside the roots (as `dreamd init` used to allow)
    swallowed every session: `once` printed failed: 0, status never listed the directory,
    doctor exited 0."""
    _config(tmp_path)
    outside = tmp_path / "work" / "app" / ".memory"
    MemoryStore.init(outside)
    assert _stop(tmp_path, outside.parent).returncode == 0

    once = dreamd(tmp_path, "once", "--log-format", "json")
    [done] = [json.loads(line) for line in once.stdout.splitlines() if '"daemon.once_done"' in line]
    assert done["failed"] == 1
    # the run failed: exit 1 and one line naming the job and why (it exited 0 before)
    assert once.returncode == 1
    [job_file] = (tmp_path / "state" / "dreamd" / "spool" / "failed").glob("*.error.json")
    job_id = job_file.name.removesuffix(".error.json")
    [line] = once.stderr.splitlines()
    assert line.startswith(f"dreamd once: job {job_id} failed: memory_dir {outside} is outside the configured roots")
    assert "dreamd retry" in line

    status = _status(tmp_path)
    assert status["spool"]["failed"] == 1
    [entry] = [d for d in status["directories"] if d["path"] == str(outside)]
    assert entry["jobs"]["failed"] == 1 and entry["inside_roots"] is False
    text = dreamd(tmp_path, "status").stdout
    assert str(outside) in text and "jobs: new 0 · cur 0 · deferred 0 · failed 1" in text
    assert "outside [daemon] roots" in text

    doctor = dreamd(tmp_path, "doctor")
    assert doctor.returncode == 1
    [line] = [x for x in doctor.stdout.splitlines() if "job directories" in x]
    assert line.startswith("FAIL") and str(outside) in line and "1 failed" in line


def test_a_session_the_hook_cannot_place_shows_in_status_and_doctor(tmp_path: Path) -> None:
    """Item 3: an auto-memory directory moved outside the roots lost sessions with only a
    line in hook.log; status and doctor said nothing."""
    _config(tmp_path)
    moved = tmp_path / "elsewhere" / "memory"
    settings = tmp_path / "home" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"autoMemoryDirectory": str(moved)}), encoding="utf-8")
    project = tmp_path / "proj"
    project.mkdir()
    assert _stop(tmp_path, project).returncode == 0
    assert not (tmp_path / "state" / "dreamd" / "spool" / "new").exists() or not list(
        (tmp_path / "state" / "dreamd" / "spool" / "new").iterdir()
    )

    status = _status(tmp_path)
    unplaced = status["unplaced"]
    assert unplaced["count"] == 1
    assert unplaced["recent"][-1]["cwd"] == str(project)
    assert f"Claude Code auto-memory {moved} is outside [daemon] roots" in unplaced["recent"][-1]["reason"]
    text = dreamd(tmp_path, "status").stdout
    assert "hook: 1 session(s) the hook could not place" in text and str(project) in text
    transcript = tmp_path / "s1.jsonl"
    assert unplaced["recent"][-1]["transcript"] == str(transcript)
    assert f"hand it in with dreamd submit {transcript} --memory-dir DIR" in text

    doctor = dreamd(tmp_path, "doctor")
    [line] = [x for x in doctor.stdout.splitlines() if x[6:].startswith("placement:")]
    assert line.startswith("FAIL") and "outside [daemon] roots" in line
    assert doctor.returncode == 1

    # the way back it names works: the session's fact reaches a directory inside the roots
    inside = tmp_path / "code" / "proj" / ".memory"
    assert dreamd(tmp_path, "init", str(inside)).returncode == 0
    assert dreamd(tmp_path, "submit", str(transcript), "--memory-dir", str(inside)).returncode == 0
    assert dreamd(tmp_path, "once").returncode == 0
    assert any("tabs" in record.body for _entry, record in MemoryStore(inside).records())

    # a second session counts too; the state file stays small whatever happens
    assert _stop(tmp_path, project, session="s2").returncode == 0
    assert _status(tmp_path)["unplaced"]["count"] == 2
    state = tmp_path / "state" / "dreamd" / "unplaced.json"
    assert state.stat().st_size < 16 * 1024
    state.write_bytes(b"x" * (64 * 1024))  # hostile or broken: ignored, never a crash
    assert _status(tmp_path)["unplaced"] is None


def test_every_stop_of_one_unplaced_session_counts_it_once(tmp_path: Path) -> None:
    from dreamd.hook.placement import note_unplaced, read_unplaced

    for _ in range(3):
        note_unplaced(tmp_path, reason="auto-memory disabled", cwd="/p", session_id="s1", event="Stop")
    note_unplaced(tmp_path, reason="auto-memory disabled", cwd="/q", session_id="s2", event="Stop")
    state = read_unplaced(tmp_path)
    assert state["count"] == 2
    assert [r["session_id"] for r in state["recent"]] == ["s1", "s2"]
