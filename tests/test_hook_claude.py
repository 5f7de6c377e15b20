"""``dreamd hook`` for Claude Code: zero config, lean jobs split at turns, memory flowing back.

Each test drives the hook the way Claude Code does (a payload on stdin, a real subprocess when
the exit code, stdout or the log line is the point) in an isolated HOME and state dir.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dreamd.hook.claude_paths import auto_memory_dir, project_key
from dreamd.hook.main import Settings, enqueue, part_session_id
from dreamd.hook.transcript import (
    FAST_JSON_BYTES,
    KEPT_KEYS,
    TOOL_TEXT_KEEP,
    conversation_lines,
    split_parts,
)
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore
from memory.transcripts import parse_transcript

REPO = Path(__file__).resolve().parents[1]
BIG = "marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl"


def _line(kind: str, text: str, n: int, session: str = "sess-1") -> str:
    role = "user" if kind == "user" else "assistant"
    content: Any = text if kind == "user" else [{"type": "text", "text": text}]
    return json.dumps(
        {
            "type": kind,
            "uuid": f"u-{n:04d}",
            "sessionId": session,
            "timestamp": f"2026-11-30T10:{n // 60:02d}:{n % 60:02d}Z",
            "message": {
                "role": role,
                "content": content,
                **({"id": f"m{n}"} if role == "assistant" else {}),
            },
        }
    )


def _conversation(turns: int, filler: int = 0) -> str:
    lines = [
        json.dumps({"type": "mode", "mode": "default", "sessionId": "sess-1"}),
        json.dumps({"type": "progress", "data": {"blob": "p" * 5000}, "sessionId": "sess-1"}),
    ]
    for i in range(turns):
        lines.append(_line("user", f"question {i} about the deploy script" + " x" * filler, 2 * i))
        lines.append(_line("assistant", f"answer {i}", 2 * i + 1))
    return "\n".join(lines) + "\n"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        **extra,
    }


def _run(stdin: dict[str, Any] | bytes, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("DREAMD_", "XDG_", "CLAUDE_"))
    }
    data = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode()
    return subprocess.run(
        [sys.executable, "-m", "dreamd", "hook"],
        input=data.decode(),
        cwd=REPO,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def _jobs(spool: Path) -> list[dict[str, Any]]:
    new = spool / "new"
    return [json.loads(p.read_bytes()) for p in sorted(new.iterdir())] if new.exists() else []


def _log(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "state" / "dreamd" / "hook.log"
    return [json.loads(line) for line in path.read_text().splitlines()]


# ----------------------------------------------------------------------------- where memory goes


def test_zero_config_stop_enqueues_into_the_auto_memory_dir_of_the_git_root(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "code" / "my app"
    (repo / ".git").mkdir(parents=True)
    cwd = repo / "src" / "deep"
    cwd.mkdir(parents=True)
    transcript = tmp_path / "home" / ".claude" / "projects" / project_key(str(cwd)) / "s1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(_conversation(2))
    payload = {"hook_event_name": "Stop", "session_id": "s1", "cwd": str(cwd),
               "transcript_path": str(transcript)}  # fmt: skip

    proc = _run(payload, _env(tmp_path))

    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    expected = tmp_path / "home" / ".claude" / "projects" / project_key(str(repo)) / "memory"
    [job] = _jobs(tmp_path / "state" / "dreamd" / "spool")
    assert (job["memory_dir"], job["adopt"], job["session_id"]) == (str(expected), True, "s1")
    [entry] = _log(tmp_path)
    assert entry["outcome"] == "enqueued" and entry["jobs"] == [job["id"]]
    assert entry["source"] == "Claude Code auto-memory (git root)"
    assert entry["memory_dir"] == str(expected)


def test_auto_memory_dir_honours_settings_and_the_transcript_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"HOME": str(home)}
    project = tmp_path / "proj.x"
    project.mkdir()
    projects = home / ".claude" / "projects"
    # outside a repo the session's own folder names the project (Claude Code named it)
    transcript = projects / "-odd-name" / "s.jsonl"
    assert auto_memory_dir(str(project), str(transcript), env) == (
        projects / "-odd-name" / "memory",
        "transcript folder",
    )
    assert auto_memory_dir(str(project), None, env)[0] == (
        projects / project_key(str(project)) / "memory"
    )
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"autoMemoryDirectory": "~/mem-user"})
    )
    assert auto_memory_dir(str(project), str(transcript), env) == (
        home / "mem-user",
        "autoMemoryDirectory",
    )
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"autoMemoryDirectory": "/abs/shared"})
    )
    assert auto_memory_dir(str(project), None, env)[0] == Path("/abs/shared")
    (project / ".claude" / "settings.local.json").write_text(
        json.dumps({"autoMemoryDirectory": str(tmp_path / "local")})
    )
    assert auto_memory_dir(str(project), None, env)[0] == tmp_path / "local"
    (project / ".claude" / "settings.local.json").write_text(
        "{not json"
    )  # ignored, like Claude Code
    assert auto_memory_dir(str(project), None, env)[0] == Path("/abs/shared")
    (project / ".claude" / "settings.local.json").write_text(
        json.dumps({"autoMemoryEnabled": False})
    )
    assert auto_memory_dir(str(project), None, env) == (
        None,
        "auto-memory disabled by autoMemoryEnabled=false",
    )


def test_auto_memory_outside_the_roots_is_not_enqueued_and_says_why(tmp_path: Path) -> None:
    (tmp_path / "cfg" / "dreamd").mkdir(parents=True)
    (tmp_path / "cfg" / "dreamd" / "config.toml").write_text(
        f'[daemon]\nroots = ["{tmp_path}/only-here/*"]\n'
    )
    (tmp_path / "t.jsonl").write_text(_conversation(1))
    payload = {"hook_event_name": "SessionEnd", "session_id": "s", "cwd": str(tmp_path / "p"),
               "transcript_path": str(tmp_path / "t.jsonl")}  # fmt: skip
    proc = _run(payload, _env(tmp_path, DREAMD_SPOOL=str(tmp_path / "spool")))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert _jobs(tmp_path / "spool") == []
    [entry] = _log(tmp_path)
    assert entry["outcome"] == "nothing" and "is outside [daemon] roots" in entry["reason"]


def test_nearest_managed_dot_memory_wins_over_a_configured_project_and_auto_memory(tmp_path: Path) -> None:
    """The one rule (dreamd.hook.placement): the nearest managed .memory up to the git root,
    then [daemon] projects, then Claude Code's auto-memory directory."""
    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    MemoryStore.init(project / ".memory")
    (project / "src").mkdir()
    (tmp_path / "t.jsonl").write_text(_conversation(1))
    payload = {"hook_event_name": "Stop", "session_id": "s", "cwd": str(project / "src"),
               "transcript_path": str(tmp_path / "t.jsonl")}  # fmt: skip
    settings = Settings(spool=tmp_path / "spool", state_dir=tmp_path / "st",
                        projects={project: tmp_path / "configured"})  # fmt: skip
    log: dict[str, Any] = {}
    enqueue(payload, settings, {"HOME": str(tmp_path / "home")}, log)
    assert (log["source"], log["memory_dir"]) == ("project .memory", str(project / ".memory"))
    (project / ".memory" / "manifest.json").unlink()
    enqueue(payload, settings, {"HOME": str(tmp_path / "home")}, log)
    assert (log["source"], log["memory_dir"]) == ("[daemon] projects", str(tmp_path / "configured"))


