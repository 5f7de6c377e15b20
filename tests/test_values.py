"""FrozenValue (memory.values): what a frozen dataclass gave the config sections, kept."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

from dreamd.config import Config, ModelConfig, default_config, load_config
from memory.values import FrozenError


def test_a_config_section_is_a_frozen_value_compared_and_hashed_by_its_fields(tmp_path: Path) -> None:
    a, b = default_config(env={"HOME": str(tmp_path)}), default_config(env={"HOME": str(tmp_path)})
    assert a == b and a is not b and a.model == b.model and hash(a.model) == hash(b.model)
    assert a.model != a.model.replace(model="other") and a.model != a.gates
    with pytest.raises(FrozenError):
        a.model.model = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del a.gates.threshold  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(a)) == a and copy.copy(a.model) == a.model


def test_replace_and_to_dict_are_dataclasses_replace_and_asdict_of_a_section(tmp_path: Path) -> None:
    file = tmp_path / "c.toml"
    file.write_text('[model]\nmodel = "m1"\n[gates]\nthreshold = 3\n', encoding="utf-8")
    config = load_config(file, env={"HOME": str(tmp_path)})
    assert config.model.to_dict() == {
        "backend": "offline", "model": "m1", "base_url": "", "timeout": 60.0, "max_retries": 2,
        "max_tokens": 4096, "claude_path": "",
    }  # fmt: skip
    changed = config.replace(gates=config.gates.replace(threshold=9))
    assert changed.gates.threshold == 9 and config.gates.threshold == 3 and changed.model is config.model
    with pytest.raises(TypeError):
        config.model.replace(no_such_field=1)
    assert repr(ModelConfig("offline", "m", "", 1.0, 0, 10)).startswith("ModelConfig(backend='offline', model='m',")
    assert isinstance(changed, Config)


def test_set_fields_cannot_change_a_value_once_built() -> None:
    model = ModelConfig("offline", "m", "", 1.0, 0, 10)
    with pytest.raises(FrozenError):
        model.set_fields(**{**model.to_dict(), "model": "other"})
    assert model.model == "m"


def test_the_stores_records_and_manifest_keep_what_their_dataclasses_gave() -> None:
    """Record and LeaseInfo are frozen values, ManifestEntry and Manifest mutable ones (issue 20):
    equality by fields, ``replace`` (shallow, a new default container each), pickling, weak
    references (the redactor's clean-record cache holds records weakly), and a mutable value is
    unhashable as a dataclass with ``eq`` and without ``frozen`` is."""
    import weakref

    from memory.store.locks import LeaseInfo
    from memory.store.manifest import Manifest, ManifestEntry
    from memory.store.records import Record

    rec = Record("a", "user", "d", "b")
    assert rec.extra == {} and rec.title is None and rec.extra is not Record("x", "user", "d", "b").extra
    assert rec == Record("a", "user", "d", "b") and rec != rec.replace(name="c") and rec.replace().extra is rec.extra
    assert weakref.ref(rec)() is rec and pickle.loads(pickle.dumps(rec)) == rec and copy.deepcopy(rec) == rec
    with pytest.raises(FrozenError):
        rec.name = "c"  # type: ignore[misc]
    lease = LeaseInfo(1, "h", "s", "t0", "t1", "tok", 7)
    assert hash(lease) == hash(lease.replace()) and lease.to_dict()["inode"] == 7
    entry = ManifestEntry("a", "user", "d", "a.md", "0" * 64, "t", "t")
    manifest = Manifest(generation=1, records=[entry])
    assert Manifest().records == [] and Manifest().records is not Manifest().records and entry.sources == []
    copied = manifest.replace(generation=2)
    assert copied.generation == 2 and manifest.generation == 1 and copied.records is manifest.records
    manifest.generation = 3  # mutable, as the commit and sync update it in place
    assert manifest != copied and manifest == manifest.replace() and pickle.loads(pickle.dumps(manifest)) == manifest
    with pytest.raises(TypeError):
        hash(manifest)
    with pytest.raises(TypeError):
        entry.replace(no_such_field=1)
    assert repr(entry).startswith("ManifestEntry(name='a', type='user',")


def test_a_log_entrys_json_is_the_dataclass_one_and_a_copy() -> None:
    """``LogEntry.to_json`` as ``dataclasses.asdict`` gave it: every field in order, then the
    summary and who; the lists and dicts copied all the way down."""
    from memory.store.history import LogEntry

    entry = LogEntry(4, "2026-12-02T10:00:00Z", "job", 3, added=["a"], merged=[{"into": "b", "from": ["c", "d"]}],
                     job_id="j-1", session_id="s-1", foreign={"adopted": ["e"]})  # fmt: skip
    doc = entry.to_json()
    assert list(doc) == [*LogEntry.__slots__, "summary", "by"]
    assert doc["summary"] == "1 added, 1 merged, 1 adopted" and doc["by"] == "session s-1 (job j-1)"
    assert doc["records"] == 3 and doc["updated"] == [] and doc["titles"] == {}
    doc["merged"][0]["from"].append("x")
    doc["foreign"]["adopted"].clear()
    assert entry.merged == [{"into": "b", "from": ["c", "d"]}] and entry.foreign == {"adopted": ["e"]}
    assert entry.replace(added=[]).summary() == "1 merged, 1 adopted" and entry.changed
