"""Memory flowing back into Claude Code: ``SessionStart`` and ``UserPromptSubmit`` context.

* ``SessionStart`` gets the bounded index (MEMORY.md) of a managed memory directory that
  Claude Code does not load itself (a project's ``.memory``, a configured directory). Claude
  Code already puts its own auto-memory directory's MEMORY.md in front of the model, so that
  one is never sent a second time.
* ``UserPromptSubmit`` gets the records relevant to the prompt as a ``<relevant_memories>``
  block, rendered exactly as :func:`memory.recall` renders it: at most ``limit`` records, none
  twice in one conversation (same name and content hash), and no more than ``session_bytes``
  over the session. What a session was shown is kept in ``<state>/hook-sessions/<id>.json``
  (bounded: the oldest files beyond :data:`MAX_SESSIONS` are removed), and deleted at
  ``SessionEnd``. A conversation outlives its ``claude -p`` runs (``--continue``, ``--resume``,
  ``--fork-session``): when no state is kept for a session, what its transcript shows it was
  already given is marked first (:func:`seed_from_transcript`).

Both answer with Claude Code's documented hook output,
``{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}`` on stdout.

The hook runs at every prompt, so this path imports only ``json``, ``re`` and the light keyword
index: records are ranked on the manifest's names and descriptions (what recall does for large
sets), and only the chosen record files are opened (regular files only: a FIFO or a symlink
under a record's name is passed over). The index is cached per directory and after a commit
only the entries it changed are tokenized again. Ranking on bodies, as recall does for small
sets, was tried: with 80-word bodies at 1,000 records the cache grew from 0.8 to 4.2 MB and a
warm prompt from ~7 to ~50 ms, most of it unmarshalling, so the hook keeps to descriptions.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import re
import stat
import time
import zlib
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

INDEX = "MEMORY.md"
MANIFEST = "manifest.json"
INDEX_MAX_LINES = 200
INDEX_MAX_BYTES = 25_000
"""``memory.store.index``'s defaults (a test pins them): importing that module costs the hook."""
MAX_SESSIONS = 200
MAX_INDEXES = 16
ENTRY_FIELDS = ("name", "type", "description", "file", "sha256")
MAX_STATE_BYTES = 256 * 1024
MAX_MANIFEST_BYTES = 64 * 1024 * 1024
MAX_RECORD_BYTES = 1024 * 1024
_PLAIN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")


def index_context(memory_dir: Path) -> str:
    """The directory's MEMORY.md, bounded as ``memory.index_text`` bounds it ("" when absent)."""
    from memory.retrieval.block import bounded_index

    return bounded_index(memory_dir / INDEX, max_lines=INDEX_MAX_LINES, max_bytes=INDEX_MAX_BYTES)


def output(event: str, context: str) -> str:
    """The hook's stdout: Claude Code's ``hookSpecificOutput`` with ``additionalContext``."""
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}},
        ensure_ascii=False,
    )


# ----------------------------------------------------------------------------- session state


def _state_file(state_dir: Path, session_id: str) -> Path:
    """``hook-sessions/<id>.json``; an id that is not a plain name becomes a checksum (zlib,
    not hashlib: loading OpenSSL would cost the hook more than the whole lookup)."""
    if _PLAIN_ID.match(session_id):
        name = session_id
    else:
        raw = session_id.encode("utf-8", "surrogatepass")
        name = f"x-{zlib.crc32(raw):08x}-{zlib.adler32(raw):08x}-{len(raw)}"
    return state_dir / "hook-sessions" / f"{name}.json"


