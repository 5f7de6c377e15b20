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


def test_small_run_writes_rows_and_drops_exactly_the_expired(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "dream.json"
    assert bench_dream.main(["--sizes", "120,240", "--iterations", "1", "--dir", str(tmp_path), "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert [r["size"] for r in data["rows"]] == [120, 240]
    for row in data["rows"]:
        planted = row["planted"]
        assert row["drops"] == planted["expired"]
        assert 0 < row["merges"] <= planted["duplicates"] + planted["rewordings"] + planted["supersessions"]
        assert row["plan_ms_p50"] > 0 and row["read_ms_p50"] > 0
    assert data["met"] == (data["scaling"] <= data["target_scaling"])
    assert "scaling: plan per record at 240" in capsys.readouterr().out
    assert not any(p.name.startswith("dreamd-bench-dream-") for p in tmp_path.iterdir())
