"""Job execution and dreams (dreamd/jobs/work.py) driven by a scripted model, plus dream crash safety."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dreamd.config import default_config
from dreamd.jobs.work import Context, dream, execute
from memory.errors import PermanentError, TransientError
from memory.model.llm import Completion, parse_payload
from memory.spool.jobs import Job, Transcript
from memory.store.locks import LEASE_NAME, DreamLease
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore

REPO = Path(__file__).resolve().parents[1]


class ScriptedModel:
    """Answers from a list of Completions (or exceptions) and records every payload it saw."""

    name = "scripted"

    def __init__(self, answers: list[Any]) -> None:
        self.answers = list(answers)
        self.payloads: list[dict[str, Any]] = []

    def complete(self, system: str, prompt: str, max_tokens: int) -> Completion:
        self.payloads.append(parse_payload(prompt))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        assert isinstance(answer, Completion)
        return answer


def ok(value: Any) -> Completion:
    return Completion(text=json.dumps(value), stop_reason="end_turn")


def rec(name: str, type_: str = "user", desc: str | None = None, body: str = "Body text.") -> dict[str, str]:
    return {"name": name, "type": type_, "description": desc or f"About {name}", "body": body}


def transcript(n: int) -> str:
    lines = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        lines.append(json.dumps({
            "type": role,
            "uuid": f"u{i}",
            "sessionId": "sess-1",
            "timestamp": f"2026-11-2{i % 9}T10:00:00Z",
            "message": {"role": role, "content": f"turn number {i} says something"},
        }))
    return "\n".join(lines) + "\n"


def extract_job(memory_dir: Path, job_id: str, content: str, session: str = "sess-1") -> Job:
    return Job(
        id=job_id,
        kind="extract",
        memory_dir=memory_dir,
        session_id=session,
        submitted_at="2026-11-29T10:00:00Z",
        transcript=Transcript(format="auto", content=content),
    )


@pytest.fixture
def mdir(tmp_path: Path) -> Path:
    d = tmp_path / "mem"
    MemoryStore.init(d)
    return d


def ctx_for(model: Any, **gates: Any) -> Context:
    cfg = default_config(env={"HOME": "/nonexistent"})
    if gates:
        cfg = cfg.replace(gates=cfg.gates.replace(**gates))
    return Context(config=cfg, model=model, ledger=None)


def test_extract_commits_records_with_provenance_and_cursor(mdir: Path) -> None:
    model = ScriptedModel([ok([rec("prefers-tabs"), rec("uses-pytest", "feedback")])])
    out = execute(extract_job(mdir, "job-1", transcript(4)), ctx_for(model))
    assert out == "extracted 2"
    m = MemoryStore(mdir).read()
    assert [e.name for e in m.records] == ["prefers-tabs", "uses-pytest"]
    assert m.records[0].sources == ["session:sess-1", "job:job-1"]
    assert m.cursors == {"sess-1": 4}
    assert m.applied_jobs == ["job-1"]
    assert m.sessions_since_consolidation == ["sess-1"]
    assert len(model.payloads[0]["turns"]) == 4


def test_rerunning_the_same_job_is_a_no_op(mdir: Path) -> None:
    model = ScriptedModel([ok([rec("prefers-tabs")])])
    ctx = ctx_for(model)
    job = extract_job(mdir, "job-1", transcript(4))
    execute(job, ctx)
    gen = MemoryStore(mdir).read().generation
    assert execute(job, ctx) == "duplicate"
    assert MemoryStore(mdir).read().generation == gen
    assert model.answers == []  # the model was not asked again


def test_later_submission_of_same_session_extracts_only_new_turns(mdir: Path) -> None:
    model = ScriptedModel([ok([rec("first")]), ok([rec("second")])])
    ctx = ctx_for(model)
    execute(extract_job(mdir, "pre-compact", transcript(4)), ctx)
    execute(extract_job(mdir, "session-end", transcript(10)), ctx)
    texts = [t["text"] for t in model.payloads[1]["turns"]]
    assert len(texts) == 6 and texts[0].startswith("turn number 4")
    assert MemoryStore(mdir).read().cursors["sess-1"] == 10


def test_no_new_turns_records_the_job_without_asking_the_model(mdir: Path) -> None:
    model = ScriptedModel([ok([rec("first")])])
    ctx = ctx_for(model)
    execute(extract_job(mdir, "a", transcript(4)), ctx)
    assert execute(extract_job(mdir, "b", transcript(4)), ctx) == "nothing-new"
    assert "b" in MemoryStore(mdir).read().applied_jobs


@pytest.mark.parametrize(
    "answer",
    [
        Completion(text='```json\n[{"name":"a","type":"user","description":"d","body":"b"}]\n```', stop_reason="end_turn"),
        Completion(text=json.dumps([rec("a")]), stop_reason="max_tokens"),
        Completion(text=json.dumps([rec("a"), {**rec("b"), "extra": 1}]), stop_reason="end_turn"),
        Completion(text="", stop_reason="end_turn"),
    ],
    ids=["fenced", "max_tokens", "one-bad-item", "empty"],
)
def test_rejected_answer_changes_nothing_and_defers(mdir: Path, answer: Completion) -> None:
    before = MemoryStore(mdir).read()
    with pytest.raises(TransientError, match="rejected"):
        execute(extract_job(mdir, "job-1", transcript(4)), ctx_for(ScriptedModel([answer])))
    after = MemoryStore(mdir).read()
    assert after.generation == before.generation
    assert after.cursors == {} and after.applied_jobs == []


def test_model_outage_is_transient(mdir: Path) -> None:
    with pytest.raises(TransientError):
        execute(extract_job(mdir, "job-1", transcript(4)), ctx_for(ScriptedModel([TransientError("529 overloaded")])))
    assert MemoryStore(mdir).read().generation == 0


def test_secrets_never_reach_a_record(mdir: Path) -> None:
    key = "sk-ant-api03-" + "A" * 80
    model = ScriptedModel([ok([rec("api-setup", "reference", body=f"The key is {key} for prod.")])])
    execute(extract_job(mdir, "job-1", transcript(2)), ctx_for(model))
    text = "".join(p.read_text() for p in mdir.glob("*.md"))
    assert key not in text and "[REDACTED:" in text


def test_remember_and_forget_jobs(mdir: Path) -> None:
    ctx = ctx_for(ScriptedModel([]))
    r = make_record("prefers-tabs", "user", "User prefers tabs", "Use tabs.")
    job = Job(id="r1", kind="remember", memory_dir=mdir, session_id=None, submitted_at="", records=(r,))
    assert execute(job, ctx) == "remembered 1"
    r2 = make_record("prefers-tabs", "user", "User prefers tabs (v2)", "Use tabs always.")
    execute(dataclasses.replace(job, id="r2", records=(r2,)), ctx)
    m = MemoryStore(mdir).read()
    assert [(e.name, e.description) for e in m.records] == [("prefers-tabs", "User prefers tabs (v2)")]
    forget = Job(id="f1", kind="forget", memory_dir=mdir, session_id=None, submitted_at="", names=("prefers-tabs", "nope"))
    assert execute(forget, ctx) == "forgot 1"
    assert MemoryStore(mdir).read().records == []
    with pytest.raises(PermanentError):
        execute(dataclasses.replace(forget, id="f2", names=()), ctx)


def seed(mdir: Path, names: list[str]) -> MemoryStore:
    store = MemoryStore(mdir)
    # "stale" has expired: a plan may drop it; every other record's facts must survive a plan
    store.commit(Change(add=[make_record(n, "user", f"About {n}", f"Body of {n}.",
                                         extra={"expires": "2020-01-01"} if n == "stale" else None)
                             for n in names]))
    return store


def seed_twins(mdir: Path, names: list[str]) -> MemoryStore:
    """:func:`seed`, with tabs-a and tabs-b saying the same thing in the same words, so the
    dream's candidate index links them (a name alone, "tabs-a" / "tabs-b", says they differ)."""
    store = MemoryStore(mdir)
    twin = ("User prefers tabs for indentation", "Indent every file with tabs, never spaces.")
    store.commit(Change(add=[make_record(n, "user", *(twin if n in ("tabs-a", "tabs-b") else (f"About {n}", f"Body of {n}.")),
                                         extra={"expires": "2020-01-01"} if n == "stale" else None)
                             for n in names]))  # fmt: skip
    return store


