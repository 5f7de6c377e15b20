"""A superseding record states the current value (issue 23, the lead's format decision): the
words of its own statement that name the replaced value move, word for word, to its history
line beside the old record's statement; when nothing was superseded the statement stays as the
user said it, and a dream rewrites only what the retention gate still passes."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

import memory
from dreamd.config import default_config
from dreamd.jobs.work import Context, dream, execute
from dreamd.models import supersession
from dreamd.models.offline.compare.clauses import HISTORY, clause_units, clauses, said_by
from dreamd.models.offline.model import OfflineModel
from memory.spool.jobs import Job, Transcript
from memory.store.change import Change
from memory.store.history import log_entries, render_log
from memory.store.records import Record, make_record
from memory.store.transaction import MemoryStore
from tests.fake_anthropic import FakeAnthropic, fake_anthropic, message
from tests.test_supersession import _dreamd, _managed

__all__ = ["fake_anthropic"]  # the fixture, imported for pytest



def _current(body: str) -> str:
    return "\n".join(line for line in body.splitlines() if not HISTORY.match(line))


def _history(body: str) -> str:
    return "\n".join(line for line in body.splitlines() if HISTORY.match(line))


def _supersede(old: tuple[str, str], new: tuple[str, str]) -> Record:
    older = make_record("older", "project", old[0], old[1])
    newer = make_record("newer", "project", new[0], new[1])
    found = supersession.supersede(newer, older)
    assert found is not None and found.old == "older"
    _no_word_lost(new[1].splitlines()[0], found.result.body)
    return found.result


def _no_word_lost(statement: str, body: str) -> None:
    """Every word of the statement as said is still in the record: in the statement now, or
    moved to the history line after " — "."""
    now = body.splitlines()[0]
    moved = [part.split(" — ", 1)[1] for part in _history(body).split("\n") if " — " in part]
    kept = [u for text in (now, *moved) for u in clause_units(text)]
    assert sorted(clause_units(statement)) == sorted(kept) or now == statement


def test_the_words_naming_the_replaced_value_move_to_history_and_the_rest_stays() -> None:
    result = _supersede(("Use Bootstrap for the admin layout", "Use Bootstrap for the admin layout.\n"),
                        ("Use Bulma instead of Bootstrap for the admin layout",
                         "Use Bulma instead of Bootstrap for the admin layout.\n**Why:** a smaller bundle.\n"))
    assert result.name == "newer"  # the name is an identifier: kept
    assert result.description == "Use Bulma for the admin layout"
    assert _current(result.body) == "Use Bulma for the admin layout.\n**Why:** a smaller bundle."
    assert _history(result.body) == "**Previously:** Use Bootstrap for the admin layout — instead of Bootstrap."


def test_a_move_from_one_value_to_another_keeps_the_move_and_the_new_value() -> None:
    result = _supersede(("The build cache lives in Memcached", "The build cache lives in Memcached.\n"),
                        ("We moved the build cache from Memcached to Valkey last month",
                         "We moved the build cache from Memcached to Valkey last month.\n"))
    assert result.body == ("We moved the build cache to Valkey last month.\n"
                           "**Previously:** The build cache lives in Memcached — from Memcached.\n")
    assert "Memcached" not in result.description


def test_a_chinese_change_from_one_value_to_another() -> None:
    result = _supersede(("日志用 Fluentd 收集", "日志用 Fluentd 收集。\n"),
                        ("日志收集从 Fluentd 改成 Vector 了", "日志收集从 Fluentd 改成 Vector 了。\n"))
    assert result.body == "日志收集改成 Vector 了。\n**此前：** 日志用 Fluentd 收集 — 从 Fluentd。\n"


def test_a_part_denying_the_old_value_moves_whole_but_one_holding_the_subject_stays() -> None:
    result = _supersede(("CI runs on Jenkins", "CI runs on Jenkins.\n"),
                        ("CI runs on Buildkite now, not Jenkins", "CI runs on Buildkite now, not Jenkins.\n"))
    assert result.body == "CI runs on Buildkite now.\n**Previously:** CI runs on Jenkins — not Jenkins.\n"
    # "<subject> 不叫 <old>，叫 <new>": moving the first part would take the subject with it
    kept = _supersede(("测试库叫 qa-east-1", "测试库叫 qa-east-1。\n"),
                      ("测试库不叫 qa-east-1，叫 qa-apac-2", "测试库不叫 qa-east-1，叫 qa-apac-2。\n"))
    assert _current(kept.body).startswith("测试库不叫 qa-east-1，叫 qa-apac-2。")


def test_a_denied_word_of_the_replaced_clause_moves_like_a_denied_value() -> None:
    # "yapf" is no value (no capital, digit or address): a word of the replaced clause the part denies
    result = _supersede(("Formatting is yapf", "Formatting is yapf.\n"),
                        ("It's ruff format now, not yapf", "It's ruff format now, not yapf.\n"))
    assert result.body == "It's ruff format now.\n**Previously:** Formatting is yapf — not yapf.\n"
    assert result.description == "It's ruff format now"


def test_the_users_quote_elides_the_words_moved_to_history_and_loses_none() -> None:
    said = "ok so use Bulma instead of Bootstrap for the admin layout, it is lighter"
    result = _supersede(("Use Bootstrap for the admin layout", "Use Bootstrap for the admin layout.\n"),
                        ("Use Bulma instead of Bootstrap for the admin layout",
                         f'Use Bulma instead of Bootstrap for the admin layout.\nIn their words: "{said}"\n'))
    assert result.body.splitlines()[0] == "Use Bulma for the admin layout."
    [quote] = [ln for ln in result.body.splitlines() if ln.startswith("In their words:")]
    assert quote == 'In their words: "ok so use Bulma … for the admin layout, it is lighter"'
    assert "Bootstrap" not in _current(result.body)
    # the words elided are the ones on the history line: put back, the quote is the user's sentence
    moved = _history(result.body).split(supersession.MOVED, 1)[1].rstrip(".")
    assert quote.replace(supersession.ELIDED, moved) == f'In their words: "{said}"'


def test_a_quote_not_holding_the_moved_words_word_for_word_stays_as_said() -> None:
    said = "ok so Bulma, not Bootstrap, for the admin layout"
    result = _supersede(("Use Bootstrap for the admin layout", "Use Bootstrap for the admin layout.\n"),
                        ("Use Bulma instead of Bootstrap for the admin layout",
                         f'Use Bulma instead of Bootstrap for the admin layout.\nIn their words: "{said}"\n'))
    assert result.body.splitlines()[0] == "Use Bulma for the admin layout."
    assert f'In their words: "{said}"' in result.body.splitlines()


def _extract_turns(tmp: Path, turns: list[str], old: Record | None = None) -> list[Record]:
    """A real offline extraction of the user's ``turns`` (each answered "Noted.") into a fresh
    directory holding ``old``; the directory's records after it."""
    mdir = tmp / "m"
    store = MemoryStore.init(mdir)
    if old is not None:
        store.commit(Change(add=[old], actor="manual"))
    ctx = Context(config=default_config(env={"HOME": str(tmp)}), model=OfflineModel(), ledger=None,
                  clock=lambda: datetime(2026, 11, 20, 12, tzinfo=UTC))
    content = "".join(f"User: {t}\nAssistant: Noted.\n" for t in turns)
    job = Job(id="j1", kind="extract", memory_dir=mdir, session_id=None, submitted_at="2026-11-20T12:00:00Z",
              transcript=Transcript(format="auto", content=content))
    execute(job, ctx)
    return [rec for _, rec in MemoryStore(mdir).records()]


