"""Supersession is a first-class operation (issue 23): a new statement that changes the value a
live record holds supersedes it in the commit that extracts it — the old value on the new
record's ``**Previously:**`` line, one live record, ``dreamd log`` saying "superseded", recall
returning the current value — and a correction rewrites only the record holding the corrected
value, never the one said last."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import memory
from dreamd.config import default_config
from dreamd.jobs.work import Context, execute
from dreamd.models.anthropic_backend import AnthropicModel
from dreamd.models.offline.extract.pipeline import extract_from_turns
from dreamd.models.offline.model import OfflineModel
from dreamd.models.offline.plan.plan import plan
from memory.errors import TransientError
from memory.spool.jobs import Job, Transcript
from memory.store.change import Change, apply_change
from memory.store.history import log_entries, render_log
from memory.store.manifest import Manifest
from memory.store.records import Record, make_record
from memory.store.transaction import MemoryStore
from tests.fake_anthropic import FakeAnthropic, fake_anthropic, message

__all__ = ["fake_anthropic"]  # the fixture, imported for pytest

REPO = Path(__file__).resolve().parents[1]


def _dreamd(tmp_path: Path, spool: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(REPO),
        "DREAMD_SPOOL": str(spool), "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
    }  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "dreamd", *args], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def _managed(tmp_path: Path) -> tuple[MemoryStore, Path, Path, Path]:
    """A managed directory under ``tmp_path/code`` (its store), the spool and a config naming
    both (no dream gate opens on its own): the store, the directory, the spool, the config."""
    memory_dir = tmp_path / "code" / "app" / ".memory"
    store = MemoryStore.init(memory_dir)
    spool = tmp_path / "spool"
    config = tmp_path / "config.toml"
    config.write_text(f'[daemon]\nspool = "{spool}"\nroots = ["{tmp_path / "code"}/*/.memory"]\n[gates]\nthreshold = 100\n')
    return store, memory_dir, spool, config


def _said_in_two_runs(tmp_path: Path, turns: tuple[str, ...], later: str) -> tuple[dict[str, Record], list[str]]:
    """``turns`` (user first, then alternating) as one session that goes on: submitted and run by
    ``dreamd once`` up to the user turn starting with ``later``, then again whole: the directory's
    records afterwards, by name, and the ``superseded`` lines ``dreamd log`` prints."""
    _store, memory_dir, spool, config = _managed(tmp_path)
    session = tmp_path / "s.txt"
    said = "".join(f"{'User' if i % 2 == 0 else 'Assistant'}: {t}\n" for i, t in enumerate(turns))
    for text in (said.split(f"User: {later}")[0], said):
        session.write_text(text)
        assert _dreamd(tmp_path, spool, "submit", str(session), "--memory-dir", str(memory_dir), "--session", "s1").returncode == 0
        once = _dreamd(tmp_path, spool, "once", "--config", str(config))
        assert once.returncode == 0, once.stderr
    log = _dreamd(tmp_path, spool, "log", str(memory_dir), "--config", str(config))
    superseded = [x.strip() for x in log.stdout.splitlines() if x.strip().startswith("superseded ")]
    return {e.name: rec for e, rec in MemoryStore(memory_dir).records()}, superseded


def test_a_changed_preference_through_the_spool_supersedes_the_live_record(tmp_path: Path) -> None:
    store, memory_dir, spool, config = _managed(tmp_path)
    old = make_record("yaml-indent-2", "user", "User prefers 2-space indentation in YAML files",
                      "User prefers 2-space indentation in YAML files.\n")
    store.commit(Change(add=[old], actor="manual"))
    session = tmp_path / "s.txt"
    session.write_text("User: I prefer 4-space indentation in YAML files now.\nAssistant: Noted.\n")

    submitted = _dreamd(tmp_path, spool, "submit", str(session), "--memory-dir", str(memory_dir), "--session", "s1")
    assert submitted.returncode == 0, submitted.stderr
    once = _dreamd(tmp_path, spool, "once", "--config", str(config), "--log-format", "json")
    assert once.returncode == 0, once.stderr

    live = MemoryStore(memory_dir).records()
    assert [e.name for e, _ in live if "YAML" in e.description] == [e.name for e, _ in live] != ["yaml-indent-2"]
    assert len(live) == 1
    entry, rec = live[0]
    current, _, history = rec.body.partition("**Previously:**")
    assert "4-space" in current and "2-space" not in current
    assert history.strip() == "User prefers 2-space indentation in YAML files."
    events = [json.loads(line) for line in once.stdout.splitlines() if line.startswith("{")]
    assert any(e.get("event") == "extract.superseded" and e["superseded"] == {"yaml-indent-2": entry.name}
               for e in events)

    log = _dreamd(tmp_path, spool, "log", str(memory_dir), "--config", str(config))
    assert log.returncode == 0, log.stderr
    assert f"  superseded yaml-indent-2 -> {entry.name}" in log.stdout
    assert "1 superseded" in log.stdout.splitlines()[0]

    found = memory.recall(memory_dir, "how should I indent YAML files?")
    assert [r.name for r in found.records] == [entry.name]
    assert "4-space" in found.records[0].text


def test_a_chinese_change_supersedes_in_the_same_way(tmp_path: Path) -> None:
    from dreamd.models import supersession

    old = make_record("go-editor", "user", "用户用 VS Code 写 Go", "用户用 VS Code 写 Go。\n")
    [found] = extract_from_turns([{"role": "user", "text": "我现在改用 GoLand 写 Go 了。", "timestamp": None}],
                                 today="2026-11-20", index=[{"name": old.name, "type": old.type, "description": old.description}])
    new = make_record(found["name"], found["type"], found["description"], found["body"])
    result = supersession.supersede(new, old)
    assert result is not None and result.old == "go-editor"
    assert result.result.body.endswith("**此前：** 用户用 VS Code 写 Go。\n")
    assert "GoLand" in result.result.body.split("**此前：**")[0]


def test_two_facts_about_one_subject_or_a_repeat_supersede_nothing() -> None:
    from dreamd.models import supersession

    def sup(old: str, new: str) -> bool:
        return supersession.supersede(make_record("n", "project", new, new + "\n"),
                                      make_record("o", "project", old, old + "\n")) is not None

    assert sup("The billing API listens on port 7001.", "The billing API listens on port 7002.")
    assert not sup("The billing API listens on port 7001.", "The billing API is written in Kotlin.")
    assert not sup("The billing API listens on port 7001.", "The billing API listens on port 7001.")
    assert not sup("The billing API listens on port 7001.", "The ledger API listens on port 7001.")


def test_a_worded_old_value_of_one_subject_leaves_another_subjects_record_alone() -> None:
    from dreamd.models import supersession

    newer = make_record("n", "project", "The kestrel worker no longer uses port 9421",
                        "The kestrel worker no longer uses port 9421.\n")
    other = make_record("o", "feedback", "Start the marlin proxy on port 9421",
                        "Start the marlin proxy on port 9421 before running tests.\n")
    same = make_record("s", "project", "The kestrel worker listens on port 9421",
                       "The kestrel worker listens on port 9421.\n")
    assert supersession.supersede(newer, other) is None
    assert supersession.supersede(newer, same) is not None
    # in a dream: the planner merges only the record of the same subject into the newer one
    records = [{"name": r.name, "type": "project", "description": r.description, "body": r.body,
                "created_at": f"2026-11-{d}T10:00:00Z", "updated_at": f"2026-11-{d}T10:00:00Z"}
               for r, d in ((other, "02"), (same, "03"), (newer, "09"))]
    ops = plan({"task": "consolidate", "today": "2026-11-20", "records": records, "recent": []})
    assert [op["source_names"] for op in ops] == [["n", "s"]]


def test_a_change_naming_the_older_subject_and_a_value_of_its_kind_supersedes_it() -> None:
    from dreamd.models import supersession

    def sup(old: str, new: str) -> bool:
        return supersession.supersede(make_record("n", "project", new, new + "\n"),
                                      make_record("o", "project", old, old + "\n")) is not None

    # the older wording is not said again whole; its subject (the words before its value) is
    assert sup("发版日是 2026-12-09，发版前要把文档补齐。", "刚开完会，发版推迟了，改成 2026-12-16。")
    assert sup("The kickoff meeting is on 2026-12-09, bring the slides.", "The kickoff meeting got pushed to 2026-12-16.")
    # another subject, or no change word in the record's own statement, replaces nothing
    assert not sup("The kickoff meeting is on 2026-12-09, bring the slides.", "The review meeting got pushed to 2026-12-16.")
    assert not sup("发版日是 2026-12-09。", "客户演示推迟了，改成 2026-12-16。")
    assert not sup("发版日是 2026-12-09。", "发版日 2026-12-16 大家都在。")
    quoted = make_record("n", "project", "2026-12-16 发版日大家都在", "2026-12-16 发版日大家都在。\n原话：“提前说一下”\n")
    assert supersession.supersede(quoted, make_record("o", "project", "发版日是 2026-12-09", "发版日是 2026-12-09。\n")) is None


def test_the_old_records_other_facts_stay_current() -> None:
    from dreamd.models import supersession

    old = make_record("o", "project", "Nightly export", "The nightly export runs at 02:00. Mira owns the export job.\n")
    new = make_record("n", "project", "Nightly export time", "The nightly export now runs at 03:30.\n")
    result = supersession.supersede(new, old)
    assert result is not None
    assert result.result.body == ("The nightly export now runs at 03:30.\nMira owns the export job.\n"
                                  "**Previously:** The nightly export runs at 02:00.\n")


def test_a_supersession_is_a_merge_the_log_calls_superseded(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path / "m")
    store.commit(Change(add=[make_record("a", "project", "A", "The queue is RabbitMQ.\n")], actor="manual"))
    result = make_record("b", "project", "B", "The queue is NATS now.\n**Previously:** The queue is RabbitMQ.\n")
    store.commit(Change(merges=[(["a"], result)], superseded={"a"}, actor="job", job_id="j1", session_id="s"))
    [entry, *_] = log_entries(store)
    assert entry.merged == [{"from": ["a"], "into": "b", "superseded": True}]
    assert entry.summary() == "1 added, 1 superseded"
    assert "  superseded a -> b" in render_log([entry])
    pending = apply_change(Manifest.empty() if hasattr(Manifest, "empty") else store.read(),
                           Change(merges=[(["b"], result)], actor="dream"), now="2026-11-20T00:00:00Z")
    assert "superseded" not in pending.change["merged"][0]  # a plain merge says nothing of the kind


# ----------------------------------------------------------------------------- corrections


def _run(*texts: str, index: list[dict[str, str]] | None = None) -> list[dict[str, str]]:
    turns = [{"role": "user", "text": t, "timestamp": "2026-11-20T09:00:00Z"} for t in texts]
    return extract_from_turns(turns, today="2026-11-20", index=index or [])


def test_a_correction_naming_a_value_no_record_holds_rewrites_nothing() -> None:
    out = _run("We ship the mobile app through Fastlane.", "it's Detox btw, not Espresso.")
    assert any("Fastlane" in r["description"] for r in out)
    assert all("Detox" not in r["description"] and "Detox" not in r["body"].split("In their words")[0] for r in out
               if "Fastlane" in r["description"])


def test_a_correction_of_a_value_only_the_directory_holds_supersedes_that_record() -> None:
    index = [{"name": "e2e-runner", "type": "project", "description": "End-to-end tests run on Cypress"}]
    out = _run("Design mockups live in Penpot. sorry, I meant Playwright, not Cypress.", index=index)
    design = next(r for r in out if "mockups" in r["description"])
    assert design["description"] == "Design mockups live in Penpot" and "Playwright" not in design["body"]
    [fixed] = [r for r in out if r.get("supersedes")]
    assert (fixed["supersedes"], fixed["description"]) == ("e2e-runner", "End-to-end tests run on Playwright")


def test_a_correction_without_its_old_value_leaves_an_unrelated_record_alone() -> None:
    roles = ["user", "assistant", "user"]
    texts = ["The load balancer is HAProxy.", "Noted.", "Staging deploys happen on Tuesdays. sorry, it's Envoy."]
    out = extract_from_turns([{"role": r, "text": t, "timestamp": None} for r, t in zip(roles, texts, strict=True)],
                             today="2026-11-20")
    assert sorted(r["description"] for r in out) == ["Staging deploys happen on Tuesdays", "The load balancer is HAProxy"]
    assert all("Envoy" not in r["body"] for r in out)
    # the sentence it continues, with a value of the kind it gives, is put right
    [lb] = _run("The load balancer is HAProxy. sorry, it's Envoy.")
    assert lb["description"] == "The load balancer is Envoy"


def test_a_dream_supersedes_what_extraction_missed_and_the_log_says_so(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from dreamd.config import default_config
    from dreamd.jobs.work import Context, dream
    from dreamd.models.offline.model import OfflineModel

    clock = iter([datetime(2026, 11, d, 9, tzinfo=UTC) for d in range(1, 20)])
    store = MemoryStore.init(tmp_path / "m", clock=lambda: next(clock))
    store.commit(Change(add=[make_record("md-wrap", "user", "User wraps Markdown at 80 columns",
                                         "User wraps Markdown at 80 columns.\n")], actor="manual"))
    store.commit(Change(add=[make_record("md-wrap-new", "user", "User now wraps Markdown at 100 columns",
                                         "User now wraps Markdown at 100 columns.\n")], actor="manual"))
    ctx = Context(config=default_config(env={"HOME": "/nonexistent"}), model=OfflineModel(), ledger=None,
                  clock=lambda: datetime(2026, 11, 20, tzinfo=UTC))
    assert dream(tmp_path / "m", ctx, force=True).status == "applied"
    [(_, rec)] = MemoryStore(tmp_path / "m").records()
    assert rec.body == "User now wraps Markdown at 100 columns.\n**Previously:** User wraps Markdown at 80 columns.\n"
    assert "  superseded md-wrap-new, md-wrap -> md-wrap-new" in render_log(log_entries(store))


def test_a_preference_changed_instead_of_a_one_word_value_is_superseded() -> None:
    from dreamd.models.offline.compare.clauses import supersedes

    older = ("d", "User prefers tabs for indenting shell scripts.\n")
    assert supersedes(("d", "User now prefers 2 spaces instead of tabs.\n"), older)
    assert not supersedes(("d", "Use dark instead of light in the slide decks.\n"), ("d", "User likes light beer.\n"))


# ----------------------------------------------------------------------------- a model names it


def _extract_job(memory_dir: Path, *texts: str, job_id: str = "job-1") -> Job:
    roles = ["user", "assistant"]
    lines = [json.dumps({"type": roles[i % 2], "uuid": f"u{i}", "sessionId": "s1", "timestamp": "2026-11-20T10:00:00Z",
                         "message": {"role": roles[i % 2], "content": text}}) for i, text in enumerate(texts)]
    return Job(id=job_id, kind="extract", memory_dir=memory_dir, session_id="s1", submitted_at="2026-11-20T10:00:00Z",
               transcript=Transcript(format="auto", content="\n".join(lines) + "\n"))


def _anthropic_ctx(fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Context:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    model = AnthropicModel(model="claude-test-model", base_url=fake.url, timeout=5.0, max_retries=0)
    return Context(config=default_config(env={"HOME": "/nonexistent"}), model=model, ledger=None)


def _with_queue_record(tmp_path: Path) -> Path:
    mdir = tmp_path / "mem"
    store = MemoryStore.init(mdir)
    store.commit(Change(add=[make_record("queue-broker", "project", "Background jobs go through RabbitMQ",
                                         "Background jobs go through RabbitMQ.\n**Why:** ops runs it.\n"),
                             make_record("ci-runner", "project", "CI runs on Buildkite", "CI runs on Buildkite.\n")],
                        actor="manual"))
    return mdir


NEW = {"name": "queue-broker-nats", "type": "project", "description": "Background jobs go through NATS",
       "body": "Background jobs go through NATS.\n"}


def test_a_supersession_the_model_names_is_committed_as_one(
    tmp_path: Path, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    mdir = _with_queue_record(tmp_path)
    fake_anthropic.push(message(json.dumps([{**NEW, "supersedes": "queue-broker"}])))
    assert execute(_extract_job(mdir, "we moved the job queue over, it's NATS now"),
                   _anthropic_ctx(fake_anthropic, monkeypatch)) == "extracted 1"
    sent = json.dumps(fake_anthropic.requests[0].body)
    assert '\\"supersedes\\"' in sent and "queue-broker" in sent  # the prompt asks for it, the index shows the name
    live = {e.name: rec for e, rec in MemoryStore(mdir).records()}
    assert sorted(live) == ["ci-runner", "queue-broker-nats"]
    assert live["queue-broker-nats"].body == (
        "Background jobs go through NATS.\n**Previously:** Background jobs go through RabbitMQ. Why: ops runs it.\n")
    assert log_entries(MemoryStore(mdir))[0].merged == [
        {"from": ["queue-broker"], "into": "queue-broker-nats", "superseded": True}]
    from dreamd.console.views import describe, record_view

    view = record_view(MemoryStore(mdir), "queue-broker-nats")
    assert view is not None and view.origin.startswith("superseded queue-broker, by session s1 (job job-1)")
    assert view.versions[0].what == "superseded"
    assert describe(log_entries(MemoryStore(mdir))[0])[0] == "superseded queue-broker with queue-broker-nats"


def test_a_supersession_of_a_record_the_directory_does_not_hold_is_refused(
    tmp_path: Path, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    mdir = _with_queue_record(tmp_path)
    before = MemoryStore(mdir).read()
    fake_anthropic.push(message(json.dumps([{**NEW, "supersedes": "message-bus"}])))
    with pytest.raises(TransientError, match="supersedes 'message-bus', which is not in the memory set"):
        execute(_extract_job(mdir, "the job queue is NATS now"), _anthropic_ctx(fake_anthropic, monkeypatch))
    after = MemoryStore(mdir).read()
    assert after.generation == before.generation and [e.name for e in after.records] == ["queue-broker", "ci-runner"]


def test_a_later_record_of_one_session_supersedes_an_earlier_one(tmp_path: Path) -> None:
    mdir = tmp_path / "mem"
    MemoryStore.init(mdir)
    ctx = Context(config=default_config(env={"HOME": "/nonexistent"}), model=OfflineModel(), ledger=None)
    job = _extract_job(mdir, "The staging cluster runs Kubernetes 1.27.", "Noted.",
                       "We upgraded: the staging cluster runs Kubernetes 1.29 now.")
    assert execute(job, ctx) == "extracted 1"
    [(_, rec)] = MemoryStore(mdir).records()
    current, _, history = rec.body.partition("**Previously:**")
    assert "1.29" in current and "1.27" not in current
    assert history.strip().startswith("The staging cluster runs Kubernetes 1.27.")


def test_the_claude_code_backend_names_a_supersession_the_gate_checks(tmp_path: Path) -> None:
    """The real Claude Code CLI against the loopback fake: the same prompt reaches the model, a
    supersession of a record the set holds is committed as one, one of a record it does not
    hold is refused and changes nothing."""
    from dreamd.models.factory import make_model
    from dreamd.models.prompts import EXTRACT_SYSTEM
    from tests.claude_cli import ClaudeHome, claude_binary

    answers = iter([[{**NEW, "supersedes": "message-bus"}], [{**NEW, "supersedes": "queue-broker"}]])

    def respond(req: Any) -> Any:
        system = req.body.get("system") if isinstance(req.body, dict) else None
        blocks = system if isinstance(system, list) else [{"text": system or ""}]
        extraction = any(isinstance(b, dict) and b.get("text") == EXTRACT_SYSTEM for b in blocks)
        return message(json.dumps(next(answers)) if extraction else "ok")

    fake = FakeAnthropic(responder=respond)
    try:
        claude = ClaudeHome(home=tmp_path / "home", exe=claude_binary(), base_url=fake.url)
        claude.write_settings()
        model = make_model({"backend": "claude-code", "model": "claude-test-model", "claude_path": str(claude.exe),
                            "timeout": "60s", "max_retries": 0, "max_tokens": 900}, env=claude.env())
        ctx = Context(config=default_config(env={"HOME": str(tmp_path)}), model=model, ledger=None)
        mdir = _with_queue_record(tmp_path)
        with pytest.raises(TransientError, match="supersedes 'message-bus', which is not in the memory set"):
            execute(_extract_job(mdir, "the job queue is NATS now", job_id="job-a"), ctx)
        assert [e.name for e in MemoryStore(mdir).read().records] == ["queue-broker", "ci-runner"]
        assert execute(_extract_job(mdir, "the job queue is NATS now", job_id="job-b"), ctx) == "extracted 1"
        assert sorted(e.name for e in MemoryStore(mdir).read().records) == ["ci-runner", "queue-broker-nats"]
        assert log_entries(MemoryStore(mdir))[0].merged[0]["superseded"] is True
    finally:
        fake.close()


def test_a_value_said_again_without_a_change_word_supersedes_the_directory_record(tmp_path: Path) -> None:
    mdir = tmp_path / "mem"
    MemoryStore.init(mdir).commit(Change(add=[make_record(
        "billing-port", "project", "The billing API listens on port 7001", "The billing API listens on port 7001.\n")],
        actor="manual"))
    ctx = Context(config=default_config(env={"HOME": "/nonexistent"}), model=OfflineModel(), ledger=None)
    assert execute(_extract_job(mdir, "The billing API listens on port 7002."), ctx) == "extracted 1"
    [(entry, rec)] = MemoryStore(mdir).records()
    assert entry.name != "billing-port" and rec.body.startswith("The billing API listens on port 7002.\n")
    assert rec.body.endswith("**Previously:** The billing API listens on port 7001.\n")


def test_a_correction_told_after_its_news_supersedes_the_value_it_restates() -> None:
    """The changed statement is one part of a longer clause ("…, the board moved it: the
    launch is on <date> now"): that part is the older wording with a new value."""
    from dreamd.models import supersession

    old = make_record("o", "project", "The report launch is on 2027-03-04", "The report launch is on 2027-03-04.\n")
    said = "The boss phoned, the board moved it: the report launch is on 2027-03-09 now"
    result = supersession.supersede(make_record("n", "project", said, said + ".\n"), old)
    assert result is not None and result.old == "o"
    assert result.result.body.endswith("**Previously:** The report launch is on 2027-03-04.\n")
    other = make_record("x", "project", "The report review is on 2027-03-04", "The report review is on 2027-03-04.\n")
    assert supersession.supersede(make_record("n", "project", said, said + ".\n"), other) is None


def test_the_users_words_of_a_replaced_value_go_to_history_with_it() -> None:
    """The old record's quote says the replaced statement again; the new record also names the
    old value (as something else), so only the restatement singles the quote out."""
    from dreamd.models import supersession

    old = make_record("o", "user", "The rent is paid on the 5th of each month",
                      "The rent is paid on the 5th of each month.\nIn their words: \"the rent is paid on the 5th of each month, remind me\"\n")
    new = make_record("n", "user", "The rent is paid on the 9th of each month",
                      "The rent is paid on the 9th of each month.\n"
                      "In their words: \"sorry, the rent is paid on the 9th of each month, the 5th is the phone bill\"\n")
    result = supersession.supersede(new, old)
    assert result is not None
    current, _, history = result.result.body.partition("**Previously:**")
    assert "remind me" not in current and "remind me" in history


def test_a_stop_said_again_in_a_sibling_records_quote_supersedes_nothing(tmp_path: Path) -> None:
    """One sentence gives two records; the second one's quote holds the stop the first states
    ("不再用 X"): the first is said again there, not replaced, so it stays current."""
    mdir = tmp_path / "mem"
    MemoryStore.init(mdir)
    ctx = Context(config=default_config(env={"HOME": "/nonexistent"}), model=OfflineModel(), ledger=None)
    assert execute(_extract_job(mdir, "日志我不再用 Graylog 了，换成 Loki，组里现在统一用这个。"), ctx) == "extracted 2"
    bodies = [rec.body for _, rec in MemoryStore(mdir).records()]
    assert not any("**此前：**" in b or "**Previously:**" in b for b in bodies)
    assert any(b.startswith("日志用户不再用 Graylog 了") for b in bodies)


def test_a_change_restating_the_whole_older_wording_with_news_around_it_supersedes_it() -> None:
    """The older record's every word said again, its date replaced, and a change word: the news
    around it ("the landlord says") does not make it another subject. A newer clause missing an
    older word, or an older record without a value of the kind, is left alone."""
    from dreamd.models import supersession

    def sup(old: str, new: str) -> bool:
        return bool(supersession.replaced_facts(make_record("n", "project", new, new + "\n"),
                                                make_record("o", "project", old, old + "\n")))

    assert sup("Handover of the flat is 2027-01-03", "Landlord says the handover of the flat got pushed to 2027-01-08")
    assert sup("2027-02-01交钥匙", "中介说交钥匙推迟到 2027-02-09")
    assert not sup("Handover of the flat is 2027-01-03", "Landlord says the flat viewing got pushed to 2027-01-08")
    assert not sup("Handover of the flat is at the agency", "Landlord says the handover of the flat got pushed to 2027-01-08")
    assert not sup("Handover of the flat is 2027-01-03",
                   "Landlord says the handover of the flat is 2027-01-08 and the keys are at the agency")


def test_a_change_said_the_way_no_rule_takes_is_kept_when_it_restates_an_earlier_subject() -> None:
    """ "… is X these days, not Y" after the user named the thing: the new value, although a
    deictic "these days" alone makes no statement; without the earlier mention, nothing."""
    said_before = {"role": "user", "text": "our artifacts go to s3://acme-builds"}
    change = {"role": "user", "text": "and the expiry on acme-builds is 60 days these days, not 14 days."}
    reply = {"role": "assistant", "text": "Ok."}
    records = extract_from_turns([said_before, reply, change], today="2026-11-20")
    assert [r["description"] for r in records if "60 days" in r["description"]] == [
        "The expiry on acme-builds is 60 days these days, not 14 days"]
    alone = extract_from_turns([{"role": "user", "text": "hi"}, reply, change], today="2026-11-20")
    assert not [r for r in alone if "60 days" in r["description"]]


def test_a_newer_clause_denying_what_the_older_states_supersedes_it_only_on_its_subject() -> None:
    """ "it's X now, not Y" after "the linter is Y": the older record's value denied, a word of
    its subject said again and a new word beside it. A denial of something an unrelated record
    says ("not Cypress" after "we deploy with Helm"), a denial sharing no other word, or a stop
    that names no new value, supersedes nothing; without a change word the denied value must be
    of the kind the newer one gives ("the 16th, not the 15th")."""
    from dreamd.models import supersession

    def sup(old: str, new: str) -> bool:
        return bool(supersession.replaced_facts(make_record("n", "project", new, new + "\n"),
                                                make_record("o", "project", old, old + "\n")))

    assert sup("The linter is flake8", "The linter is ruff now, not flake8")
    assert sup("Lint config is strict, the linter is pyflakes", "It's the ruff linter now, not pyflakes")
    assert sup("评审截止是 2026-12-15，还剩不到两周", "评审截止是 2026-12-16不是 2026-12-15")
    assert not sup("The linter is flake8", "The formatter is ruff now, not black")
    assert not sup("We deploy with Helm", "It's Playwright btw, not Cypress")
    assert not sup("Spaces in YAML files", "We use tabs now, not spaces")
    assert not sup("安卓打包用的是 Gradle，脚本都在 android/ 里", "决定：不再支持安卓 9 了")


def test_a_change_to_an_address_said_as_a_fragment_is_kept_and_supersedes_the_old_one() -> None:
    from dreamd.models import supersession

    out = _run("docs preview is at docs-old.example.dev, have a look.",
               "docs preview moved to docs.example.dev when we changed hosts")
    new = next(r for r in out if "docs.example.dev" in r["description"])
    old = next(r for r in out if "docs-old.example.dev" in r["description"])
    done = supersession.supersede(make_record("n", new["type"], new["description"], new["body"]),
                                  make_record("o", old["type"], old["description"], old["body"]))
    assert done is not None and "docs-old.example.dev" in done.result.body.split("**Previously:**")[1]


def test_a_correction_led_in_before_a_colon_is_kept_and_supersedes_what_it_corrects(tmp_path: Path) -> None:
    """A few words leading in, with no fact of their own, then a colon: the statement after it
    is read like any other, so the corrected value is kept and the one it replaces, said earlier
    in the same transcript, goes to the record's history."""
    mdir = tmp_path / "mem"
    MemoryStore.init(mdir)
    ctx = Context(config=default_config(env={"HOME": "/nonexistent"}), model=OfflineModel(), ledger=None)
    execute(_extract_job(mdir, "the cache runs Redis 6.", "Noted.", "oops, my mistake: the cache runs Redis 7.", "Ok."), ctx)
    bodies = [rec.body for _, rec in MemoryStore(mdir).records()]
    assert len(bodies) == 1 and "Redis 7" in bodies[0].split("**Previously:**")[0]
    assert "Redis 6" in bodies[0].split("**Previously:**")[1]
    # the words before the colon are a rule of their own: they are not a lead-in
    out = _run("never touch the cluster yourself: print the command and I'll run it")
    assert not [r for r in out if r["description"].startswith("Print the command")]
