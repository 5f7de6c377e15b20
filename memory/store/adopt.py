"""Taking an unmanaged directory under management (``dreamd adopt``, DESIGN §2.4).

A Claude Code ``memory/`` folder or a learn-claude-code ``.memory/`` has record files and maybe
a hand-kept MEMORY.md but no manifest. Adoption writes the first manifest and changes nothing
else of what was there: every well-formed file is kept under its own name, malformed files are
left in place and reported, and every line of the old MEMORY.md that is not just a pointer to an
adopted file is preserved as a record, so nothing in it is lost. The original MEMORY.md is
archived into ``.history/`` before the derived index replaces it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from memory.errors import RecordError, StoreError
from memory.fsutil import open_regular
from memory.store.change import Change
from memory.store.layout import (
    INDEX,
    MAX_INDEX_BYTES,
    bad_file_name,
    read_regular,
    record_file_name,
    record_files,
    shown_name,
)
from memory.store.locks import store_lock
from memory.store.manifest import ManifestEntry, utcnow_iso
from memory.store.reconcile import (
    clean_adopted_name,
    foreign_entry,
    note_secret,
    rename_secret_file,
)
from memory.store.records import (
    MAX_BODY_BYTES,
    Record,
    make_record,
    parse_record,
    render_record,
    sha256_hex,
    unique_name,
)
from memory.store.transaction import MemoryStore

NOTES_NAME = "memory-index-notes"
_LINK_LINE = re.compile(r"^\s*[-*]\s*\[[^\]]*\]\(([^)\s]+)\)")
_LCC_LINE = re.compile(r"^\s*[-*]\s*([A-Za-z0-9_.-]+)\s*:\s.*\[(user|feedback|project|reference)\]\s*$")


@dataclass(frozen=True)
class AdoptReport:
    generation: int
    adopted: list[str] = field(default_factory=list)
    malformed: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    index_archived: str | None = None


def free_text_lines(index_text: str, adopted_files: set[str]) -> list[str]:
    """Lines of a hand-kept index that say more than "this file exists"."""
    stems = {f[:-3] for f in adopted_files}
    out = []
    for line in index_text.splitlines():
        if not line.strip():
            continue
        link = _LINK_LINE.match(line)
        if link and link.group(1).split("#")[0] in adopted_files:
            continue
        lcc = _LCC_LINE.match(line)
        if lcc and lcc.group(1) in stems:
            continue
        out.append(line.rstrip())
    if all(line.lstrip().startswith("#") for line in out):
        return []  # only headings ("# Memory Index"): nothing a person wrote would be lost
    return out


def _chunks(lines: list[str], limit: int) -> list[str]:
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for line in lines:
        n = len(line.encode()) + 1
        if current and size + n > limit:
            chunks.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += n
    if current:
        chunks.append("\n".join(current))
    return chunks


def adopt(path: str | Path, **store_kwargs: object) -> AdoptReport:
    """Build the first manifest of an unmanaged directory; never rewrites what is there."""
    store = MemoryStore(path, **store_kwargs)  # type: ignore[arg-type]
    if not store.path.is_dir():
        raise StoreError(f"{store.path}: no such directory")
    with store_lock(store.path, store.lock_timeout):
        if store.is_managed():
            raise StoreError(f"{store.path}: already managed (has manifest.json)")
        now = utcnow_iso(store.clock())
        entries: list[ManifestEntry] = []
        malformed: list[tuple[str, str]] = []
        taken: set[str] = set()
        secrets: dict[str, Record] = {}
        for path in record_files(store.path):
            bad_name = bad_file_name(store.path, path.name)
            if bad_name is not None:
                malformed.append((shown_name(path.name), bad_name))
                continue
            try:
                data = read_regular(path, single_link=True)
                rec = parse_record(data, where=str(path), stem=path.stem)
            except (RecordError, OSError) as exc:
                malformed.append((path.name, str(exc)))
                continue
            renamed = clean_adopted_name(rec)  # a name holding part of a secret is never kept
            file = rename_secret_file(store.path, path.name, rec)  # nor a file name
            if renamed is not None:
                rec = rec.replace(name=renamed)
            entries.append(foreign_entry(file, data, rec, taken, now=now, source="adopted"))
            note_secret(secrets, entries[-1].name, data, rec, file=file)
        files: list[tuple[str, bytes]] = []
        notes: list[str] = []
        index_path = store.path / INDEX
        try:
            raw: bytes | None = open_regular(index_path, max_bytes=MAX_INDEX_BYTES)
        except FileNotFoundError:
            raw = None
        except (OSError, StoreError) as exc:  # a link, a FIFO, a directory, too large: left alone
            malformed.append((INDEX, str(exc)))
            raw = None
        if raw is not None:
            text = raw.decode("utf-8", errors="replace").lstrip("\ufeff").replace("\r\n", "\n")
            lines = free_text_lines(text, {e.file for e in entries})
            for i, chunk in enumerate(_chunks(lines, MAX_BODY_BYTES - 1024), start=1):
                name = unique_name(NOTES_NAME if i == 1 else f"{NOTES_NAME}-{i}", taken)
                taken.add(name)
                rec = make_record(
                    name,
                    "project",
                    "Notes kept in the MEMORY.md this directory had before dreamd adopted it",
                    chunk,
                )
                data = render_record(rec)
                file = record_file_name(name)
                files.append((file, data))
                entries.append(
                    ManifestEntry(
                        name=name,
                        type=rec.type,
                        description=rec.description,
                        file=file,
                        sha256=sha256_hex(data),
                        created_at=now,
                        updated_at=now,
                        sources=["adopted", f"file:{INDEX}"],
                    )
                )
                notes.append(name)
        change = {
            "actor": "adopted",
            "added": [e.name for e in entries],
            "updated": [],
            "removed": [],
            "note": f"adopted {len(entries) - len(notes)} file(s)" + (f", index notes kept as {', '.join(notes)}" if notes else ""),
        }
        store.migrate_history()
        new = store.write_set(None, entries, files=files, summary=change)
    generation = new.generation
    if secrets:  # the next generation holds them redacted (issue 22)
        generation = store.commit(Change(replace=secrets, actor="adopted", note="redacted secrets")).generation
    return AdoptReport(
        generation=generation,
        adopted=[e.name for e in entries],
        malformed=malformed,
        notes=notes,
        index_archived=new.change.get("index_archived"),
    )
