"""Claude Code 2.1.x transcripts: every record type parses or is skipped by name, an empty
transcript is a successful no-op, and a fork never re-extracts turns (issue 9, item 6)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from dreamd.config import default_config
from dreamd.jobs.work import Context, execute
from memory.errors import JobRejected
from memory.model.llm import Completion, parse_payload
from memory.spool.jobs import Job, Transcript
from memory.store.manifest import EXTRACTED_KEY, MAX_EXTRACTED_IDS, extracted_ids, merge_extracted
from memory.store.transaction import Change, MemoryStore
from memory.transcripts import detect_format, parse_transcript, source_ids

SID = "5b1c0d2e-0000-4000-8000-00000000000a"
FORK = "9e8d7c6b-0000-4000-8000-00000000000b"


def line(**fields: Any) -> str:
    return json.dumps(fields)


def turn(kind: str, uuid: str, text: str, session: str = SID, parent: str | None = None) -> str:
    msg: dict[str, Any] = {"role": kind, "content": text}
    if kind == "assistant":
        msg = {"role": "assistant", "id": f"msg_{uuid}", "content": [{"type": "text", "text": text}]}
    return line(
        parentUuid=parent, isSidechain=False, type=kind, message=msg, uuid=uuid,
        timestamp="2026-11-20T10:00:00.000Z", sessionId=session, cwd="/work/app", version="2.1.22",
    )


METADATA_2_1 = [
    line(type="mode", mode="normal", sessionId=SID),
    line(type="mode", mode="normal"),
    line(type="permission-mode", permissionMode="default", sessionId=SID),
    line(type="last-prompt", lastPrompt="run the tests", leafUuid="u3", sessionId=SID),
    line(type="custom-title", customTitle="db tests", sessionId=SID),
    line(type="ai-title", aiTitle="Fixing the test database", sessionId=SID),
    line(type="agent-name", agentName="reviewer", sessionId=SID),
    line(type="tag", tag="wip", sessionId=SID),
    line(type="pr-link", url="https://example.invalid/pr/1", sessionId=SID),
    line(type="worktree-state", state={}, sessionId=SID),
    line(type="queue-operation", operation="enqueue", timestamp="2026-11-20T10:00:00Z", sessionId=SID, content="x"),
    line(type="attachment", attachment={"type": "hook_success", "content": "ok"}, uuid="att-1", sessionId=SID),
    line(type="file-history-snapshot", messageId="u1", snapshot={}, isSnapshotUpdate=False),
    line(type="summary", summary="Earlier work on the parser", leafUuid="u1"),
    line(type="progress", data={"type": "hook_progress"}, uuid="p-1", sessionId=SID),
    line(type="system", subtype="compact_boundary", content="Conversation compacted", uuid="s-1", sessionId=SID,
         compactMetadata={"trigger": "auto", "preTokens": 150000}),
    line(type="system", subtype="local_command", content="<command-name>/memory</command-name>", uuid="s-2",
         sessionId=SID),
    line(type="some-future-record", sessionId=SID, payload={"x": 1}),
]


def test_every_2_1_record_type_is_skipped_by_name_and_turns_survive() -> None:
    text = "\n".join(
        [METADATA_2_1[0], turn("user", "u1", "the tests must use a real database"), *METADATA_2_1[1:],
         turn("assistant", "u2", "Understood, I will use the real database.", parent="u1"),
         line(type="user", isCompactSummary=True, uuid="u3", sessionId=SID,
              message={"role": "user", "content": "Summary: switched the tests to a real database."}),
         line(type="user", uuid="u4", sessionId=SID, message={
             "role": "user", "content": "<local-command-stdout>Memory updated</local-command-stdout>"})]
    ) + "\n"
    for fmt in ("auto", "claude-code"):
        t = parse_transcript(text, fmt)
        assert t.format == "claude-code" and t.skipped == 0 and t.session_id == SID
        assert [x.role for x in t.turns] == ["user", "assistant", "user", "user"]
        assert t.turns[2].text.startswith("[compact summary] ")
        assert t.turns[3].text.startswith("[command output]")
        assert all("permissionMode" not in x.text and "aiTitle" not in x.text for x in t.turns)


@pytest.mark.parametrize(
    "content",
    [
        line(type="mode", mode="normal", sessionId=FORK) + "\n",
        line(type="mode", mode="normal") + "\n",
        line(type="last-prompt", lastPrompt="hi", sessionId=FORK) + "\n" + line(type="permission-mode", permissionMode="plan") + "\n",
    ],
    ids=["mode", "mode-no-session", "last-prompt+permission-mode"],
)
def test_a_transcript_with_nothing_to_extract_is_claude_code_with_no_turns(content: str) -> None:
    assert detect_format(content) == "claude-code"
    for fmt in ("auto", "claude-code"):
        t = parse_transcript(content, fmt)
        assert t.format == "claude-code" and t.turns == [] and t.skipped == 0


@pytest.mark.parametrize(
    "content",
    [
        "just some notes\nno json here\n",
        '{"timestamp":"2026-11-20T10:00:00Z","type":"response_item","payload":{"type":"message"}}\n',
        '{"role":"user"}\n[1,2]\n',
    ],
    ids=["text", "codex", "no-type"],
)
def test_a_genuinely_foreign_file_forced_as_claude_code_is_still_refused(content: str) -> None:
    with pytest.raises(JobRejected, match="nothing parseable as claude-code"):
        parse_transcript(content, "claude-code")


# ---------------------------------------------------------------------------- through the job


class ScriptedModel:
    name = "scripted"

    def __init__(self, answers: list[Any]) -> None:
        self.answers = list(answers)
        self.payloads: list[dict[str, Any]] = []

    def complete(self, system: str, prompt: str, max_tokens: int) -> Completion:
        self.payloads.append(parse_payload(prompt))
        return self.answers.pop(0)


def ok(value: Any) -> Completion:
    return Completion(text=json.dumps(value), stop_reason="end_turn")


def record(name: str) -> dict[str, str]:
    return {"name": name, "type": "feedback", "description": f"About {name}", "body": "Body."}


def job(mdir: Path, job_id: str, content: str, session: str) -> Job:
    return Job(id=job_id, kind="extract", memory_dir=mdir, session_id=session, submitted_at="2026-11-20T10:00:00Z",
               transcript=Transcript(format="claude-code", content=content))


def ctx(model: Any) -> Context:
    return Context(config=default_config(env={"HOME": "/nonexistent"}), model=model, ledger=None)


def conversation(session: str, n: int, start: int = 0) -> list[str]:
    out = []
    for i in range(start, start + n):
        kind = "user" if i % 2 == 0 else "assistant"
        out.append(turn(kind, f"00000000-0000-4000-8000-{i:012d}", f"message {i} about the database tests", session))
    return out


def test_a_mode_only_transcript_is_a_successful_no_op_not_a_failure(tmp_path: Path) -> None:
    mdir = tmp_path / "mem"
    MemoryStore.init(mdir)
    model = ScriptedModel([])
    assert execute(job(mdir, "j1", line(type="mode", mode="normal", sessionId=FORK) + "\n", FORK), ctx(model)) == "nothing-new"
    assert model.payloads == []
    assert "j1" in MemoryStore(mdir).read().applied_jobs


def test_a_fork_never_re_extracts_the_turns_it_replays(tmp_path: Path) -> None:
    mdir = tmp_path / "mem"
    MemoryStore.init(mdir)
    model = ScriptedModel([ok([record("original")]), ok([record("forked")])])
    original = conversation(SID, 6)
    assert execute(job(mdir, "j1", "\n".join(original) + "\n", SID), ctx(model)) == "extracted 1"
    assert len(model.payloads[0]["turns"]) == 6
    # The fork's file: a mode line, the original's lines under the new session id (same uuids),
    # then the fork's own turns.
    replayed = [json.dumps({**json.loads(x), "sessionId": FORK}) for x in original]
    fork = [line(type="mode", mode="normal", sessionId=FORK), *replayed, *conversation(FORK, 2, start=6)]
    assert execute(job(mdir, "j2", "\n".join(fork) + "\n", FORK), ctx(model)) == "extracted 1"
    texts = [t["text"] for t in model.payloads[1]["turns"]]
    assert texts == ["message 6 about the database tests", "message 7 about the database tests"]
    m = MemoryStore(mdir).read()
    assert m.cursors == {SID: 6, FORK: 8}
    assert len(extracted_ids(m.extra[EXTRACTED_KEY])) == 8
    # Replaying only what is known already never asks the model.
    again = [line(type="mode", mode="normal", sessionId="c0ffee00-0000-4000-8000-00000000000c"),
             *[json.dumps({**json.loads(x), "sessionId": "c0ffee00-0000-4000-8000-00000000000c"}) for x in original]]
    assert execute(job(mdir, "j3", "\n".join(again) + "\n", "c0ffee00-0000-4000-8000-00000000000c"), ctx(model)) == "nothing-new"


def test_the_extracted_set_is_bounded_survives_other_commits_and_ignores_content_hashes(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path / "mem")
    ids = [f"id-{i}" for i in range(MAX_EXTRACTED_IDS + 100)]
    store.commit(Change(actor="job", job_id="a", extracted=ids[:100]))
    store.commit(Change(actor="job", job_id="b", extracted=ids[100:]))
    store.commit(Change(actor="manual"))  # a commit that extracts nothing keeps the set
    raw = store.read().extra[EXTRACTED_KEY]
    kept = extracted_ids(raw)
    assert len(kept) == MAX_EXTRACTED_IDS and len(raw) == 12 * MAX_EXTRACTED_IDS
    assert extracted_ids(merge_extracted(raw, ids[-1:])) == kept  # no repeats
    assert extracted_ids("not hex at all") == frozenset()  # a damaged value is ignored, not fatal
    t = parse_transcript("[user] hello\n[assistant] hi\n", "text")
    assert source_ids(t.turns) == []  # "h:" ids are content hashes: never marked extracted
    cc = parse_transcript("\n".join(conversation(SID, 2)) + "\n", "claude-code")
    assert source_ids(cc.turns) == [x.message_id for x in cc.turns]
    assert dataclasses.asdict(cc.turns[0])["message_id"].startswith("00000000-")
