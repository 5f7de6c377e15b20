"""The thin client: local validation, redaction before writing, self-contained jobs, light imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from memory.client import forget, remember, request_consolidation, submit
from memory.errors import JobRejected, RecordError
from memory.spool.jobs import validate_job

REPO = Path(__file__).resolve().parents[1]
MDIR = "/home/me/code/app/.memory"
ROOTS = ["/home/me/code/*/.memory"]


def _only_job(spool: Path) -> dict[str, Any]:
    files = sorted((spool / "new").iterdir())
    assert len(files) == 1
    data: dict[str, Any] = json.loads(files[0].read_bytes())
    return data


def test_submit_writes_a_self_contained_extract_job(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    job_id = submit(
        "user: remember I like tabs", memory_dir=MDIR, session_id="s-1", format="text", spool=spool
    )
    job = _only_job(spool)
    assert (spool / "new" / f"{job_id}.json").exists()
    assert job == {
        "format": 1,
        "id": job_id,
        "kind": "extract",
        "memory_dir": MDIR,
        "session_id": "s-1",
        "submitted_at": job["submitted_at"],
        "transcript": {"format": "text", "content": "user: remember I like tabs"},
    }
    assert job["submitted_at"].endswith("Z")
    parsed = validate_job((spool / "new" / f"{job_id}.json").read_bytes(), roots=ROOTS)
    assert (
        parsed.transcript is not None and parsed.transcript.content == "user: remember I like tabs"
    )


def test_submit_accepts_bytes_and_paths_and_copies_the_content(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(b'{"type":"user","message":{"content":"hi \xe4\xbd\xa0\xe5\xa5\xbd"}}\n')
    submit(transcript, memory_dir=MDIR, spool=spool)
    transcript.unlink()  # the job must not depend on the file any more
    assert _only_job(spool)["transcript"] == {
        "format": "auto",
        "content": '{"type":"user","message":{"content":"hi 你好"}}\n',
    }
    (spool / "new" / os.listdir(spool / "new")[0]).unlink()
    submit(b"bad \xff byte", memory_dir=MDIR, spool=spool)
    assert _only_job(spool)["transcript"]["content"] == "bad \ufffd byte"


def test_submit_redacts_secrets_before_the_job_is_written(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    key = "sk-ant-api03-" + "Zx9Y" * 10
    submit(
        f'{{"content":"my key {key} and password=\\"hunter22x\\""}}\n', memory_dir=MDIR, spool=spool
    )
    raw = next((spool / "new").iterdir()).read_bytes()
    assert key.encode() not in raw and b"hunter22x" not in raw
    content = json.loads(raw)["transcript"]["content"]
    assert (
        content
        == '{"content":"my key [REDACTED:anthropic-key] and password=\\"[REDACTED:password]\\""}\n'
    )
    assert json.loads(content)  # the JSONL line is still valid JSON


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"memory_dir": "relative/.memory"},
            "memory_dir 'relative/.memory' must be an absolute path",
        ),
        (
            {"memory_dir": MDIR, "session_id": "no spaces please"},
            "session_id 'no spaces please' must match",
        ),
        ({"memory_dir": MDIR, "format": "pdf"}, "transcript format 'pdf' is not one of"),
    ],
)
def test_submit_validates_locally(tmp_path: Path, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(JobRejected, match=message.replace("(", r"\(")):
        submit("x", spool=tmp_path / "spool", **kwargs)
    assert not (tmp_path / "spool" / "new").exists() or os.listdir(tmp_path / "spool" / "new") == []


def test_submit_of_a_missing_file_says_which(tmp_path: Path) -> None:
    with pytest.raises(JobRejected, match=f"transcript {tmp_path}/nope.jsonl: No such file"):
        submit(tmp_path / "nope.jsonl", memory_dir=MDIR, spool=tmp_path / "spool")


def test_submit_refuses_a_transcript_over_the_job_limit(tmp_path: Path) -> None:
    with pytest.raises(JobRejected, match=r"over the 10000-byte limit"):
        submit("y" * 20_000, memory_dir=MDIR, spool=tmp_path / "spool", max_job_bytes=10_000)


def test_remember_checks_fields_and_redacts(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    with pytest.raises(RecordError, match=r"remember: name 'Not A Slug' must match"):
        remember(MDIR, name="Not A Slug", type="user", description="d", body="b", spool=spool)
    with pytest.raises(RecordError, match=r"remember: type 'person' is not one of"):
        remember(MDIR, name="ok", type="person", description="d", body="b", spool=spool)
    job_id = remember(
        MDIR,
        name="deploy-token",
        type="reference",
        description="Where the deploy token lives",
        body="It is in 1Password; token=abc123def456 for staging.",
        spool=spool,
    )
    job = _only_job(spool)
    assert job["id"] == job_id and job["kind"] == "remember"
    assert job["records"] == [
        {
            "name": "deploy-token",
            "type": "reference",
            "description": "Where the deploy token lives",
            "body": "It is in 1Password; token=[REDACTED:token] for staging.\n",
        }
    ]
    assert validate_job(json.dumps(job).encode(), roots=ROOTS).records[0].name == "deploy-token"


def test_forget_and_request_consolidation(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    forget(MDIR, "prefers-tabs", spool=spool)
    assert _only_job(spool)["names"] == ["prefers-tabs"]
    with pytest.raises(JobRejected, match=r"forget: 'Bad/Name' is not a record name"):
        forget(MDIR, ["ok", "Bad/Name"], spool=spool)
    with pytest.raises(JobRejected, match="no record names given"):
        forget(MDIR, [], spool=spool)
    for f in (spool / "new").iterdir():
        f.unlink()
    request_consolidation(MDIR, force=True, spool=spool)
    job = _only_job(spool)
    assert (job["kind"], job["force"]) == ("consolidate", True)
    assert validate_job(json.dumps(job).encode(), roots=ROOTS).force is True


def test_default_spool_comes_from_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMD_SPOOL", str(tmp_path / "env-spool"))
    job_id = submit("hi", memory_dir=MDIR)
    assert (tmp_path / "env-spool" / "new" / f"{job_id}.json").exists()


def test_client_submit_does_not_import_heavy_modules(tmp_path: Path) -> None:
    code = textwrap.dedent(
        f"""
        import sys
        import memory.client
        memory.client.submit("hello", memory_dir={MDIR!r}, session_id="s", spool={str(tmp_path / "spool")!r})
        import memory
        memory.submit("again", memory_dir={MDIR!r}, spool={str(tmp_path / "spool")!r})
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in
                       ("anthropic", "watchdog", "apscheduler", "filelock", "yaml", "structlog", "httpx"))
        print(",".join(heavy))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""
    assert len(os.listdir(tmp_path / "spool" / "new")) == 2


def test_lone_surrogates_in_a_str_transcript_still_make_a_valid_job(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    submit("broken \ud800 surrogate", memory_dir=MDIR, spool=spool)
    raw = next((spool / "new").iterdir()).read_bytes()
    job = validate_job(raw, roots=ROOTS)
    assert job.transcript is not None and job.transcript.content == "broken ? surrogate"
