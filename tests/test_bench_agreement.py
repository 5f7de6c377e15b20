"""The labeller-agreement scorer (``benchmarks/bench_agreement.py``) on tiny hand-made cases,
and the committed second-labeller files it reads."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
AGREEMENT = REPO / "benchmarks" / "quality" / "agreement"


def _load() -> ModuleType:
    sys.path.insert(0, str(REPO / "benchmarks"))
    spec = importlib.util.spec_from_file_location("bench_agreement", REPO / "benchmarks" / "bench_agreement.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ba = _load()

SESSION: dict[str, Any] = {
    "id": "en-agree-1", "lang": "en", "domain": "coding", "today": "2026-11-24",
    "turns": [
        {"role": "user", "text": "I run the data team, and our dashboards live in Metabase.",
         "timestamp": "2026-11-24T09:00:00Z",
         "facts": [{"type": "user", "key": ["data team"]},
                   {"type": "reference", "key": ["dashboards", "Metabase"]}]},
        {"role": "assistant", "text": "Noted.", "timestamp": "2026-11-24T09:00:05Z"},
        {"role": "user", "text": "Never force-push to main; reviews get lost.",
         "timestamp": "2026-11-24T09:01:00Z",
         "facts": [{"type": "feedback", "key": ["force-push|force push", "main"]}]},
    ],
}


def _write(path: Path, sessions: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(s) + "\n" for s in sessions), encoding="utf-8")
    return path


def _compare(tmp_path: Path, second: dict[str, Any]) -> dict[str, Any]:
    a = ba.load_extraction(_write(tmp_path / "a.jsonl", [SESSION]))
    b = ba.load_extraction(_write(tmp_path / "b.jsonl", [second]))
    return dict(ba.compare(a, b))


def test_identical_labels_agree_fully(tmp_path: Path) -> None:
    r = _compare(tmp_path, SESSION)["overall"]
    assert r["typed"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert r["type_agreement"] == 1.0


def test_other_words_for_the_same_fact_still_match(tmp_path: Path) -> None:
    other = copy.deepcopy(SESSION)
    other["turns"][0]["facts"][1]["key"] = ["metabase"]  # one shared term, other case
    other["turns"][2]["facts"][0]["key"] = ["force push"]
    r = _compare(tmp_path, other)["overall"]
    assert r["typed"]["precision"] == 1.0 and r["typed"]["recall"] == 1.0


def test_a_different_type_counts_only_untyped(tmp_path: Path) -> None:
    other = copy.deepcopy(SESSION)
    other["turns"][0]["facts"][1]["type"] = "project"
    r = _compare(tmp_path, other)["overall"]
    assert r["untyped"]["recall"] == 1.0
    assert r["typed"]["recall"] == pytest.approx(2 / 3)
    assert r["type_agreement"] == pytest.approx(2 / 3)


def test_a_missed_and_an_extra_fact(tmp_path: Path) -> None:
    other = copy.deepcopy(SESSION)
    other["turns"][0]["facts"].pop(0)  # the second labeller skipped the team
    other["turns"][2]["facts"].append({"type": "project", "key": ["reviews"]})  # and added one
    r = _compare(tmp_path, other)["overall"]
    assert r["facts_first"] == 3 and r["facts_second"] == 3
    assert r["typed"]["precision"] == pytest.approx(2 / 3)
    assert r["typed"]["recall"] == pytest.approx(2 / 3)


def test_a_fact_on_another_turn_does_not_match(tmp_path: Path) -> None:
    other = copy.deepcopy(SESSION)
    moved = other["turns"][0]["facts"].pop(1)
    other["turns"][2]["facts"].append(moved)
    r = _compare(tmp_path, other)["overall"]
    assert r["untyped"]["recall"] == pytest.approx(2 / 3)


def test_sessions_must_line_up(tmp_path: Path) -> None:
    other = copy.deepcopy(SESSION)
    other["id"] = "en-agree-2"
    with pytest.raises(ValueError, match="lacks sessions"):
        _compare(tmp_path, other)
    other = copy.deepcopy(SESSION)
    other["turns"].pop()
    with pytest.raises(ValueError, match="3 turns in the first file, 2 in the second"):
        _compare(tmp_path, other)


def test_committed_second_labels_cover_the_same_sessions() -> None:
    first = ba.load_extraction(AGREEMENT / "first.jsonl")
    second = ba.load_extraction(AGREEMENT / "second.jsonl")
    assert [s.id for s in first] == [s.id for s in second]
    assert len(first) == 24
    for a, b in zip(first, second, strict=True):
        assert [t.text for t in a.turns] == [t.text for t in b.turns], a.id
    overall = ba.compare(first, second)["overall"]
    assert 0.0 < overall["typed"]["f1"] <= 1.0
