"""A correction supersedes the record holding the value it replaces, and shares that record's
subject, not one word of it (issue 23), at extraction and in the dream: one holder test
(:func:`dreamd.models.offline.compare.clauses.holder_words`). Examples are invented for this
test."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from dreamd.models.offline.plan.plan import plan
from memory.store.change import Change
from memory.store.records import make_record
from memory.store.transaction import MemoryStore
from tests.test_supersession import _dreamd, _managed
from tests.test_supersession_linked import _run

HOLDER = "The billing jobs run in Airflow."
OTHER = "The nightly report runs in Airflow."  # "run" and the value only: another subject
STOPPED = "Billing jobs no longer run in Airflow, they moved to Dagster."


def _planned(*descriptions: str) -> list[dict[str, object]]:
    records = [{"name": f"r{i}", "type": "project", "description": d.rstrip("."), "body": d + "\n",
                "updated_at": f"2026-11-2{i}T10:00:00Z"} for i, d in enumerate(descriptions)]
    return plan({"task": "consolidate", "today": "2026-11-29", "records": records, "recent": []})


def test_a_dream_leaves_a_record_sharing_one_word_and_the_value_current() -> None:
    assert _planned(OTHER, STOPPED) == []  # nothing holds the billing jobs' scheduler: nothing is rewritten


def test_a_dream_supersedes_the_holder_not_the_later_record_of_another_subject() -> None:
    [op] = _planned(HOLDER, OTHER, STOPPED)
    assert op["source_names"] == ["r2", "r0"]
    assert isinstance(op["result"], dict) and "**Previously:** The billing jobs run in Airflow." in op["result"]["body"]


def test_a_change_sharing_one_word_with_a_record_of_another_subject_names_none() -> None:
    printer, wifi, canon = _run("The office printer is a Brother HL-L2350.", "Ok.", "Actually the office wifi is Eduroam now.",
                                "Ok.", "Actually the office printer is a Canon now.", "Ok.")
    assert "Brother" in printer["description"] and "Eduroam" in wifi["description"]
    assert "supersedes" not in wifi  # "office" only: the wifi is not the printer
    assert canon["supersedes"] == printer["name"]  # the change saying the printer's subject still names it


def test_dreamd_consolidate_supersedes_the_holder_when_it_is_not_the_latest_record(tmp_path: Path) -> None:
    _store, memory_dir, spool, config = _managed(tmp_path)
    at = [datetime(2026, 11, 20, 10, tzinfo=UTC)]

    def clock() -> datetime:
        at[0] += timedelta(hours=1)
        return at[0]

    store = MemoryStore(memory_dir, clock=clock)
    for name, said in (("billing-jobs-airflow", HOLDER), ("nightly-report-airflow", OTHER), ("billing-jobs-dagster", STOPPED)):
        store.commit(Change(add=[make_record(name, "project", said.rstrip("."), said + "\n")], actor="manual"))
    dreamt = _dreamd(tmp_path, spool, "consolidate", str(memory_dir), "--force", "--config", str(config))
    assert dreamt.returncode == 0, dreamt.stderr
    records = {e.name: rec for e, rec in MemoryStore(memory_dir).records()}
    assert set(records) == {"nightly-report-airflow", "billing-jobs-dagster"}
    assert "**Previously:** The billing jobs run in Airflow." in records["billing-jobs-dagster"].body
    assert records["nightly-report-airflow"].body == OTHER + "\n"  # the later record of another subject is untouched
    log = _dreamd(tmp_path, spool, "log", str(memory_dir), "--config", str(config))
    [line] = [x.strip() for x in log.stdout.splitlines() if x.strip().startswith("superseded ")]
    assert line == "superseded billing-jobs-dagster, billing-jobs-airflow -> billing-jobs-dagster"
