"""``dreamd hook``: every real payload shape, silent success, one-line failures, exit 0/1 only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from dreamd.hook.claude_paths import project_key as cc_key
from dreamd.hook.main import memory_dir_for, run_hook, session_id_for
from memory.errors import DreamdError


def project_key(path: Path) -> str:
    return cc_key(str(path))


REPO = Path(__file__).resolve().parents[1]
TRANSCRIPT = (
    '{"type":"user","message":{"role":"user","content":"remember: we deploy on Fridays"}}\n'
    '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Noted."}]}}\n'
)

# What each captured payload must enqueue: the job's session id, or None for nothing.
EXPECTED: dict[str, str | None] = {
    "captured_kylesnowschwartz__claude-bumper-lanes__sessionstart.json": None,  # SessionStart
    "captured_kylesnowschwartz__claude-bumper-lanes__stop.json": "a135d3b1-0387-4c0e-9783-7af541189238",
    "captured_sessionend_minimal_prompt_id.json": None,  # no transcript_path, no cwd
    "captured_windows_precompact_auto_prompt_id.json": None,  # a Windows cwd names no project here
    "docs_v2_precompact_no_cwd.json": "abc123",  # project from CLAUDE_PROJECT_DIR
    "docs_v2_sessionend_exit_no_permission_mode.json": "abc123",
    "docs_v2_stop_no_cwd.json": "abc123",
    "docs_v3_precompact_permission_mode.json": "abc123",
    "docs_v3_sessionend_other_with_permission_mode.json": "abc123",
    "docs_v3_stop_last_assistant_message.json": "abc123",
    "docs_v3_subagentstop.json": "abc123",
    "docs_v4_precompact_custom_instructions_null.json": "abc123",
    "docs_v4_sessionend_prompt_input_exit.json": "abc123",
    "docs_v4_stop_background_tasks.json": "abc123",
    "fixture_TristanShz__claudit__session_end.json": "3f2b8c1e-7d4a-4e5b-9c6f-1a2b3c4d5e6f",
    "fixture_chattchatt__memory-capture__session_end.json": "abc123",
    "fixture_kylesnowschwartz__claude-bumper-lanes__stop.json": "a1b2c3d4-e5f6-7890-abcd-ef1234567890",
    "fixture_sasaki-ryouta__claude-code-context-guard__pre_compact.json": "fixture-session-0001",
}


def _managed(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "manifest.json").write_text('{"format": 1}')
    return path


def _log(state_home: Path) -> list[dict[str, Any]]:
    path = state_home / "dreamd" / "hook.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _jobs(spool: Path) -> list[dict[str, Any]]:
    new = spool / "new"
    if not new.exists():
        return []
    return [json.loads(p.read_bytes()) for p in sorted(new.iterdir())]


def test_every_captured_payload_is_listed(shared_data: Path) -> None:
    assert sorted(p.name for p in (shared_data / "hooks").glob("*.json")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_captured_payload_enqueues_its_transcript_or_nothing(
    shared_data: Path, tmp_path: Path, name: str
) -> None:
    payload = json.loads((shared_data / "hooks" / name).read_text(encoding="utf-8"))
    home = tmp_path / "home"
    spool = tmp_path / "spool"
    env = {"HOME": str(home)}
    projects: dict[Path, Path] = {}
    expected_dir: Path | None = None
    if "transcript_path" in payload:
        original = payload["transcript_path"]
        if original.startswith("~"):  # keep the ~ so expansion is exercised
            payload["transcript_path"] = "~/transcripts/session.jsonl"
            target = home / "transcripts" / "session.jsonl"
        else:
            target = tmp_path / "session.jsonl"
            payload["transcript_path"] = str(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(TRANSCRIPT, encoding="utf-8")
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd.startswith("/"):
        expected_dir = tmp_path / "memories" / "configured"
        projects[Path(cwd)] = expected_dir
    elif cwd is None:
        project = tmp_path / "project-from-env"
        env["CLAUDE_PROJECT_DIR"] = str(project)
        expected_dir = _managed(project / ".memory")

    job_id = run_hook(json.dumps(payload).encode(), spool=spool, projects=projects, env=env)

    jobs = _jobs(spool)
    if EXPECTED[name] is None:
        assert job_id is None
        assert jobs == []
        return
    assert [j["id"] for j in jobs] == [job_id]
    job = jobs[0]
    assert (job["kind"], job["session_id"], job["memory_dir"]) == (
        "extract",
        EXPECTED[name],
        str(expected_dir),
    )
    assert job["transcript"] == {"format": "claude-code", "content": TRANSCRIPT}


def test_payload_without_cwd_or_project_env_enqueues_nothing(
    shared_data: Path, tmp_path: Path
) -> None:
    payload = json.loads((shared_data / "hooks" / "docs_v2_stop_no_cwd.json").read_text())
    payload["transcript_path"] = str(tmp_path / "t.jsonl")
    (tmp_path / "t.jsonl").write_text(TRANSCRIPT)
    assert (
        run_hook(json.dumps(payload).encode(), spool=tmp_path / "spool", projects={}, env={"HOME": str(tmp_path)})
        is None
    )
    assert _jobs(tmp_path / "spool") == []


def test_unmanaged_dot_memory_falls_through_to_claude_codes_auto_memory(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text(TRANSCRIPT)
    (tmp_path / "proj" / ".memory").mkdir(parents=True)  # exists but not managed
    env = {"HOME": str(tmp_path / "home")}
    payload = {
        "hook_event_name": "SessionEnd",
        "cwd": str(tmp_path / "proj"),
        "transcript_path": str(tmp_path / "t.jsonl"),
    }
    run_hook(json.dumps(payload).encode(), spool=tmp_path / "spool", projects={}, env=env)
    auto = tmp_path / "home" / ".claude" / "projects" / project_key(tmp_path / "proj") / "memory"
    [job] = _jobs(tmp_path / "spool")
    assert (job["memory_dir"], job["adopt"]) == (str(auto), True)
    assert job["session_id"] == "t"  # no session_id: the transcript stem
    _managed(tmp_path / "proj" / ".memory")
    job_id = run_hook(json.dumps(payload).encode(), spool=tmp_path / "spool", projects={}, env=env)
    [second] = [j for j in _jobs(tmp_path / "spool") if j["id"] == job_id]
    assert second["memory_dir"] == str(tmp_path / "proj" / ".memory")
    assert "adopt" not in second


def test_nearest_configured_ancestor_wins(tmp_path: Path) -> None:
    projects = {
        tmp_path / "code": tmp_path / "m-code",
        tmp_path / "code" / "app": tmp_path / "m-app",
    }
    assert (
        memory_dir_for(str(tmp_path / "code" / "app" / "src" / "deep"), projects, {})
        == tmp_path / "m-app"
    )
    assert memory_dir_for(str(tmp_path / "code" / "lib"), projects, {}) == tmp_path / "m-code"
    assert memory_dir_for(str(tmp_path / "code-other"), projects, {}) is None
    assert memory_dir_for("relative/dir", projects, {}) is None


def test_session_ids_that_do_not_fit_the_job_shape_get_a_stable_substitute(tmp_path: Path) -> None:
    t = tmp_path / "39a15a30-aaaa.jsonl"
    assert session_id_for("abc123", t) == "abc123"
    weird = session_id_for("f76e7e02-…", t)
    assert weird == session_id_for("f76e7e02-…", t)
    assert weird is not None and weird.startswith("h-") and len(weird) == 18
    assert session_id_for(None, t) == "39a15a30-aaaa"
    assert session_id_for(None, tmp_path / "has space.jsonl") is None


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        (b"this is not json", "hook payload on stdin is not JSON"),
        (b"\xff\xfe", "hook payload on stdin is not JSON"),
        (b"[1, 2, 3]", "hook payload on stdin is not a JSON object (got list)"),
        (
            b'{"hook_event_name": "Stop", "cwd": "/x", "transcript_path": 42}',
            "transcript_path is not a string",
        ),
    ],
)
def test_garbage_payload_raises_one_line(tmp_path: Path, stdin: bytes, message: str) -> None:
    with pytest.raises(DreamdError) as info:
        run_hook(stdin, spool=tmp_path / "spool", projects={}, env={"HOME": str(tmp_path)})
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def _run_main(
    stdin: bytes, env: dict[str, str], *, extra: str = ""
) -> subprocess.CompletedProcess[str]:
    code = "import sys\nfrom dreamd.hook.main import main\nrc = main()\n" + extra + "\nsys.exit(rc)\n"
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("DREAMD_", "XDG_", "CLAUDE_"))
    }
    return subprocess.run(
        [sys.executable, "-c", code],
        input=stdin.decode("utf-8", "replace"),
        cwd=REPO,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_main_garbage_payload_exits_1_with_one_stderr_line(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "DREAMD_SPOOL": str(tmp_path / "spool"),
    }
    proc = _run_main(b"garbage {", env)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr == "dreamd hook: hook payload on stdin is not JSON\n"
    assert _jobs(tmp_path / "spool") == []


def test_main_missing_transcript_is_a_silent_exit_0_with_a_log_line(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    _managed(project / ".memory")
    env = {
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "DREAMD_SPOOL": str(tmp_path / "spool"),
    }
    payload = {
        "hook_event_name": "Stop",
        "session_id": "s",
        "cwd": str(project),
        "transcript_path": str(tmp_path / "gone.jsonl"),
    }
    proc = _run_main(json.dumps(payload).encode(), env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert _jobs(tmp_path / "spool") == []
    [entry] = _log(tmp_path / "state")
    assert entry["hook"] == "Stop" and entry["outcome"] == "nothing"
    assert entry["reason"] == f"transcript {tmp_path}/gone.jsonl does not exist (yet)"
    assert entry["memory_dir"] == str(project / ".memory")


def test_main_success_is_silent_and_imports_nothing_heavy(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    _managed(project / ".memory")
    (tmp_path / "t.jsonl").write_text(TRANSCRIPT)
    env = {
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "DREAMD_SPOOL": str(tmp_path / "spool"),
    }
    payload = {
        "hook_event_name": "Stop",
        "session_id": "s1",
        "cwd": str(project),
        "transcript_path": str(tmp_path / "t.jsonl"),
    }
    heavy = (
        'bad = sorted(m for m in sys.modules if m in ("dataclasses", "inspect", "tomllib", "dreamd.config") '
        'or m.split(".")[0] in ("anthropic", "watchdog", "apscheduler", "filelock", "yaml", "structlog"))\n'
        'rc = rc if not bad else 9\nsys.stderr.write(",".join(bad))'
    )
    proc = _run_main(json.dumps(payload).encode(), env, extra=heavy)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    [job] = _jobs(tmp_path / "spool")
    assert (job["session_id"], job["memory_dir"]) == ("s1", str(project / ".memory"))


def test_main_reads_spool_and_projects_from_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text(TRANSCRIPT)
    config = tmp_path / "config.toml"
    config.write_text(
        textwrap.dedent(
            f"""
            [daemon]
            spool = "{tmp_path}/configured-spool"
            projects = {{ "{tmp_path}/app" = "{tmp_path}/app-memory" }}
            """
        )
    )
    env = {"HOME": str(tmp_path), "DREAMD_CONFIG": str(config)}
    payload = {
        "hook_event_name": "PreCompact",
        "session_id": "s2",
        "cwd": str(tmp_path / "app" / "sub"),
        "transcript_path": str(tmp_path / "t.jsonl"),
    }
    proc = _run_main(json.dumps(payload).encode(), env)
    assert (proc.returncode, proc.stderr) == (0, "")
    [job] = _jobs(tmp_path / "configured-spool")
    assert job["memory_dir"] == f"{tmp_path}/app-memory"


def test_main_session_start_is_silent_and_enqueues_nothing(
    shared_data: Path, tmp_path: Path
) -> None:
    stdin = (
        shared_data / "hooks" / "captured_kylesnowschwartz__claude-bumper-lanes__sessionstart.json"
    ).read_bytes()
    env = {
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "DREAMD_SPOOL": str(tmp_path / "spool"),
    }
    proc = _run_main(stdin, env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert _jobs(tmp_path / "spool") == []


def test_main_bad_config_is_one_line_exit_1(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[daemon\nspool = 3\n")
    proc = _run_main(b"{}", {"HOME": str(tmp_path), "DREAMD_CONFIG": str(config)})
    assert proc.returncode == 1
    assert proc.stderr.startswith("dreamd hook: ") and proc.stderr.count("\n") == 1


def test_settings_without_a_config_file_equal_the_config_defaults(tmp_path: Path) -> None:
    from dreamd.config import default_config
    from dreamd.hook.main import DEFAULT_ROOTS, hook_settings

    env = {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    cfg = default_config(env=env)
    got = hook_settings(env)
    assert (got.spool, got.projects, got.max_job_bytes) == (
        cfg.daemon.spool,
        cfg.daemon.projects,
        cfg.retention.max_job_bytes,
    )
    assert tuple(os.path.expanduser(r.replace("~", str(tmp_path), 1)) for r in DEFAULT_ROOTS) == (
        cfg.daemon.roots
    )
    assert (got.limit, got.record_bytes, got.record_lines, got.session_bytes) == (
        cfg.recall.limit,
        cfg.recall.record_bytes,
        cfg.recall.record_lines,
        cfg.recall.session_bytes,
    )
    env_xdg = {**env, "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    (tmp_path / "cfg" / "dreamd").mkdir(parents=True)
    (tmp_path / "cfg" / "dreamd" / "config.toml").write_text(
        f'[daemon]\nspool = "{tmp_path}/s2"\n[retention]\nmax_job_bytes = 1000\n'
    )
    got = hook_settings(env_xdg)
    assert (got.spool, got.projects, got.max_job_bytes) == (tmp_path / "s2", {}, 1000)
    assert hook_settings({**env_xdg, "DREAMD_SPOOL": "/elsewhere"}).spool == Path("/elsewhere")


def test_a_fast_path_log_line_passes_the_redactor(tmp_path: Path) -> None:
    """``UserPromptSubmit`` never loads the redactor for its own work, yet its log line carries
    the payload's cwd, session id and event name (issue 22): what is not plain is redacted,
    and a plain line still costs no redactor import."""
    token = "ghp_" + "Vb7Nq2Lx9Mz4Kc8Wr1Ty6Pd3Hs5Jf0Ga2Ue"
    env = {
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "DREAMD_SPOOL": str(tmp_path / "spool"),
    }
    said = "import sys\nprint('redactor loaded' if 'memory.redact' in sys.modules else 'not loaded')"
    hostile = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": "password is Wq4-Tide-Lamp",
        "cwd": f"/home/u/{token}/proj",
        "prompt": "hello",
    }
    proc = _run_main(json.dumps(hostile).encode(), env, extra=said)
    assert proc.returncode == 0, proc.stderr
    line = (tmp_path / "state" / "dreamd" / "hook.log").read_text(encoding="utf-8")
    assert token[4:20] not in line and "Wq4-Tide-Lamp" not in line, line
    assert json.loads(line)["hook"] == "UserPromptSubmit"
    plain = {**hostile, "session_id": "5e7c1b9a-2f4d-4c1e-9a7b-3d2e1f0c9b8a", "cwd": str(tmp_path / "proj")}
    proc = _run_main(json.dumps(plain).encode(), env, extra=said)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("not loaded"), proc
    last = _log(tmp_path / "state")[-1]
    assert last["session_id"] == plain["session_id"] and last["cwd"] == plain["cwd"]


def test_an_unplaced_session_is_noted_without_a_secret_of_its_payload(tmp_path: Path) -> None:
    from dreamd.hook.placement import note_unplaced, read_unplaced

    token = "ghp_" + "Ns2Kx7Vb3Zr9Tm4Hc6Jp1Fy0Ga3QeLq5Wd8R"
    for _ in range(2):  # the same session twice is counted once
        note_unplaced(tmp_path, reason=f"project /w/{token} is not placed", cwd=f"/w/{token}",
                      session_id=f"s-{token}", event="Stop")  # fmt: skip
    raw = (tmp_path / "unplaced.json").read_text(encoding="utf-8")
    assert token[4:20] not in raw and "[REDACTED:github-token]" in raw
    assert read_unplaced(tmp_path)["count"] == 1


def _prompt_line(i: int, role: str, text: str) -> str:
    return json.dumps({
        "type": role, "uuid": f"p{i}", "sessionId": "s-split", "timestamp": "2026-11-20T10:00:00Z",
        "message": {"role": role, "content": text},
    })  # fmt: skip


@pytest.mark.parametrize("warm", [False, True])
def test_a_secret_said_across_two_prompts_never_reaches_the_job_or_the_cache(tmp_path: Path, warm: bool) -> None:
    """ "the rsync password is" in one prompt and the value alone in the next (issue 22): each
    line, redacted alone, holds no secret. Cold, both prompts are read in one call; warm, the
    first is in the hook's prefix cache when the next Stop brings the value."""
    from dreamd.hook.transcript import read_conversation

    session, cache = tmp_path / "session.jsonl", tmp_path / "cache"
    first = [_prompt_line(0, "user", "for the nightly backups the rsync password is"), _prompt_line(1, "assistant", "go ahead")]
    second = [_prompt_line(2, "user", "Wq4-Harbor-Fern!"), _prompt_line(3, "assistant", "saved")]
    if warm:
        session.write_text("\n".join(first) + "\n", encoding="utf-8")
        read_conversation(session, cache)
    session.write_text("\n".join(first + second) + "\n", encoding="utf-8")
    lines, _cost = read_conversation(session, cache)
    seen = b"\n".join(line for _, line in lines).decode() + "".join(p.read_text() for p in cache.glob("*.cache"))
    assert "Wq4-Harbor" not in seen and "[REDACTED:password]" in seen
    assert [json.loads(line)["type"] for _, line in lines] == ["user", "assistant", "user", "assistant"]
