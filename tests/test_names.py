"""One name for one record (issue 9, item 7).

Claude Code writes ``name: feedback-db-tests`` in a file named ``feedback_db_tests.md``. The
manifest key stays the file stem's slug (as DESIGN §2.1 says and existing manifests have it);
the frontmatter name is kept as the entry's ``title`` and every way of naming a record accepts
either: ``dreamd forget``, the remember/forget jobs, ``memory.forget``, recall and the log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dreamd.config import default_config
from dreamd.jobs.work import Context, execute
from memory.errors import PermanentError, StoreError
from memory.model.llm import Completion
from memory.retrieval.recall import clear_cache, recall
from memory.spool.jobs import Job
from memory.store.adopt import adopt
from memory.store.history import log_entries, render_log
from memory.store.records import make_record
from memory.store.transaction import INDEX, MANIFEST, Change, MemoryStore

REPO = Path(__file__).resolve().parents[1]
CC_RECORD = (
    "---\nname: feedback-db-tests\n"
    "description: Integration tests must hit a real database, not mocks\n"
    "type: feedback\n---\n"
    "Integration tests hit a real database.\n**Why:** mocked tests passed a broken migration.\n"
)


class NoModel:
    name = "none"

    def complete(self, system: str, prompt: str, max_tokens: int) -> Completion:
        raise AssertionError("no model call expected")


def ctx() -> Context:
    return Context(config=default_config(env={"HOME": "/nonexistent"}), model=NoModel(), ledger=None)


@pytest.fixture
def cc_dir(tmp_path: Path) -> Path:
    d = tmp_path / "memory"
    d.mkdir()
    (d / "feedback_db_tests.md").write_text(CC_RECORD)
    (d / "user_role.md").write_text("---\nname: user_role\ndescription: Backend engineer\ntype: user\n---\nGo and SQL.\n")
    (d / INDEX).write_text("- [DB tests](feedback_db_tests.md) — real database\n- [Role](user_role.md) — backend\n")
    adopt(d)
    return d


def test_the_key_stays_the_stem_and_listings_show_the_frontmatter_name(cc_dir: Path) -> None:
    m = MemoryStore(cc_dir).read()
    entry = m.by_name()["feedback_db_tests"]
    assert entry.title == "feedback-db-tests" and entry.display_name == "feedback-db-tests"
    assert m.by_name()["user_role"].title is None  # same name in the file: nothing extra kept
    assert "title" not in json.loads((cc_dir / MANIFEST).read_text())["records"][1]
    index = (cc_dir / INDEX).read_text()
    assert "- [feedback-db-tests](feedback_db_tests.md) — " in index
    assert "- [user_role](user_role.md) — " in index
    assert "(name: feedback-db-tests)" in render_log(log_entries(MemoryStore(cc_dir)))


@pytest.mark.parametrize("name", ["feedback-db-tests", "feedback_db_tests"])
def test_dreamd_forget_accepts_either_name(cc_dir: Path, name: str, tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    env.pop("DREAMD_CONFIG", None)
    done = subprocess.run(
        [sys.executable, "-m", "dreamd", "forget", str(cc_dir), name],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "removed feedback_db_tests" in done.stdout
    assert [e.name for e in MemoryStore(cc_dir).read().records] == ["user_role"]


def test_dreamd_forget_of_an_unknown_name_still_fails_clearly(cc_dir: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dreamd", "forget", str(cc_dir), "feedback-db-mocks"],
        cwd=REPO, env={**os.environ, "HOME": str(tmp_path)}, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 1 and "no record named feedback-db-mocks" in done.stderr


def test_forget_and_remember_jobs_accept_the_frontmatter_name(cc_dir: Path) -> None:
    r = make_record("feedback-db-tests", "feedback", "Integration tests use a real Postgres", "Use Postgres in tests.")
    job = Job(id="r1", kind="remember", memory_dir=cc_dir, session_id=None, submitted_at="", records=(r,))
    assert execute(job, ctx()) == "remembered 1"
    m = MemoryStore(cc_dir).read()
    assert sorted(e.name for e in m.records) == ["feedback_db_tests", "user_role"]  # replaced, no twin
    assert m.by_name()["feedback_db_tests"].description == "Integration tests use a real Postgres"
    assert not (cc_dir / "feedback_db_tests.md").exists()  # the old version went to .history/
    forget = Job(id="f1", kind="forget", memory_dir=cc_dir, session_id=None, submitted_at="", names=("feedback-db-tests",))
    assert execute(forget, ctx()) == "forgot 1"
    assert [e.name for e in MemoryStore(cc_dir).read().records] == ["user_role"]


def test_memory_forget_client_goes_through_the_job(cc_dir: Path, tmp_path: Path) -> None:
    from memory.client import forget
    from memory.spool.jobs import validate_job

    spool = tmp_path / "spool"
    job_id = forget(cc_dir, ["feedback-db-tests"], spool=spool)
    [path] = (spool / "new").glob("*.json")
    job = validate_job(path.read_bytes(), roots=[str(tmp_path)])
    assert job.id == job_id
    assert execute(job, ctx()) == "forgot 1"
    assert [e.name for e in MemoryStore(cc_dir).read().records] == ["user_role"]


def test_recall_finds_the_record_by_its_frontmatter_name(cc_dir: Path) -> None:
    clear_cache()
    result = recall(cc_dir, "feedback-db-tests")
    assert [r.name for r in result.records][:1] == ["feedback_db_tests"]


def test_a_manifest_written_before_titles_were_kept_still_resolves(cc_dir: Path) -> None:
    raw = json.loads((cc_dir / MANIFEST).read_text())
    for r in raw["records"]:
        r.pop("title", None)
    (cc_dir / MANIFEST).write_text(json.dumps(raw))
    store = MemoryStore(cc_dir)
    assert store.read().by_name()["feedback_db_tests"].title is None
    assert store.resolve(["feedback-db-tests", "user_role", "nope"]) == (
        {"feedback-db-tests": "feedback_db_tests", "user_role": "user_role"},
        ["nope"],
    )


def test_a_frontmatter_name_two_files_share_is_refused_by_name(tmp_path: Path) -> None:
    d = tmp_path / "memory"
    d.mkdir()
    for stem in ("db_tests_a", "db_tests_b"):
        (d / f"{stem}.md").write_text("---\nname: db-tests\ndescription: d\ntype: feedback\n---\nb\n")
    adopt(d)
    store = MemoryStore(d)
    with pytest.raises(StoreError, match="'db-tests' names several records \\(db_tests_a, db_tests_b\\)"):
        store.resolve(["db-tests"])
    job = Job(id="f1", kind="forget", memory_dir=d, session_id=None, submitted_at="", names=("db-tests",))
    with pytest.raises(PermanentError, match="several records"):
        execute(job, ctx())
    store.commit(Change(remove=["db_tests_a"]))
    assert store.resolve(["db-tests"]) == ({"db-tests": "db_tests_b"}, [])
