"""Filesystem watching for the daemon: events are hints, listings are the truth (DESIGN §4, §8).

The watchdog observer only *posts hints*: "the spool's new/ changed", "memory directory D
changed". The daemon coalesces them with a :class:`Debouncer` and then rescans; a timer rescans
as well, so a lost inotify event costs latency, never a job.

Two rules keep the daemon's own writes from causing event storms:

* names that never matter are dropped before they become hints: ``.history/``, ``.lock``,
  ``.dream.lock``, temp files ``.tmp-*`` and anything else hidden;
* a directory hint only leads to a reconcile when the directory's *stat fingerprint* (name,
  inode, size, mtime of ``manifest.json`` and every ``*.md``) differs from the one remembered
  after our last work there (:func:`fingerprint`), so the events our commit caused are
  recognised as ours however late they arrive. What is remembered is checked against the
  manifest (:func:`settled_fingerprint`): a write someone made after our commit point is never
  taken for ours.

Handlers never raise into watchdog's threads: an exception is logged (``watch.error``) and
counted; the supervisor checks the observer thread is alive.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.fsutil import TMP_PREFIX

if TYPE_CHECKING:
    from memory.store.manifest import Manifest

__all__ = ["Debouncer", "Fingerprint", "Watcher", "fingerprint", "is_noise", "settled_fingerprint"]

Fingerprint = frozenset[tuple[str, int, int, int]]

_NOISE_NAMES = frozenset({".lock", ".dream.lock", ".history"})


def is_noise(name: str) -> bool:
    """Names inside a memory directory whose changes never need a reconcile."""
    return name in _NOISE_NAMES or name.startswith((TMP_PREFIX, ".")) or name.endswith((".tmp", "~"))


def fingerprint(directory: Path) -> Fingerprint | None:
    """(name, inode, size, mtime_ns) of ``manifest.json`` and every visible ``*.md``; None if gone.

    Cheap (one scandir, no reads): the tick compares it for every managed directory, so a
    hand edit whose event was lost is still noticed within one tick.
    """
    out: set[tuple[str, int, int, int]] = set()
    try:
        with os.scandir(directory) as it:
            for de in it:
                name = de.name
                if name.startswith(".") or not (name.endswith(".md") or name == "manifest.json"):
                    continue
                try:
                    st = de.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                out.add((name, st.st_ino, st.st_size, st.st_mtime_ns))
    except (FileNotFoundError, NotADirectoryError):
        return None
    return frozenset(out)


def settled_fingerprint(
    directory: Path, trusted: Fingerprint, manifest: Callable[[], Manifest], *, trust_index: bool = False
) -> Fingerprint | None:
    """The fingerprint to remember once our own work in ``directory`` is done: its
    :func:`fingerprint` now, less whatever could be someone else's write.

    Taken after the work, a plain fingerprint would absorb a hand edit or a foreign file that
    landed between our commit point and the ``scandir``, and the change would go unnoticed
    (even by the tick, which compares against it). So an entry is kept unverified only if it is
    in ``trusted`` (the fingerprint remembered before the work; for a reconcile, the one taken
    as it started, since it judged everything in it), or is ``manifest.json`` (written only by
    a commit, which takes in what others did). Any other entry must be what the manifest read
    *after* the scan says: a named record file with the named hash, or ``MEMORY.md`` with the
    rendered index's hash (or any ``MEMORY.md`` with ``trust_index``: a reconcile may rewrite
    it without a commit). An entry that is not is left out, and a named file that is missing
    gets a placeholder no real file matches, so the next comparison differs and the directory
    is reconciled at the next scan. Only files new since ``trusted`` are read. None when the
    directory is gone; the plain fingerprint when the manifest cannot be read (the reconcile
    that would follow could not read it either).
    """
    from memory.errors import RecordError, StoreError
    from memory.store.layout import INDEX, MANIFEST, read_regular
    from memory.store.records import sha256_hex

    now = fingerprint(directory)
    if now is None:
        return None
    try:
        current = manifest()
    except (StoreError, OSError):
        return now
    by_file = {e.file: e.sha256 for e in current.records}

    def holds(name: str, sha: str) -> bool:
        try:
            return sha256_hex(read_regular(directory / name)) == sha
        except (OSError, RecordError):
            return False

    kept = set()
    for item in now:
        name = item[0]
        if item in trusted or name == MANIFEST:
            kept.add(item)
        elif name == INDEX:
            if trust_index or not current.index_sha256 or holds(name, current.index_sha256):
                kept.add(item)
        elif name in by_file and holds(name, by_file[name]):
            kept.add(item)
    present = {item[0] for item in now}
    kept.update((file, -1, -1, -1) for file in by_file if file not in present)
    return frozenset(kept)


class Debouncer:
    """Coalesce hints per key; the clock (monotonic seconds) is injected.

    ``leading=True`` (the spool): the first hint after a quiet ``delay`` fires at once (low
    pickup latency); hints inside the window collapse into one trailing fire at the window's
    end. ``leading=False`` (memory directories): fire ``delay`` after the *last* hint, so an
    editor's delete+create or a burst of writes is one reconcile; ``max_wait`` bounds the delay
    under a never-ending storm.
    """

    def __init__(
        self,
        delay: float,
        clock: Callable[[], float],
        *,
        leading: bool,
        max_wait: float | None = None,
    ) -> None:
        self.delay = delay
        self.leading = leading
        self.max_wait = max_wait if max_wait is not None else delay * 5
        self._clock = clock
        self._lock = threading.Lock()
        self._first: dict[Hashable, float] = {}
        self._last_hint: dict[Hashable, float] = {}
        self._last_fire: dict[Hashable, float] = {}

    def hint(self, key: Hashable) -> None:
        now = self._clock()
        with self._lock:
            self._first.setdefault(key, now)
            self._last_hint[key] = now

    def _deadline(self, key: Hashable) -> float:
        first, last = self._first[key], self._last_hint[key]
        if self.leading:
            fired = self._last_fire.get(key)
            return first if fired is None or first - fired >= self.delay else fired + self.delay
        return min(last + self.delay, first + self.max_wait)

    def due(self) -> list[Hashable]:
        """Keys whose hints are ripe now; each is handed out once per batch of hints."""
        now = self._clock()
        out: list[Hashable] = []
        with self._lock:
            for key in list(self._first):
                if now >= self._deadline(key):
                    out.append(key)
                    del self._first[key]
                    del self._last_hint[key]
                    self._last_fire[key] = now
        return out

    def next_deadline(self) -> float | None:
        """Monotonic time of the next ripe key, for the main loop's wait timeout."""
        with self._lock:
            return min((self._deadline(k) for k in self._first), default=None)

    def forget(self, key: Hashable) -> None:
        with self._lock:
            self._first.pop(key, None)
            self._last_hint.pop(key, None)
            self._last_fire.pop(key, None)


