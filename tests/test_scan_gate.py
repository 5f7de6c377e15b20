"""The scan gate is evaluated from one state: the daemon's recorded last scan (issue 13, item 4).

The throttle that decides when the daemon scans, the ``scan`` gate of that decision and the
``scan`` line of ``dreamd status`` all read ``.last-scan`` in the directory, so they agree, and
a restarted daemon does not reopen every window at once.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from pathlib import Path

import tests.test_daemon_stub as stub
from dreamd.config import load_config
from dreamd.daemon.supervisor import Daemon
from dreamd.jobs.gates import SCAN_FILE, ScanThrottle, read_last_scan, record_scan
from dreamd.logs import configure
from dreamd.status.collect import collect_status
from memory.store.transaction import MemoryStore

NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


def _config(tmp_path: Path) -> object:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[daemon]\nspool = "{tmp_path / "spool"}"\nroots = ["{tmp_path}/code/*/.memory"]\n'
        '[gates]\nscan_throttle = "10m"\nthreshold = 1000\n'
    )
    return load_config(cfg, env={"HOME": str(tmp_path)})


def _scan_gate(status: dict[str, object]) -> dict[str, object]:
    [d] = status["directories"]  # type: ignore[index]
    return next(g for g in d["gates"]["gates"] if g["name"] == "scan")  # type: ignore[index]


def test_status_shows_the_recorded_scan_and_when_the_next_one_is_due(tmp_path: Path) -> None:
    mdir = tmp_path / "code" / "app" / ".memory"
    MemoryStore.init(mdir)
    config = _config(tmp_path)
    assert _scan_gate(collect_status(config, now=NOW))["reason"] == "first scan"  # type: ignore[arg-type]
    record_scan(mdir, NOW - timedelta(minutes=4))
    gate = _scan_gate(collect_status(config, now=NOW))  # type: ignore[arg-type]
    assert (gate["open"], gate["reason"]) == (False, "scanned recently, next scan in 6m")
    gate = _scan_gate(collect_status(config, now=NOW + timedelta(minutes=6)))  # type: ignore[arg-type]
    assert (gate["open"], gate["reason"]) == (True, "throttle window passed")


def test_a_daemon_scan_records_the_time_status_then_reports(tmp_path: Path) -> None:
    mdir = (tmp_path / "code" / "app" / ".memory").resolve()
    MemoryStore.init(mdir)
    config = _config(tmp_path)
    configure("json", io.StringIO())
    daemon = Daemon(config, work=stub, watch=False, env={"HOME": str(tmp_path)}, wall=lambda: NOW)  # type: ignore[arg-type]
    daemon.pool.start()
    try:
        daemon.dirs.queue_scan(mdir)
        assert daemon.pool.wait_idle(10)
    finally:
        daemon.pool.close()
    assert (mdir / SCAN_FILE).is_file() and read_last_scan(mdir) == NOW
    gate = _scan_gate(collect_status(config, now=NOW + timedelta(minutes=1)))  # type: ignore[arg-type]
    assert gate["reason"] == "scanned recently, next scan in 9m"


def test_a_restarted_throttle_is_seeded_from_the_recorded_scan() -> None:
    t = [1000.0]
    ago = {"/m": 120.0}
    throttle = ScanThrottle(600.0, lambda: t[0], seed=ago.get)  # type: ignore[arg-type]
    assert throttle.hint("/m") is False, "scanned 2 min ago by the previous process"
    assert throttle.hint("/other") is True, "never scanned"
    t[0] += 479
    assert throttle.due() == []
    t[0] += 1
    assert throttle.due() == ["/m"], "the remembered hint runs when the window ends"
