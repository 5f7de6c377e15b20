"""The three-way manifest merge: two machines' sets and their common ancestor become one set.

Pure: values in, values out, no filesystem. ``dreamd sync`` (:mod:`dreamd.sync.flow`) and the git
merge driver (:mod:`dreamd.sync.merge_driver`) both call :func:`merge_manifests`.

Record files are immutable and uniquely named, so only the manifest needs a real merge. A record
is identified by its manifest ``name``; a *version* of it is its ``(file, sha256)``. Per name:

* unchanged on one side (same version as the base) → the other side's version, including its
  deletion;
* deleted on one side and changed on the other → kept (the changed version): a merge never
  loses something one machine committed;
* the same version on both sides → that version;
* added or changed differently on both sides → both kept: the version with the smaller
  ``(sha256, file)`` keeps the name and the other is renamed ``name-2`` … The choice depends on
  the versions only, never on which side is "ours", so every machine that merges the same pair
  gets the same set; the next dream reconciles the two.

Bookkeeping is united so that no job is applied twice on any machine: ``applied_jobs`` and
``sessions_since_consolidation`` are unions, ``cursors`` take the furthest position per session,
``consolidated_at`` the latest. The result is one new generation (one more than the larger of
the two) whose ``change`` says ``actor: merge`` and what it changed relative to ``ours``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.store.manifest import (
    MAX_APPLIED_JOBS,
    MAX_CURSORS,
    MAX_SESSIONS,
    Manifest,
    ManifestEntry,
)
from memory.store.records import unique_name

OURS = "ours"
THEIRS = "theirs"
_WHOSE = {OURS: "our", THEIRS: "their"}

Version = tuple[str, str]
"""``(file, sha256)``: what distinguishes two versions of one record."""


def version(entry: ManifestEntry | None) -> Version | None:
    return None if entry is None else (entry.file, entry.sha256)


@dataclass(frozen=True)
class Renamed:
    """Both sides changed ``name`` differently: ``side``'s version now lives under ``to``."""

    name: str
    to: str
    side: str


@dataclass
class MergeResult:
    """The merged manifest and where each of its entries came from.

    ``origin`` maps every result name to ``"ours"`` or ``"theirs"``: entries from theirs name
    files this machine may not have yet (the caller fetches, validates and writes them).
    ``manifest.index_sha256`` is left empty: the index is derived and rendered by whoever
    writes the result.
    """

    manifest: Manifest
    origin: dict[str, str]
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    renamed: list[Renamed] = field(default_factory=list)

    @property
    def from_theirs(self) -> list[ManifestEntry]:
        return [e for e in self.manifest.records if self.origin[e.name] == THEIRS]


def _union(first: Sequence[str], second: Sequence[str], limit: int) -> list[str]:
    seen = set(first)
    out = list(first)
    for item in second:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out[-limit:]


def _later(a: str | None, b: str | None) -> str | None:
    if not a:
        return b or None
    if not b:
        return a
    return max(a, b)


def _cursors(ours: dict[str, int], theirs: dict[str, int]) -> dict[str, int]:
    out = dict(ours)
    for session, value in theirs.items():
        out[session] = max(value, out.get(session, 0))
    while len(out) > MAX_CURSORS:
        out.pop(next(iter(out)))
    return out


def _choose(b: ManifestEntry | None, o: ManifestEntry | None, t: ManifestEntry | None) -> list[tuple[str, ManifestEntry]]:
    """The versions of one name the merged set keeps, as ``(side, entry)``; two means a conflict."""
    vb, vo, vt = version(b), version(o), version(t)
    if vo == vt:
        return [] if o is None else [(OURS, o)]
    if vo == vb:  # ours untouched: theirs' change wins, a deletion included
        return [] if t is None else [(THEIRS, t)]
    if vt == vb:
        return [] if o is None else [(OURS, o)]
    # Both sides did something different since the base.
    if o is None:
        return [(THEIRS, t)] if t is not None else []
    if t is None:
        return [(OURS, o)]
    return [(OURS, o), (THEIRS, t)]


