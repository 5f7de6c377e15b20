"""The three-way manifest merge (memory.store.merge): the rules of issue 12, case by case and as properties."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.store.manifest import Manifest, ManifestEntry
from memory.store.merge import merge_manifests

NOW = "2026-11-30T12:00:00Z"


def entry(name: str, content: str = "", *, file: str | None = None) -> ManifestEntry:
    sha = hashlib.sha256((content or name).encode()).hexdigest()
    return ManifestEntry(
        name=name,
        type="project",
        description=f"about {name}",
        file=file or f"{name}-{sha[:10]}.md",
        sha256=sha,
        created_at="2026-11-01T00:00:00Z",
        updated_at="2026-11-01T00:00:00Z",
        sources=["manual"],
    )


def manifest(*entries: ManifestEntry, generation: int = 1, **kw: object) -> Manifest:
    return Manifest(generation=generation, committed_at="2026-11-01T00:00:00Z", records=list(entries), **kw)  # type: ignore[arg-type]


def view(m: Manifest) -> dict[str, tuple[str, str]]:
    return {e.name: (e.file, e.sha256) for e in m.records}


def test_a_change_on_one_side_is_taken_when_the_other_side_left_the_record_alone() -> None:
    base = manifest(entry("a", "v1"), entry("b"))
    ours = manifest(entry("a", "v1"), entry("b"))
    theirs = manifest(entry("a", "v2"), entry("b"))
    result = merge_manifests(base, ours, theirs, now=NOW)
    assert view(result.manifest) == view(theirs)
    assert result.updated == ["a"] and result.added == [] and result.removed == []
    assert result.origin == {"a": "theirs", "b": "ours"}


def test_our_change_survives_when_theirs_left_the_record_alone() -> None:
    base = manifest(entry("a", "v1"))
    result = merge_manifests(base, manifest(entry("a", "v2")), manifest(entry("a", "v1")), now=NOW)
    assert view(result.manifest) == view(manifest(entry("a", "v2")))
    assert result.updated == [] and result.origin == {"a": "ours"}


def test_deleted_on_one_side_and_untouched_on_the_other_is_deleted() -> None:
    base = manifest(entry("a"), entry("b"))
    result = merge_manifests(base, manifest(entry("a"), entry("b")), manifest(entry("b")), now=NOW)
    assert set(view(result.manifest)) == {"b"}
    assert result.removed == ["a"]
    mirrored = merge_manifests(base, manifest(entry("b")), manifest(entry("a"), entry("b")), now=NOW)
    assert set(view(mirrored.manifest)) == {"b"} and mirrored.removed == []


def test_deleted_on_one_side_and_changed_on_the_other_is_kept_changed() -> None:
    base = manifest(entry("a", "v1"))
    changed = entry("a", "v2")
    for ours, theirs in ((manifest(), manifest(changed)), (manifest(changed), manifest())):
        result = merge_manifests(base, ours, theirs, now=NOW)
        assert view(result.manifest) == {"a": (changed.file, changed.sha256)}


def test_same_name_changed_differently_on_both_sides_keeps_both_one_renamed() -> None:
    base = manifest(entry("a", "v1"))
    mine, yours = entry("a", "mine"), entry("a", "yours")
    result = merge_manifests(base, manifest(mine), manifest(yours), now=NOW)
    got = view(result.manifest)
    assert set(got) == {"a", "a-2"}
    assert set(got.values()) == {(mine.file, mine.sha256), (yours.file, yours.sha256)}
    assert len(result.renamed) == 1 and result.renamed[0].name == "a" and result.renamed[0].to == "a-2"
    assert "both sides changed a" in result.manifest.change["note"]
    renamed = next(e for e in result.manifest.records if e.name == "a-2")
    assert "merge:a" in renamed.sources


def test_same_name_added_on_both_sides_keeps_both() -> None:
    result = merge_manifests(None, manifest(entry("x", "one")), manifest(entry("x", "two")), now=NOW)
    assert len(result.manifest.records) == 2


def test_which_version_keeps_the_name_does_not_depend_on_the_side() -> None:
    base = manifest(entry("a", "v1"))
    mine, yours = entry("a", "mine"), entry("a", "yours")
    one = merge_manifests(base, manifest(mine), manifest(yours), now=NOW)
    two = merge_manifests(base, manifest(yours), manifest(mine), now=NOW)
    assert view(one.manifest) == view(two.manifest)


def test_renaming_never_takes_a_name_either_side_uses() -> None:
    base = manifest(entry("a", "v1"))
    ours = manifest(entry("a", "mine"), entry("a-2", "other"))
    theirs = manifest(entry("a", "yours"), entry("a-2", "other"))
    result = merge_manifests(base, ours, theirs, now=NOW)
    assert set(view(result.manifest)) == {"a", "a-2", "a-3"}


def test_identical_changes_on_both_sides_merge_to_one() -> None:
    base = manifest(entry("a", "v1"))
    same = entry("a", "v2")
    result = merge_manifests(base, manifest(same, entry("n")), manifest(same, entry("n")), now=NOW)
    assert view(result.manifest) == view(manifest(same, entry("n")))
    assert result.renamed == []


def test_bookkeeping_is_united_and_generation_moves_past_both() -> None:
    base = manifest(generation=3, applied_jobs=["j1"], cursors={"s1": 5})
    ours = manifest(generation=7, applied_jobs=["j1", "j2"], cursors={"s1": 9, "s2": 1},
                    sessions_since_consolidation=["s1"], consolidated_at="2026-11-02T00:00:00Z")
    theirs = manifest(generation=5, applied_jobs=["j1", "j3"], cursors={"s1": 7, "s3": 4},
                      sessions_since_consolidation=["s3"], consolidated_at="2026-11-03T00:00:00Z",
                      extra={"paused": {"reason": "x"}})
    m = merge_manifests(base, ours, theirs, now=NOW).manifest
    assert m.generation == 8
    assert m.applied_jobs == ["j1", "j2", "j3"]
    assert m.cursors == {"s1": 9, "s2": 1, "s3": 4}
    assert m.sessions_since_consolidation == ["s1", "s3"]
    assert m.consolidated_at == "2026-11-03T00:00:00Z"
    assert m.committed_at == NOW and m.change["actor"] == "merge"
    assert m.change["merged_generations"] == {"ours": 7, "theirs": 5, "base": 3}
    assert m.extra == {"paused": {"reason": "x"}}


def test_merged_manifest_round_trips_through_the_manifest_parser() -> None:
    base = manifest(entry("a", "v1"))
    result = merge_manifests(base, manifest(entry("a", "m")), manifest(entry("a", "t"), entry("b")), now=NOW)
    again = Manifest.loads(result.manifest.dumps(), where="merged")
    assert view(again) == view(result.manifest)
    assert again.change["actor"] == "merge"


# ----------------------------------------------------------------------------- properties

NAMES = ["a", "b", "c", "d"]
CONTENTS = ["1", "2", "3"]


@st.composite
def sides(draw: st.DrawFn) -> tuple[Manifest, Manifest, Manifest]:
    def one() -> Manifest:
        chosen = draw(st.dictionaries(st.sampled_from(NAMES), st.sampled_from(CONTENTS), max_size=4))
        return manifest(*(entry(n, n + c) for n, c in sorted(chosen.items())))

    base = one()

    def derive() -> Manifest:
        if draw(st.booleans()):
            return base
        return one()

    return base, derive(), derive()


@settings(max_examples=300, deadline=None)
@given(sides())
def test_nothing_either_side_committed_since_the_base_is_lost(case: tuple[Manifest, Manifest, Manifest]) -> None:
    base, ours, theirs = case
    result = merge_manifests(base, ours, theirs, now=NOW).manifest
    versions = {(e.file, e.sha256) for e in result.records}
    b = view(base)
    for side, other in ((ours, theirs), (theirs, ours)):
        o = view(other)
        for e in side.records:
            v = (e.file, e.sha256)
            if b.get(e.name) == v:
                continue  # untouched here: the other side may have changed or deleted it
            assert v in versions, f"{e.name} {v} lost"
        for name, bv in b.items():
            # a deletion on one side wins only over a side that left the record untouched
            if name not in view(side) and o.get(name) not in (None, bv):
                assert o[name] in versions


@settings(max_examples=300, deadline=None)
@given(sides())
def test_merge_is_symmetric_in_its_record_set(case: tuple[Manifest, Manifest, Manifest]) -> None:
    base, ours, theirs = case
    one = merge_manifests(base, ours, theirs, now=NOW).manifest
    two = merge_manifests(base, theirs, ours, now=NOW).manifest
    assert view(one) == view(two)


@settings(max_examples=200, deadline=None)
@given(sides())
def test_merge_with_an_untouched_side_is_the_other_side(case: tuple[Manifest, Manifest, Manifest]) -> None:
    base, ours, _ = case
    assert view(merge_manifests(base, ours, base, now=NOW).manifest) == view(ours)
    assert view(merge_manifests(base, base, ours, now=NOW).manifest) == view(ours)
    assert view(merge_manifests(base, ours, ours, now=NOW).manifest) == view(ours)


@settings(max_examples=200, deadline=None)
@given(sides())
def test_merged_names_are_unique_and_valid(case: tuple[Manifest, Manifest, Manifest]) -> None:
    base, ours, theirs = case
    m = merge_manifests(base, ours, theirs, now=NOW).manifest
    names = [e.name for e in m.records]
    assert len(names) == len(set(names))
    Manifest.loads(m.dumps(), where="merged")
