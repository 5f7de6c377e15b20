"""manifest.json (format 1, DESIGN §2.2): the one authority on which records make up a set.

Pure data + (de)serialisation. Readers ignore unknown keys and writers keep them (``extra``).
Besides the documented keys dreamd writes ``index_sha256`` (the MEMORY.md rendered for this
generation) and ``change`` (what this generation changed and by whom — the source of
``dreamd log``).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from operator import attrgetter

from memory.errors import StoreError
from memory.store.records import NAME_RE
from memory.values import Value

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from typing import Any

FORMAT = 1
MAX_APPLIED_JOBS = 1000
MAX_SESSIONS = 1000
MAX_CURSORS = 1000
MAX_SOURCES = 50
"""Provenance entries (``sources``) a record keeps; the oldest go first."""
_SAFE_FILE = re.compile(r"^[^/\\\x00]+\.md\Z")
_HEX = re.compile(r"[0-9a-f]*")


def utcnow_iso(now: datetime | None = None) -> str:
    moment = now or datetime.now(UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def check_file_name(name: Any, *, where: str) -> str:
    """A manifest ``file`` is a bare ``*.md`` name inside the directory: never a path."""
    if (
        not isinstance(name, str)
        or not _SAFE_FILE.match(name)
        or name in (".md", "..md")
        or name.startswith(".")
        or name == "MEMORY.md"
    ):
        raise StoreError(f"{where}: record file {name!r} is not a bare .md file name")
    return name


class ManifestEntry(Value):
    """One record of the set, as the manifest names it (a mutable
    :class:`~memory.values.Value`, not a dataclass: ``entry.replace(…)``; issue 20)."""

    __slots__ = (  # noqa: RUF023 (field order)
        "name", "type", "description", "file", "sha256", "created_at", "updated_at", "sources", "extra",
    )  # fmt: skip
    name: str
    type: str
    description: str
    file: str
    sha256: str
    created_at: str
    updated_at: str
    sources: list[str]
    extra: dict[str, Any]

    def __init__(
        self, name: str, type: str, description: str, file: str, sha256: str,
        created_at: str, updated_at: str, sources: list[str] | None = None, extra: dict[str, Any] | None = None,
    ) -> None:  # fmt: skip
        self.set_fields(
            name=name, type=type, description=description, file=file, sha256=sha256, created_at=created_at,
            updated_at=updated_at, sources=[] if sources is None else sources, extra={} if extra is None else extra,
        )  # fmt: skip

    @property
    def title(self) -> str | None:
        """The record file's own frontmatter ``name`` when it differs from the key (files
        others wrote: Claude Code's ``name: feedback-db-tests`` in ``feedback_db_tests.md``),
        kept under the optional entry key ``title``."""
        value = self.extra.get("title")
        return value if isinstance(value, str) and value.strip() and value != self.name else None

    @property
    def display_name(self) -> str:
        """What listings show: the name the file itself gives, else the key."""
        return self.title or self.name

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "type": self.type,
            "description": self.description,
            "file": self.file,
            "sha256": self.sha256,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "sources": list(self.sources),
        }
        out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, raw: Any, *, where: str) -> ManifestEntry:
        if not isinstance(raw, dict):
            raise StoreError(f"{where}: record entry is not an object")
        try:
            name, type_, file, sha = raw["name"], raw["type"], raw["file"], raw["sha256"]
        except KeyError as exc:
            raise StoreError(f"{where}: record entry misses {exc.args[0]!r}") from None
        sources = raw.get("sources") or []
        if not (isinstance(sources, list) and all(type(s) is str for s in sources)):
            sources = [str(s) for s in sources]
        # Recall parses every entry after each commit: no copy of the common, all-known case.
        extra = {} if raw.keys() <= _ENTRY_KEYS else {k: v for k, v in raw.items() if k not in _ENTRY_KEYS}
        if type(name) is not str or not NAME_RE.match(name):
            # A key is a slug (records.NAME_RE, ``\Z``): a name pushed or merged in with a line
            # break would split MEMORY.md's link lines and every listing that shows it.
            raise StoreError(f"{where}: record name {name!r} is not a valid name (must match {NAME_RE.pattern})")
        return cls(
            name=name,
            type=type_ if type(type_) is str else str(type_),
            description=str(raw.get("description", "")),
            file=check_file_name(file, where=where),
            sha256=sha if type(sha) is str else str(sha),
            created_at=str(raw.get("created_at", "")),
            updated_at=str(raw.get("updated_at", "")),
            sources=list(sources),
            extra=extra,
        )


_ENTRY_KEYS = frozenset(
    ("name", "type", "description", "file", "sha256", "created_at", "updated_at", "sources")
)


class Manifest(Value):
    """One generation of the set: ``manifest.json`` parsed (a mutable
    :class:`~memory.values.Value`, not a dataclass: ``manifest.replace(…)``; issue 20)."""

    __slots__ = (  # noqa: RUF023 (field order)
        "generation", "committed_at", "consolidated_at", "records", "applied_jobs",
        "sessions_since_consolidation", "cursors", "index_sha256", "change", "extra",
    )  # fmt: skip
    generation: int
    committed_at: str
    consolidated_at: str | None
    records: list[ManifestEntry]
    applied_jobs: list[str]
    sessions_since_consolidation: list[str]
    cursors: dict[str, int]
    index_sha256: str
    change: dict[str, Any]
    extra: dict[str, Any]

    def __init__(
        self,
        generation: int = 0,
        committed_at: str = "",
        consolidated_at: str | None = None,
        records: list[ManifestEntry] | None = None,
        applied_jobs: list[str] | None = None,
        sessions_since_consolidation: list[str] | None = None,
        cursors: dict[str, int] | None = None,
        index_sha256: str = "",
        change: dict[str, Any] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.set_fields(
            generation=generation,
            committed_at=committed_at,
            consolidated_at=consolidated_at,
            records=[] if records is None else records,
            applied_jobs=[] if applied_jobs is None else applied_jobs,
            sessions_since_consolidation=[] if sessions_since_consolidation is None else sessions_since_consolidation,
            cursors={} if cursors is None else cursors,
            index_sha256=index_sha256,
            change={} if change is None else change,
            extra={} if extra is None else extra,
        )

    def by_name(self) -> dict[str, ManifestEntry]:
        return {e.name: e for e in self.records}

    def to_json(self, *, records: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": FORMAT,
            "generation": self.generation,
            "committed_at": self.committed_at,
            "consolidated_at": self.consolidated_at,
            "records": [e.to_json() for e in self.records] if records else [],
            "applied_jobs": self.applied_jobs[-MAX_APPLIED_JOBS:],
            "sessions_since_consolidation": self.sessions_since_consolidation[-MAX_SESSIONS:],
            "cursors": self.cursors,
            "index_sha256": self.index_sha256,
            "change": self.change,
        }
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out

    def dumps(self, *, fragments: FragmentCache | None = None) -> bytes:
        """The manifest's bytes. With ``fragments`` (owned by one writer), entries carried over
        unchanged from the previous commit reuse their encoded JSON instead of being encoded
        again, so a commit into a large set costs one join, not one encode per record; the
        bytes are identical either way."""
        if fragments is None:
            return (_dump(self.to_json()) + "\n").encode()
        parts: list[str] = []
        fresh: FragmentCache = {}
        for e in self.records:
            key = _entry_key(e)
            hit = fragments.get(id(e))
            text = hit[2] if hit is not None and hit[0] is e and hit[1] == key else _dump(e.to_json())
            fresh[id(e)] = (e, key, text)
            parts.append(text)
        fragments.clear()
        fragments.update(fresh)
        head = _dump(self.to_json(records=False))
        # "records" follows four scalar keys, so its placeholder is the first occurrence.
        body = head.replace('"records":[]', '"records":[' + ",".join(parts) + "]", 1)
        return (body + "\n").encode()

    @classmethod
    def loads(cls, data: bytes, *, where: str) -> Manifest:
        try:
            raw = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise StoreError(f"{where}: manifest is not valid JSON ({exc})") from None
        if not isinstance(raw, dict):
            raise StoreError(f"{where}: manifest is not a JSON object")
        if raw.get("format") != FORMAT:
            raise StoreError(f"{where}: unsupported manifest format {raw.get('format')!r}")
        known = {
            "format", "generation", "committed_at", "consolidated_at", "records", "applied_jobs",
            "sessions_since_consolidation", "cursors", "index_sha256", "change",
        }
        gen = raw.get("generation")
        if not isinstance(gen, int) or isinstance(gen, bool) or gen < 0:
            raise StoreError(f"{where}: generation {gen!r} is not a non-negative integer")
        records_raw = raw.get("records", [])
        if not isinstance(records_raw, list):
            raise StoreError(f"{where}: records is not a list")
        records = [ManifestEntry.from_json(r, where=where) for r in records_raw]
        cursors_raw = raw.get("cursors") or {}
        cursors = {
            str(k): int(v)
            for k, v in (cursors_raw.items() if isinstance(cursors_raw, dict) else [])
            if isinstance(v, int) and not isinstance(v, bool)
        }
        change = raw.get("change")
        return cls(
            generation=gen,
            committed_at=str(raw.get("committed_at") or ""),
            consolidated_at=raw.get("consolidated_at") or None,
            records=records,
            applied_jobs=[str(j) for j in raw.get("applied_jobs") or []],
            sessions_since_consolidation=[str(s) for s in raw.get("sessions_since_consolidation") or []],
            cursors=cursors,
            index_sha256=str(raw.get("index_sha256") or ""),
            change=change if isinstance(change, dict) else {},
            extra={k: v for k, v in raw.items() if k not in known},
        )


FragmentCache = dict[int, tuple[ManifestEntry, "tuple[Any, ...]", str]]  # quoted: typing is not imported at run time
"""id(entry) -> (entry, its fields when encoded, encoded JSON); see :meth:`Manifest.dumps`."""


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_entry_key = attrgetter("sha256", "updated_at", "file")
"""The fields checked, besides identity, before reusing an entry's encoding. Committed entries are
never mutated in place (every change makes a new entry with a new ``updated_at``); this guards
against it cheaply."""


def bounded_append(items: list[str], item: str, limit: int) -> list[str]:
    """Append ``item`` (moving it to the end if present) and keep the most recent ``limit``."""
    out = [x for x in items if x != item]
    out.append(item)
    return out[-limit:]


def set_cursor(cursors: dict[str, int], session: str, value: int, limit: int = MAX_CURSORS) -> dict[str, int]:
    """Record a session's cursor as most recent; never moves a cursor backwards."""
    out = {k: v for k, v in cursors.items() if k != session}
    out[session] = max(value, cursors.get(session, 0))
    while len(out) > limit:
        out.pop(next(iter(out)))
    return out


