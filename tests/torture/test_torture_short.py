"""The torture test in its CI form, and the checker's own tests (a checker that cannot fail
proves nothing, so every invariant is shown catching a planted violation).

The CI runs are ``python -m tests.torture.run`` as a subprocess: 60 s of load and chaos with the
offline backend and 30 s against the scripted fake Anthropic endpoint, each drained and checked.
Longer runs: ``python -m tests.torture.run --duration 1800 --workdir /tmp/t --json out.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memory.spool.queue import Spool
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore
from tests.torture.checker import Report, World, check
from tests.torture.ledger import Ledger, LedgerWriter

REPO = Path(__file__).resolve().parents[2]
SECRET = "ghp_" + "Z9" * 18


# ---------------------------------------------------------------------------- the checker


class Tiny:
    """A hand-built, already drained world: one remember and one forget, both applied."""

    def __init__(self, tmp: Path) -> None:
        self.world = World(workdir=tmp, spool=tmp / "spool", mem_root=tmp / "mem", dirs=[tmp / "mem" / "d0"],
                           outside=tmp / "outside", ledger_dir=tmp / "ledger", logs_dir=tmp / "logs")
        self.spool = Spool(self.world.spool).ensure()
        (tmp / "logs").mkdir()
        self.d0 = self.world.dirs[0]
        self.store = MemoryStore.init(self.d0)
        MemoryStore.init(self.world.outside)
        self.ledger = LedgerWriter(tmp / "ledger" / "client-0.jsonl", "client-0")
        self.chaos = LedgerWriter(tmp / "ledger" / "chaos.jsonl", "chaos")
        self.logs: list[Path] = []
        self.remember("prefers-tabs", "User prefers tabs", job="20261129T100000.000001Z-aaaaaaaaaa")
        self.remember("weekly-sync", "The weekly sync is on Tuesdays", job="20261129T100000.000002Z-bbbbbbbbbb")
        self.forget("weekly-sync", job="20261129T100000.000003Z-cccccccccc")

    def _done(self, job: str, payload: dict[str, Any]) -> None:
        (self.world.spool / "done" / f"{job}.json").write_text(json.dumps({"id": job, **payload}))

    def remember(self, name: str, description: str, *, job: str, body: str = "Body.") -> None:
        rec = make_record(name, "user", description=description, body=body)
        self.store.commit(Change(add=[rec], actor="job", job_id=job))
        self._done(job, {"kind": "remember"})
        self.ledger.write("accepted", kind="remember", job_id=job, memory_dir=str(self.d0), name=name)

    def forget(self, name: str, *, job: str) -> None:
        self.store.commit(Change(remove=[name], actor="job", job_id=job))
        self._done(job, {"kind": "forget"})
        self.ledger.write("accepted", kind="forget", job_id=job, memory_dir=str(self.d0), names=[name])

    def log(self, name: str, *events: dict[str, Any]) -> None:
        path = self.world.logs_dir / name
        path.write_text("".join(json.dumps(e) + "\n" for e in events))
        self.logs.append(path)

    def check(self) -> Report:
        return check(self.world, Ledger.load(self.world.ledger_dir), daemon_logs=self.logs)


def _tags(report: Report) -> set[str]:
    return {v.split("]")[0].lstrip("[") for v in report.violations}


def test_a_clean_world_has_no_violations_and_every_invariant_was_checked(tmp_path: Path) -> None:
    report = Tiny(tmp_path).check()
    assert report.violations == []
    for name in ("spool-terminal", "accepted-accounted", "manifest-valid", "remember-present",
                 "no-silent-loss", "no-secret", "no-lock-held", "hostile-outcome", "history-log",
                 "no-nested-md"):
        assert report.checks[name] > 0, name
    assert report.jobs == {"accepted": 3, "applied": 3, "done": 3, "failed": 0}


def _lost_job(t: Tiny) -> None:
    t.ledger.write("accepted", kind="extract", job_id="20261129T100000.000009Z-dddddddddd", memory_dir=str(t.d0))


def _applied_twice(t: Tiny) -> None:
    path = t.d0 / "manifest.json"
    data = json.loads(path.read_text())
    data["applied_jobs"] = []  # as if the idempotency record had been lost
    path.write_text(json.dumps(data))
    t.store.commit(Change(add=[make_record("again", "user", description="d", body="b")],
                          actor="job", job_id="20261129T100000.000001Z-aaaaaaaaaa"))


def _removed_silently(t: Tiny) -> None:
    t.store.commit(Change(remove=["prefers-tabs"], actor="manual"))


def _edited_behind_the_manifest(t: Tiny) -> None:
    entry = t.store.read().records[0]
    (t.d0 / entry.file).write_text("---\nname: prefers-tabs\ndescription: x\ntype: user\n---\nchanged\n")


def _secret_in_a_record(t: Tiny) -> None:
    # Every commit redacts since issue 22, so a write that skipped the redactor is planted by hand.
    t.chaos.write("hostile", case="secret", job_id=None, file="x", expect="ignored", secrets=[SECRET])
    (t.d0 / "leak.md").write_text(f"---\nname: leak\ndescription: key\ntype: reference\n---\n\nThe key is {SECRET}.\n")


def _lease_left(t: Tiny) -> None:
    (t.d0 / ".dream.lock").write_text('{"pid": 1}')


def _job_left_in_new(t: Tiny) -> None:
    (t.world.spool / "new" / "20261129T100000.000008Z-eeeeeeeeee.json").write_text("{}")


def _failed_without_reason(t: Tiny) -> None:
    (t.world.spool / "failed" / "20261129T100000.000007Z-ffffffffff.json").write_text("{}")


def _hostile_applied(t: Tiny) -> None:
    t.chaos.write("hostile", case="path-escape", job_id="20261129T100000.000002Z-bbbbbbbbbb",
                  file="x.json", expect="failed")


def _kill_not_recovered(t: Tiny) -> None:
    t.chaos.write("kill_daemon", incarnation=0, pid=123, cur=2, leases=[str(t.d0)])
    t.log("daemon-0.log", {"event": "daemon.started"})
    t.log("daemon-1.log", {"event": "daemon.started"})


def _md_in_history(t: Tiny) -> None:
    (t.d0 / ".history" / "prefers-tabs-0123456789.md").write_text("---\nname: x\n---\nforgotten\n")


def _log_not_json(t: Tiny) -> None:
    t.log("daemon-0.log", {"event": "daemon.started"})
    with open(t.logs[-1], "a") as f:
        f.write("Traceback (most recent call last):\n{\"event\": \"daemon.ready\"}\n")


@pytest.mark.parametrize(
    ("breaks", "tag"),
    [
        (_lost_job, "accepted-accounted"),
        (_applied_twice, "accepted-accounted"),
        (_removed_silently, "remember-present"),
        (_removed_silently, "no-silent-loss"),
        (_edited_behind_the_manifest, "manifest-valid"),
        (_secret_in_a_record, "no-secret"),
        (_lease_left, "no-lock-held"),
        (_job_left_in_new, "spool-terminal"),
        (_failed_without_reason, "spool-terminal"),
        (_hostile_applied, "hostile-outcome"),
        (_kill_not_recovered, "kill-logged"),
        (_log_not_json, "logs-json"),
        (_md_in_history, "no-nested-md"),
    ],
)
def test_the_checker_catches_a_planted_violation(tmp_path: Path, breaks: Callable[[Tiny], None], tag: str) -> None:
    t = Tiny(tmp_path)
    breaks(t)
    report = t.check()
    assert tag in _tags(report), report.violations


def test_kill_with_claims_is_satisfied_by_the_matching_recovery_entry(tmp_path: Path) -> None:
    t = Tiny(tmp_path)
    t.chaos.write("kill_daemon", incarnation=0, pid=123, cur=2, leases=[str(t.d0)])
    t.log("daemon-0.log", {"event": "daemon.started"})
    t.log("daemon-1.log", {"event": "daemon.started"}, {"event": "spool.recovered", "count": 2},
          {"event": "lease.recovered", "memory_dir": str(t.d0)})
    report = t.check()
    assert report.violations == []
    assert report.checks["kill-logged"] == 4  # a next run, its start, its recovery count, the lease


def test_a_forget_by_another_job_does_not_explain_a_removal(tmp_path: Path) -> None:
    t = Tiny(tmp_path)
    t.store.commit(Change(remove=["prefers-tabs"], actor="job", job_id="20261129T100000.000005Z-9999999999"))
    t.ledger.write("accepted", kind="forget", job_id="20261129T100000.000005Z-9999999999",
                   memory_dir=str(t.d0), names=["something-else"])
    (t.world.spool / "done" / "20261129T100000.000005Z-9999999999.json").write_text("{}")
    assert "no-silent-loss" in _tags(t.check())


def test_a_job_applied_in_place_into_a_generation_now_in_history_is_accounted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job that changed no record rewrote the then current generation in place; once later
    jobs push its id out of the current manifest's bounded applied_jobs, only the manifest of
    that generation, kept in .history/, names it. The 20-minute run (seed 12) reported 715
    such jobs as "done but committed 0 times"."""
    import memory.store.change as change  # where a commit's bookkeeping is applied (advance)

    monkeypatch.setattr(change, "MAX_APPLIED_JOBS", 3)
    t = Tiny(tmp_path)
    quiet = "20261129T100000.000004Z-eeeeeeeeee"
    t.store.commit(Change(actor="job", job_id=quiet, session_id="s", cursor=("s", 1), note="no new turns"))
    t._done(quiet, {"kind": "extract"})
    t.ledger.write("accepted", kind="extract", job_id=quiet, memory_dir=str(t.d0))
    for i in range(4):
        t.remember(f"later-{i}", f"Later fact {i}", job=f"20261129T100000.00001{i}Z-ffffffffff")
    assert quiet not in t.store.read().applied_jobs
    report = t.check()
    assert report.violations == []
    assert report.jobs["applied"] == 8


