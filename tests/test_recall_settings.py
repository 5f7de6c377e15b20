"""The library's recall honours ``[recall]`` of the config the environment names (issue 13,
item 5): the same keys ``dreamd recall`` and the hook use, read without the daemon's loader."""

from __future__ import annotations

from pathlib import Path

import pytest

import memory
from memory.errors import ConfigError
from memory.retrieval.recall import RecallSession, clear_cache
from memory.settings import recall_settings
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore


def _set(tmp_path: Path) -> Path:
    mdir = tmp_path / ".memory"
    store = MemoryStore.init(mdir)
    body = "\n".join(f"line {i} about deploys" for i in range(50))
    store.commit(Change(add=[make_record(f"deploy-{i}", "project", f"deploy note {i}", body) for i in range(8)]))
    clear_cache()
    return mdir


def test_recall_takes_limit_and_caps_from_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mdir = _set(tmp_path)
    assert len(memory.recall(mdir, "deploy").records) == 5
    cfg = tmp_path / "config.toml"
    cfg.write_text("[recall]\nlimit = 2\nrecord_lines = 3\nsession_bytes = 900\n")
    monkeypatch.setenv("DREAMD_CONFIG", str(cfg))
    result = memory.recall(mdir, "deploy")
    assert len(result.records) == 2
    assert all(r.truncated and r.text.count("\n") <= 2 for r in result.records)
    assert len(memory.recall(mdir, "deploy", limit=4).records) == 4, "an argument still wins"
    assert RecallSession().budget_bytes == 900


def test_a_bad_recall_value_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[recall]\nlimit = "five"\n')
    monkeypatch.setenv("DREAMD_CONFIG", str(cfg))
    with pytest.raises(ConfigError, match=r"config.toml: \[recall\] limit: expected an integer >= 1, got 'five'"):
        recall_settings()