def merge_manifests(base: Manifest | None, ours: Manifest, theirs: Manifest, *, now: str, note: str = "") -> MergeResult:
    """Merge ``theirs`` into ``ours`` given their common ancestor ``base`` (None: unrelated).

    ``now`` is the result's ``committed_at``. Raises nothing: every input combination has a
    result, and every version either side committed since the base is in it or was deleted by
    the other side while this side left it untouched.
    """
    b_by = base.by_name() if base is not None else {}
    o_by = ours.by_name()
    t_by = theirs.by_name()

    kept: dict[str, tuple[str, ManifestEntry]] = {}
    conflicts: list[tuple[str, tuple[str, ManifestEntry], tuple[str, ManifestEntry]]] = []
    for name in sorted(set(o_by) | set(t_by)):
        chosen = _choose(b_by.get(name), o_by.get(name), t_by.get(name))
        if len(chosen) == 1:
            kept[name] = chosen[0]
        elif len(chosen) == 2:
            first, second = sorted(chosen, key=lambda c: (c[1].sha256, c[1].file))
            kept[name] = first
            conflicts.append((name, first, second))

    taken = set(o_by) | set(t_by) | set(b_by)
    renamed: list[Renamed] = []
    extra_names: list[str] = []
    for name, _first, (side, entry) in conflicts:
        new_name = unique_name(name, taken)  # name is taken: always suffixed
        taken.add(new_name)
        kept[new_name] = (side, entry.replace(name=new_name, sources=[*entry.sources, f"merge:{name}"]))
        renamed.append(Renamed(name=name, to=new_name, side=side))
        extra_names.append(new_name)

    order = [e.name for e in ours.records] + [e.name for e in theirs.records] + extra_names
    records: list[ManifestEntry] = []
    origin: dict[str, str] = {}
    seen_versions: set[Version] = set()
    for name in order:
        if name in origin or name not in kept:
            continue
        side, entry = kept[name]
        v = (entry.file, entry.sha256)
        if v in seen_versions:
            # One file under two names (both sides re-keyed it): one entry is enough.
            continue
        seen_versions.add(v)
        records.append(entry)
        origin[name] = side

    added = [n for n in origin if n not in o_by]
    updated = [n for n in origin if n in o_by and version(o_by[n]) != version(kept[n][1])]
    removed = [n for n in o_by if n not in origin]
    change: dict[str, Any] = {"actor": "merge", "added": added, "updated": updated, "removed": removed}
    if renamed:
        change["renamed"] = [dataclasses.asdict(r) for r in renamed]
    parts = [note] if note else []
    parts += [f"both sides changed {r.name}: {_WHOSE[r.side]} version kept as {r.to}" for r in renamed]
    if parts:
        change["note"] = "; ".join(parts)
    change["merged_generations"] = {"ours": ours.generation, "theirs": theirs.generation, "base": base.generation if base else None}

    extra = dict(theirs.extra)
    extra.update(ours.extra)
    manifest = Manifest(
        generation=max(ours.generation, theirs.generation) + 1,
        committed_at=now,
        consolidated_at=_later(ours.consolidated_at, theirs.consolidated_at),
        records=records,
        applied_jobs=_union(ours.applied_jobs, theirs.applied_jobs, MAX_APPLIED_JOBS),
        sessions_since_consolidation=_union(
            ours.sessions_since_consolidation, theirs.sessions_since_consolidation, MAX_SESSIONS
        ),
        cursors=_cursors(ours.cursors, theirs.cursors),
        index_sha256="",
        change=change,
        extra=extra,
    )
    return MergeResult(
        manifest=manifest, origin=origin, added=added, updated=updated, removed=removed, renamed=renamed
    )


__all__ = ["OURS", "THEIRS", "MergeResult", "Renamed", "merge_manifests", "version"]