def _changes() -> list[type[Any]]:
    """The events that can mean a change, as watchdog's ``event_filter``: what happens to the
    files in the watched directory, not a file being opened or closed unwritten, nor the
    "directory modified" event watchdog adds beside every file event. watchdog builds the
    inotify mask from the filter, so the kernel never queues opens at all: without it every
    read the daemon itself makes (a job peeked in ``new/``, a manifest or record read, a
    directory scanned for its fingerprint) came back as events its observer threads decoded
    under the GIL and dropped, and each temp file of our own commit raised a directory event
    whose name (the directory's) no noise filter could drop."""
    from watchdog.events import (
        DirCreatedEvent,
        DirDeletedEvent,
        DirMovedEvent,
        FileClosedEvent,
        FileCreatedEvent,
        FileDeletedEvent,
        FileModifiedEvent,
        FileMovedEvent,
    )

    return [FileCreatedEvent, FileModifiedEvent, FileDeletedEvent, FileMovedEvent, FileClosedEvent,
            DirCreatedEvent, DirDeletedEvent, DirMovedEvent]


class Watcher:
    """One watchdog observer: the spool's ``new/`` plus every managed directory (not recursive).

    watchdog (and its threads) is imported here lazily so the hook path never pays for it.
    """

    def __init__(
        self,
        *,
        on_spool: Callable[[], None],
        on_dir: Callable[[Path], None],
        on_error: Callable[[str, BaseException], None],
    ) -> None:
        from watchdog.observers import Observer

        self._on_spool = on_spool
        self._on_dir = on_dir
        self._on_error = on_error
        self._observer: Any = Observer()
        self._observer.daemon = True
        self._dirs: dict[Path, Any] = {}
        self._unwatchable: set[Path] = set()
        self.errors = 0

    def start(self) -> None:
        self._observer.start()

    def alive(self) -> bool:
        return bool(self._observer.is_alive())

    def stop(self) -> None:
        import logging

        # watchdog logs an ERROR from emitters racing their own shutdown; it means nothing here
        logging.getLogger("watchdog.observers.inotify").setLevel(logging.CRITICAL)
        try:
            self._observer.stop()
            self._observer.join(timeout=3)
        except Exception as exc:  # stopping must not fail a shutdown
            self._on_error("observer.stop", exc)

    def _handler(self, callback: Callable[[Any], None]) -> Any:
        from watchdog.events import FileSystemEventHandler

        watcher = self

        class _Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                try:
                    callback(event)
                except Exception as exc:
                    watcher.errors += 1
                    watcher._on_error("handler", exc)

        return _Handler()

    def watch_spool(self, root: Path) -> None:
        """Watch ``new/`` for every change, and ``tmp/`` for deletions only.

        Why ``tmp/``: watchdog holds an unpaired IN_MOVED_FROM for 0.5 s to pair it with its
        IN_MOVED_TO, and everything queued behind it waits too (head-of-line blocking). Our
        own claims (``new/`` → ``cur/`` renames) produce exactly such events, so a submission
        right after a claim would be seen up to 0.5 s late. A submitter unlinks its temp name
        in ``tmp/`` right after linking the job into ``new/``; a deletions-only watch there has
        no move events in its mask, hence no delay. ``new/`` still catches renames into it
        (``dreamd retry``, released deferred jobs)."""
        from watchdog.events import FileDeletedEvent

        def on_event(event: Any) -> None:
            self._on_spool()

        self._observer.schedule(self._handler(on_event), str(root / "new"), recursive=False,
                                event_filter=_changes())
        self._observer.schedule(
            self._handler(on_event), str(root / "tmp"), recursive=False, event_filter=[FileDeletedEvent]
        )

    def set_dirs(self, wanted: Iterable[Path]) -> tuple[list[Path], list[Path]]:
        """Watch exactly ``wanted``; returns (added, removed). A directory that cannot be
        watched (vanished, inotify limit) is reported through ``on_error`` and left to the
        timer rescan."""
        wanted_set = set(wanted)
        added: list[Path] = []
        removed: list[Path] = []
        for d in sorted(set(self._dirs) - wanted_set):
            watch = self._dirs.pop(d)
            try:
                self._observer.unschedule(watch)
            except Exception as exc:
                self._on_error(f"unschedule {d}", exc)
            removed.append(d)
        for d in sorted(wanted_set - set(self._dirs)):

            def on_event(event: Any, d: Path = d) -> None:
                paths = [event.src_path, getattr(event, "dest_path", "")]
                if all(not p or is_noise(os.path.basename(os.fsdecode(p))) for p in paths):
                    return
                self._on_dir(d)

            try:
                self._dirs[d] = self._observer.schedule(self._handler(on_event), str(d), recursive=False,
                                                        event_filter=_changes())
            except Exception as exc:
                if d not in self._unwatchable:  # report once; the tick's fingerprints cover it
                    self._unwatchable.add(d)
                    self._on_error(f"schedule {d}", exc)
                continue
            self._unwatchable.discard(d)
            added.append(d)
        return added, removed
