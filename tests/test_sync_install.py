"""dreamd.sync.install.write_files: many incoming records are made durable by one flush, and a
flush that fails stops the install with its error before any record's name appears."""

from __future__ import annotations

import ctypes
import errno
import os
from pathlib import Path
from typing import Any

import pytest

from dreamd.sync.install import BULK_FILES, write_files


def _files(n: int) -> dict[str, bytes]:
    return {f"fact-{i}.md": f"---\nname: fact-{i}\n---\nBody {i}.\n".encode() for i in range(n)}


class _Libc:
    """A C library whose ``syncfs`` fails with ``err`` (or is missing when ``err`` is None)."""

    def __init__(self, err: int | None) -> None:
        self.calls = 0
        if err is not None:
            def syncfs(fd: int) -> int:
                self.calls += 1
                ctypes.set_errno(err)
                return -1

            self.syncfs = syncfs


def test_a_failed_syncfs_raises_and_no_record_name_appears(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    libc = _Libc(errno.EIO)
    monkeypatch.setattr(ctypes, "CDLL", lambda *a, **k: libc)
    with pytest.raises(OSError) as raised:
        write_files(tmp_path, _files(BULK_FILES + 2))
    assert raised.value.errno == errno.EIO and libc.calls == 1
    assert os.listdir(tmp_path) == []  # no name over bytes the disk may not hold, no temp file left


def test_without_syncfs_every_file_is_fsynced_before_its_name_appears(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ctypes, "CDLL", lambda *a, **k: _Libc(None))
    before_names: list[Any] = []  # fsyncs made while no record's name exists yet
    real_fsync = os.fsync

    def fsync(fd: Any) -> None:
        if not any((tmp_path / f).exists() for f in _files(BULK_FILES + 2)):
            before_names.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    created = write_files(tmp_path, _files(BULK_FILES + 2))
    assert sorted(created) == sorted(_files(BULK_FILES + 2))
    assert len(before_names) == BULK_FILES + 2  # one per file, each before any name appears
    assert all((tmp_path / f).read_bytes() == data for f, data in _files(BULK_FILES + 2).items())


def test_a_real_syncfs_installs_every_file(tmp_path: Path) -> None:
    created = write_files(tmp_path, _files(BULK_FILES + 2))
    assert len(created) == BULK_FILES + 2
    assert sorted(os.listdir(tmp_path)) == sorted(_files(BULK_FILES + 2))