def merge_plan() -> Completion:
    return ok([
        {"source_names": ["tabs-a", "tabs-b"], "result": rec("tabs-a", desc="User prefers tabs",
                                                          body="Use tabs. Body of tabs-a. Body of tabs-b.")},
        {"source_names": ["stale"], "result": None},
    ])


def test_dream_applies_plan_in_one_commit_and_logs_merges(mdir: Path) -> None:
    store = seed(mdir, ["tabs-a", "tabs-b", "stale", "keep"])
    gen = store.read().generation
    result = dream(mdir, ctx_for(ScriptedModel([merge_plan()])), force=True)
    assert result.status == "applied"
    m = store.read()
    assert m.generation == gen + 1
    assert sorted(e.name for e in m.records) == ["keep", "tabs-a"]
    assert m.consolidated_at is not None
    assert m.change["merged"] == [{"from": ["tabs-a", "tabs-b"], "into": "tabs-a"}, {"from": ["stale"], "into": None}]
    assert not (mdir / LEASE_NAME).exists()
    history = {p.name for p in (mdir / ".history").iterdir()}
    assert sum(1 for n in history if n.startswith(("tabs-b-", "stale-"))) == 2


def test_dream_conflict_writes_nothing(mdir: Path) -> None:
    store = seed(mdir, ["tabs-a", "tabs-b", "stale", "keep"])
    ctx = ctx_for(ScriptedModel([merge_plan()]))

    def edit_under_the_dream(step: str) -> None:
        if step == "planned":
            MemoryStore(mdir).commit(Change(replace={"tabs-b": make_record("tabs-b", "user", "Changed", "New body.")}))

    ctx.fault = edit_under_the_dream
    before = store.read().generation
    result = dream(mdir, ctx, force=True)
    assert result.status == "conflict"
    m = store.read()
    assert m.generation == before + 1  # only the concurrent edit
    assert sorted(e.name for e in m.records) == ["keep", "stale", "tabs-a", "tabs-b"]
    assert m.consolidated_at is None