def _extract(tmp: Path, text: str, old: Record | None) -> list[Record]:
    return _extract_turns(tmp, [text], old)


def test_with_no_record_holding_the_old_value_the_statement_stays_as_said(tmp_path: Path) -> None:
    said = "we moved the artifact store from Ceph to Garage last week."
    [alone] = _extract(tmp_path / "a", said, None)
    assert "from Ceph to Garage" in alone.body and not _history(alone.body)
    old = make_record("artifact-store", "project", "The artifact store is Ceph", "The artifact store is Ceph.\n")
    [superseding] = _extract(tmp_path / "b", said, old)
    assert "Ceph" not in _current(superseding.body) and "Garage" in _current(superseding.body)
    assert _history(superseding.body) == "**Previously:** The artifact store is Ceph — from Ceph."


def _dream_over(tmp: Path, old: Record, new: Record) -> tuple[list[Record], str]:
    clock = iter([datetime(2026, 11, d, 9, tzinfo=UTC) for d in range(1, 20)])
    store = MemoryStore.init(tmp / "m", clock=lambda: next(clock))
    store.commit(Change(add=[old], actor="manual"))
    store.commit(Change(add=[new], actor="manual"))
    ctx = Context(config=default_config(env={"HOME": "/nonexistent"}), model=OfflineModel(), ledger=None,
                  clock=lambda: datetime(2026, 11, 20, tzinfo=UTC))
    assert dream(tmp / "m", ctx, force=True).status == "applied"
    return [rec for _, rec in MemoryStore(tmp / "m").records()], render_log(log_entries(store))


def test_a_dream_moves_the_words_only_when_every_clause_is_still_said(tmp_path: Path) -> None:
    old = make_record("cache", "project", "The build cache lives in Memcached", "The build cache lives in Memcached.\n")
    moved = make_record("cache-new", "project", "We moved the build cache from Memcached to Valkey",
                        "We moved the build cache from Memcached to Valkey.\n"
                        'In their words: "fyi we moved the build cache from Memcached to Valkey"\n')
    [rec], log = _dream_over(tmp_path / "quoted", old, moved)
    assert "superseded" in log
    assert rec.body.splitlines()[0] == "We moved the build cache to Valkey."
    assert "The build cache lives in Memcached — from Memcached." in _history(rec.body)
    pool = [clause_units(c) for c in clauses(rec.description, rec.body)]
    assert all(said_by(c, pool) for r in (old, moved) for c in clauses(r.description, r.body))
    # without a quote the statement as stored would no longer be said whole: the gate keeps it
    bare = make_record("cache-new", "project", "We moved the build cache from Memcached to Valkey",
                       "We moved the build cache from Memcached to Valkey.\n")
    [rec], log = _dream_over(tmp_path / "bare", old, bare)
    assert "superseded" in log and rec.body.splitlines()[0] == "We moved the build cache from Memcached to Valkey."


