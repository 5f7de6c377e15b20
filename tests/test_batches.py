"""Nothing is cut silently: long sessions are extracted in windows, refused plan batches are split.

Windows and halves are pure (:mod:`dreamd.jobs.batches`); the job and dream paths are driven through
:mod:`dreamd.jobs.work` with the offline model, a scripted model and the real Anthropic SDK against
the loopback fake Messages server.
"""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
import structlog
from hypothesis import given, settings
from hypothesis import strategies as st

import dreamd.jobs.work
from dreamd.config import default_config
from dreamd.jobs.batches import halves, windows
from dreamd.jobs.work import Context, dream, execute
from dreamd.models.offline.model import OfflineModel
from memory.errors import TransientError
from memory.model.llm import Completion, parse_payload
from memory.spool.jobs import Job, Transcript
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore
from memory.transcripts import Turn, render_turns
from tests.fake_anthropic import FakeAnthropic, message

# ----------------------------------------------------------------------------- windows (pure)


def turn(i: int, size: int) -> Turn:
    return Turn("user" if i % 2 == 0 else "assistant", f"t{i}:" + "x" * size, None, f"m{i}")


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=300), max_size=30),
    st.integers(min_value=0, max_value=50),
    st.integers(min_value=40, max_value=400),
)
def test_windows_cover_every_turn_once_in_order_within_the_budget(
    sizes: list[int], start: int, budget: int
) -> None:
    turns = [turn(i, n) for i, n in enumerate(sizes)]
    cut = windows(turns, start, budget)
    assert all(w.chars <= budget for w in cut)
    rebuilt: list[Turn] = []
    for w in cut:
        for t in w.turns:
            if rebuilt and rebuilt[-1].message_id == t.message_id:
                rebuilt[-1] = dataclasses.replace(rebuilt[-1], text=rebuilt[-1].text + t.text)
            else:
                rebuilt.append(t)
    assert rebuilt == turns
    ends = [w.end for w in cut if w.end is not None]
    assert ends == sorted(ends) and len(set(ends)) == len(ends)
    if turns:
        assert cut[-1].end == start + len(turns)
        assert cut[0].start == start
    else:
        assert cut == []
    for w in cut:  # a window that moves the cursor holds whole turns only up to that point
        if w.end is not None:
            assert w.turns[-1].message_id == turns[w.end - start - 1].message_id


def test_a_turn_longer_than_the_budget_gets_slices_and_only_the_last_moves_the_cursor() -> None:
    turns = [turn(0, 10), turn(1, 250), turn(2, 10)]
    cut = windows(turns, 7, 100)
    assert [(w.start, w.end, len(w.turns)) for w in cut] == [
        (7, 8, 1), (8, None, 1), (8, None, 1), (8, 9, 1), (9, 10, 1),
    ]


def test_halves_split_down_to_the_minimum() -> None:
    assert halves(list(range(9)), 8) == [[0, 1, 2, 3], [4, 5, 6, 7, 8]]
    assert halves(list(range(8)), 8) is None
    assert halves([1], 0) is None
    assert halves([1, 2], 1) == [[1], [2]]


# ----------------------------------------------------------------------------- extraction jobs


def ctx(model: Any) -> Context:
    return Context(config=default_config(env={"HOME": "/nonexistent"}), model=model, ledger=None)


@pytest.fixture
def mdir(tmp_path: Path) -> Path:
    d = tmp_path / "mem"
    MemoryStore.init(d)
    return d


def session(texts: list[tuple[str, str]]) -> str:
    lines = []
    for i, (role, text) in enumerate(texts):
        lines.append(json.dumps({
            "type": role, "uuid": f"u{i}", "sessionId": "long-1",
            "timestamp": f"2026-11-20T{10 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z",
            "message": {"role": role, "content": text},
        }))
    return "\n".join(lines) + "\n"


def job(mdir: Path, job_id: str, content: str) -> Job:
    return Job(id=job_id, kind="extract", memory_dir=mdir, session_id="long-1",
               submitted_at="2026-11-20T12:00:00Z", transcript=Transcript(format="auto", content=content))