def test_dream_respects_gates_unless_forced_and_never_the_lease(mdir: Path) -> None:
    seed(mdir, ["a", "b"])
    model = ScriptedModel([ok([])])
    gated = dream(mdir, ctx_for(model, threshold=10))
    assert gated.status == "gated" and "count" in (gated.reason or "")
    with DreamLease.acquire(mdir):
        busy = dream(mdir, ctx_for(model), force=True)
    assert busy.status == "lease-busy"
    assert dream(mdir, ctx_for(model), force=True).status == "nothing"


def test_dry_run_changes_nothing(mdir: Path) -> None:
    store = seed(mdir, ["tabs-a", "tabs-b", "stale", "keep"])
    gen = store.read().generation
    result = dream(mdir, ctx_for(ScriptedModel([merge_plan()])), force=True, dry_run=True)
    assert result.status == "dry-run" and len(result.plan) == 2
    assert store.read().generation == gen


DREAM_STEPS = [
    "lease_taken", "planned", "locked", "verified", "files_written", "index_written",
    "history_linked", "manifest_replaced", "cleaned",
]

CHILD = textwrap.dedent(
    """
    import json, os, signal, sys
    sys.path.insert(0, {repo!r})
    from pathlib import Path
    from tests.test_work import ScriptedModel, ctx_for, merge_plan
    from dreamd.jobs.work import dream
    step = sys.argv[2]
    ctx = ctx_for(ScriptedModel([merge_plan()]))
    def fault(name):
        if name == step:
            os.kill(os.getpid(), signal.SIGKILL)
    ctx.fault = fault
    dream(Path(sys.argv[1]), ctx, force=True)
    """
)


