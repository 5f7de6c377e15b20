"""A turn that changes a value said earlier in the session keeps the new value (issue 23), by
structure: an earlier statement sharing a word and holding a value of the kind the turn newly
names, and a correction or change marker in the turn. Examples are invented for this test."""

from __future__ import annotations

import json
from pathlib import Path

from dreamd.models.offline.extract.pipeline import extract_from_turns
from memory.store.transaction import MemoryStore
from tests.test_supersession import _dreamd, _managed


def _run(*texts: str) -> list[str]:
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "text": t, "timestamp": "2026-11-20T10:00:00Z"}
             for i, t in enumerate(texts)]
    return [r["description"] for r in extract_from_turns(turns, today="2026-11-20")]


def test_a_correction_no_rule_takes_keeps_the_new_value_after_an_earlier_one() -> None:
    said = _run("the upload worker's queue depth limit is 200 jobs, please check the config matches.", "Checked.",
                "actually make the queue depth limit 350.", "Ok.")
    assert any("350" in d for d in said) and any("200" in d for d in said)


def test_a_correction_a_gate_refused_is_kept_when_it_changes_an_earlier_value() -> None:
    said = _run("give the reporting VM 8 GB of RAM", "Done.", "no, make that 12 GB for the reporting VM.", "Ok.")
    assert [d for d in said if "12 GB" in d] == ["Make that 12 GB for the reporting VM"]


def test_without_an_earlier_value_the_same_turn_stays_under_the_normal_gates() -> None:
    assert _run("Noted.", "actually make the queue depth limit 350.", "Ok.") == []
    assert _run("Done.", "no, make that 12 GB for the reporting VM.", "Ok.") == []


def test_a_question_about_the_value_is_not_a_change() -> None:
    said = _run("give the reporting VM 8 GB of RAM", "Done.", "can you make that 12 GB for the reporting VM?", "Ok.")
    assert not any("12 GB" in d for d in said)


def test_dreamd_once_keeps_the_value_changed_later_in_the_session(tmp_path: Path) -> None:
    _store, memory_dir, spool, config = _managed(tmp_path)
    session = tmp_path / "s.jsonl"
    texts = ["the upload worker's queue depth limit is 200 jobs, please check the config matches.", "Checked, it is 200.",
             "actually make the queue depth limit 350.", "Done."]
    session.write_text("".join(json.dumps({"type": ("user", "assistant")[i % 2], "uuid": f"u{i}", "sessionId": "s1",
                                           "timestamp": "2026-11-20T10:00:00Z",
                                           "message": {"role": ("user", "assistant")[i % 2], "content": t}}) + "\n"
                               for i, t in enumerate(texts)))
    submitted = _dreamd(tmp_path, spool, "submit", str(session), "--memory-dir", str(memory_dir), "--session", "s1")
    assert submitted.returncode == 0, submitted.stderr
    once = _dreamd(tmp_path, spool, "once", "--config", str(config), "--log-format", "json")
    assert once.returncode == 0, once.stderr
    current = [rec.body.split("**Previously:**")[0] for _, rec in MemoryStore(memory_dir).records()]
    assert any("350" in body for body in current)
