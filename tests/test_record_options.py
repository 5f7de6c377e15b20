"""``importance`` and ``expires`` can be set wherever a record is written, validated like the rest;
and every committing command honours ``[retention] history_generations``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import memory
from dreamd.cli.main import main
from memory.errors import JobRejected, RecordError
from memory.spool.jobs import validate_job
from memory.store.records import parse_record, validate_fields
from memory.store.transaction import MemoryStore

pytestmark = pytest.mark.usefixtures("roots_here")  # dreamd init refuses a directory outside the roots


def _config(tmp_path: Path, body: str = "") -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[daemon]\nspool = "{tmp_path / "spool"}"\nroots = ["{tmp_path}/*/.memory"]\n' + body
    )
    return cfg


def _record_file(mdir: Path, name: str) -> bytes:
    [entry] = [e for e in MemoryStore(mdir).read().records if e.name == name]
    return (mdir / entry.file).read_bytes()


def test_cli_remember_writes_importance_and_expires(tmp_path: Path) -> None:
    mdir = tmp_path / "app" / ".memory"
    cfg = _config(tmp_path)
    assert main(["init", str(mdir)]) == 0
    code = main([
        "remember", str(mdir), "--config", str(cfg), "--name", "release-freeze", "--type",
        "project", "--description", "Code freeze before the release", "--body", "No merges.",
        "--importance", "0.9", "--expires", "2026-12-12",
    ])  # fmt: skip
    assert code == 0
    rec = parse_record(_record_file(mdir, "release-freeze"), where="x.md")
    assert rec.importance == 0.9
    assert rec.expires == "2026-12-12"


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--importance", "1.5", "importance must be a number from 0 to 1"),
        ("--expires", "next week", "expires must be a date like 2026-12-31"),
        ("--expires", "2026-02-30", "expires must be a date like 2026-12-31"),
    ],
)
def test_cli_remember_refuses_bad_options_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, message: str
) -> None:
    mdir = tmp_path / "app" / ".memory"
    main(["init", str(mdir)])
    capsys.readouterr()
    code = main([
        "remember", str(mdir), "--name", "x", "--type", "user", "--description", "d",
        "--body", "b", flag, value,
    ])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1
    assert message in err and err.count("\n") == 1
    assert MemoryStore(mdir).read().generation == 0


def test_remember_job_carries_both_fields_and_validates_them(tmp_path: Path) -> None:
    mdir = tmp_path / "app" / ".memory"
    MemoryStore.init(mdir)
    spool = tmp_path / "spool"
    job_id = memory.remember(
        mdir, name="on-call", type="project", description="On-call rotation this month",
        body="Alice is on call.", importance=0.2, expires="2026-12-31", spool=spool,
    )  # fmt: skip
    raw = (spool / "new" / f"{job_id}.json").read_bytes()
    [rec] = json.loads(raw)["records"]
    assert rec["importance"] == 0.2 and rec["expires"] == "2026-12-31"
    job = validate_job(raw, roots=[str(tmp_path / "*" / ".memory")])
    assert job.records[0].importance == 0.2
    assert job.records[0].expires == "2026-12-31"

    bad = json.loads(raw)
    bad["records"][0]["expires"] = "soon"
    with pytest.raises(JobRejected, match=r"records\[0\]: expires must be a date"):
        validate_job(json.dumps(bad).encode(), roots=[str(tmp_path / "*" / ".memory")])
    with pytest.raises(RecordError, match="importance must be a number from 0 to 1"):
        memory.remember(
            mdir, name="x", type="user", description="d", body="b", importance=True, spool=spool
        )


def test_model_answers_stay_strict_about_optional_fields() -> None:
    item = {"name": "a", "type": "user", "description": "d", "body": "b", "importance": 1}
    with pytest.raises(RecordError, match="unexpected importance"):
        validate_fields(item, where="extraction item 0")


def test_committing_commands_honour_the_configured_history_window(tmp_path: Path) -> None:
    mdir = tmp_path / "app" / ".memory"
    cfg = _config(tmp_path, "[retention]\nhistory_generations = 500\n")
    main(["init", str(mdir)])
    for i in range(60):
        assert main([
            "remember", str(mdir), "--config", str(cfg), "--name", f"n{i}", "--type", "user",
            "--description", f"fact {i}", "--body", f"body {i}",
        ]) == 0  # fmt: skip
    assert main(["forget", str(mdir), "n0", "--config", str(cfg)]) == 0
    kept = sorted((mdir / ".history").glob("manifest-*"))
    assert len(kept) >= 60, "a window of 500 generations keeps every old manifest"
    assert main(["rollback", str(mdir), "--to", "2", "--config", str(cfg)]) == 0
    names = {e.name for e in MemoryStore(mdir).read().records}
    assert names == {"n0", "n1"}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [("name", None, "name must be a string"), ("description", None, "description must be a string"),
     ("body", 5, "body must be a string")],
)
def test_library_remember_gives_one_clear_error_for_wrong_types(
    tmp_path: Path, field: str, value: object, message: str
) -> None:
    args: dict[str, object] = {"name": "n", "type": "user", "description": "d", "body": "b"}
    args[field] = value
    with pytest.raises(RecordError, match=message):
        memory.remember(tmp_path / "m", spool=tmp_path / "spool", **args)  # type: ignore[arg-type]


def test_updating_a_record_keeps_its_importance_and_expiry_unless_given(tmp_path: Path) -> None:
    mdir = tmp_path / "app" / ".memory"
    main(["init", str(mdir)])
    base = ["remember", str(mdir), "--name", "freeze", "--type", "project", "--description", "Freeze"]
    assert main([*base, "--body", "b1", "--importance", "0.9", "--expires", "2026-12-12"]) == 0
    assert main([*base, "--body", "b2"]) == 0
    rec = parse_record(_record_file(mdir, "freeze"), where="x.md")
    assert (rec.body.strip(), rec.importance, rec.expires) == ("b2", 0.9, "2026-12-12")
    assert main([*base, "--body", "b3", "--importance", "0.1"]) == 0
    rec = parse_record(_record_file(mdir, "freeze"), where="x.md")
    assert (rec.importance, rec.expires) == (0.1, "2026-12-12")