def _set(store: MemoryStore) -> dict[str, str]:
    m = store.read()
    for e in m.records:
        from memory.store.records import sha256_hex

        assert sha256_hex((store.path / e.file).read_bytes()) == e.sha256
    return {e.name: e.description for e in m.records}


@pytest.fixture(scope="module")
def child_script(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("child") / "dream_child.py"
    path.write_text(CHILD.format(repo=str(REPO)))
    yield path


@pytest.mark.parametrize("step", DREAM_STEPS)
def test_sigkill_at_each_dream_step_leaves_a_whole_set_and_a_recoverable_lease(
    tmp_path: Path, step: str, child_script: Path
) -> None:
    mdir = tmp_path / "mem"
    MemoryStore.init(mdir)
    store = seed(mdir, ["tabs-a", "tabs-b", "stale", "keep"])
    old = _set(store)
    proc = subprocess.run([sys.executable, str(child_script), str(mdir), step], capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    after = _set(store)
    new = {"keep": "About keep", "tabs-a": "User prefers tabs"}
    assert after in (old, new)
    if step in ("manifest_replaced", "cleaned"):
        assert after == new
    else:
        assert after == old
    # The dead holder's lease is recovered by the next dream, which then completes.
    assert (mdir / LEASE_NAME).exists()
    result = dream(mdir, ctx_for(ScriptedModel([ok([])])), force=True)
    assert result.status == "nothing"
    assert not (mdir / LEASE_NAME).exists()
    assert any(p.name.startswith("dream.lock-broken-") for p in (mdir / ".history").iterdir())
    # Orphans of the interrupted commit are collected once the grace period is over.
    s = MemoryStore(mdir, orphan_grace=0)
    s.commit(Change(add=[make_record("after", "user", "After the crash", "x")]))
    referenced = {e.file for e in s.read().records}
    strays = [p.name for p in mdir.glob("*.md") if p.name != "MEMORY.md" and p.name not in referenced]
    assert strays == []
    assert os.path.exists(mdir / "manifest.json")


def test_a_job_for_an_unmanaged_directory_fails_at_once_with_the_fix(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    job = Job(id="r1", kind="forget", memory_dir=plain, session_id=None, submitted_at="", names=("x",))
    with pytest.raises(PermanentError, match=r"dreamd adopt.*dreamd retry r1"):
        execute(job, ctx_for(ScriptedModel([])))
    assert not (plain / ".lock").exists()


def test_forgetting_a_merged_away_record_says_where_the_fact_went(mdir: Path) -> None:
    seed(mdir, ["tabs-a", "tabs-b", "stale", "keep"])
    dream(mdir, ctx_for(ScriptedModel([merge_plan()])), force=True)
    job = Job(id="f1", kind="forget", memory_dir=mdir, session_id=None, submitted_at="", names=("tabs-b", "stale", "ghost"))
    execute(job, ctx_for(ScriptedModel([])))
    after = MemoryStore(mdir).read()
    assert after.generation == 2  # nothing was removed: no generation of its own (issue 20)
    note = after.extra["bookkept"]["note"]
    assert note == (
        "tabs-b: merged into tabs-a by a dream; forget tabs-a to remove the fact; "
        "stale: not present; ghost: not present"
    )


def test_large_sets_are_planned_in_batches_and_applied_in_one_commit(
    mdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dreamd.jobs.work

    """Changed by issue 23: a set larger than one batch is planned as its candidate groups
    (tabs-a and tabs-b say the same) and its expired records (stale); keep, linked to nothing
    and not expired, is sent to no plan call."""
    monkeypatch.setattr(dreamd.jobs.work, "PLAN_BATCH", 2)
    store = seed_twins(mdir, ["tabs-a", "tabs-b", "stale", "keep"])
    gen = store.read().generation
    model = ScriptedModel([
        ok([{"source_names": ["tabs-a", "tabs-b"], "result": rec("tabs-a", desc="Tabs", body="User prefers tabs for indentation. Indent every file with tabs, never spaces.")}]),
        ok([{"source_names": ["stale"], "result": None}]),
    ])
    assert dream(mdir, ctx_for(model), force=True).status == "applied"
    assert [sorted(c["name"] for c in p["records"]) for p in model.payloads] == [["tabs-a", "tabs-b"], ["stale"]]
    m = store.read()
    assert m.generation == gen + 1
    assert sorted((e.name, e.description) for e in m.records) == [("keep", "About keep"), ("tabs-a", "Tabs")]


def test_a_refused_batch_that_cannot_be_split_is_skipped_and_the_others_are_applied(
    mdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Changed by issue 10: one refused batch no longer refuses the whole dream (a directory
    whose batch always hit max_tokens backed off forever). The accepted batch is applied in
    the one dream commit and the refusal is in the log and the commit's note."""
    import dreamd.jobs.work

    monkeypatch.setattr(dreamd.jobs.work, "PLAN_BATCH", 2)
    store = seed_twins(mdir, ["tabs-a", "tabs-b", "stale", "keep"])
    gen = store.read().generation
    model = ScriptedModel([
        Completion(text="[]", stop_reason="max_tokens"),
        ok([{"source_names": ["stale"], "result": None}]),
    ])
    result = dream(mdir, ctx_for(model), force=True)
    assert result.status == "applied" and "truncated" in (result.reason or "")
    m = store.read()
    assert m.generation == gen + 1
    assert sorted(e.name for e in m.records) == ["keep", "tabs-a", "tabs-b"]
    assert m.change["note"] == (
        "plan refused for 2 record(s) from tabs-a: answer was truncated (stop_reason max_tokens)"
    )


def test_when_every_batch_is_refused_the_dream_is_rejected_and_nothing_changes(
    mdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dreamd.jobs.work

    monkeypatch.setattr(dreamd.jobs.work, "PLAN_BATCH", 2)
    store = seed(mdir, ["tabs-a", "tabs-b", "stale", "keep"])
    gen = store.read().generation
    model = ScriptedModel([Completion(text="[]", stop_reason="max_tokens")] * 2)
    result = dream(mdir, ctx_for(model), force=True)
    assert result.status == "rejected" and "truncated" in (result.reason or "")
    assert store.read().generation == gen
    assert len(store.read().records) == 4


def test_a_secret_said_across_two_turns_never_reaches_the_model(mdir: Path) -> None:
    """ "the password is" in one user turn, the value alone in the next (issue 22): each turn
    redacted alone holds no secret, so the model saw the value."""
    said = ["for the nightly backups the rsync password is", "ok, send it", "Wq4-Harbor-Fern!", "got it"]
    lines = [
        json.dumps({
            "type": role, "uuid": f"s{i}", "sessionId": "sess-1", "timestamp": "2026-11-20T10:00:00Z",
            "message": {"role": role, "content": text},
        })
        for i, (role, text) in enumerate(zip(["user", "assistant"] * 2, said, strict=True))
    ]  # fmt: skip
    model = ScriptedModel([ok([])])
    execute(extract_job(mdir, "job-1", "\n".join(lines) + "\n"), ctx_for(model))
    seen = json.dumps(model.payloads)
    assert model.payloads and "Wq4-Harbor" not in seen and "[REDACTED:password]" in seen