BOOKKEPT_KEY = "bookkept"
"""Manifest key (format 1 extension): the last commit that changed no record (a cursor, an applied
job, the sessions count) and rewrote this generation in place — ``at``, ``actor``, ``job_id``,
``session_id``, ``note`` (a forget of a name a dream merged away says so there); absent once a
later commit changes the set. ``committed_at`` and ``change`` stay those of the generation's own change."""

MAX_EXTRACTED_IDS = 5000
EXTRACTED_KEY = "extracted_ids"
"""Manifest key (format 1 extension; older readers ignore it, older writers keep it): the most
recent :data:`MAX_EXTRACTED_IDS` transcript message ids extracted into this set, as one string
of 12-hex-digit digests, oldest first. A Claude Code fork (``--resume ID --fork-session``)
replays the original's lines under a new session id with the same ``uuid``s; its own cursor
starts at 0, so only this set keeps it from extracting the original conversation again.
One string rather than a list keeps a commit's encoding cost flat (about 60 KB at the bound)."""
_ID_DIGITS = 12


def extracted_digest(message_id: str) -> str:
    import hashlib  # only a job's cursor hashes ids; readers of the manifest never do

    return hashlib.sha256(message_id.encode("utf-8", "surrogatepass")).hexdigest()[:_ID_DIGITS]


def extracted_ids(raw: Any) -> frozenset[str]:
    """The digests kept under :data:`EXTRACTED_KEY` (empty for a missing or damaged value)."""
    if not isinstance(raw, str) or len(raw) % _ID_DIGITS or not _HEX.fullmatch(raw):
        return frozenset()
    return frozenset(raw[i : i + _ID_DIGITS] for i in range(0, len(raw), _ID_DIGITS))


def merge_extracted(raw: Any, message_ids: list[str], limit: int = MAX_EXTRACTED_IDS) -> str:
    """``raw`` with the digests of ``message_ids`` appended (no repeats), the newest ``limit`` kept."""
    known = extracted_ids(raw)
    out = raw if known else ""
    fresh: list[str] = []
    for mid in message_ids:
        digest = extracted_digest(mid)
        if digest not in known:
            fresh.append(digest)
    joined = out + "".join(dict.fromkeys(fresh))
    return joined[-limit * _ID_DIGITS :]
