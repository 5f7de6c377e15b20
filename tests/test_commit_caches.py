"""Issue 21 §5: what a committing job no longer computes twice still reads as before.

The store keeps each record file's parse by its ``fstat`` (inode, mtime, ctime, size), the
store's commit skips a second redaction of a record extraction already found clean, and
supersession keeps each record's clauses. A cache must never hand back a file's old version,
follow a link the uncached read refused, or pass a record that still holds a secret.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memory.errors import RecordError
from memory.store.records import make_record
from memory.store.redaction import redact_record
from memory.store.transaction import Change, MemoryStore

SECRET = "Pz8!mQ4wLr2"


def _one_record(tmp_path: Path) -> tuple[MemoryStore, Path]:
    store = MemoryStore.init(tmp_path / "mem")
    store.commit(Change(add=[make_record("tabs", "user", "Indentation uses tabs", "Use tabs, never spaces.")]))
    entry = store.read().records[0]
    return store, store.path / entry.file


def test_a_record_file_edited_in_place_is_read_again_not_from_the_parse_kept(tmp_path: Path) -> None:
    store, path = _one_record(tmp_path)
    entry = store.read().records[0]
    assert "never spaces" in store.read_record(entry).body  # parsed and kept
    text = path.read_text(encoding="utf-8")
    edited = text.replace("never spaces", "never SPACES")  # same size, same inode
    assert len(edited) == len(text)
    with open(path, "r+", encoding="utf-8") as f:
        f.write(edited)
    assert "never SPACES" in store.read_record(entry).body


def test_a_record_file_replaced_by_a_link_is_refused_even_after_it_was_parsed(tmp_path: Path) -> None:
    store, path = _one_record(tmp_path)
    entry = store.read().records[0]
    store.read_record(entry)
    outside = tmp_path / "outside.md"
    outside.write_bytes(path.read_bytes())
    path.unlink()
    os.symlink(outside, path)
    with pytest.raises(RecordError, match="symbolic link"):
        store.read_record(entry)


def test_a_record_found_clean_is_not_scanned_again_but_one_with_a_secret_always_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import memory.store.redaction as redaction

    scans: list[str] = []
    real = redaction.redact_found

    def counting(text: str) -> tuple[str, list[str], list[tuple[str, str]]]:
        scans.append(text)
        return real(text)

    monkeypatch.setattr(redaction, "redact_found", counting)
    clean = make_record("tabs", "user", "Indentation uses tabs", "Use tabs.")
    assert redact_record(clean, keep_name=True) == (clean, [])  # its name was not checked: not marked
    first = len(scans)
    assert redact_record(clean) == (clean, [])
    assert len(scans) == 2 * first
    assert redact_record(clean) == (clean, []) and redact_record(clean, keep_name=True) == (clean, [])
    assert len(scans) == 2 * first  # found clean once: not scanned again
    dirty = make_record("staging", "reference", "staging access", f"The password for staging is {SECRET}.")
    for _ in range(2):
        out, kinds = redact_record(dirty)
        assert SECRET not in out.body and kinds
    assert len(scans) > 2 * first + 1  # scanned both times


def test_the_daemons_usage_ledger_writes_once_per_interval_and_loses_no_call(tmp_path: Path) -> None:
    """Every extraction job recorded its model call with a whole-file rewrite and two fsyncs;
    the daemon's ledger now adds calls up and writes at most once per ``flush_after``."""
    import json
    import subprocess
    import sys
    from datetime import UTC, datetime

    from dreamd.models.usage import UsageLedger
    from memory.model.llm import Usage

    now = datetime(2026, 12, 2, 3, tzinfo=UTC)
    path = tmp_path / "usage.json"
    ledger = UsageLedger(path, flush_after=3600)
    for _ in range(50):
        ledger.record("/a", Usage(10, 1), now=now)
    on_disk = json.loads(path.read_text())["dirs"]["/a"]["totals"]
    assert on_disk["calls"] == 1  # the first call was written at once, the other 49 wait
    assert ledger.totals("/a")["calls"] == 50 and ledger.spent_today("/a", now=now) == 550
    ledger.flush()
    other = UsageLedger(path)
    assert other.totals("/a")["calls"] == 50 and other.spent_today("/a", now=now) == 550
    # a process that exits normally writes what it added up (atexit); a timer writes an idle one
    code = (
        "from datetime import datetime, UTC; from dreamd.models.usage import UsageLedger;"
        "from memory.model.llm import Usage; import sys;"
        "l = UsageLedger(sys.argv[1], flush_after=3600); now = datetime(2026, 12, 2, 3, tzinfo=UTC)\n"
        "for _ in range(5): l.record('/b', Usage(1), now=now)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=120)
    assert UsageLedger(path).totals("/b")["calls"] == 5
    quick = UsageLedger(path, flush_after=0.2)
    quick.record("/c", Usage(1), now=now)
    quick.record("/c", Usage(1), now=now)
    assert UsageLedger(path).totals("/c")["calls"] == 1
    deadline = time.monotonic() + 30
    while UsageLedger(path).totals("/c")["calls"] != 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert UsageLedger(path).totals("/c")["calls"] == 2
