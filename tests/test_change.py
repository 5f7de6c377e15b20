"""What a commit changes, as a pure function of the set, the change and the time (memory.store.change).

The store's own tests drive these rules through a directory; here they are pinned without one,
which is what separating them from the commit protocol was for.
"""

from __future__ import annotations

from memory.store.change import Change, apply_change, touched_files
from memory.store.layout import OUR_FILE_RE
from memory.store.manifest import Manifest, ManifestEntry
from memory.store.records import make_record, sha256_hex

NOW = "2026-11-30T12:00:00Z"


def _entry(name: str, *, created: str, sources: list[str], title: str | None = None) -> ManifestEntry:
    return ManifestEntry(
        name=name,
        type="project",
        description=f"about {name}",
        file=f"{name}.md",
        sha256="0" * 64,
        created_at=created,
        updated_at=created,
        sources=sources,
        extra={"title": title} if title else {},
    )


def test_a_colliding_add_gets_a_suffix_and_a_replace_keeps_its_history() -> None:
    old = Manifest(records=[_entry("deploy", created="2026-01-01T00:00:00Z", sources=["job:a"], title="Deploy notes")])
    change = Change(
        add=[make_record("deploy", "project", "a second deploy note", "body")],
        replace={"deploy": make_record("deploy", "project", "deploy on Fridays", "body")},
        actor="job",
        job_id="j1",
        session_id="s1",
    )
    pending = apply_change(old, change, now=NOW)
    by_name = {e.name: e for e in pending.entries}
    assert [e.name for e in pending.entries] == ["deploy", "deploy-2"]
    kept = by_name["deploy"]
    assert (kept.created_at, kept.updated_at, kept.title) == ("2026-01-01T00:00:00Z", NOW, "Deploy notes")
    assert kept.sources == ["job:a", "session:s1", "job:j1"]
    assert by_name["deploy-2"].created_at == NOW
    assert pending.change == {"actor": "job", "added": ["deploy-2"], "updated": ["deploy"], "removed": [], "job_id": "j1", "session_id": "s1"}
    files = dict(pending.files)
    assert len(files) == 2 and all(OUR_FILE_RE.match(f) for f in files)
    assert {e.sha256 for e in pending.entries} == {sha256_hex(data) for data in files.values()}


def test_a_merge_inherits_the_earliest_date_and_every_source_once() -> None:
    old = Manifest(
        records=[
            _entry("tabs", created="2026-03-01T00:00:00Z", sources=["job:a", "session:x"]),
            _entry("indent", created="2026-02-01T00:00:00Z", sources=["session:x", "job:b"]),
            _entry("other", created="2026-01-01T00:00:00Z", sources=["manual"]),
        ]
    )
    merged = make_record("tabs", "feedback", "indent with tabs", "body")
    change = Change(merges=[(["tabs", "indent"], merged)], actor="dream", sources=["dream:1"])
    pending = apply_change(old, change, now=NOW)
    assert [e.name for e in pending.entries] == ["tabs", "other"]  # a kept name keeps its place
    tabs = pending.entries[0]
    assert tabs.created_at == "2026-02-01T00:00:00Z"
    assert tabs.sources == ["job:a", "session:x", "job:b", "dream:1"]
    assert pending.change["updated"] == ["tabs"] and pending.change["removed"] == ["indent"]
    assert pending.change["merged"] == [{"from": ["tabs", "indent"], "into": "tabs"}]
    assert touched_files(old, change) == {"tabs.md", "indent.md"}


def test_a_change_that_touches_nothing_checks_no_file() -> None:
    old = Manifest(records=[_entry("a", created=NOW, sources=["manual"])])
    assert touched_files(old, Change(add=[make_record("b", "user", "b", "body")])) == set()