# ---------------------------------------------------------------------------- the CI runs


def _torture(tmp: Path, *args: str, timeout: float) -> tuple[int, dict[str, Any], str]:
    out = tmp / "summary.json"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "tests.torture.run", "--workdir", str(tmp / "run"),
                           "--json", str(out), *args], cwd=REPO, env=env, capture_output=True,
                          timeout=timeout)
    text = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
    summary = json.loads(out.read_text()) if out.exists() else {}
    return proc.returncode, summary, text


def _common_asserts(summary: dict[str, Any], text: str) -> None:
    assert summary["violations"] == [], text[-4000:]
    assert summary["daemon_kills"] >= 2, text[-2000:]
    assert summary["client_kills"] >= 1
    assert summary["jobs_accepted"] >= 150
    assert summary["jobs"]["applied"] >= 100
    assert summary["final_sigterm"]["exit_code"] == 0
    hostile = {k for k in summary["faults"] if k.startswith("hostile-")}
    assert len(hostile) >= 8, summary["faults"]
    if not any("disk-full fault skipped" in n for n in summary["notes"]):
        assert summary["faults"].get("disk-full", 0) >= 1
    for name in ("accepted-accounted", "remember-present", "no-silent-loss", "manifest-valid", "no-secret",
                 "no-lock-held", "kill-logged", "clean-stop", "spool-terminal", "hostile-outcome"):
        assert summary["checks"].get(name, 0) > 0, name


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_torture_offline_backend(tmp_path: Path, shared_data: Path) -> None:
    code, summary, text = _torture(tmp_path, "--duration", "60", "--seed", "ci", "--data", str(shared_data),
                                   "--drain-timeout", "60", timeout=280)
    assert code == 0, text[-4000:]
    _common_asserts(summary, text)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_torture_against_the_scripted_anthropic_endpoint(tmp_path: Path, shared_data: Path) -> None:
    code, summary, text = _torture(tmp_path, "--duration", "30", "--backend", "anthropic", "--seed", "ci",
                                   "--data", str(shared_data), "--kill-every", "6", "--drain-timeout", "60",
                                   timeout=280)
    assert code == 0, text[-4000:]
    _common_asserts(summary, text)
    answers = summary["model_answers"]
    assert answers["valid"] > 0 and sum(answers.values()) > answers["valid"]  # failures were served too


