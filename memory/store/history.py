"""History: what changed, when and by what (``dreamd log``), and undoing it (``dreamd rollback``).

Every manifest carries a ``change`` summary; ``.history/`` keeps the last N manifests and the
files they referenced, so the log is read straight from them and a rollback is an ordinary new
commit whose set equals an old one (it never rewinds the generation counter, and jobs already
applied stay applied).
"""

from __future__ import annotations

import glob
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from memory.errors import StoreError
from memory.fsutil import file_kind, open_checked, open_regular, read_regular_or_none
from memory.store.layout import (
    HISTORY,
    MAX_MANIFEST_BYTES,
    MAX_RECORD_FILE_BYTES,
    ORPHAN_PREFIX,
    history_manifest_name,
    record_file_name,
)
from memory.store.locks import store_lock
from memory.store.manifest import Manifest, ManifestEntry
from memory.store.records import sha256_hex, unique_name
from memory.store.transaction import MemoryStore
from memory.values import FrozenValue

TYPE_CHECKING = False  # not typing.TYPE_CHECKING (same value): see the rest of memory.store
if TYPE_CHECKING:
    from typing import Any

    from memory.store.change import CommitResult


class LogEntry(FrozenValue):
    """One generation as ``dreamd log`` shows it (a :class:`~memory.values.FrozenValue`, not a
    dataclass: ``dreamd log`` imports no dataclasses, issue 20).

    ``records``: how many records the generation holds; None in :func:`summary_entries` for
    generations before the current one (counting them would mean parsing their whole record
    list). ``foreign``: what the commit took in that others did: ``adopted``, ``updated`` (hand
    edits) and ``dropped`` (hand deletions) record names. ``titles``: frontmatter names of the
    records named above whose files call them otherwise (``feedback_db_tests`` →
    ``feedback-db-tests``), so the log reads with either name. The lists and dicts not given
    are new empty ones."""

    __slots__ = (  # noqa: RUF023 (field order)
        "generation", "committed_at", "actor", "records", "added", "updated", "removed", "merged", "job_id",
        "session_id", "note", "foreign", "index_archived", "titles",
    )  # fmt: skip
    generation: int
    committed_at: str
    actor: str
    records: int | None
    added: list[str]
    updated: list[str]
    removed: list[str]
    merged: list[dict[str, Any]]
    job_id: str | None
    session_id: str | None
    note: str | None
    foreign: dict[str, list[str]]
    index_archived: str | None
    titles: dict[str, str]

    def __init__(
        self,
        generation: int,
        committed_at: str,
        actor: str,
        records: int | None,
        added: list[str] | None = None,
        updated: list[str] | None = None,
        removed: list[str] | None = None,
        merged: list[dict[str, Any]] | None = None,
        job_id: str | None = None,
        session_id: str | None = None,
        note: str | None = None,
        foreign: dict[str, list[str]] | None = None,
        index_archived: str | None = None,
        titles: dict[str, str] | None = None,
    ) -> None:
        self.set_fields(
            generation=generation, committed_at=committed_at, actor=actor, records=records,
            added=[] if added is None else added, updated=[] if updated is None else updated,
            removed=[] if removed is None else removed, merged=[] if merged is None else merged,
            job_id=job_id, session_id=session_id, note=note, foreign={} if foreign is None else foreign,
            index_archived=index_archived, titles={} if titles is None else titles,
        )  # fmt: skip

    @property
    def changed(self) -> bool:
        """Whether the generation changed the set (a record, a merge, what others did, an index
        kept); generations written before bookkeeping commits were made in place may not."""
        return bool(
            self.added or self.updated or self.removed or self.merged
            or any(self.foreign.values()) or self.index_archived
        )  # fmt: skip

    def summary(self) -> str:
        """What changed, in words: ``2 added, 1 updated`` (``no record changed``)."""
        parts = [
            f"{len(names)} {verb}"
            for verb, names in (
                ("added", self.added), ("updated", self.updated),
                ("merged", [m for m in self.merged if m.get("into") and not m.get("superseded")]),
                ("superseded", [m for m in self.merged if m.get("into") and m.get("superseded")]),
                ("dropped", [m for m in self.merged if not m.get("into")]),
                ("removed", self._removed_only()),
                ("adopted", self.foreign.get("adopted", [])), ("edited by hand", self.foreign.get("updated", [])),
                ("deleted by hand", self.foreign.get("dropped", [])),
            )
            if names
        ]  # fmt: skip
        return ", ".join(parts) or "no record changed"

    def _removed_only(self) -> list[str]:
        merged_sources = {s for m in self.merged for s in m.get("from", [])}
        return [n for n in self.removed if n not in merged_sources]

    def who(self) -> str:
        """Who made it, in words: the session a job extracted, a dream, a command, an MCP client."""
        if self.actor == "job":
            who = f"session {self.session_id}" if self.session_id else "a queued job"
            return who + (f" (job {self.job_id})" if self.job_id else "")
        words = {
            "dream": "a dream", "manual": "a command", "session": "an agent", "adopted": "adoption",
            "reconcile": "reconcile", "rollback": "a rollback", "init": "init",
        }  # fmt: skip
        who = words.get(self.actor, self.actor)
        return who + (f" of session {self.session_id}" if self.session_id and self.actor != "job" else "")

    def to_json(self) -> dict[str, Any]:
        return {**_plain(self.to_dict()), "summary": self.summary(), "by": self.who()}