def load_session(state_dir: Path, session_id: str) -> dict[str, Any]:
    """What this session was already shown: ``{"used_bytes": n, "surfaced": [[dir, name, sha]]}``;
    ``"new": True`` when no state was kept for it (then :func:`seed_from_transcript` applies)."""
    fresh = False
    try:
        with open(_state_file(state_dir, session_id), "rb") as f:
            data = json.loads(f.read(MAX_STATE_BYTES))
    except FileNotFoundError:
        data, fresh = {}, True
    except (OSError, ValueError):
        data = {}
    used = data.get("used_bytes") if isinstance(data, dict) else None
    surfaced = data.get("surfaced") if isinstance(data, dict) else None
    return {
        "new": fresh,
        "fork": isinstance(data, dict) and data.get("fork") is True,
        "used_bytes": used if isinstance(used, int) and used >= 0 else 0,
        "surfaced": [s for s in surfaced if isinstance(s, list) and len(s) == 3]
        if isinstance(surfaced, list)
        else [],
    }


def save_session(state_dir: Path, session_id: str, state: dict[str, Any]) -> None:
    """Write the session's state atomically, then keep at most :data:`MAX_SESSIONS` files."""
    from dreamd.hook.transcript import write_cache

    path = _state_file(state_dir, session_id)
    write_cache(path, json.dumps({k: v for k, v in state.items() if k != "new"}).encode("utf-8"))
    _prune(path.parent, MAX_SESSIONS, ".json")


def _prune(folder: Path, keep: int, suffix: str) -> None:
    """Keep the ``keep`` most recently written ``*suffix`` files of ``folder``."""
    try:
        entries = [
            (e.stat().st_mtime, e.path) for e in os.scandir(folder) if e.name.endswith(suffix)
        ]
    except OSError:
        return
    if len(entries) <= keep:
        return
    entries.sort()
    for _, stale in entries[: len(entries) - keep]:
        with contextlib.suppress(OSError):
            os.unlink(stale)


def end_session(state_dir: Path, session_id: str) -> bool:
    """Forget the session's state (``SessionEnd``); True when there was some."""
    try:
        os.unlink(_state_file(state_dir, session_id))
    except FileNotFoundError:
        return False
    return True


MAX_TRANSCRIPT_SCAN_BYTES = 64 * 1024 * 1024
"""How much of a transcript's end :func:`seed_from_transcript` reads at most."""
_SHOWN_RE = re.compile(rb'<memory name=\\"([^"\\]*)\\" type=\\"[^"\\]*\\" file=\\"([^"\\]*)\\">')
"""A ``<memory>`` element as it stands JSON-encoded in a transcript line (quotes escaped)."""


def seed_from_transcript(state: dict[str, Any], transcript: str, memory_dir: Path) -> int:
    """Mark as surfaced the records of ``memory_dir`` the conversation was already shown.

    Claude Code keeps one conversation across ``claude --continue`` and ``--resume <id>`` (the
    same session id, the same file) and copies it into a new file under a new id for
    ``--fork-session``; ``SessionEnd`` ends every ``claude -p`` run, so the hook's own state is
    gone by the next one. The transcript is the conversation's memory: the hook's earlier
    ``<relevant_memories>`` blocks stand in it as attachment lines. A record whose file one of
    them named is not shown again (a new version of a record dreamd wrote is a new file). Reads
    the file's last :data:`MAX_TRANSCRIPT_SCAN_BYTES` (regular files only); returns how many
    records it marked.
    """
    data = _tail_regular(transcript, MAX_TRANSCRIPT_SCAN_BYTES)
    if not data or b"<memory name=" not in data:
        return 0
    real = os.path.realpath(memory_dir)
    prefix = real.rstrip(os.sep) + os.sep
    shown = {m.group(2).decode("utf-8", "replace") for m in _SHOWN_RE.finditer(data)}
    files = {os.path.basename(f) for f in shown if f.startswith(prefix)}
    if not files:
        return 0
    marked = 0
    surfaced = {tuple(x) for x in state["surfaced"]}
    try:
        entries = _manifest_entries(memory_dir)
    except (OSError, ValueError):
        return 0
    for entry in entries:
        key = (real, entry["name"], entry["sha256"])
        if entry["file"] in files and key not in surfaced:
            state["surfaced"].append(list(key))
            surfaced.add(key)
            marked += 1
    return marked


MAX_FORK_SIBLINGS = 200


