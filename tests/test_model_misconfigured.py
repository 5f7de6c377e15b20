"""A misconfigured model (HTTP 400/401/403/404, no login, no CLI) is not a bad answer and not a
transient failure: the job fails at once with the reason, a dream backs off, and ``dreamd
status`` / ``dreamd doctor`` say ``model misconfigured: …`` until a call succeeds again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from dreamd.config import load_config
from dreamd.daemon.directories import DreamBackoff
from dreamd.jobs.work import Context, dream, execute
from dreamd.models.health import FILE_NAME, ModelHealth, health_path, read_health
from memory.errors import ModelMisconfigured, PermanentError
from memory.model.llm import Completion
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore
from tests.fake_anthropic import FakeAnthropic, Status, message

REPO = Path(__file__).resolve().parents[1]
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
GOOD = [{"name": "uses-pnpm", "type": "project", "description": "The repo uses pnpm",
         "body": "Install with pnpm, not npm."}]  # fmt: skip


# ----------------------------------------------------------------------------- end to end


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    server = FakeAnthropic()
    try:
        yield server
    finally:
        server.close()


def test_refused_key_fails_jobs_at_once_and_status_and_doctor_say_so_until_fixed(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    memory_dir = tmp_path / "code" / "app" / ".memory"
    MemoryStore.init(memory_dir)
    spool = tmp_path / "spool"
    config = tmp_path / "config.toml"
    config.write_text(
        f'[daemon]\nspool = "{spool}"\nroots = ["{tmp_path / "code"}/*/.memory"]\n'
        "[gates]\nthreshold = 100\n"
        f'[model]\nbackend = "anthropic"\nmodel = "claude-test"\nbase_url = "{fake.url}"\n'
        'timeout = "5s"\nmax_retries = 2\n'
    )
    env = {
        "PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(REPO),
        "DREAMD_SPOOL": str(spool), "ANTHROPIC_API_KEY": "sk-ant-revoked-0000",
        "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
    }  # fmt: skip

    def dreamd(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "dreamd", *args], cwd=tmp_path, env=env,
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    session = tmp_path / "s.txt"
    session.write_text("User: we use pnpm in this repo, not npm.\nAssistant: Noted.\n")
    for sid in ("one", "two"):
        assert dreamd("submit", str(session), "--memory-dir", str(memory_dir), "--session", sid).returncode == 0
    fake.responder = lambda req: Status(401, "invalid x-api-key")

    refused = dreamd("once", "--config", str(config), "--log-format", "json")
    assert refused.returncode == 1, "a run that filed its jobs in failed/ did not succeed"
    lines = refused.stderr.splitlines()
    assert len(lines) == 2 and all(ln.startswith("dreamd once: job ") and "HTTP 401" in ln for ln in lines)
    assert len(fake.requests) == 2, "one call per job: a 401 is neither retried nor deferred"
    failed = sorted((spool / "failed").glob("*.error.json"))
    assert len(failed) == 2 and not list((spool / "deferred").glob("*.json"))
    reason = json.loads(failed[0].read_text())["reason"]
    assert reason.startswith("model misconfigured: model claude-test: HTTP 401, ")
    assert "ANTHROPIC_API_KEY was refused" in reason and "dreamd retry" in reason
    assert "sk-ant-revoked" not in reason

    status = dreamd("status", "--config", str(config))
    assert status.returncode == 0, status.stderr
    assert "model: anthropic (claude-test)" in status.stdout
    assert "  model misconfigured: model misconfigured: model claude-test: HTTP 401" in status.stdout
    shape = json.loads(dreamd("status", "--config", str(config), "--json").stdout)["model"]
    assert shape["backend"] == "anthropic" and "HTTP 401" in shape["misconfigured"]["error"]
    doctor = dreamd("doctor", "--config", str(config))
    assert doctor.returncode == 1
    (line,) = [ln for ln in doctor.stdout.splitlines() if "model health:" in ln]
    assert line.startswith("FAIL  model health: model misconfigured: ") and "HTTP 401" in line

    # fixed (a new key the server accepts): retry, and the note is gone
    fake.responder = lambda req: message(json.dumps(GOOD))
    env["ANTHROPIC_API_KEY"] = "sk-ant-good-0000"
    assert dreamd("retry").returncode == 0
    assert dreamd("once", "--config", str(config), "--log-format", "json").returncode == 0
    assert [e.name for e in MemoryStore(memory_dir).read().records] == ["uses-pnpm"]
    assert not (spool / FILE_NAME).exists()
    assert "misconfigured" not in dreamd("status", "--config", str(config)).stdout


# ----------------------------------------------------------------------------- in process


class Refusing:
    """A backend whose every call is refused as misconfigured."""

    name = "refusing"

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, system: str, prompt: str, max_tokens: int) -> Completion:
        self.calls += 1
        raise ModelMisconfigured("HTTP 404, no model 'claude-nope'")


def context(tmp_path: Path, model: object) -> Context:
    spool = tmp_path / "spool"
    spool.mkdir(exist_ok=True)
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[daemon]\nspool = "{spool}"\nroots = ["{tmp_path}/*/.memory"]\n')
    config = load_config(cfg, env={"HOME": str(tmp_path)})
    return Context(config=config, model=model, clock=lambda: NOW,  # type: ignore[arg-type]
                   health=ModelHealth(health_path(spool)))  # fmt: skip


def test_a_dream_with_a_misconfigured_model_is_its_own_status_and_backs_off(
    tmp_path: Path,
) -> None:
    d = tmp_path / "app" / ".memory"
    store = MemoryStore.init(d)
    store.commit(Change(add=[make_record(f"fact-{i}", "project", f"Fact {i}", "b") for i in range(3)],
                        actor="manual"))  # fmt: skip
    model = Refusing()
    ctx = context(tmp_path, model)
    result = dream(d, ctx, force=True)
    assert result.status == "misconfigured"
    assert result.reason == "model misconfigured: HTTP 404, no model 'claude-nope'"
    assert model.calls == 1 and len(store.read().records) == 3
    assert DreamBackoff().record(d, result.status, 0.0) == 60.0
    note = read_health(health_path(tmp_path / "spool"))
    assert note is not None and note["error"] == result.reason and note["memory_dir"] == str(d)

    class Job:
        id, kind, memory_dir, force = "20261130T120000.000000Z-0000000000", "consolidate", str(d), True

    with pytest.raises(PermanentError, match=r"model misconfigured: HTTP 404.*dreamd retry"):
        execute(Job(), ctx)


def test_health_note_is_written_on_change_only_and_cleared_by_success(tmp_path: Path) -> None:
    path = health_path(tmp_path)
    health = ModelHealth(path)
    health.ok()
    assert not path.exists()
    health.misconfigured("HTTP 401, refused", model="m", now=NOW)
    first = path.stat().st_mtime_ns
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert read_health(path) == {
        "format": 1, "state": "misconfigured", "error": "HTTP 401, refused", "model": "m",
        "memory_dir": None, "at": "2026-11-30T12:00:00Z",
    }  # fmt: skip
    os.utime(path, ns=(0, 0))
    health.misconfigured("HTTP 401, refused", model="m", now=NOW)
    assert path.stat().st_mtime_ns == 0, "the same reason is not rewritten"
    assert first != 0
    health.ok()
    assert not path.exists() and read_health(path) is None
    # another process's note is cleared by this one's first success
    path.write_text(json.dumps({"error": "stale", "state": "misconfigured"}))
    ModelHealth(path).ok()
    assert not path.exists()


def test_no_spool_no_note_and_a_broken_note_is_reported_not_raised(tmp_path: Path) -> None:
    path = health_path(tmp_path / "absent")
    ModelHealth(path).misconfigured("x", model="m")
    assert not path.parent.exists()
    broken = health_path(tmp_path)
    broken.write_text("{not json")
    assert read_health(broken) == {"state": "unreadable", "error": f"{broken}: not valid JSON"}
    from dreamd.cli.doctor import Check, check_model_health
    from dreamd.status.collect import model_status

    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[daemon]\nspool = "{tmp_path}"\n')
    assert model_status(load_config(cfg, env={"HOME": str(tmp_path)}))["misconfigured"] is None
    check = check_model_health(broken, Check("OK", "model", "fine"))
    assert check == Check("WARN", "model health", f"{broken}: not valid JSON", f"rm {broken}")


def test_other_answers_clear_the_note_but_transient_failures_do_not(tmp_path: Path) -> None:
    from dreamd.models.ops import extract

    ctx = context(tmp_path, Refusing())
    path = health_path(tmp_path / "spool")
    ctx.health.misconfigured("old", model="m")

    class Transient:
        transient, misconfigured, error = True, False, "HTTP 529"

    ctx.note_model(tmp_path, Transient())
    assert path.exists()

    class Answering:
        name = "ok"

        def complete(self, system: str, prompt: str, max_tokens: int) -> Completion:
            return Completion(text="not json", stop_reason="end_turn")

    class Turn:
        role, text, timestamp, message_id = "user", "we use pnpm", None, "m"

    out = extract(Answering(), [Turn()], [], today=date(2026, 11, 30), max_tokens=100)
    assert out.rejected
    ctx.note_model(tmp_path, out)
    assert not path.exists(), "a refused answer still proves the model is reachable and set up"


def test_doctor_fails_on_a_note_unless_its_own_probe_now_succeeds(tmp_path: Path) -> None:
    from dreamd.cli.doctor import Check, check_model_health

    path = health_path(tmp_path)
    assert check_model_health(path, Check("OK", "model", "fine")) is None
    ModelHealth(path).misconfigured("model m: HTTP 404, no model 'm'", model="m", now=NOW)
    failing = check_model_health(path, Check("FAIL", "model", "rejected"))
    assert failing == Check(
        "FAIL", "model health",
        "model misconfigured: model m: HTTP 404, no model 'm' (since 2026-11-30T12:00:00Z)",
        "fix [model] (docs/models.md), then dreamd retry",
    )  # fmt: skip
    fixed = check_model_health(path, Check("OK", "model", "fine"))
    assert fixed is not None and fixed.status == "WARN"
    assert "now succeeds, so the note clears at the next successful call" in fixed.detail