def _plain(value: Any) -> Any:
    """``value`` with every list and dict copied, all the way down (``dataclasses.asdict``'s copy)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def log_entry(m: Manifest) -> LogEntry:
    """What ``dreamd log`` says of generation ``m`` (its manifest's ``change``, with the titles of the files it named)."""
    c = m.change
    foreign = _foreign(c)
    named = {str(n) for key in ("added", "updated") for n in c.get(key, [])} | {n for v in foreign.values() for n in v}
    titles = {e.name: e.title for e in m.records if e.title and e.name in named}
    return _entry_of(m.generation, m.committed_at, len(m.records), c, titles)


def _foreign(c: dict[str, Any]) -> dict[str, list[str]]:
    return {str(k): [str(n) for n in v] for k, v in (c.get("foreign") or {}).items() if isinstance(v, list)}


def _entry_of(
    generation: int, committed_at: str, records: int | None, c: dict[str, Any], titles: dict[str, str]
) -> LogEntry:
    return LogEntry(
        generation=generation,
        committed_at=committed_at,
        actor=str(c.get("actor", "unknown")),
        records=records,
        added=list(c.get("added", [])),
        updated=list(c.get("updated", [])),
        removed=list(c.get("removed", [])),
        merged=list(c.get("merged", [])),
        job_id=c.get("job_id"),
        session_id=c.get("session_id"),
        note=c.get("note"),
        foreign=_foreign(c),
        index_archived=c.get("index_archived"),
        titles=titles,
    )


def log_entries(store: MemoryStore, *, limit: int | None = None, every: bool = False) -> list[LogEntry]:
    """Generations that changed the set, newest first, as far back as ``.history/`` keeps them.

    A generation that changed no record (a cursor-only commit of a store written before those
    were made in place, DESIGN §3) is passed over unless ``every``; the current one and
    generation 0 are always shown, so the log never reads empty.
    """
    current = store.read()
    out = [log_entry(current)]
    for gen in reversed(store.history_manifests()):
        if gen >= current.generation:
            continue
        if limit is not None and len(out) >= limit:
            break
        try:
            entry = log_entry(store.read_generation(gen))
        except StoreError:
            continue
        if every or entry.changed or entry.generation == 0 or entry.actor in ("init", "rollback"):
            out.append(entry)
    return out[:limit] if limit is not None else out


TAIL_BYTES = 16 * 1024
"""How much of an archived manifest's end :func:`read_change` reads first. dreamd writes
``change`` after the record list, followed only by bounded bookkeeping (``extracted_ids``, at
most about 60 KB), so one or two reads of the tail find it at any set size; the window grows
(×8) until it does."""

_HEAD = re.compile(
    rb'\s*\{\s*"format"\s*:\s*(-?\d+)\s*,\s*"generation"\s*:\s*(\d+)\s*'
    rb'(?:,\s*"committed_at"\s*:\s*"([0-9A-Za-z:.+-]{1,64})"\s*)?[,}]'
)
_CHANGE = b'"change"'
_WS = b" \t\r\n"
_DECODER = json.JSONDecoder()


class Unreadable(FrozenValue):
    """An archived manifest the history readers passed over, and why."""

    __slots__ = ("generation", "reason")
    generation: int
    reason: str

    def __init__(self, generation: int, reason: str) -> None:
        self.set_fields(generation=generation, reason=reason)


def read_change(path: Path) -> tuple[int, dict[str, Any]]:
    """``(generation, change)`` of one manifest file, without reading its record list
    (:func:`read_summary` without the commit time)."""
    generation, _, change = read_summary(path)
    return generation, change


def read_summary(path: Path) -> tuple[int, str | None, dict[str, Any]]:
    """``(generation, committed_at, change)`` of one manifest file, without reading its record list.

    The fast path reads the head (``format``, ``generation``, in the order dreamd writes them)
    and the tail, and takes the last top-level ``"change"`` key found there: a match counts
    only if it follows ``{`` or ``,`` (inside a JSON string a quote follows a backslash), its
    value is JSON, and what follows the value closes the outermost object exactly, which no
    key nested deeper can do. A file written otherwise (keys reordered, a person's
    pretty-printing) is parsed whole, as :meth:`Manifest.loads` does. StoreError for a file
    that is missing, not JSON or not a format-1 manifest (the same words ``Manifest.loads``
    uses). The record list is not validated on the fast path: the commit's own summary is
    whole even if a record entry were not.
    """
    where = str(path)
    try:
        # The checks of every read (fsutil): no link, FIFO or device, this user's file, at most
        # the manifest cap on ``fstat`` (the tail window grows to the whole file when it finds
        # no ``change``, so the cap bounds the fast path as well).
        fd, _ = open_checked(path, max_bytes=MAX_MANIFEST_BYTES)
        with open(fd, "rb", buffering=0) as f:
            head = f.read(256)
            m = _HEAD.match(head)
            if m is not None:
                fmt, generation = int(m.group(1)), int(m.group(2))
                committed = m.group(3).decode("ascii") if m.group(3) else None
                if fmt != 1:
                    raise StoreError(f"{where}: unsupported manifest format {fmt!r}")
                size = f.seek(0, 2)
                window = TAIL_BYTES
                while True:
                    start = max(0, size - window)
                    f.seek(start)
                    found = _change_in(f.read(size - start))
                    if found is not None:
                        return generation, committed, found
                    if start == 0:
                        break
                    window *= 8
            f.seek(0)
            data = f.read(MAX_MANIFEST_BYTES + 1)
    except FileNotFoundError:
        raise StoreError(f"{where}: manifest is gone (pruned meanwhile)") from None
    except OSError as exc:
        raise StoreError(f"{where}: cannot read manifest ({exc})") from None
    if len(data) > MAX_MANIFEST_BYTES:
        raise StoreError(f"{where}: grew over the {MAX_MANIFEST_BYTES}-byte limit while read; not read")
    manifest = Manifest.loads(data, where=where)
    return manifest.generation, manifest.committed_at, manifest.change


def _change_in(buf: bytes) -> dict[str, Any] | None:
    """The value of the outermost object's last ``"change"`` key in ``buf`` (the end of a
    manifest), or None when ``buf`` does not show one.

    A key is a quote that follows ``{`` or ``,`` (whitespace between): inside a JSON string a
    quote is always escaped, so it follows a backslash, and a match whose start the window cut
    off is not taken (the caller reads more).
    """
    hi = len(buf)
    while (p := buf.rfind(_CHANGE, 0, hi)) >= 0:
        hi = p
        colon = p + len(_CHANGE)
        while colon < len(buf) and buf[colon] in _WS:
            colon += 1
        i = p - 1
        while i >= 0 and buf[i] in _WS:
            i -= 1
        if buf[colon : colon + 1] != b":" or i < 0 or buf[i] not in b"{,":
            continue
        try:
            text = buf[colon + 1 :].decode("utf-8")
            value, end = _DECODER.raw_decode(text, len(text) - len(text.lstrip()))
            rest = text[end:].lstrip()
            if rest.startswith(","):
                others = "{" + rest[1:]
                tail, end = _DECODER.raw_decode(others)
                closes = isinstance(tail, dict) and not others[end:].strip()
            else:
                closes = rest.startswith("}") and not rest[1:].strip()
        except (ValueError, RecursionError):
            continue
        if closes:
            return value if isinstance(value, dict) else {}
    return None


def change_summaries(
    store: MemoryStore, *, unreadable: list[Unreadable] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(generation, change)``, newest first: the current manifest's, then each one ``.history/``
    keeps. Cheap where :func:`log_entries` is not: no record list is read or validated
    (:func:`read_change`), and a caller that has its answer stops reading. A manifest that
    cannot be read is passed over, as :func:`log_entries` passes over it, and appended to
    ``unreadable`` when given."""
    current = store.snapshot()
    yield current.generation, current.change
    hist = store.path / HISTORY
    kept = store.history_manifests()
    cache = store.archive.changes  # kept manifests never change: each is read once per store
    if len(cache) > 2 * len(kept) + 64:  # drop what pruning removed
        for gone in set(cache) - set(kept):
            del cache[gone]
    for gen in reversed(kept):
        if gen >= current.generation:
            continue
        summary = cache.get(gen)
        if summary is None:
            try:
                summary = read_change(hist / history_manifest_name(gen))
            except StoreError as exc:
                if unreadable is not None:
                    unreadable.append(Unreadable(gen, str(exc)))
                continue
            cache[gen] = summary
        yield summary


def summary_entries(store: MemoryStore, *, limit: int | None = None) -> list[LogEntry]:
    """:func:`log_entries` without parsing any record list but the current one (what a page
    of history needs at any set size): each older generation's entry comes from the head and
    the ``change`` of its manifest (:func:`read_summary`); its ``records`` count is None and
    its ``titles`` empty. Unreadable manifests are passed over, as :func:`log_entries` does."""
    current = store.snapshot()
    out = [log_entry(current)]
    hist = store.path / HISTORY
    for gen in reversed(store.history_manifests()):
        if limit is not None and len(out) >= limit:
            break
        if gen >= current.generation:
            continue
        try:
            generation, committed, change = read_summary(hist / history_manifest_name(gen))
        except StoreError:
            continue
        out.append(_entry_of(generation, committed or "", None, change, {}))
    return out[:limit] if limit is not None else out


def _names(value: Any) -> list[str]:
    return [str(n) for n in value] if isinstance(value, list) else []


_Merges = list[tuple[list[str], str | None]]


def _merges(change: dict[str, Any]) -> _Merges:
    out: _Merges = []
    for m in _dicts(change.get("merged")):
        into = m.get("into")
        out.append((_names(m.get("from")), into if isinstance(into, str) else None))
    return out


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []


def follow_merges(changes: Iterable[tuple[int, dict[str, Any]]], name: str) -> str | None:
    """Where the fact of ``name`` went, from change summaries newest first (what
    :func:`change_summaries` yields): the name of the record a dream merged it into, following
    later merges of that record (A→B, then B→C: C); None when a dream dropped it or a result
    on its way, when its last departure was not a merge (a forget, a hand deletion), or when
    the history kept says nothing about it. Whether the answer is still live is the caller's
    question.

    Reads only as far back as the generation that merged ``name`` away.
    """
    newer: list[_Merges] = []  # merges of later generations, newest first
    for _, change in changes:
        merges = _merges(change)
        for i, (sources, into) in enumerate(merges):
            if name in sources and into != name:
                return _forward(into, [merges[i + 1 :], *reversed(newer)])
        foreign = change.get("foreign")
        departed = _names(change.get("removed")) + _names(foreign.get("dropped") if isinstance(foreign, dict) else None)
        if name in departed:
            return None  # removed, not merged: nothing to point at
        newer.append(merges)
    return None


def _forward(target: str | None, later: list[_Merges]) -> str | None:
    for merges in later:
        for sources, into in merges:
            if target is None:
                return None
            if target in sources and into != target:
                target = into
    return target


def render_log(entries: list[LogEntry]) -> str:
    lines = []
    for e in entries:

        def label(name: str, e: LogEntry = e) -> str:
            title = e.titles.get(name)
            return f"{name} (name: {title})" if title else name

        count = f"{e.records} records" if e.records is not None else "records not counted"
        lines.append(f"generation {e.generation}  {e.committed_at}  {e.summary()} by {e.who()}  ({count})")
        for m in e.merged:
            into = m.get("into")
            sources = ", ".join(m.get("from", []))
            verb = "dropped " if not into else "superseded" if m.get("superseded") else "merged  "
            lines.append(f"  {verb} {sources} -> {into}" if into else f"  {verb} {sources}")
        for n in e.added:
            lines.append(f"  added    {label(n)}")
        for n in e.updated:
            lines.append(f"  updated  {label(n)}")
        merged_sources = {s for m in e.merged for s in m.get("from", [])}
        for n in e.removed:
            if n not in merged_sources:
                lines.append(f"  removed  {n}")
        for what, key in (("adopted ", "adopted"), ("edited  ", "updated"), ("deleted ", "dropped")):
            for n in e.foreign.get(key, []):
                lines.append(f"  {what} {label(n)}  (by someone else)")
        if e.index_archived:
            lines.append(f"  kept     a MEMORY.md dreamd did not write as {e.index_archived}")
        if e.note:
            lines.append(f"  note     {e.note}")
    return "\n".join(lines) + ("\n" if lines else "")


def render_log_json(entries: list[LogEntry]) -> str:
    return json.dumps({"generations": [e.to_json() for e in entries]}, ensure_ascii=False, indent=2)


def find_bytes(store: MemoryStore, entry: ManifestEntry) -> bytes | None:
    """The exact bytes an old entry committed, from the directory or ``.history/``."""
    candidates = [store.path / entry.file]
    hist = store.path / HISTORY
    if store.archive.check():
        # Archives end in ARCHIVE_SUFFIX (``x.md.hist``, ``x.md.<random>.hist``); directories
        # not yet migrated still hold ``x.md``, ``x.md.<random>`` and ``orphan.x.md``.
        for prefix in ("", ORPHAN_PREFIX):
            candidates.append(hist / f"{prefix}{entry.file}")
            candidates.extend(sorted(hist.glob(f"{glob.escape(prefix + entry.file)}.*")))
    for path in candidates:
        try:
            data = open_regular(path, max_bytes=MAX_RECORD_FILE_BYTES)
        except (OSError, StoreError):
            continue
        if sha256_hex(data) == entry.sha256:
            return data
    return None


def _why_not_kept(path: Path) -> str:
    """Why ``.history/`` holds no bytes of a record, when its file says: it became a link or a
    FIFO, which is never read and never archived (DESIGN §2)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return ""
    if stat.S_ISREG(mode):
        return ""
    return f" (its file is {file_kind(mode)}, not a regular file, so .history/ never kept its bytes)"


def _redacted_restore(entry: ManifestEntry, data: bytes, names: set[str]) -> tuple[ManifestEntry, bytes] | None:
    """The entry ``entry`` becomes, and its new file's bytes, when its bytes ``data`` hold a
    secret (a generation from before a redaction: an adopted hand-written file, a record an
    older dreamd wrote), else None.

    The restored record is redacted like every record write (:func:`memory.store.redaction.redact_record`,
    name included: a name that held part of the secret is replaced, in ``names`` too) and gets
    a new file, so the secret never comes back live."""
    from memory.errors import RecordError
    from memory.redact import redact
    from memory.store.records import parse_record, render_record
    from memory.store.redaction import redact_record
    from memory.store.transaction import record_file_name

    text = data.decode("utf-8", "replace")
    if not redact(text)[1]:
        return None
    try:
        rec = parse_record(data, where=entry.file, stem=Path(entry.file).stem)
    except RecordError:
        rec = None
    if rec is None:  # not a record any more: its text, redacted
        clean_bytes = redact(text)[0].encode("utf-8")
        name, description = entry.name, redact(entry.description)[0]
    else:
        clean, _ = redact_record(rec.replace(name=entry.name))
        name = entry.name
        if clean.name != entry.name:
            names.discard(entry.name)
            name = unique_name(clean.name, names)
            names.add(name)
        clean_bytes = render_record(clean.replace(name=name))
        description = clean.description
    file = record_file_name(name)
    new = entry.replace(name=name, description=description, file=file, sha256=sha256_hex(clean_bytes))
    return new, clean_bytes


def rollback(store: MemoryStore, *, to: int) -> CommitResult:
    """Commit a new generation whose set equals generation ``to``; all or nothing."""
    # here, not at import: `dreamd log` reads history and never reconciles or commits (issue 20)
    from memory.store.change import CommitResult
    from memory.store.reconcile import scan_foreign

    with store_lock(store.path, store.lock_timeout):
        current = store.read()
        if to == current.generation:
            raise StoreError(f"{store.path}: generation {to} is already current")
        target = store.read_generation(to)
        store.migrate_history()
        entries: list[ManifestEntry] = []
        files: list[tuple[str, bytes]] = []
        names = {e.name for e in target.records}
        for entry in target.records:
            data = find_bytes(store, entry)
            if data is None:
                raise StoreError(
                    f"{store.path}: cannot roll back to generation {to}: {entry.file} ({entry.name}) is no longer kept"
                    f"{_why_not_kept(store.path / entry.file)}; nothing was changed"
                )
            redacted = _redacted_restore(entry, data, names)
            if redacted is not None:  # the same redaction as every record write (issue 22)
                entries.append(redacted[0])
                files.append((redacted[0].file, redacted[1]))
                continue
            path = store.path / entry.file
            on_disk = read_regular_or_none(path, max_bytes=MAX_RECORD_FILE_BYTES)
            if on_disk is None and os.path.lexists(path):
                on_disk = b""  # a link or a FIFO holds the name: the restored file gets a new one
            if on_disk is not None and sha256_hex(on_disk) == entry.sha256:
                entries.append(entry.replace())
                continue
            file = entry.file if on_disk is None else record_file_name(entry.name)
            files.append((file, data))
            entries.append(entry.replace(file=file))
        # A file someone wrote since the last commit belongs to no generation: it joins the
        # rolled-back set instead of being passed over (or archived as if we had removed it).
        foreign = scan_foreign(store, current)
        taken = {e.name for e in entries}
        restored = {e.file for e in entries}
        adopted_names = set(foreign.adopted)
        for e in foreign.entries:
            if e.name in adopted_names and e.file not in restored:
                entries.append(e.replace(name=unique_name(e.name, taken)))
                taken.add(entries[-1].name)
        before = {e.name: e.sha256 for e in current.records}
        after = {e.name: e.sha256 for e in entries}
        added = sorted(n for n in after if n not in before)
        updated = sorted(n for n in after if n in before and before[n] != after[n])
        removed = sorted(n for n in before if n not in after)
        change: dict[str, Any] = {
            "actor": "rollback",
            "added": added,
            "updated": updated,
            "removed": removed,
            "note": f"rollback to generation {to}",
        }
        foreign.annotate(change)
        change.get("foreign", {}).pop("updated", None)
        change.get("foreign", {}).pop("dropped", None)
        if not change.get("foreign"):
            change.pop("foreign", None)
        new = store.write_set(current, entries, files=files, summary=change, leftovers=foreign.leftovers, listing=foreign.listing)
        return CommitResult(
            generation=new.generation,
            added=added,
            updated=updated,
            removed=removed,
            adopted=list(foreign.adopted),
            index_archived=new.change.get("index_archived"),
        )

