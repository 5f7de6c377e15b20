"""Extraction's check against what the directory already holds, in a large directory.

A candidate record is compared only with the records that share enough of its words (found
through an index of their tokens), and decides as if it were compared with every one: these
tests pin both, on made-up records.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from dreamd.models.offline.extract import pipeline
from dreamd.models.offline.extract.pipeline import _corrects, _near_duplicate, extract
from dreamd.models.offline.text import tokens

TODAY = "2026-11-29"


def _made_up_word(rng: random.Random) -> str:
    return "".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3))


def _extract(sentences: list[str], index: list[dict[str, str]]) -> list[dict[str, str]]:
    turns = [{"role": "user", "text": s, "timestamp": f"{TODAY}T10:{i:02d}:00Z"} for i, s in enumerate(sentences)]
    return extract({"task": "extract", "today": TODAY, "index": index, "turns": turns})


def _large_directory(n: int, seed: int) -> list[dict[str, str]]:
    rng = random.Random(seed)
    frames = ("Never merge the {} branch without a review", "The {} service runs on the {} cluster",
              "User is the {} lead on the {} team", "Decision: use {} for the {} pipeline")
    out = []
    for i in range(n):
        frame = frames[i % len(frames)]
        kind = ("feedback", "project", "user", "project")[i % len(frames)]
        words = [_made_up_word(rng) for _ in range(frame.count("{}"))]
        out.append({"name": f"record-{i}", "type": kind, "description": frame.format(*words)})
    return out


def test_a_duplicate_in_a_large_directory_is_found_comparing_only_records_sharing_its_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = _large_directory(2000, seed=3)
    index.insert(1234, {"name": "no-friday-quorvex-deploys", "type": "feedback",
                        "description": "Never deploy the quorvex gateway on Fridays"})
    compared: list[str] = []

    def counted(new: str, old: str) -> bool:
        compared.append(old)
        return _corrects(new, old)

    monkeypatch.setattr(pipeline, "_corrects", counted)
    kept = _extract(["Never deploy the quorvex gateway on Fridays.", "Always tag the plinkor images with the commit sha.",
                     "Please always tag the plinkor images with the commit sha."], index)  # a repeat of a record kept here
    assert [r["description"] for r in kept] == ["Always tag the plinkor images with the commit sha"]
    # the duplicate was found, and the 2,000 others were never compared with it
    assert "Never deploy the quorvex gateway on Fridays" in compared
    assert len(compared) < 20


def test_a_statement_that_corrects_an_indexed_record_is_still_kept_in_a_large_directory() -> None:
    index = _large_directory(2000, seed=4)
    index.append({"name": "no-friday-quorvex-deploys", "type": "feedback",
                  "description": "Never deploy the quorvex gateway on Fridays"})
    kept = _extract(["Always deploy the quorvex gateway on Fridays."], index)
    assert [r["description"] for r in kept] == ["Always deploy the quorvex gateway on Fridays"]


def _brute_force_known(record: dict[str, str], index: list[dict[str, str]]) -> bool:
    """What a candidate record is checked against, compared with every record of the index."""
    desc, toks = record["description"], frozenset(tokens(record["description"]))
    return any(not _corrects(desc, e["description"]) and (
        e["name"] == record["name"] or (e["type"] == record["type"] and _near_duplicate(toks, frozenset(tokens(e["description"])))))
        for e in index)


def test_the_token_index_finds_every_duplicate_the_comparison_with_every_record_finds() -> None:
    """Random records over a small vocabulary overlap by every share, around the thresholds too."""
    rng = random.Random(20261203)
    vocabulary = [_made_up_word(rng) for _ in range(10)]
    verbs = ("keep", "check", "archive")
    decided: dict[bool, int] = {True: 0, False: 0}
    for _ in range(150):
        index: list[dict[str, Any]] = []
        for i in range(40):
            words = " ".join(rng.sample(vocabulary, rng.randint(1, 6)))
            kind = rng.choice(("feedback", "feedback", "project", "user"))
            index.append({"name": f"made-up-{i}", "type": kind, "description": f"Always {rng.choice(verbs)} the {words}"})
        said = f"Always {rng.choice(verbs)} the {' '.join(rng.sample(vocabulary, rng.randint(1, 5)))} files."
        alone = _extract([said], [])
        if len(alone) != 1:
            continue
        expected = _brute_force_known(alone[0], index)
        assert (_extract([said], index) == []) == expected, (said, alone[0])
        decided[expected] += 1
    assert decided[True] >= 20 and decided[False] >= 20  # both outcomes were exercised
