"""Job validation: every bad job is refused with a reason, never with a crash."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.errors import JobRejected
from memory.roots import dir_allowed, expand_roots
from memory.spool.jobs import (
    Job,
    build_job,
    encode_job,
    new_job_id,
    validate_job,
)
from memory.spool.jobs import Transcript as JobTranscript


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    (tmp_path / "code" / "app" / ".memory").mkdir(parents=True)
    return tmp_path


def _roots(root: Path) -> list[str]:
    return [str(root / "code" / "*" / ".memory")]


def _job(root: Path, **over: Any) -> dict[str, Any]:
    job = build_job(
        "extract",
        job_id="20261129T102205.123456Z-3f9c8a1b2c",
        memory_dir=str(root / "code" / "app" / ".memory"),
        session_id="4d5611e5-241a-462a-8d15-5122611a9569",
        submitted_at="2026-11-29T10:22:05.123456Z",
        transcript=("claude-code", '{"type":"user"}\n'),
    )
    job.update(over)
    return job


def _raw(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def _reason(raw: bytes, root: Path, **kw: Any) -> str:
    with pytest.raises(JobRejected) as info:
        validate_job(raw, roots=_roots(root), **kw)
    return str(info.value)


def test_valid_extract_job_round_trips_into_a_frozen_job(root: Path) -> None:
    job = validate_job(encode_job(_job(root)), roots=_roots(root))
    assert job == Job(
        id="20261129T102205.123456Z-3f9c8a1b2c",
        kind="extract",
        memory_dir=(root / "code" / "app" / ".memory").resolve(),
        session_id="4d5611e5-241a-462a-8d15-5122611a9569",
        submitted_at="2026-11-29T10:22:05.123456Z",
        transcript=JobTranscript("claude-code", '{"type":"user"}\n'),
    )
    with pytest.raises(AttributeError):
        job.kind = "forget"  # type: ignore[misc]


def test_remember_forget_and_consolidate_jobs_validate(root: Path) -> None:
    mdir = str(root / "code" / "app" / ".memory")
    rec = {"name": "prefers-tabs", "type": "user", "description": "Tabs", "body": "Use tabs."}
    remember = validate_job(
        encode_job(build_job("remember", job_id=new_job_id(), memory_dir=mdir, records=[rec])),
        roots=_roots(root),
    )
    assert [(r.name, r.type, r.description, r.body) for r in remember.records] == [
        ("prefers-tabs", "user", "Tabs", "Use tabs.\n")
    ]
    forget = validate_job(
        encode_job(
            build_job("forget", job_id=new_job_id(), memory_dir=mdir, names=["a", "b", "a"])
        ),
        roots=_roots(root),
    )
    assert forget.names == ("a", "b")
    dream = validate_job(
        encode_job(build_job("consolidate", job_id=new_job_id(), memory_dir=mdir, force=True)),
        roots=_roots(root),
    )
    assert (dream.kind, dream.force, dream.transcript, dream.records) == (
        "consolidate",
        True,
        None,
        (),
    )


def test_validation_redacts_transcripts_and_records(root: Path) -> None:
    key = "sk-ant-api03-" + "A1b2" * 10
    job = validate_job(
        encode_job(_job(root, transcript={"format": "text", "content": f"key {key}"})),
        roots=_roots(root),
    )
    assert job.transcript == JobTranscript("text", "key [REDACTED:anthropic-key]")
    assert job.redacted == ("anthropic-key",)
    rec = {
        "name": "deploy",
        "type": "project",
        "description": "Deploy",
        "body": "token=abc123def456",
    }
    job = validate_job(encode_job(_job(root, kind="remember", records=[rec])), roots=_roots(root))
    assert job.records[0].body == "token=[REDACTED:token]\n"


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda j: j.update(format=2), "job format 2 is not supported"),
        (lambda j: j.pop("format"), "job format null is not supported"),
        (lambda j: j.update(format=True), "job format true is not supported"),
        (lambda j: j.update(kind="dance"), 'kind "dance" is not one of'),
        (lambda j: j.update(id="../../etc/passwd"), "id '../../etc/passwd' must match"),
        (lambda j: j.update(id=7), "id must be a string, got int"),
        (lambda j: j.update(memory_dir="relative/.memory"), "is not an absolute path"),
        (lambda j: j.update(memory_dir=None), "memory_dir must be a string, got NoneType"),
        (lambda j: j.update(session_id="has space"), "session_id 'has space' must match"),
        (lambda j: j.update(session_id="x" * 129), "session_id is over 128 characters"),
        (lambda j: j.pop("transcript"), "transcript must be an object"),
        (
            lambda j: j.update(transcript={"format": "pdf", "content": ""}),
            'transcript.format "pdf" is not one of',
        ),
        (
            lambda j: j.update(transcript={"format": "text", "content": 5}),
            "transcript.content must be a string",
        ),
        (lambda j: j.update(kind="remember"), "records must be a non-empty list"),
        (
            lambda j: j.update(kind="remember", records=[{"name": "x"}]),
            "record fields must be exactly",
        ),
        (
            lambda j: j.update(
                kind="remember",
                records=[{"name": "Bad Name", "type": "user", "description": "d", "body": "b"}],
            ),
            "name 'Bad Name' must match",
        ),
        (lambda j: j.update(kind="forget", names=[]), "names must be a non-empty list"),
        (lambda j: j.update(kind="forget", names=["../x"]), "names[0] '../x' is not a record name"),
        (lambda j: j.update(kind="consolidate", force="yes"), "force must be true or false"),
    ],
)
def test_malformed_jobs_are_rejected_with_a_reason(root: Path, mutate: Any, expected: str) -> None:
    job = _job(root)
    mutate(job)
    assert expected in _reason(_raw(job), root)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"", "not valid JSON"),
        (b"\xff\xfe{}", "not valid UTF-8 (byte 0)"),
        (b"[1, 2]", "must be a JSON object, got list"),
        (b'"just a string"', "must be a JSON object, got str"),
        (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "nested too deeply"),
        (b"[" * 100_000, "nested too deeply"),
        (b'{"format": 1, "n": ' + b"9" * 5000 + b"}", "not valid JSON"),
    ],
)
def test_unparseable_bytes_are_rejected_not_raised(root: Path, raw: bytes, expected: str) -> None:
    assert expected in _reason(raw, root)


def test_lone_surrogates_are_rejected(root: Path) -> None:
    raw = encode_job(_job(root)).replace(b'{\\"type\\":\\"user\\"}', b"\\ud800")
    raw = raw.replace(b'"content":"', b'"content":"\\ud800', 1)
    assert "transcript.content is not valid Unicode" in _reason(raw, root)


def test_oversize_job_is_rejected_before_parsing(root: Path) -> None:
    raw = encode_job(_job(root, transcript={"format": "text", "content": "x" * 5000}))
    assert _reason(raw, root, max_bytes=4096) == "job is over the 4096-byte limit (max_job_bytes)"
    assert validate_job(raw, roots=_roots(root), max_bytes=len(raw)).kind == "extract"


def test_memory_dir_outside_roots_is_refused_directly(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / ".memory"
    outside.mkdir(parents=True)
    reason = _reason(_raw(_job(root, memory_dir=str(outside))), root)
    assert reason == f"memory_dir {outside} is outside the configured roots"


def test_memory_dir_escaping_with_dotdot_is_refused(root: Path) -> None:
    sneaky = f"{root}/code/app/.memory/../../../etc"
    reason = _reason(_raw(_job(root, memory_dir=sneaky)), root)
    assert reason == f"memory_dir {sneaky} (resolves to {root}/etc) is outside the configured roots"


def test_memory_dir_escaping_through_a_symlink_is_refused(root: Path) -> None:
    target = root / "secret-place"
    target.mkdir()
    escape = root / "code" / "app" / ".memory" / "escape"
    escape.symlink_to(target)
    reason = _reason(_raw(_job(root, memory_dir=str(escape))), root)
    assert reason == f"memory_dir {escape} (resolves to {target}) is outside the configured roots"
    # a symlinked project *directory* that does not match the pattern where it points is refused too
    (root / "code" / "sneaky").symlink_to(target)
    reason = _reason(_raw(_job(root, memory_dir=str(root / "code" / "sneaky" / "x"))), root)
    assert reason.endswith(f"(resolves to {target}/x) is outside the configured roots")


def test_dir_allowed_follows_globs_and_later_created_dirs_but_not_planted_links(root: Path) -> None:
    roots = _roots(root)
    assert dir_allowed(root / "code" / "app" / ".memory", roots)
    assert dir_allowed(root / "code" / "app" / ".memory" / "sub", roots)  # inside a match
    assert dir_allowed(root / "code" / "not-yet-created" / ".memory", roots)  # created later
    assert not dir_allowed(root / "code" / "app" / "other", roots)
    assert not dir_allowed(root / "code" / "a" / "b" / ".memory", roots)  # * does not cross /
    assert not dir_allowed(root / "code" / ".memory", roots)
    # a link under a root that points elsewhere does not extend the roots, even where the
    # glob matches it exactly (a planted link would otherwise aim jobs anywhere)
    real_project = root / "mnt" / "proj"
    (real_project / ".memory").mkdir(parents=True)
    (root / "code" / "linked").symlink_to(real_project)
    assert not dir_allowed(real_project / ".memory", roots)
    assert not dir_allowed(root / "code" / "linked" / ".memory", roots)
    assert dir_allowed(real_project / ".memory", [*roots, str(root / "mnt" / "*" / ".memory")])
    # roots with ~ are expanded; relative roots match nothing
    home_root = ["~/" + os.path.relpath(root / "code", Path.home()) + "/*/.memory"]
    if not home_root[0].startswith("~/.."):
        assert dir_allowed(root / "code" / "app" / ".memory", home_root)
    assert not dir_allowed(root / "code" / "app" / ".memory", ["code/*/.memory"])
    # a plain (glob-free) root allows itself and what is inside it
    assert dir_allowed(root / "code" / "app" / ".memory", [str(root / "code")])
    assert not dir_allowed(root, [str(root / "code")])
    assert not dir_allowed(str(root / "code2"), [str(root / "code")])


def test_root_that_is_itself_a_symlink_is_resolved(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "app" / ".memory").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(real)
    roots = [str(tmp_path / "alias" / "*" / ".memory")]
    assert dir_allowed(real / "app" / ".memory", roots)
    assert dir_allowed(tmp_path / "alias" / "new" / ".memory", roots)


def test_expand_roots_lists_existing_matching_directories(root: Path) -> None:
    (root / "code" / "web" / ".memory").mkdir(parents=True)
    (root / "code" / "file-not-dir").mkdir()
    ((root / "code" / "file-not-dir") / ".memory").write_text("not a dir")
    (root / "code" / "linked").symlink_to(root / "code" / "web")  # same dir twice
    found = expand_roots([*_roots(root), "relative/*", str(root / "nothing" / "*")])
    assert found == [
        (root / "code" / "app" / ".memory").resolve(),
        (root / "code" / "web" / ".memory").resolve(),
    ]


def test_new_job_ids_sort_by_time_and_do_not_repeat() -> None:
    from datetime import UTC, datetime

    a = new_job_id(datetime(2026, 11, 29, 10, 22, 5, 123456, tzinfo=UTC))
    b = new_job_id(datetime(2026, 11, 29, 10, 22, 5, 123457, tzinfo=UTC))
    assert a.startswith("20261129T102205.123456Z-") and len(a) == 34
    assert a < b
    assert len({new_job_id() for _ in range(10_000)}) == 10_000


@settings(max_examples=300, deadline=None)
@given(raw=st.binary(max_size=400))
def test_fuzz_arbitrary_bytes_never_crash_validation(raw: bytes) -> None:
    try:
        job = validate_job(raw, roots=["/nonexistent-root-for-fuzz/*"])
    except JobRejected as exc:
        assert str(exc) and "\n" not in str(exc)
    else:  # pragma: no cover - practically unreachable with random bytes
        assert isinstance(job, Job)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(
    fields=st.dictionaries(
        st.sampled_from(
            [
                "format",
                "id",
                "kind",
                "memory_dir",
                "session_id",
                "submitted_at",
                "transcript",
                "records",
                "names",
                "force",
            ]
        ),
        _json_values,
    ),
    keep_valid=st.booleans(),
)
def test_fuzz_structured_jobs_are_valid_or_rejected(
    tmp_path_factory: Any, fields: dict[str, Any], keep_valid: bool
) -> None:
    base = {
        "format": 1,
        "id": "20261129T102205.123456Z-3f9c8a1b2c",
        "kind": "extract",
        "memory_dir": "/fuzz-root/app/.memory",
        "session_id": None,
        "submitted_at": "x",
        "transcript": {"format": "text", "content": "hi"},
    }
    job = {**base, **fields} if keep_valid else fields
    try:
        result = validate_job(json.dumps(job).encode(), roots=["/fuzz-root/*/.memory"])
    except JobRejected as exc:
        assert str(exc)
    else:
        assert result.kind in ("extract", "remember", "forget", "consolidate")
        assert str(result.memory_dir).startswith("/fuzz-root/")