def mark_fork(state_dir: Path, session_id: str) -> None:
    """``SessionStart`` with ``source: fork``: the session continues another one whose
    transcript Claude Code copies into the new file only after the first prompt."""
    state = load_session(state_dir, session_id)
    state["fork"] = True
    save_session(state_dir, session_id, state)


def seed_conversation(state: dict[str, Any], transcript: Path, memory_dir: Path) -> int:
    """:func:`seed_from_transcript` from the session's own file; for a fork whose file is not
    written yet, from the most recently written other session file of the project (the one
    forked: Claude Code's payload names no parent). Clears the fork mark."""
    fork = bool(state.pop("fork", False))
    if transcript.exists() or not fork:
        return seed_from_transcript(state, str(transcript), memory_dir)
    try:
        siblings = [
            (e.stat().st_mtime_ns, e.path)
            for _, e in zip(range(MAX_FORK_SIBLINGS), os.scandir(transcript.parent), strict=False)
            if e.name.endswith(".jsonl") and e.name != transcript.name and e.is_file(follow_symlinks=False)
        ]
    except OSError:
        return 0
    return seed_from_transcript(state, max(siblings)[1], memory_dir) if siblings else 0


def _tail_regular(path: str, limit: int) -> bytes:
    """The last ``limit`` bytes of a regular file (b"" for anything else: a FIFO never blocks)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return b""
        if st.st_size > limit:
            os.lseek(fd, st.st_size - limit, os.SEEK_SET)
        chunks, left = [], limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)


# ----------------------------------------------------------------------------- recall


def _manifest_entries(memory_dir: Path) -> list[dict[str, Any]]:
    from memory.fsutil import open_regular

    raw = open_regular(memory_dir / MANIFEST, max_bytes=MAX_MANIFEST_BYTES)
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{memory_dir / MANIFEST}: not valid JSON ({exc})") from None
    records = data.get("records") if isinstance(data, dict) else None
    if not isinstance(records, list):
        raise ValueError(f"{memory_dir / MANIFEST}: no records list")
    return [
        r
        for r in records
        if isinstance(r, dict)
        and all(isinstance(r.get(k), str) for k in ENTRY_FIELDS)
        and "/" not in r["file"]
        and r["file"] not in ("", ".", "..")
    ]


def _ranked_set(memory_dir: Path, state_dir: Path) -> tuple[list[tuple[str, ...]], Any]:
    """``(entries, keyword index)`` of the current set, from the cache when it is current.

    Building the index tokenizes every name and description (most of the hook's time at 1,000
    records), so it is kept in ``<state>/hook-index/`` (marshal: plain values only), keyed by
    the manifest file's inode, size and mtime — a commit replaces the manifest. After a commit
    the cached index is updated with only the entries the commit changed.
    """
    from memory.retrieval.select import Candidate, IndexedDoc, KeywordIndex, index_doc

    real = os.path.realpath(memory_dir)
    st = os.stat(os.path.join(real, MANIFEST))
    key = [real, st.st_ino, st.st_size, st.st_mtime_ns]
    raw = real.encode("utf-8", "surrogatepass")
    cache = state_dir / "hook-index" / f"{zlib.crc32(raw):08x}-{zlib.adler32(raw):08x}.marshal"
    previous: Any = None
    try:
        with open(cache, "rb") as cached:
            previous = marshal.loads(cached.read())
        if previous[0] == key:
            return previous[1], KeywordIndex.from_state(previous[2])
    except (OSError, EOFError, ValueError, TypeError, IndexError):
        previous = None
    entries = [tuple(r[k] for k in ENTRY_FIELDS) for r in _manifest_entries(memory_dir)]

    def doc(entry: tuple[str, ...]) -> IndexedDoc:
        return index_doc(Candidate(entry[0], entry[1], entry[2]))

    index: Any = None
    try:
        if previous is not None and len(previous) == 3:
            index = KeywordIndex.from_state(previous[2])
            old = {e[0]: tuple(e) for e in previous[1]}
            new = {e[0]: e for e in entries}
            for name, entry in old.items():  # a commit's change: only what it touched is read
                if new.get(name) != entry:
                    index.remove(name)
            for name, entry in new.items():
                if old.get(name) != entry:
                    index.add(doc(entry))
    except (ValueError, TypeError, IndexError, KeyError):
        index = None
    if index is None:
        index = KeywordIndex(docs=[doc(entry) for entry in entries])
    with contextlib.suppress(OSError):  # a cache: a full disk costs the next prompt a rebuild
        from dreamd.hook.transcript import write_cache

        write_cache(cache, marshal.dumps([key, entries, index.state()]))
        _prune(cache.parent, MAX_INDEXES, ".marshal")
    return entries, index


def _read_regular(path: str) -> bytes | None:
    """A record file's first bytes; None unless it is a regular file (a FIFO would block the
    prompt, a symlink could point out of the directory), as ``memory.store.layout.read_regular``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        left = MAX_RECORD_BYTES
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _body(data: bytes) -> str:
    """A record file's body: the text after its ``---`` frontmatter (``memory.store.records`` rules)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    if not text.startswith("---\n"):
        return text.strip("\n")
    end = text.find("\n---", 3)
    while end != -1:
        after = end + 4
        if after == len(text) or text[after] == "\n":
            return text[after + 1 :].strip("\n") if after < len(text) else ""
        end = text.find("\n---", end + 1)
    return ""


class _Shown:
    """One selected record as the block renders it (same fields as ``RecalledRecord``)."""

    __slots__ = ("description", "file", "name", "sha256", "text", "type")

    def __init__(
        self, name: str, type: str, description: str, file: str, text: str, sha256: str
    ) -> None:
        self.name, self.type, self.description = name, type, description
        self.file, self.text, self.sha256 = file, text, sha256


def relevant_memories(
    memory_dir: Path,
    prompt: str,
    state: dict[str, Any],
    *,
    state_dir: Path,
    limit: int = 5,
    record_bytes: int = 4096,
    record_lines: int = 200,
    session_bytes: int = 61440,
    refused: list[str] | None = None,
) -> tuple[str, list[str]]:
    """The ``<relevant_memories>`` block for ``prompt`` and the names it shows.

    Updates ``state`` (the session's surfaced records and bytes) in place. A chosen record
    whose body is not text (:func:`memory.retrieval.block.body_problem`) is left out and its
    one-line reason appended to ``refused`` (the hook logs it).
    """
    from memory.retrieval.block import body_problem, cap_text, render_block, render_element

    real = os.path.realpath(memory_dir)
    entries, index = _ranked_set(memory_dir, state_dir)
    surfaced = {tuple(s) for s in state["surfaced"]}
    by_name = {e[0]: e for e in entries}
    exclude = {e[0] for e in entries if (real, e[0], e[4]) in surfaced}
    from dreamd.embeddings.client import hook_selection

    names = hook_selection(state_dir, real, prompt, limit, exclude, by_name)
    if names is None:
        names = index.select(prompt, limit, exclude=exclude)
    remaining = max(0, session_bytes - state["used_bytes"])
    if refused is None:
        refused = []
    shown: list[_Shown] = []
    used = 0
    for name in names:
        name, type_, description, file, sha256 = by_name[name]
        path = os.path.join(real, file)
        data = _read_regular(path)
        if data is None:
            continue
        body = _body(data)
        problem = body_problem(body, path)
        if problem is not None:
            refused.append(problem)
            continue
        text, _cut = cap_text(
            body, path=path, max_lines=record_lines, max_bytes=record_bytes
        )
        rec = _Shown(name, type_, description, path, text, sha256)
        size = len(render_element(rec).encode("utf-8"))
        if used + size > remaining:
            break
        used += size
        shown.append(rec)
    state["used_bytes"] += used
    state["surfaced"].extend([real, r.name, r.sha256] for r in shown)
    state["updated_at"] = int(time.time())
    return render_block(shown), [r.name for r in shown]