@pytest.mark.parametrize("logged", [True, False])
def test_a_record_broken_by_hand_is_kept_only_with_a_malformed_log_entry(tmp_path: Path, logged: bool) -> None:
    t = Tiny(tmp_path)
    entry = t.store.read().records[0]
    t.chaos.write("hand_edit", memory_dir=str(t.d0), file=entry.file, name=entry.name)
    (t.d0 / entry.file).write_text("- - -\nname: prefers-tabs\n")  # no frontmatter any more
    t.log("daemon-0.log", *([{"event": "store.malformed", "file": entry.file}] if logged else []))
    report = t.check()
    assert (report.violations == []) is logged, report.violations
    assert report.observations["kept_broken_by_hand"] == [f"{t.d0}/{entry.file}"]


def test_forget_outcomes_tell_a_merged_away_name_from_a_removed_one(tmp_path: Path) -> None:
    t = Tiny(tmp_path)  # prefers-tabs present, weekly-sync remembered then forgotten (removed)
    merged = make_record("indentation", "user", description="User prefers tabs, always", body="Tabs.\nBody.")
    t.store.commit(Change(merges=[(["prefers-tabs"], merged)], actor="dream", consolidated=True))
    t.forget("prefers-tabs", job="20261129T100000.000004Z-dddddddddd")
    report = t.check()
    assert report.violations == []
    assert report.observations["forgets"] == {"already-merged-away": 1, "removed": 1}
    assert report.observations["removals"] == {"forget": 1, "merge": 1}