# ----------------------------------------------------------------------------- what the job carries


def test_job_carries_the_conversation_only_and_parses_to_the_same_turns(
    shared_data: Path, tmp_path: Path
) -> None:
    source = shared_data / "claude_code" / BIG
    data = source.read_bytes()
    kept = conversation_lines(data)
    lean = b"\n".join(line for _, line in kept).decode()
    assert len(lean) < len(data) / 3
    full = parse_transcript(data.decode("utf-8", "replace"), "claude-code")
    mine = parse_transcript(lean, "claude-code")
    assert mine.session_id == full.session_id
    assert [(t.role, t.text, t.timestamp, t.message_id) for t in mine.turns] == [
        (t.role, t.text, t.timestamp, t.message_id) for t in full.turns
    ]
    assert all(json.loads(line)["type"] in ("user", "assistant") for _, line in kept)
    records = [json.loads(line) for _, line in kept]
    assert all(set(r) <= {*KEPT_KEYS, "message"} for r in records)  # no toolUseResult, cwd, …
    blocks = [
        b
        for r in records
        if isinstance(r["message"]["content"], list)
        for b in r["message"]["content"]
    ]
    assert not any(b.get("type") == "thinking" for b in blocks)
    results = [b for b in blocks if b.get("type") == "tool_result"]
    assert results and all(len(b["content"]) <= TOOL_TEXT_KEEP for b in results)