def _once_over_vuetify(tmp_path: Path, transcript: str) -> tuple[Path, Path, Path, subprocess.CompletedProcess[str]]:
    """A managed directory holding "Use Vuetify for the dashboard components", ``transcript``
    submitted for it and a real ``dreamd once``: the directory, spool, config and the run."""
    store, memory_dir, spool, config = _managed(tmp_path)
    store.commit(Change(add=[make_record("ui-kit", "feedback", "Use Vuetify for the dashboard components",
                                         "Use Vuetify for the dashboard components.\n")], actor="manual"))
    session = tmp_path / "s.txt"
    session.write_text(transcript)
    assert _dreamd(tmp_path, spool, "submit", str(session), "--memory-dir", str(memory_dir), "--session", "s1").returncode == 0
    once = _dreamd(tmp_path, spool, "once", "--config", str(config), "--log-format", "json")
    assert once.returncode == 0, once.stderr
    return memory_dir, spool, config, once


def test_dreamd_once_supersedes_the_directory_record_and_states_the_current_value(tmp_path: Path) -> None:
    memory_dir, spool, config, once = _once_over_vuetify(
        tmp_path, "User: changed my mind: use Quasar instead of Vuetify for the dashboard components.\nAssistant: Noted.\n")
    [(entry, rec)] = MemoryStore(memory_dir).records()
    assert "Quasar" in _current(rec.body) and "Vuetify" not in _current(rec.body) and "Vuetify" not in rec.description
    assert "Use Vuetify for the dashboard components — instead of Vuetify." in _history(rec.body)
    events = [json.loads(line) for line in once.stdout.splitlines() if line.startswith("{")]
    assert any(e.get("event") == "extract.superseded" and e["superseded"] == {"ui-kit": entry.name} for e in events)
    log = _dreamd(tmp_path, spool, "log", str(memory_dir), "--config", str(config))
    assert f"  superseded ui-kit -> {entry.name}" in log.stdout
    recall = _dreamd(tmp_path, spool, "recall", str(memory_dir), "which component library does the dashboard use?",
                     "--config", str(config))
    assert recall.returncode == 0, recall.stderr
    assert entry.name in recall.stdout and "Quasar" in recall.stdout
    found = memory.recall(memory_dir, "dashboard components")
    assert [r.name for r in found.records] == [entry.name]


def test_a_plain_change_no_distractor_test_refuses_is_kept_when_its_subject_was_heard(tmp_path: Path) -> None:
    # no rule takes "<subject> uses X instead of Y … now" and no distractor test refuses it: the
    # change stage keeps it when its subject names a directory record, and it supersedes that record
    said = "the dashboard uses Quasar instead of Vuetify for components now."
    assert _extract(tmp_path / "a", said, None) == []  # a subject nothing said before: not a change of it
    old = make_record("ui-kit", "project", "The dashboard uses Vuetify for components",
                      "The dashboard uses Vuetify for components.\n")
    [rec] = _extract(tmp_path / "b", said, old)
    assert rec.body.splitlines()[0] == "The dashboard uses Quasar for components now."
    assert _history(rec.body) == "**Previously:** The dashboard uses Vuetify for components — instead of Vuetify."


def test_a_model_backend_s_supersession_states_the_current_value_the_same_way(
    tmp_path: Path, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dreamd.models.anthropic_backend import AnthropicModel

    mdir = tmp_path / "mem"
    MemoryStore.init(mdir).commit(Change(add=[make_record(
        "queue-broker", "project", "Background jobs go through RabbitMQ", "Background jobs go through RabbitMQ.\n")],
        actor="manual"))
    fake_anthropic.push(message(json.dumps([{
        "name": "queue-broker-nats", "type": "project", "description": "Background jobs go through NATS instead of RabbitMQ",
        "body": "Background jobs go through NATS instead of RabbitMQ.\n", "supersedes": "queue-broker"}])))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    model = AnthropicModel(model="claude-test-model", base_url=fake_anthropic.url, timeout=5.0, max_retries=0)
    ctx = Context(config=default_config(env={"HOME": "/nonexistent"}), model=model, ledger=None)
    job = Job(id="job-1", kind="extract", memory_dir=mdir, session_id="s1", submitted_at="2026-11-20T10:00:00Z",
              transcript=Transcript(format="auto", content="User: the job queue is NATS now, not RabbitMQ\nAssistant: ok\n"))
    assert execute(job, ctx) == "extracted 1"
    [(_, rec)] = MemoryStore(mdir).records()
    assert (rec.name, rec.description) == ("queue-broker-nats", "Background jobs go through NATS")
    assert rec.body == ("Background jobs go through NATS.\n"
                        "**Previously:** Background jobs go through RabbitMQ — instead of RabbitMQ.\n")