def test_a_remember_stored_under_its_redacted_name_is_present_and_another_name_is_not(tmp_path: Path) -> None:
    """The 20-minute run (seed 12, session 24): ``c1-11-58`` carried the key
    ``xoxb-8938115871…``; the store names such a record from its redacted description (issue
    22: no part of a name that held part of a secret stays), and the checker must find it there."""
    key = "xoxb-893811587156-inDTUHf8F4mJN70nEHqcI5RF"
    t = Tiny(tmp_path)
    job = "20261129T100000.000007Z-dddddddddd"
    t.store.commit(Change(add=[make_record("c1-11-58", "user", description="Deploys go through staging",
                                           body=f"The staging API key is {key}.")], actor="job", job_id=job))
    assert "deploys-go-through-staging" in {e.name for e in t.store.read().records}  # the store renamed it
    t._done(job, {"kind": "remember"})
    t.ledger.write("accepted", kind="remember", job_id=job, memory_dir=str(t.d0), name="c1-11-58",
                   description="Deploys go through staging", secrets=[key])
    assert t.check().violations == []
    other = "20261129T100000.000008Z-eeeeeeeeee"
    t.store.commit(Change(add=[make_record("c3", "user", description="Something else", body="Body.")],
                          actor="job", job_id=other))
    t._done(other, {"kind": "remember"})
    t.ledger.write("accepted", kind="remember", job_id=other, memory_dir=str(t.d0), name="c2-11-58", secrets=[key])
    assert "remember-present" in _tags(t.check())  # renamed, it would be 'redacted-secret', not 'c3'.


def test_a_hostile_remember_tells_the_checker_the_description_its_stored_name_comes_from(tmp_path: Path) -> None:
    """The 20-minute run (seed 12, session 27): the planted remember ``hostile-secret-<n>``
    shared five digits with its key, so the store named it from its description; the ledger's
    hostile entry carried no description, so the checker expected ``redacted-secret`` and called
    the record lost (two violations). Every remember the harness plants carries what its job's
    record does."""
    import random

    from tests.torture import chaos
    from tests.torture.checker import _stored_name

    managed = [tmp_path / "d0"]
    cases = chaos.hostile_cases(random.Random(12), mem_root=tmp_path, managed=managed, outside=tmp_path / "out",
                                max_job_bytes=1 << 20)
    remembers = [h for h in cases if h.kind == "remember" and h.expect == "done" and h.secrets]
    assert remembers
    for h in remembers:
        assert h.data is not None
        (record,) = json.loads(h.data)["records"]
        assert h.description == record["description"]
        entry = {"name": h.name, "description": h.description, "secrets": list(h.secrets)}
        # a name sharing a part with the key: what the store would call it is what the checker expects
        entry["name"] = "hostile-secret-" + h.secrets[0][-5:]
        assert _stored_name(entry)[1] != "redacted-secret"