def test_an_oversized_session_becomes_ordered_parts_at_turn_boundaries(tmp_path: Path) -> None:
    text = _conversation(60, filler=500)
    (tmp_path / "t.jsonl").write_text(text)
    limit = 70 * 1024 + 20_000  # the hook keeps 64 KiB for the envelope: parts of ~20 KB
    payload = {"hook_event_name": "PreCompact", "session_id": "s9", "cwd": str(tmp_path),
               "transcript_path": str(tmp_path / "t.jsonl")}  # fmt: skip
    settings = Settings(spool=tmp_path / "spool", state_dir=tmp_path / "st",
                        projects={tmp_path: tmp_path / "m"}, max_job_bytes=limit)  # fmt: skip
    ids = enqueue(payload, settings, {}, {})

    jobs = _jobs(tmp_path / "spool")
    assert len(jobs) >= 3 and [j["id"] for j in jobs] == ids == sorted(ids)
    assert [j["session_id"] for j in jobs] == ["s9"] + [
        f"s9:part{k}" for k in range(2, len(jobs) + 1)
    ]
    sizes = [len((tmp_path / "spool" / "new" / f"{i}.json").read_bytes()) for i in ids]
    assert max(sizes) <= limit
    turns = [
        t for j in jobs for t in parse_transcript(j["transcript"]["content"], "claude-code").turns
    ]
    whole = parse_transcript(text, "claude-code").turns
    assert [(t.role, t.text) for t in turns] == [(t.role, t.text) for t in whole]
    for job in jobs:  # every part starts a turn: with the user's words
        first = parse_transcript(job["transcript"]["content"], "claude-code").turns[0]
        assert first.role == "user"


def test_parts_of_a_growing_session_keep_their_boundaries() -> None:
    lines = conversation_lines(_conversation(40, filler=100).encode())
    grown = conversation_lines(_conversation(55, filler=100).encode())
    before = split_parts(lines, 5_000)
    after = split_parts(grown, 5_000)
    assert len(before) >= 3
    assert after[: len(before) - 1] == before[:-1]
    assert after[len(before) - 1][: len(before[-1])] == before[-1]
    assert part_session_id("s", 1) == "s" and part_session_id("s", 3) == "s:part3"
    long_id = part_session_id("x" * 128, 2)
    assert long_id is not None and len(long_id) <= 128 and long_id.endswith(":part2")