FILLER = (
    "I read through the parser module and the request handlers; the loop that walks the "
    "token list allocates a fresh buffer on every pass, which is where the time goes. "
)


def long_session() -> list[tuple[str, str]]:
    turns = [("user", "Please remember that the billing service deploys only from the release branch."),
             ("assistant", "Noted.")]
    for i in range(300):
        turns.append(("user", f"What does step {i} of the profile show?"))
        turns.append(("assistant", FILLER * 3))
    return turns


def test_a_long_session_is_extracted_in_windows_and_its_first_fact_is_kept(mdir: Path) -> None:
    content = session(long_session())
    turns = long_session()
    assert len(render_turns([Turn(r, t, None, "") for r, t in turns])) > 2 * dreamd.jobs.work.EXTRACT_MAX_CHARS
    with structlog.testing.capture_logs() as logs:
        out = execute(job(mdir, "long-job", content), ctx(OfflineModel()))
    m = MemoryStore(mdir).read()
    bodies = [MemoryStore(mdir).read_record(e).body for e in m.records]
    assert any("release branch" in b for b in bodies), bodies
    assert out.startswith("extracted ")
    assert m.cursors == {"long-1": len(turns)}
    assert m.applied_jobs == ["long-job"]
    seen = [e for e in logs if e["event"] == "extract.window"]
    assert len(seen) >= 3 and [e["window"] for e in seen] == list(range(1, len(seen) + 1))
    assert all(e["chars"] <= dreamd.jobs.work.EXTRACT_MAX_CHARS for e in seen)
    assert seen[0]["first_turn"] == 0 and seen[-1]["end_turn"] == len(turns)


class Scripted:
    """Answers extraction calls from a list; records the turns each call saw."""

    name = "scripted"

    def __init__(self, answers: list[Completion]) -> None:
        self.answers = list(answers)
        self.seen: list[list[str]] = []

    def complete(self, system: str, prompt: str, max_tokens: int) -> Completion:
        self.seen.append([t["text"] for t in parse_payload(prompt)["turns"]])
        return self.answers.pop(0)


def extracted(name: str) -> dict[str, str]:
    return {"name": name, "type": "project", "description": f"Fact {name}", "body": f"Fact {name}.\n"}


def test_a_refused_window_keeps_earlier_windows_and_the_retry_resumes_at_the_cursor(
    mdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dreamd.jobs.work, "EXTRACT_MAX_CHARS", 200)
    texts = [("user", f"line {i} " + "y" * 60) for i in range(6)]  # two turns per window
    content = session(texts)
    ok = [Completion(json.dumps([extracted("w1")]), "end_turn"),
          Completion("[", "max_tokens")]
    model = Scripted(ok)
    with pytest.raises(TransientError, match="truncated"):
        execute(job(mdir, "j1", content), ctx(model))
    store = MemoryStore(mdir)
    m = store.read()
    assert m.cursors == {"long-1": 2}
    assert [e.name for e in m.records] == ["w1"]
    assert m.records[0].sources == ["job:j1", "session:long-1"]
    assert m.applied_jobs == []  # the job is not done: a retry must run
    retry = Scripted([Completion(json.dumps([extracted("w2")]), "end_turn"),
                      Completion(json.dumps([extracted("w3")]), "end_turn")])
    assert execute(job(mdir, "j1", content), ctx(retry)) == "extracted 2"
    assert [len(s) for s in retry.seen] == [2, 2]
    assert retry.seen[0][0].startswith("line 2 ")
    m = store.read()
    assert [e.name for e in m.records] == ["w1", "w2", "w3"]
    assert m.cursors == {"long-1": 6} and m.applied_jobs == ["j1"]
    assert [g for g in range(m.generation + 1)
            if (store.history_path / f"manifest-{g}.json").exists()
            and json.loads((store.history_path / f"manifest-{g}.json").read_bytes()).get("change", {})
            .get("job_id") == "j1"] == []  # only the last (current) commit carries the job id
    assert m.change.get("job_id") == "j1"


# ----------------------------------------------------------------------------- plan batches


