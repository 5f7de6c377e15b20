"""benchmarks/bench_dream.py runs end to end on small sets and reports what its dream did."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks import bench_dream  # noqa: E402


def test_generated_set_plants_what_it_says() -> None:
    recs, planted = bench_dream.records(400)
    assert len(recs) == 400
    assert len({r.name for r in recs}) == 400
    assert sum(1 for r in recs if r.expires) == planted.expired > 0
    descs = [r.description for r in recs]
    assert len(descs) - len(set(descs)) >= planted.duplicates > 0
    assert planted.rewordings > 0 and planted.supersessions > 0


def test_small_run_writes_rows_for_both_batchings_and_drops_exactly_the_expired(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "dream.json"
    assert bench_dream.main(["--sizes", "240,480", "--iterations", "1", "--dir", str(tmp_path), "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert [(r["size"], r["batching"]) for r in data["rows"]] == [
        (240, "baseline"), (240, "candidates"), (480, "baseline"), (480, "candidates")]
    for row in data["rows"]:
        planted = row["planted"]
        assert row["drops"] == planted["expired"]
        assert row["retention"] == 1.0
        assert row["duplicates_planted"] == planted["duplicates"] + planted["rewordings"]
        assert row["plan_ms_p50"] > 0 and row["read_ms_p50"] > 0
    at = {(r["size"], r["batching"]): r for r in data["rows"]}
    # names are shuffled: the name-order batching parts twins at 480, the index does not
    assert at[(480, "candidates")]["duplicates_found"] == 1.0 > at[(480, "baseline")]["duplicates_found"]
    assert {t["target"] for t in data["targets"]} == {
        "duplicates merged >= 95%", "cold plan <= 5 s", "retention 1.0"}
    assert "duplicates merged >= 95%: met" in capsys.readouterr().out
    assert not any(p.name.startswith("dreamd-bench-dream-") for p in tmp_path.iterdir())
