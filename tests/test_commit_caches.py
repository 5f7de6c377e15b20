"""Issue 21 §5: what a committing job no longer computes twice still reads as before.

The store keeps each record file's parse by its ``fstat`` (inode, mtime, ctime, size), the
store's commit skips a second redaction of a record extraction already found clean, and
supersession keeps each record's clauses. A cache must never hand back a file's old version,
follow a link the uncached read refused, or pass a record that still holds a secret.
"""

from __future__ import annotations

import os
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
