"""A dream never loses a fact (issue 10): the property, over generated sets, through the real store.

Every generated set is committed to a real memory directory, dreamed on by the offline model
through :func:`dreamd.jobs.work.dream` (plan, gate, ``MemoryStore.commit``), and read back from disk.
Then, for every record of the set before the dream:

- if it is still live, it is unchanged;
- if it left the set, it was expired (``expires`` before today, importance under 0.8), or every
  one of its clauses is still said by a live record (:mod:`dreamd.models.offline.compare.clauses`): the
  offline dream keeps even an explicitly superseded record's clauses, on the history line of
  the record that replaced it;
- a merge result says every clause of every one of its sources;
- a clause moves to a result's history line (``**Previously:**``: said, but no longer current)
  only from a source that a strictly newer source of the same op explicitly supersedes, or
  from a source's own history line.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dreamd.config import default_config
from dreamd.jobs.work import Context, dream
from dreamd.models.offline.compare.clauses import (
    clause_units,
    clauses,
    said_by,
    unexplained_history,
)
from dreamd.models.offline.model import OfflineModel
from memory.store.records import Record, make_record
from memory.store.transaction import Change, MemoryStore

TODAY = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

SUBJECTS = [
    "The staging database", "The billing service", "The CI pipeline", "Our on-call rotation",
    "The design review", "测试数据库", "部署流水线", "周会",
]
FACTS = [
    "is read-only on weekends", "runs Postgres 15", "runs Postgres 16", "is owned by the data team",
    "lives in the infra repo", "pages the SRE channel", "never deploys on Fridays",
    "keeps logs for 30 days", "is hosted in eu-west-1",
    "moved to eu-central-1", "no longer pages the SRE channel", "switched from Jenkins to Buildkite",
    "uses Buildkite instead of Jenkins", "is not owned by the data team anymore",
    "每周五只读", "跑在老机房", "已迁到新机房", "不再周末发布", "改成周三下午",
]
EXTRA = ["", "It was agreed in the planning meeting.", "See the runbook for details.",
         "**Why:** the auditors asked for it.", "**Why:** no reason was stated.",
         "**How to apply:** check it before changing the config."]


@st.composite
def record_sets(draw: st.DrawFn) -> list[tuple[Record, int]]:
    """Records about a few shared subjects (so duplicates, paraphrases and supersessions meet),
    each with a day of November it was written (few days: each is one fsync'd commit; ties
    are part of the point)."""
    n = draw(st.integers(min_value=1, max_value=10))
    out: list[tuple[Record, int]] = []
    said: list[list[str]] = []
    for i in range(n):
        again = draw(st.integers(min_value=-1, max_value=i - 1)) if i and draw(st.booleans()) else -1
        if again >= 0:  # a restatement of an earlier record, perhaps with a reason of its own
            sentences = said[again][: draw(st.integers(min_value=1, max_value=len(said[again])))]
        else:
            subject = draw(st.sampled_from(SUBJECTS))
            fact_list = draw(st.lists(st.sampled_from(FACTS), min_size=1, max_size=3, unique=True))
            sentences = [f"{subject} {f}." if subject.isascii() else f"{subject}{f}。" for f in fact_list]
        said.append(sentences)
        sep = draw(st.sampled_from([" ", "\n"]))
        body = sep.join(sentences) + "\n" + draw(st.sampled_from(EXTRA))
        expires = draw(st.sampled_from([None, None, "2026-11-01", "2026-12-31"]))
        importance = draw(st.sampled_from([0.5, 0.5, 0.9]))
        type_ = draw(st.sampled_from(["project", "project", "reference"]))
        extra: dict[str, object] = {"importance": importance}
        if expires:
            extra["expires"] = expires
        rec = make_record(f"r{i}", type_, sentences[0].rstrip(".。"), body.strip() + "\n", extra=extra)
        out.append((rec, draw(st.integers(min_value=1, max_value=4))))
    return out


def _commit_in_day_order(store: MemoryStore, items: list[tuple[Record, int]]) -> None:
    """One commit per day, so created_at/updated_at order the records as the days do."""
    for day in sorted({d for _, d in items}):
        when = datetime(2026, 11, day, 10, 0, tzinfo=UTC)
        store.clock = lambda when=when: when  # type: ignore[method-assign,misc]
        store.commit(Change(add=[r for r, d in items if d == day]))


def _said(name: str, body: str) -> Record:
    return make_record(name, "project", body.split(".")[0], body + "\n", extra={"importance": 0.5})


_STOPPED = "The staging database no longer pages the SRE channel."
_PAGES = "The staging database pages the SRE channel."
_SWITCHED = "The staging database uses Buildkite instead of Jenkins."


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record_sets())
# counterexamples to the retention gate's first negation check (issue 21 §6): a record saying a
# clause and its negation, merged with a restatement of the negation; a newer record stopping
# what an older one said, of the staging database and (worded "not ... anymore") of a team
@example([(_said("r0", f"{_STOPPED} {_PAGES}"), 1), (_said("r1", _STOPPED), 2)])
@example([(_said("r0", _STOPPED), 2), (_said("r1", _STOPPED), 1), (_said("r2", _PAGES), 1)])
@example([(_said("r0", "Our on-call rotation is not owned by the data team anymore."), 2),
          (_said("r1", "Our on-call rotation is owned by the data team."), 1)])
# a merge of restatements (one also saying "switched from ... to ...") whose current-value
# rewrite moved a clause only another record still said, while the plan dropped that record
# (expired) or kept it (another type): the rewrite is checked against the op's own sources
@example([(_said("r0", f"{_SWITCHED} The staging database switched from Jenkins to Buildkite."), 1),
          (_said("r1", _SWITCHED), 2), (_said("r2", _SWITCHED), 1),
          (Record("r3", "project", _SWITCHED[:-1], _SWITCHED + "\n", {"importance": 0.5, "expires": "2026-11-01"}), 1)])
@example([(_said("r0", f"{_SWITCHED} The staging database switched from Jenkins to Buildkite."), 1),
          (_said("r1", _SWITCHED), 2), (_said("r2", _SWITCHED), 1),
          (Record("r3", "reference", _SWITCHED[:-1], _SWITCHED + "\n", {"importance": 0.5}), 1)])
def test_every_dream_keeps_every_fact_that_is_not_expired_or_explicitly_superseded(
    items: list[tuple[Record, int]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        mdir = Path(tmp) / "mem"
        store = MemoryStore.init(mdir)
        _commit_in_day_order(store, items)
        before = {e.name: (e, rec) for e, rec in store.records()}
        ctx = Context(config=default_config(env={"HOME": "/nonexistent"}), model=OfflineModel(),
                      ledger=None, clock=lambda: TODAY)
        result = dream(mdir, ctx, force=True)
        assert result.status in ("applied", "nothing"), result
        after = {e.name: rec for e, rec in MemoryStore(mdir).records()}
        live = [(rec.description, rec.body) for rec in after.values()]
        pool = [clause_units(c) for d, b in live for c in clauses(d, b)]
        stamps = {name: e.updated_at for name, (e, _) in before.items()}
        for name, (_, rec) in before.items():
            if name in after and after[name] == rec:
                continue
            expired = (rec.expires is not None and rec.expires < TODAY.date().isoformat()
                       and rec.importance < 0.8)
            if expired and name not in after:
                continue
            lost = [c for c in clauses(rec.description, rec.body) if not said_by(c, pool)]
            assert not lost, f"{name} lost {lost} (plan {result.plan})"
        for op in result.plan:
            if op.result is None:
                continue
            own = [clause_units(c) for c in clauses(op.result.description, op.result.body)]
            for source in op.source_names:
                rec = before[source][1]
                missing = [c for c in clauses(rec.description, rec.body) if not said_by(c, own)]
                assert not missing, f"merge into {op.result.name} dropped {missing} of {source}"
            sources = [(stamps[n], before[n][1].description, before[n][1].body) for n in op.source_names]
            unexplained = unexplained_history((op.result.description, op.result.body), sources)
            assert not unexplained, f"{op.result.name} demoted {unexplained} to history without an explicit newer statement"


@settings(max_examples=40, deadline=None)
@given(record_sets())
def test_only_expired_records_are_dropped(items: list[tuple[Record, int]]) -> None:
    """Even an explicitly superseded record is merged into its replacement, not dropped."""
    from dreamd.models.offline.plan.plan import plan

    payload = {
        "task": "consolidate", "today": TODAY.date().isoformat(), "recent": [],
        "records": [{"name": r.name, "type": r.type, "description": r.description, "body": r.body,
                     "created_at": f"2026-11-{d:02d}T10:00:00Z", "updated_at": f"2026-11-{d:02d}T10:00:00Z",
                     "importance": r.importance, "expires": r.expires} for r, d in items],
    }
    dropped = {op["source_names"][0] for op in plan(payload) if op["result"] is None}
    assert dropped == {r.name for r, _ in items
                       if r.expires == "2026-11-01" and r.importance < 0.8}


# ----------------------------------------------------------------------------- the torture checker


def _dream_commit(t: Any, merges: list[tuple[list[str], Record | None]]) -> None:
    t.store.commit(Change(merges=merges, actor="dream", consolidated=True))


def _retention(t: Any) -> tuple[list[str], dict[str, int]]:
    report = t.check()
    return [v for v in report.violations if v.startswith("[dream-retention]")], report.observations[
        "dream_retention"]


def test_the_checker_reports_a_dream_merge_that_lost_a_clause(tmp_path: Path) -> None:
    from tests.torture.test_torture_short import Tiny

    t = Tiny(tmp_path)
    t.remember("indent-width", "Indent is four columns", job="20261129T100000.000004Z-dddddddddd",
               body="Indent with four columns.")
    _dream_commit(t, [(["prefers-tabs", "indent-width"],
                       make_record("prefers-tabs", "user", "User prefers tabs", "Body. Use tabs.\n"))])
    violations, seen = _retention(t)
    assert len(violations) == 1 and "'indent-width'" in violations[0] and "Indent with four columns" in violations[0]
    assert seen == {"kept": 1, "lost": 1}


def test_the_checker_accepts_merges_that_keep_every_clause_expiry_and_explicit_supersession(
    tmp_path: Path,
) -> None:
    from tests.torture.test_torture_short import Tiny

    t = Tiny(tmp_path)
    day = {"n": 1}

    def at_next_day() -> datetime:
        day["n"] += 1
        return datetime(2026, 11, day["n"], 10, 0, tzinfo=UTC)

    t.store.clock = at_next_day  # type: ignore[method-assign,misc]
    t.remember("indent-width", "Indent is four columns", job="20261129T100000.000004Z-dddddddddd",
               body="Indent with four columns.")
    t.remember("old-trip", "Offsite in Lisbon", job="20261129T100000.000005Z-eeeeeeeeee", body="Offsite in Lisbon.")
    t.store.commit(Change(replace={"old-trip": make_record("old-trip", "project", "Offsite in Lisbon",
                                                           "Offsite in Lisbon.\n", extra={"expires": "2026-11-02"})}))
    t.remember("ci-runner", "CI runs on Jenkins", job="20261129T100000.000006Z-ffffffffff",
               body="The CI pipeline runs on Jenkins.")
    t.remember("ci-moved", "CI moved to Buildkite", job="20261129T100000.000007Z-gggggggggg",
               body="We switched the CI pipeline from Jenkins to Buildkite.")
    _dream_commit(t, [
        (["prefers-tabs", "indent-width"],
         make_record("prefers-tabs", "user", "User prefers tabs", "Body.\nIndent with four columns.\n")),
        (["old-trip"], None),
        (["ci-runner"], None),
    ])
    violations, seen = _retention(t)
    assert violations == []
    assert seen == {"expired": 1, "kept": 2, "superseded": 1}


def test_the_checker_reports_a_dream_drop_nothing_explains(tmp_path: Path) -> None:
    from tests.torture.test_torture_short import Tiny

    t = Tiny(tmp_path)
    t.remember("ci-runner", "CI runs on Jenkins", job="20261129T100000.000006Z-ffffffffff",
               body="The CI pipeline runs on Jenkins.")
    t.remember("ci-speed", "CI takes ten minutes", job="20261129T100000.000007Z-gggggggggg",
               body="The CI pipeline takes ten minutes on Jenkins.")
    _dream_commit(t, [(["ci-runner"], None)])
    violations, _ = _retention(t)
    assert len(violations) == 1 and "'ci-runner' (dropped)" in violations[0]


def test_the_checker_accepts_a_supersession_merge_and_reports_a_demotion_nothing_explains(tmp_path: Path) -> None:
    from tests.torture.test_torture_short import Tiny

    t = Tiny(tmp_path)
    day = {"n": 1}

    def at_next_day() -> datetime:
        day["n"] += 1
        return datetime(2026, 11, day["n"], 10, 0, tzinfo=UTC)

    t.store.clock = at_next_day  # type: ignore[method-assign,misc]
    t.remember("standup-930", "Standup at 9:30", job="20261129T100000.000006Z-ffffffffff",
               body="The team standup is at 9:30.")
    t.remember("standup-1000", "Standup now at 10:00", job="20261129T100000.000007Z-gggggggggg",
               body="The team standup is now at 10:00.")
    t.remember("standup-room", "Standup room", job="20261129T100000.000008Z-hhhhhhhhhh",
               body="The team standup is in room 4.")
    _dream_commit(t, [(["standup-1000", "standup-930"], make_record(
        "standup-1000", "project", "Standup now at 10:00",
        "The team standup is now at 10:00.\n**Previously:** The team standup is at 9:30.\n"))])
    violations, seen = _retention(t)
    assert violations == [] and seen == {"kept": 2}
    # the room is not superseded by anything: moving it to history is a demotion
    _dream_commit(t, [(["standup-1000", "standup-room"], make_record(
        "standup-1000", "project", "Standup now at 10:00",
        "The team standup is now at 10:00.\n**Previously:** The team standup is at 9:30. "
        "The team standup is in room 4.\n"))])
    violations, _ = _retention(t)
    assert len(violations) == 1 and "room 4" in violations[0] and "to history" in violations[0]
