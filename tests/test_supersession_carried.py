"""A correction carrying its own history (issue 23): a new record whose statement names a value
and the value it replaces, that value being the user's earlier one (an earlier user turn of the
session, or a live record), states the current value and keeps the replaced words on its history
line, though no record is superseded; said once, "use X, not Y" stays as said. Every example is
invented for these tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dreamd.config import default_config
from dreamd.jobs.work import Context, execute
from dreamd.models import supersession
from dreamd.models.offline.compare.clauses import HISTORY, clause_units
from memory.spool.jobs import Job, Transcript
from memory.store.change import Change
from memory.store.history import log_entries, render_log
from memory.store.records import Record, make_record
from memory.store.transaction import MemoryStore
from tests.fake_anthropic import FakeAnthropic, fake_anthropic, message
from tests.test_supersession import _dreamd
from tests.test_supersession_current import _extract_turns, _once_over_vuetify

__all__ = ["fake_anthropic"]  # the fixture, imported for pytest


def _current(body: str) -> str:
    return "\n".join(line for line in body.splitlines() if not HISTORY.match(line))


def _history(body: str) -> str:
    return "\n".join(HISTORY.sub("", line) for line in body.splitlines() if HISTORY.match(line))


def _extract(tmp: Path, turns: list[str], old: Record | None = None) -> tuple[list[Record], str]:
    records = _extract_turns(tmp, turns, old)
    return records, render_log(log_entries(MemoryStore(tmp / "m")))


def _words_kept(said: str, rec: Record) -> None:
    """Every word of the statement as said is still in the record: in its statement now, or on
    its history line."""
    now = rec.body.splitlines()[0]
    assert sorted(clause_units(said)) == sorted(clause_units(now) + clause_units(_history(rec.body)))


def test_a_value_said_in_an_earlier_turn_moves_to_the_correction_s_own_history(tmp_path: Path) -> None:
    said = "use NATS instead of RabbitMQ for background jobs."
    [rec], log = _extract(tmp_path, ["why is the RabbitMQ consumer so slow today?", f"changed my mind: {said}"])
    assert rec.body.splitlines()[0] == "Use NATS for background jobs."
    assert rec.description == "Use NATS for background jobs"
    assert _history(rec.body) == "instead of RabbitMQ."
    assert "RabbitMQ" not in _current(rec.body)
    _words_kept(said, rec)
    assert "superseded" not in log  # no record was superseded: none held the value


def test_said_once_a_rule_with_its_rejected_alternative_stays_as_said(tmp_path: Path) -> None:
    for i, said in enumerate(["use Buildkite for CI, not Jenkins.", "use NATS instead of RabbitMQ for background jobs.",
                              # the value said twice, but only in the turn that replaces it
                              "RabbitMQ keeps dropping messages, so use NATS instead of RabbitMQ for background jobs."]):
        [rec], _ = _extract(tmp_path / str(i), [said])
        assert not _history(rec.body), rec.body
        assert rec.body.splitlines()[0].rstrip(".").lower() in said.lower()
    # the same rule after the value was heard: the denied part moves whole
    [rec], _ = _extract(tmp_path / "heard", ["is the Jenkins job still red?", "use Buildkite for CI, not Jenkins."])
    assert (rec.body.splitlines()[0], _history(rec.body)) == ("Use Buildkite for CI.", "not Jenkins.")


def test_a_chinese_change_from_a_value_said_before(tmp_path: Path) -> None:
    [rec], _ = _extract(tmp_path, ["为什么 Fluentd 又卡住了？", "日志收集从 Fluentd 改成 Vector 了。"])
    assert rec.body.splitlines()[0] == "日志收集改成 Vector 了。"
    assert rec.body.splitlines()[-1] == "**此前：** 从 Fluentd。"


def test_a_directory_record_holding_the_value_is_left_alone(tmp_path: Path) -> None:
    old = make_record("mobile-crashes", "reference", "The iOS team watches Crashlytics dashboards",
                      "The iOS team watches Crashlytics dashboards.\n")
    records, log = _extract(tmp_path, ["we moved crash reporting from Crashlytics to Sentry last sprint."], old)
    [kept] = [r for r in records if r.name == "mobile-crashes"]
    assert (kept.description, kept.body) == (old.description, old.body)  # no other record is rewritten
    [new] = [r for r in records if r.name != "mobile-crashes"]
    assert "Crashlytics" not in _current(new.body) and "Sentry" in _current(new.body)
    assert _history(new.body) == "from Crashlytics."
    assert "superseded" not in log
    # without the directory record, and the value said nowhere before, the statement stays
    [alone], _ = _extract(tmp_path / "alone", ["we moved crash reporting from Crashlytics to Sentry last sprint."])
    assert "from Crashlytics to Sentry" in alone.body and not _history(alone.body)


def test_the_rewrite_reads_the_statement_s_structure_not_a_word_list() -> None:
    new = make_record("n", "feedback", "Store uploads in MinIO instead of S3", "Store uploads in MinIO instead of S3.\n")
    heard = supersession.Heard(["our S3 bucket is nearly full", "store uploads in MinIO instead of S3"])
    rec = supersession.carried_history(new, heard)
    assert rec is not None and rec.body == "Store uploads in MinIO.\n**Previously:** instead of S3.\n"
    # the value only in a later turn, or in no turn at all: not the user's earlier value
    assert supersession.carried_history(new, supersession.Heard(["store uploads in MinIO instead of S3", "S3 is full"])) is None
    assert supersession.carried_history(new, supersession.Heard(["store uploads in MinIO instead of S3"])) is None
    # a denied part is the value whole: one of its words said before in another sense is not it
    rule = make_record("r", "feedback", "Generate the schema with Alembic, not hand-rolled SQL",
                       "Generate the schema with Alembic, not hand-rolled SQL.\n")
    correction = "generate the schema with Alembic, not hand-rolled SQL"
    assert supersession.carried_history(rule, supersession.Heard(["never run SQL on the replica by hand", correction])) is None
    bare = make_record("b", "feedback", "Generate the schema with Alembic, not Liquibase",
                       "Generate the schema with Alembic, not Liquibase.\n")
    carried = supersession.carried_history(bare, supersession.Heard(["the Liquibase changelog is in db/",
                                                                      "generate the schema with Alembic, not Liquibase"]))
    assert carried is not None and carried.body == "Generate the schema with Alembic.\n**Previously:** not Liquibase.\n"
    # a statement naming no replaced value: nothing to move, whatever was said before
    plain = make_record("p", "feedback", "Store uploads in MinIO", "Store uploads in MinIO.\n")
    assert supersession.carried_history(plain, heard) is None


def test_a_model_backend_s_correction_carries_its_history_the_same_way(
    tmp_path: Path, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dreamd.models.anthropic_backend import AnthropicModel

    mdir = tmp_path / "mem"
    MemoryStore.init(mdir)
    fake_anthropic.push(message(json.dumps([{
        "name": "queue-broker-nats", "type": "project", "description": "Background jobs go through NATS instead of RabbitMQ",
        "body": "Background jobs go through NATS instead of RabbitMQ.\n"}])))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    model = AnthropicModel(model="claude-test-model", base_url=fake_anthropic.url, timeout=5.0, max_retries=0)
    ctx = Context(config=default_config(env={"HOME": "/nonexistent"}), model=model, ledger=None)
    content = "User: the background jobs sit on RabbitMQ, right?\nAssistant: yes\nUser: we put them on NATS now\nAssistant: ok\n"
    job = Job(id="job-1", kind="extract", memory_dir=mdir, session_id="s1", submitted_at="2026-11-20T10:00:00Z",
              transcript=Transcript(format="auto", content=content))
    assert execute(job, ctx) == "extracted 1"
    [(_, rec)] = MemoryStore(mdir).records()
    assert (rec.name, rec.description) == ("queue-broker-nats", "Background jobs go through NATS")
    assert rec.body == "Background jobs go through NATS.\n**Previously:** instead of RabbitMQ.\n"


def test_dreamd_once_supersedes_states_the_current_value_in_the_quote_too_and_keeps_a_rule_as_said(
    tmp_path: Path,
) -> None:
    memory_dir, spool, config, _ = _once_over_vuetify(
        tmp_path, "User: for the settings page: use Quasar instead of Vuetify for the dashboard components, "
        "the bundle is half the size.\nAssistant: Noted.\nUser: use pytest for the tests, not nose.\nAssistant: Noted.\n")
    records = {rec.name: rec for _, rec in MemoryStore(memory_dir).records()}
    [quasar] = [r for r in records.values() if "Quasar" in r.body]
    assert "Vuetify" not in _current(quasar.body)  # the statement and the quote state the current value
    assert "Use Vuetify for the dashboard components — instead of Vuetify." in _history(quasar.body)
    assert f'"the settings page: use Quasar {supersession.ELIDED} for the dashboard components' in quasar.body
    [rule] = [r for r in records.values() if "nose" in r.body]
    assert rule.body.splitlines()[0] == "Use pytest for the tests, not nose." and not _history(rule.body)
    log = _dreamd(tmp_path, spool, "log", str(memory_dir), "--config", str(config))
    assert f"  superseded ui-kit -> {quasar.name}" in log.stdout
    recall = _dreamd(tmp_path, spool, "recall", str(memory_dir), "which component library does the dashboard use?",
                     "--config", str(config))
    assert recall.returncode == 0, recall.stderr
    assert quasar.name in recall.stdout and "Quasar" in recall.stdout


def test_the_dream_reads_a_denied_old_value_as_extraction_does(tmp_path: Path) -> None:
    from tests.test_supersession_current import _dream_over

    old = make_record("ci", "project", "CI runs on Woodpecker", "CI runs on Woodpecker.\n")
    new = make_record("ci-now", "project", "CI runs on Drone now, not Woodpecker", "CI runs on Drone now, not Woodpecker.\n")
    at_extraction = supersession.supersede(new, old)
    assert at_extraction is not None and _history(at_extraction.result.body).startswith("CI runs on Woodpecker")
    [rec], log = _dream_over(tmp_path / "dream", old, new)
    assert "superseded ci-now, ci -> ci-now" in log  # a supersession in the dream too, not a plain merge
    assert _history(rec.body) == "CI runs on Woodpecker."
    # the stored statement is a clause the gate holds the result to: it stays whole (no quote says it)
    assert rec.body.splitlines()[0] == "CI runs on Drone now, not Woodpecker."
    # the same statement said twice is a duplicate: merged, nothing on a history line
    twin = make_record("ci-twin", "project", "CI runs on Woodpecker", "CI runs on Woodpecker.\n")
    [rec], log = _dream_over(tmp_path / "twin", old, twin)
    assert "superseded" not in log and not _history(rec.body)


def test_the_claude_code_backend_s_correction_carries_its_history_the_same_way(tmp_path: Path) -> None:
    from tests.test_claude_code_backend import result, scripted

    answer = [{"name": "uploads-minio", "type": "project", "description": "Uploads are stored in MinIO instead of S3",
               "body": "Uploads are stored in MinIO instead of S3.\n"}]
    model = scripted(tmp_path, result(result=json.dumps(answer)))
    mdir = tmp_path / "mem"
    MemoryStore.init(mdir)
    ctx = Context(config=default_config(env={"HOME": "/nonexistent"}), model=model, ledger=None)
    content = "User: is the S3 bucket nearly full?\nAssistant: yes\nUser: uploads live in MinIO from today\nAssistant: ok\n"
    job = Job(id="job-1", kind="extract", memory_dir=mdir, session_id="s1", submitted_at="2026-11-20T10:00:00Z",
              transcript=Transcript(format="auto", content=content))
    assert execute(job, ctx) == "extracted 1"
    [(_, rec)] = MemoryStore(mdir).records()
    assert (rec.description, rec.body) == ("Uploads are stored in MinIO", "Uploads are stored in MinIO.\n**Previously:** instead of S3.\n")


def test_a_model_s_plain_merge_over_a_replaced_statement_is_read_as_a_supersession(
    tmp_path: Path, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dreamd.jobs.work import dream
    from dreamd.models.anthropic_backend import AnthropicModel

    clock = iter([datetime(2026, 11, d, 9, tzinfo=UTC) for d in range(1, 20)])
    store = MemoryStore.init(tmp_path / "m", clock=lambda: next(clock))
    store.commit(Change(add=[make_record("ci", "project", "CI runs on Woodpecker", "CI runs on Woodpecker.\n")], actor="manual"))
    store.commit(Change(add=[make_record("ci-now", "project", "CI runs on Drone now, not Woodpecker",
                                         "CI runs on Drone now, not Woodpecker.\n")], actor="manual"))
    fake_anthropic.push(message(json.dumps([{"source_names": ["ci", "ci-now"], "result": {
        "name": "ci-now", "type": "project", "description": "CI runs on Drone now, not Woodpecker",
        "body": "CI runs on Drone now, not Woodpecker.\n"}}])))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    model = AnthropicModel(model="claude-test-model", base_url=fake_anthropic.url, timeout=5.0, max_retries=0)
    ctx = Context(config=default_config(env={"HOME": "/nonexistent"}), model=model, ledger=None,
                  clock=lambda: datetime(2026, 11, 20, tzinfo=UTC))
    assert dream(tmp_path / "m", ctx, force=True).status == "applied"
    [(_, rec)] = MemoryStore(tmp_path / "m").records()
    assert rec.body == "CI runs on Drone now, not Woodpecker.\n**Previously:** CI runs on Woodpecker.\n"
    assert "superseded ci, ci-now -> ci-now" in render_log(log_entries(store))
