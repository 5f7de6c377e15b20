"""Doctor's secret scan keeps its verdicts by content hash (issue 20: redacting every record was
most of doctor's own start-up): a file it judged is not redacted again, a changed file or a new
redactor is, and the cache never holds a secret or is written through a link."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import memory.redact
from dreamd.cli.doctor import OK, WARN, check_secrets
from dreamd.status import secrets as scan
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore

SECRET = "Pz8!mQ4wLr2"
WITH_SECRET = f"---\nname: staging-access\ndescription: staging db\ntype: reference\n---\n\nThe password for staging is {SECRET} (rotated monthly).\n"


def _set(tmp_path: Path) -> Path:
    directory = tmp_path / "mem"
    store = MemoryStore.init(directory)
    store.commit(Change(add=[make_record(f"n{i}", "project", f"note {i}", f"Use tabs {i}.") for i in range(4)]))
    (directory / "handwritten.md").write_text(WITH_SECRET, encoding="utf-8")
    return directory


def _redactions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    original = memory.redact.redact

    def counting(text: str) -> tuple[str, list[str]]:
        calls.append(text)
        return original(text)

    monkeypatch.setattr(memory.redact, "redact", counting)
    return calls


def test_a_second_scan_redacts_nothing_and_reports_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = _set(tmp_path)
    cache = tmp_path / "cache" / "dreamd" / scan.CACHE_NAME
    first = check_secrets([directory], cache=cache)
    assert first.status == WARN and "handwritten.md (password)" in first.detail
    assert cache.is_file() and cache.stat().st_mode & 0o777 == 0o600
    assert SECRET not in cache.read_text(encoding="utf-8")  # hashes and kind names only
    calls = _redactions(monkeypatch)
    assert check_secrets([directory], cache=cache) == first
    assert calls == []


def test_a_changed_file_and_a_new_redactor_are_scanned_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = _set(tmp_path)
    cache = tmp_path / "cache" / "dreamd" / scan.CACHE_NAME
    check_secrets([directory], cache=cache)
    (directory / "handwritten.md").write_text(WITH_SECRET.replace(SECRET, "a secret I will not write"), encoding="utf-8")
    calls = _redactions(monkeypatch)
    assert check_secrets([directory], cache=cache).status == OK
    assert len(calls) == 1  # only the edited file
    calls.clear()
    monkeypatch.setattr(scan, "redactor_version", lambda: "another redactor")
    assert check_secrets([directory], cache=cache).status == OK
    assert calls == []  # the redactor's sources are as they were: its version is the one kept
    stamp = scan.source_stamp()
    assert stamp is not None and stamp == json.loads(cache.read_bytes())["sources"]
    edited = [[*entry[:3], int(entry[3]) + 1, entry[4]] for entry in stamp]  # a new ctime: edited or replaced
    monkeypatch.setattr(scan, "source_stamp", lambda: edited)
    assert check_secrets([directory], cache=cache).status == OK
    assert len(calls) == 6  # every file, and the one name not of dreamd's: another redactor's verdicts
    assert json.loads(cache.read_bytes())["redactor"] == "another redactor"
    assert json.loads(cache.read_bytes())["sources"] == edited


def test_the_redactors_sources_are_hashed_only_when_their_stamp_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hashing ``memory/redact``'s ~140 KB was ~7 M instructions of every doctor (issue 20)."""
    directory = _set(tmp_path)
    cache = tmp_path / "cache" / "dreamd" / scan.CACHE_NAME
    hashed: list[str | None] = []
    real = scan.redactor_version

    def counting() -> str | None:
        hashed.append(real())
        return hashed[-1]

    monkeypatch.setattr(scan, "redactor_version", counting)
    first = check_secrets([directory], cache=cache)
    assert len(hashed) == 1 and hashed[0] is not None and json.loads(cache.read_bytes())["redactor"] == hashed[0]
    assert check_secrets([directory], cache=cache) == first and len(hashed) == 1
    monkeypatch.setattr(scan, "source_stamp", lambda: None)  # sources that cannot be listed: hashed
    assert check_secrets([directory], cache=cache) == first and len(hashed) == 2


def test_a_name_verdict_is_kept_by_hash_and_never_the_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = _set(tmp_path)
    token = "ghp_" + "Tn6Aa2Bb8Rb4Yc7Hd2Jf9Lm5Sx0Wv3Kp8Qz1"
    (directory / f"ci-{token}.md").write_text("---\ndescription: ci\ntype: reference\n---\n\nci\n", encoding="utf-8")
    cache = tmp_path / "cache" / "dreamd" / scan.CACHE_NAME
    first = check_secrets([directory], cache=cache)
    assert "whose name holds one (github-token)" in first.detail and token[4:12] not in first.detail
    assert token[4:12] not in cache.read_text(encoding="utf-8")
    calls = _redactions(monkeypatch)
    assert check_secrets([directory], cache=cache) == first
    assert calls == []


def test_the_cache_is_never_written_through_a_link(tmp_path: Path) -> None:
    directory = _set(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "dreamd").symlink_to(elsewhere)
    assert check_secrets([directory], cache=tmp_path / "cache" / "dreamd" / scan.CACHE_NAME).status == WARN
    assert list(elsewhere.iterdir()) == []


def test_a_bad_cache_file_is_ignored(tmp_path: Path) -> None:
    directory = _set(tmp_path)
    cache = tmp_path / "cache" / "dreamd" / scan.CACHE_NAME
    cache.parent.mkdir(parents=True)
    for bad in (b"{not json", b"[]", json.dumps({"format": 1, "redactor": scan.redactor_version(), "verdicts": []}).encode()):
        cache.write_bytes(bad)
        assert check_secrets([directory], cache=cache).status == WARN


def test_doctor_keeps_the_cache_under_xdg_cache_home(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert scan.cache_path(env) == tmp_path / "xdg" / "dreamd" / scan.CACHE_NAME
    assert scan.cache_path({"HOME": str(tmp_path / "home")}) == tmp_path / "home" / ".cache" / "dreamd" / scan.CACHE_NAME
    assert check_secrets([], cache=scan.cache_path(env)).status == OK
