"""benchmarks/bench_secrets.py runs through every entry point and holds its dev-set floor.

The dev set is the one the detector was written against (recall 1.0, no look-alike altered).
``blind`` and ``blind2`` were written blind, scored once each as held-out sets, then read by
the detector's writer: they are development sets now and hold the same floor at the redactor.
``blind3`` was scored held-out last round and is a development set now too: it holds a floor
at what the fourth round reached (recall 0.990, no look-alike altered). ``blind4`` was the
fourth round's held-out set (scored by the lead) and is a development set now as well, and so is
``blind5`` to ``blind10``, the fifth to twelfth rounds' (floors at what those rounds reached). The held-out set of a round is scored by hand by the lead, never here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks import bench_secrets  # noqa: E402


@pytest.mark.parametrize("point", sorted(bench_secrets.POINTS))
def test_every_entry_point_catches_the_dev_set_and_alters_no_look_alike(point: str) -> None:
    items = bench_secrets.load("dev")
    step = 1 if point in ("redactor", "store") else 3  # the slow points on a spread of forms
    row = bench_secrets.score(items[::step], point)
    assert row["secrets"] > 0 and row["lookalikes"] > 0
    assert row["missed"] == [] and row["altered"] == [], row


@pytest.mark.parametrize("split", ["blind", "blind2"])
def test_the_spent_blind_sets_hold_the_dev_floor_at_the_redactor(split: str) -> None:
    row = bench_secrets.score(bench_secrets.load(split), "redactor")
    assert row["secrets"] > 0 and row["lookalikes"] > 0
    assert row["missed"] == [] and row["altered"] == [], row


BLIND3_MISSED_AT_MOST = 6
"""blind3 at the redactor after the eighth round: 802 of 809 (0.991), no look-alike altered (801
after the fourth); 803 after the ninth (a system account paired with a made-up value). The 7 left are said with no structure a rule could read without reading one
sentence (a typo fixed in passing, a password cut in two six-character halves, an answer after
a colon…)."""


def test_the_spent_third_blind_set_holds_its_floor_at_the_redactor() -> None:
    row = bench_secrets.score(bench_secrets.load("blind3"), "redactor")
    assert row["secrets"] == 809 and row["lookalikes"] == 247
    assert len(row["missed"]) <= BLIND3_MISSED_AT_MOST and row["altered"] == [], row


def test_the_work_directory_is_not_counted_as_part_of_a_secret() -> None:
    # a job names its memory directory, /tmp/bench-secrets-…: six characters of a Notion
    # token's "secret_" are there whatever the redactor does
    token = "secret_" + "Zqumpm08hsE8JNpjJOQGa2rb19FlY0mG1ylvuhfJXqI"
    item = {"id": "t-1", "form": "notion", "text": f"notion token: {token}", "secrets": [token],
            "survive": []}  # fmt: skip
    assert bench_secrets.score([item], "remember")["missed"] == []


def test_a_manifest_key_is_not_counted_as_part_of_a_secret() -> None:
    # every manifest has a "change" key: six characters of a password such as changeme77
    item = {"id": "t-2", "form": "weak", "text": "the kiosk password is changeme77 for now",
            "secrets": ["changeme77"], "survive": []}  # fmt: skip
    assert bench_secrets.score([item], "store")["missed"] == []


BLIND4_MISSED_AT_MOST = 5
BLIND4_ALTERED_AT_MOST = 2
"""blind4 at the redactor after the fifth round: 506 of 514 (0.984), 2 of 247 look-alikes altered
(0.946 and 6 before it); 509 (0.990) after the eighth. What is left is said with no structure a
rule could read without reading that one sentence, or hinges on a vendor's own split of public
and secret keys."""


def test_the_spent_fourth_blind_set_holds_its_floor_at_the_redactor() -> None:
    row = bench_secrets.score(bench_secrets.load("blind4"), "redactor")
    assert row["secrets"] == 514 and row["lookalikes"] == 247
    assert len(row["missed"]) <= BLIND4_MISSED_AT_MOST, row
    assert len(row["altered"]) <= BLIND4_ALTERED_AT_MOST, row


BLIND5_MISSED_AT_MOST = 0
"""blind5 at the redactor after the sixth round: 393 of 401 (0.980), no look-alike altered (0.968
before it); the hook caught 392. Scored held-out by the lead before and after that round. 400
(0.998) after the eighth round; 401 (1.0) after the twelfth."""


def test_the_spent_fifth_blind_set_holds_its_floor_at_the_redactor() -> None:
    row = bench_secrets.score(bench_secrets.load("blind5"), "redactor")
    assert row["secrets"] == 401 and row["lookalikes"] == 235
    assert len(row["missed"]) <= BLIND5_MISSED_AT_MOST and row["altered"] == [], row


BLIND6_MISSED_AT_MOST = 2
BLIND6_ALTERED_AT_MOST = 0
"""blind6 at the redactor after the seventh round: 403 of 428 (0.942), 3 of 170 look-alikes
altered (0.932 and 3 before it). Scored held-out by the lead before and after that round. After
the eighth (a development set then): 425 (0.993), no look-alike altered; 426 after the ninth."""


def test_the_spent_sixth_blind_set_holds_its_floor_at_the_redactor() -> None:
    row = bench_secrets.score(bench_secrets.load("blind6"), "redactor")
    assert row["secrets"] == 428 and row["lookalikes"] == 170
    assert len(row["missed"]) <= BLIND6_MISSED_AT_MOST, row
    assert len(row["altered"]) <= BLIND6_ALTERED_AT_MOST, row


BLIND7_MISSED_AT_MOST = 13
BLIND7_ALTERED_AT_MOST = 0
"""blind7 at the redactor after the eighth round: 402 of 440 (0.914), 1 of 197 look-alikes
altered (398 and 1 before it). Scored held-out by the lead before and after that round. The
ninth round held it out of its own work (built from dev … blind6, scored once at the end): 406
(0.923), no look-alike altered. The eleventh round read it (s30detect): 423 (0.961), none altered; the twelfth (s31detect):
427 (0.970)."""


def test_the_spent_seventh_blind_set_holds_its_floor_at_the_redactor() -> None:
    row = bench_secrets.score(bench_secrets.load("blind7"), "redactor")
    assert row["secrets"] == 440 and row["lookalikes"] == 197
    assert len(row["missed"]) <= BLIND7_MISSED_AT_MOST, row
    assert len(row["altered"]) <= BLIND7_ALTERED_AT_MOST, row


BLIND8_MISSED_AT_MOST = 42
BLIND8_ALTERED_AT_MOST = 1
"""blind8 at the redactor after the ninth round: 417 of 484 (0.862), 6 of 198 look-alikes
altered (409 and 6 before it). Scored held-out by the lead before and after that round; after
the tenth round (structure reading: URL paths, a JWT header alone, example files, namespaced
keys) 1 of 198 altered. The eleventh round held it out of its own work and scored it once at the end:
419 (0.866), 1 altered. The twelfth read it (s31detect): 442 (0.913), 1 altered."""


def test_the_spent_eighth_blind_set_holds_its_floor_at_the_redactor() -> None:
    row = bench_secrets.score(bench_secrets.load("blind8"), "redactor")
    assert row["secrets"] == 484 and row["lookalikes"] == 198
    assert len(row["missed"]) <= BLIND8_MISSED_AT_MOST, row
    assert len(row["altered"]) <= BLIND8_ALTERED_AT_MOST, row


BLIND9_MISSED_AT_MOST = 40
BLIND9_ALTERED_AT_MOST = 3
"""blind9 at the redactor after the eleventh round: 441 of 486 (0.907), 3 of 205 look-alikes
altered (435 and 3 before it). Scored held-out by the lead before and after that round. The
twelfth round held it out of its own work (s31detect, built from dev … blind8) and scored it once
at the end: 446 (0.918), 3 altered."""


def test_the_spent_ninth_blind_set_holds_its_floor_at_the_redactor() -> None:
    row = bench_secrets.score(bench_secrets.load("blind9"), "redactor")
    assert row["secrets"] == 486 and row["lookalikes"] == 205
    assert len(row["missed"]) <= BLIND9_MISSED_AT_MOST, row
    assert len(row["altered"]) <= BLIND9_ALTERED_AT_MOST, row


BLIND10_MISSED_AT_MOST = 38
BLIND10_ALTERED_AT_MOST = 3
"""blind10 at the redactor after the twelfth round: 441 of 479 (0.921), 3 of 203 look-alikes
altered (433 and 3 before it). Scored held-out by the lead before and after that round."""


def test_the_spent_tenth_blind_set_holds_its_floor_at_the_redactor() -> None:
    row = bench_secrets.score(bench_secrets.load("blind10"), "redactor")
    assert row["secrets"] == 479 and row["lookalikes"] == 203
    assert len(row["missed"]) <= BLIND10_MISSED_AT_MOST, row
    assert len(row["altered"]) <= BLIND10_ALTERED_AT_MOST, row