class SizeLimitedAnthropic(FakeAnthropic):
    """A Messages server whose answer is cut at ``max_tokens`` whenever a plan covers more
    than ``limit`` records, and is otherwise the offline planner's answer."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self.sizes: list[int] = []

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        raw = handler.rfile.read(int(handler.headers.get("content-length") or 0))
        socket_file, handler.rfile = handler.rfile, io.BytesIO(raw)
        body = json.loads(raw)
        prompt = "".join(b["text"] for m in body["messages"] for b in m["content"]) if isinstance(
            body["messages"][0]["content"], list) else body["messages"][0]["content"]
        payload = parse_payload(prompt)
        n = len(payload["records"])
        self.sizes.append(n)
        if n > self.limit:
            self.push(message('[{"source_names": ["', stop_reason="max_tokens"))
        else:
            answer = OfflineModel().complete("", prompt, 32000)
            self.push(message(answer.text))
        super()._handle(handler)
        handler.rfile = socket_file  # the connection is kept alive for the next request


@pytest.fixture
def limited(monkeypatch: pytest.MonkeyPatch) -> Iterator[SizeLimitedAnthropic]:
    server = SizeLimitedAnthropic(limit=5)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-for-the-fake-server")
    try:
        yield server
    finally:
        server.close()


def test_a_batch_cut_at_max_tokens_is_split_in_halves_and_every_half_is_applied(
    mdir: Path, limited: SizeLimitedAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dreamd.models.anthropic_backend import AnthropicModel

    monkeypatch.setattr(dreamd.jobs.work, "PLAN_BATCH", 16)
    monkeypatch.setattr(dreamd.jobs.work, "MIN_PLAN_BATCH", 2)
    store = MemoryStore(mdir)
    topics = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    records = []
    for t in topics:  # each topic: a record and a longer paraphrase of it, adjacent by name
        records.append(make_record(f"{t}-1", "project", f"The {t} service owns the {t} queue",
                                   f"The {t} service owns the {t} queue.\n"))
        records.append(make_record(f"{t}-2", "project", f"The {t} service owns the {t} queue and its dead letters",
                                   f"The {t} service owns the {t} queue and its dead letters.\n"))
    store.commit(Change(add=records[::2]))
    store.commit(Change(add=records[1::2]))  # the paraphrases are newer
    gen = store.read().generation
    model = AnthropicModel(model="claude-test", base_url=limited.url, timeout=5.0, max_retries=0)
    with structlog.testing.capture_logs() as logs:
        result = dream(mdir, Context(config=default_config(env={"HOME": "/nonexistent"}), model=model,
                                     ledger=None), force=True)
    assert (result.status, result.reason) == ("applied", None)
    assert limited.sizes == [16, 8, 4, 4, 8, 4, 4]
    m = store.read()
    assert m.generation == gen + 1
    assert sorted(e.name for e in m.records) == sorted(f"{t}-2" for t in topics), result.plan
    assert len([e for e in logs if e["event"] == "dream.batch_split"]) == 3
    assert [e["event"] for e in logs if e["event"].startswith("dream.")][-1] == "dream.committed"


def test_a_turn_longer_than_the_budget_is_read_in_slices_and_committed_once_whole(
    mdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dreamd.jobs.work, "EXTRACT_MAX_CHARS", 200)
    texts = [("user", "short opener"), ("user", "z" * 450), ("user", "short closer")]
    model = Scripted([Completion(json.dumps([extracted(f"s{i}")]), "end_turn") for i in range(5)])
    with structlog.testing.capture_logs() as logs:
        assert execute(job(mdir, "j2", session(texts)), ctx(model)) == "extracted 5"
    assert [len(seen) for seen in model.seen] == [1, 1, 1, 1, 1]
    assert "".join(s[0] for s in model.seen[1:4]) == "z" * 450  # every character read, in order
    commits = [e for e in logs if e["event"] == "extract.committed"]
    assert [(e["window"], e["added"]) for e in commits] == [(1, ["s0"]), (4, ["s1", "s2", "s3"]), (5, ["s4"])]
    m = MemoryStore(mdir).read()
    assert m.cursors == {"long-1": 3} and m.applied_jobs == ["j2"]