def test_a_transcript_with_no_conversation_yet_enqueues_nothing(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text('{"type":"mode","mode":"default","sessionId":"f"}\n')
    payload = {"hook_event_name": "Stop", "session_id": "f", "cwd": str(tmp_path),
               "transcript_path": str(tmp_path / "t.jsonl")}  # fmt: skip
    settings = Settings(spool=tmp_path / "spool", state_dir=tmp_path / "st",
                        projects={tmp_path: tmp_path / "m"})  # fmt: skip
    log: dict[str, Any] = {}
    assert enqueue(payload, settings, {}, log) == []
    assert log["reason"] == "transcript has no conversation records yet"


# ----------------------------------------------------------------------------- memory flowing back


def _memory(path: Path, records: list[tuple[str, str, str]]) -> MemoryStore:
    store = MemoryStore.init(path)
    store.commit(
        Change(add=[make_record(n, "project", d, b) for n, d, b in records], actor="manual")
    )
    return store


RECORDS = [
    ("deploy-fridays", "Deploys happen on Fridays after the freeze", "Run the release script."),
    ("db-tests-real", "Database tests hit a real postgres, never mocks", "Mocks hid a bug."),
    ("tabs-indent", "User prefers tabs for indentation", "Always tabs."),
]


def test_session_start_sends_the_index_of_a_dot_memory_but_not_of_auto_memory(
    tmp_path: Path,
) -> None:
    project = tmp_path / "p"
    _memory(project / ".memory", RECORDS)
    env = _env(tmp_path)
    proc = _run({"hook_event_name": "SessionStart", "session_id": "a", "cwd": str(project),
                 "source": "startup"}, env)  # fmt: skip
    assert (proc.returncode, proc.stderr) == (0, "")
    out = json.loads(proc.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert (
        out["hookSpecificOutput"]["additionalContext"]
        == (project / ".memory" / "MEMORY.md").read_text()
    )
    assert "deploy-fridays" in out["hookSpecificOutput"]["additionalContext"]

    other = tmp_path / "q"
    other.mkdir()
    auto = tmp_path / "home" / ".claude" / "projects" / project_key(str(other)) / "memory"
    _memory(auto, RECORDS)
    proc = _run({"hook_event_name": "SessionStart", "session_id": "b", "cwd": str(other)}, env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert _log(tmp_path)[-1]["reason"] == "Claude Code loads and recalls its auto-memory itself"


def test_user_prompt_submit_recalls_each_record_once_per_session(tmp_path: Path) -> None:
    project = tmp_path / "p"
    _memory(project / ".memory", RECORDS)
    env = _env(tmp_path)

    def prompt(text: str, session: str = "s1") -> str:
        proc = _run({"hook_event_name": "UserPromptSubmit", "session_id": session,
                     "cwd": str(project), "prompt": text}, env)  # fmt: skip
        assert (proc.returncode, proc.stderr) == (0, "")
        if not proc.stdout:
            return ""
        out = json.loads(proc.stdout)["hookSpecificOutput"]
        assert out["hookEventName"] == "UserPromptSubmit"
        return str(out["additionalContext"])

    first = prompt("when do we deploy the release?")
    assert first.startswith("<relevant_memories>\n") and 'name="deploy-fridays"' in first
    assert "Run the release script." in first
    assert prompt("deploy again on friday?") == ""  # already shown in this session
    assert 'name="deploy-fridays"' in prompt("when do we deploy?", session="s2")
    assert 'name="db-tests-real"' in prompt("should the database tests use mocks?")
    state_files = list((tmp_path / "state" / "dreamd" / "hook-sessions").iterdir())
    assert len(state_files) == 2
    (tmp_path / "t.jsonl").write_text(_conversation(1))
    proc = _run({"hook_event_name": "SessionEnd", "session_id": "s1", "cwd": str(project),
                 "transcript_path": str(tmp_path / "t.jsonl")},
                {**env, "DREAMD_SPOOL": str(tmp_path / "spool")})  # fmt: skip
    assert proc.returncode == 0
    assert len(list((tmp_path / "state" / "dreamd" / "hook-sessions").iterdir())) == 1
    assert 'name="deploy-fridays"' in prompt("when do we deploy?")  # a new session s1


def test_recall_stays_within_five_records_and_the_session_budget(tmp_path: Path) -> None:
    from dreamd.hook.context import relevant_memories

    many = [(f"deploy-note-{i}", f"deploy note {i}", "deploy " + "word " * 400) for i in range(12)]
    _memory(tmp_path / "m", many)
    state: dict[str, Any] = {"used_bytes": 0, "surfaced": []}
    block, names = relevant_memories(tmp_path / "m", "deploy", state, state_dir=tmp_path / "st")
    assert len(names) == 5 and block.count("<memory ") == 5
    budget = state["used_bytes"] + 2500  # room for one more record, not two
    block, names = relevant_memories(
        tmp_path / "m", "deploy", state, state_dir=tmp_path / "st", session_bytes=budget
    )
    assert len(names) == 1 and state["used_bytes"] <= budget
    shown = {tuple(s)[1] for s in state["surfaced"]}
    assert len(shown) == 6


def test_a_broken_manifest_never_blocks_the_prompt(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".memory").mkdir(parents=True)
    (project / ".memory" / "manifest.json").write_text("{broken")
    proc = _run({"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": str(project),
                 "prompt": "anything"}, _env(tmp_path))  # fmt: skip
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    [entry] = _log(tmp_path)
    assert entry["outcome"] == "error" and entry["hook"] == "UserPromptSubmit"


def test_user_prompt_submit_imports_nothing_heavy(tmp_path: Path) -> None:
    project = tmp_path / "p"
    _memory(project / ".memory", RECORDS)
    code = (
        "import sys\nfrom dreamd.hook.main import main\nrc = main()\n"
        'bad = sorted(m for m in sys.modules if m in ("dataclasses", "typing", "tomllib", "dreamd.config") '
        'or m.split(".")[0] in ("anthropic", "watchdog", "apscheduler", "filelock", "yaml", "structlog"))\n'
        'sys.stderr.write(",".join(bad))\nsys.exit(rc)\n'
    )
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": str(project),
               "prompt": "when do we deploy?"}  # fmt: skip
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("DREAMD_", "XDG_", "CLAUDE_"))
    }
    proc = subprocess.run([sys.executable, "-c", code], input=json.dumps(payload), cwd=REPO,
                          env={**clean, **_env(tmp_path)}, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert (proc.returncode, proc.stderr) == (0, "")
    assert "deploy-fridays" in proc.stdout


# ----------------------------------------------------------------------------- one spool


def test_dreamd_spool_wins_over_the_config_for_the_hook_the_library_and_the_commands(
    tmp_path: Path,
) -> None:
    from dreamd.config import load_config
    from memory.spool.queue import default_spool_path

    config = tmp_path / "config.toml"
    config.write_text(f'[daemon]\nspool = "{tmp_path}/from-config"\n')
    env = {**_env(tmp_path), "DREAMD_CONFIG": str(config)}
    assert default_spool_path(env) == tmp_path / "from-config"
    assert load_config(None, env=env).daemon.spool == tmp_path / "from-config"
    both = {**env, "DREAMD_SPOOL": str(tmp_path / "from-env")}
    assert default_spool_path(both) == tmp_path / "from-env"
    assert load_config(None, env=both).daemon.spool == tmp_path / "from-env"

    project = tmp_path / "p"
    MemoryStore.init(project / ".memory")
    (tmp_path / "t.jsonl").write_text(_conversation(1))
    proc = _run({"hook_event_name": "Stop", "session_id": "s", "cwd": str(project),
                 "transcript_path": str(tmp_path / "t.jsonl")}, both)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert len(_jobs(tmp_path / "from-env")) == 1 and _jobs(tmp_path / "from-config") == []
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("DREAMD_", "XDG_", "CLAUDE_"))
    }
    status = subprocess.run([sys.executable, "-m", "dreamd", "status", "--json"], cwd=REPO,
                            env={**clean, **both}, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["spool"]["path"] == str(tmp_path / "from-env")
    assert json.loads(status.stdout)["spool"]["new"] == 1


# ----------------------------------------------------------------------------- first use


@pytest.mark.parametrize("exists", [True, False])
def test_daemon_adopts_the_auto_memory_dir_on_its_first_job(tmp_path: Path, exists: bool) -> None:
    home = tmp_path / "home"
    folder = home / ".claude" / "projects" / "-work-app"
    memdir = folder / "memory"
    folder.mkdir(parents=True)
    written: dict[str, bytes] = {}
    if exists:
        memdir.mkdir()
        written = {
            "feedback_db_tests.md": b"---\nname: feedback-db-tests\ndescription: Real DB in tests\n"
            b"type: feedback\n---\nNever mock the database.\n",
            "MEMORY.md": b"- [DB tests](feedback_db_tests.md) \xe2\x80\x94 real database\nKeep notes short.\n",
        }
        for name, data in written.items():
            (memdir / name).write_bytes(data)
    env = {**_env(tmp_path), "DREAMD_SPOOL": str(tmp_path / "spool")}
    transcript = folder / "s.jsonl"
    transcript.write_text(_conversation(2))
    proc = _run({"hook_event_name": "Stop", "session_id": "s", "cwd": str(tmp_path / "nowhere"),
                 "transcript_path": str(transcript)}, env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    [job] = _jobs(tmp_path / "spool")
    assert job["memory_dir"] == str(memdir) and job["adopt"] is True

    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("DREAMD_", "XDG_", "CLAUDE_"))
    }
    once = subprocess.run([sys.executable, "-m", "dreamd", "once"], cwd=REPO,
                          env={**clean, **env}, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert once.returncode == 0, once.stderr
    assert [p.name for p in (tmp_path / "spool" / "done").iterdir()] == [f"{job['id']}.json"]
    manifest = json.loads((memdir / "manifest.json").read_text())
    if exists:
        assert (memdir / "feedback_db_tests.md").read_bytes() == written["feedback_db_tests.md"]
        assert "feedback_db_tests.md" in {r["file"] for r in manifest["records"]}
        archived = [p for p in (memdir / ".history").iterdir() if p.name.startswith("MEMORY")]
        assert written["MEMORY.md"] in [p.read_bytes() for p in archived]  # kept byte for byte
    else:
        assert manifest["generation"] == 0  # nothing extracted: the job's cursor is bookkeeping
    assert job["id"] in manifest["applied_jobs"] and "s" in manifest["cursors"]
    assert "adopt.first_use" in once.stdout


# ----------------------------------------------------------------------------- the prefix cache


def test_a_growing_session_file_is_decoded_once_and_gives_the_same_lines(tmp_path: Path) -> None:
    from dreamd.hook.transcript import read_conversation

    cache = tmp_path / "cache"
    session = tmp_path / "s.jsonl"
    session.write_text(_conversation(30))
    first, cost = read_conversation(session, cache)
    assert cost["reused_bytes"] == 0
    with open(session, "a") as f:
        f.write(_line("user", "one more question about the deploy", 900) + "\n")
        f.write(_line("assistant", "one more answer", 901)[:40])  # still being written
    grown, cost = read_conversation(session, cache)
    assert cost["reused_bytes"] == session.stat().st_size - cost["read_bytes"] > 0
    assert grown == read_conversation(session, None)[0]
    assert grown[: len(first)] == first and len(grown) == len(first) + 1
    with open(session, "a") as f:
        f.write(_line("assistant", "one more answer", 901)[40:] + "\n")
    done, _ = read_conversation(session, cache)
    assert done == read_conversation(session, None)[0] and len(done) == len(first) + 2

    session.write_text(_conversation(3))  # rewritten in place: nothing of the cache is used
    again, cost = read_conversation(session, cache)
    assert cost["reused_bytes"] == 0 and again == read_conversation(session, None)[0]


def test_secrets_are_redacted_in_cached_lines_and_jobs(tmp_path: Path) -> None:
    from dreamd.hook.transcript import read_conversation

    key = "sk-ant-api03-" + "A1b2C3d4E5f6" * 6
    session = tmp_path / "s.jsonl"
    session.write_text(_conversation(2) + _line("user", f"my key is {key} keep it", 50) + "\n")
    lines, _ = read_conversation(session, tmp_path / "cache")
    text = b"\n".join(line for _, line in lines).decode()
    assert key not in text and "[REDACTED:anthropic-key]" in text
    assert key.encode() not in b"".join(p.read_bytes() for p in (tmp_path / "cache").iterdir())
    lines, cost = read_conversation(session, tmp_path / "cache")
    assert cost["reused_bytes"] > 0 and key not in b"\n".join(line for _, line in lines).decode()


def test_session_end_drops_the_cache_of_its_transcript(tmp_path: Path) -> None:
    project = tmp_path / "p"
    MemoryStore.init(project / ".memory")
    (tmp_path / "t.jsonl").write_text(_conversation(2))
    env = {**_env(tmp_path), "DREAMD_SPOOL": str(tmp_path / "spool")}
    base = {"session_id": "s", "cwd": str(project), "transcript_path": str(tmp_path / "t.jsonl")}
    assert _run({"hook_event_name": "Stop", **base}, env).returncode == 0
    cache = tmp_path / "state" / "dreamd" / "hook-transcripts"
    assert len(list(cache.iterdir())) == 1
    assert _run({"hook_event_name": "SessionEnd", **base}, env).returncode == 0
    assert list(cache.iterdir()) == []
    assert len(_jobs(tmp_path / "spool")) == 1  # SessionEnd's job contains (supersedes) Stop's
    assert len(list((tmp_path / "spool" / "done").iterdir())) == 1


def test_running_daemon_watches_the_auto_memory_dir_from_its_first_job(tmp_path: Path) -> None:
    """Adopted by a job, the directory is watched at once (not from the next 30 s tick): a
    memory Claude Code writes a little later is taken in by reconcile within seconds."""
    import signal
    import time

    folder = tmp_path / "home" / ".claude" / "projects" / "-work-app"
    folder.mkdir(parents=True)
    memdir = folder / "memory"
    transcript = folder / "s.jsonl"
    transcript.write_text(_conversation(1))
    env = _env(tmp_path)
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("DREAMD_", "XDG_", "CLAUDE_"))
    }
    daemon = subprocess.Popen([sys.executable, "-m", "dreamd", "run"], cwd=REPO, env={**clean, **env},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip

    def wait(condition: Any, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.1)
        return bool(condition())

    def files() -> set[str]:
        return {r["file"] for r in json.loads((memdir / "manifest.json").read_text())["records"]}

    try:
        proc = _run({"hook_event_name": "Stop", "session_id": "s", "cwd": str(tmp_path / "x"),
                     "transcript_path": str(transcript)}, env)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        spool_new = tmp_path / "state" / "dreamd" / "spool" / "new"
        assert wait(
            lambda: (memdir / "manifest.json").exists() and not any(spool_new.iterdir()), 30
        )
        time.sleep(1.5)
        (memdir / "feedback_x.md").write_text(
            "---\nname: feedback-x\ndescription: Keep pull requests small\ntype: feedback\n---\n"
            "Small pull requests get reviewed the same day.\n"
        )
        assert wait(lambda: "feedback_x.md" in files(), 15), "not reconciled before the next tick"
    finally:
        daemon.send_signal(signal.SIGTERM)
        out, _ = daemon.communicate(timeout=60)
    assert daemon.returncode == 0, out[-2000:]
    assert '"adopt.first_use"' in out and '"watch.added"' in out


def test_the_hook_bounds_the_index_as_the_library_does() -> None:
    from dreamd.hook.context import INDEX_MAX_BYTES, INDEX_MAX_LINES
    from memory.store.index import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES

    assert (INDEX_MAX_LINES, INDEX_MAX_BYTES) == (DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)


def test_records_the_fast_json_parser_refuses_are_kept_through_the_stdlib() -> None:
    lone = '{"type":"user","uuid":"u1","message":{"role":"user","content":"half \\ud800 a pair"}}'
    nan = '{"type":"assistant","uuid":"u2","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]},"cost":NaN}'
    data = (lone + "\n" + nan + "\n").encode()
    padding = b'{"type":"progress","data":"' + b"p" * FAST_JSON_BYTES + b'"}\n'
    for text in (data, padding + data):  # the stdlib codec, and orjson with its fallback
        kept = conversation_lines(text)
        assert [kind for kind, _ in kept] == [b"user", b"assistant"]
        turns = parse_transcript(b"\n".join(line for _, line in kept).decode(), "claude-code").turns
        assert [t.text for t in turns] == ["half ? a pair", "ok"]


def test_the_hook_index_cache_follows_commits_and_ranks_as_a_fresh_index(tmp_path: Path) -> None:
    from dreamd.hook.context import _ranked_set
    from memory.retrieval.select import Candidate, KeywordIndex

    store = _memory(tmp_path / "m", RECORDS)
    query = "which retention do the kafka topics and the deploy use?"
    first_entries, _ = _ranked_set(tmp_path / "m", tmp_path / "st")
    assert [e[0] for e in first_entries] == [r[0] for r in RECORDS]
    store.commit(
        Change(
            add=[
                make_record("kafka-retention", "project", "Kafka topics keep 7 days", "Seven days.")
            ],
            actor="manual",
        )
    )
    entries, index = _ranked_set(
        tmp_path / "m", tmp_path / "st"
    )  # one record tokenized, rest reused
    assert "kafka-retention" in [e[0] for e in entries]
    fresh = KeywordIndex([Candidate(*e[:3]) for e in entries])
    assert index.scores(query) == fresh.scores(query) and index.select(query) == fresh.select(query)
    again_entries, again = _ranked_set(tmp_path / "m", tmp_path / "st")  # the cache is current
    assert again_entries == entries and again.scores(query) == fresh.scores(query)


def test_a_fifo_or_symlink_under_a_record_name_never_blocks_the_prompt(tmp_path: Path) -> None:
    import os
    import threading

    from dreamd.hook import context as hook_context

    store = _memory(tmp_path / "m", RECORDS)
    files = {e.name: e.file for e in store.read().records}
    fifo = tmp_path / "m" / files["deploy-fridays"]
    fifo.unlink()
    os.mkfifo(fifo)  # ranked first for this prompt: its file is passed over, not opened
    (tmp_path / "outside.md").write_text("---\nname: x\n---\nsecret notes\n")
    link = tmp_path / "m" / files["tabs-indent"]
    link.unlink()
    link.symlink_to(tmp_path / "outside.md")
    result: list[list[str]] = []
    worker = threading.Thread(
        target=lambda: result.append(
            hook_context.relevant_memories(
                tmp_path / "m", "when do deploys happen, and tabs or mocks?",
                {"surfaced": [], "used_bytes": 0}, state_dir=tmp_path / "st",
            )[1]
        ),
        daemon=True,
    )
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "the prompt hook blocked on a FIFO"
    assert result == [["db-tests-real"]]

def test_each_stop_supersedes_the_unclaimed_job_of_the_turn_before(tmp_path: Path) -> None:
    project = tmp_path / "p"
    MemoryStore.init(project / ".memory")
    session = tmp_path / "s.jsonl"
    env = {**_env(tmp_path), "DREAMD_SPOOL": str(tmp_path / "spool")}
    payload = {"hook_event_name": "Stop", "session_id": "s", "cwd": str(project),
               "transcript_path": str(session)}  # fmt: skip
    ids = []
    for turns in (2, 3, 4):
        session.write_text(_conversation(turns))
        assert _run(payload, env).returncode == 0
        ids.append(_log(tmp_path)[-1]["jobs"][0])
    assert [j["id"] for j in _jobs(tmp_path / "spool")] == [ids[-1]]  # one copy queued
    done = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "spool" / "done").iterdir()}
    assert {k: v["superseded_by"] for k, v in done.items()} == {ids[0]: ids[1], ids[1]: ids[2]}
    assert _log(tmp_path)[-1]["superseded"] == [ids[1]]
    other = {**payload, "session_id": "t"}  # another session is never touched
    session.write_text(_conversation(5))
    assert _run(other, env).returncode == 0
    assert len(_jobs(tmp_path / "spool")) == 2
