"""The ledger: what every actor of a torture run was told or did, as append-only JSON lines.

One file per writer (``client-<i>.jsonl`` for client *i* across its incarnations,
``chaos.jsonl`` for the harness), so no two processes ever append to the same file. A line is
written with one ``write`` on an ``O_APPEND`` descriptor: a writer SIGKILLed between two lines
leaves whole lines only (the page cache keeps what was written; the run does not survive a
power cut and does not need to).

The checker trusts only ``accepted`` lines: a client writes one *after* ``submit`` returned a
job id. A client killed inside ``submit`` writes nothing for that job, so the job may or may not
exist; the spool-wide checks still cover it (every file in ``new/`` must end in ``done/`` or
``failed/``).

Line shapes (all carry ``t``, wall-clock seconds, and ``who``)::

    {"op": "accepted", "kind": "extract"|"remember"|"forget"|"consolidate", "job_id", "memory_dir",
     "name"?, "names"?, "secrets"?: [str], "session_id"?}
    {"op": "hostile", "case", "job_id"?, "file", "expect": "failed"|"done"|"ignored", "name"?, "description"?, "secrets"?}
    {"op": "kill_daemon", "incarnation", "pid", "cur", "leases": [dir]}
    {"op": "kill_client", "client", "pid"}
    {"op": "hand_create"|"hand_edit"|"hand_delete", "memory_dir", "file"}
    {"op": "disk_full"|"disk_free", "memory_dir", "bytes"?}
    {"op": "force_dream", "memory_dir", "job_id"}
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Entry = dict[str, Any]


class LedgerWriter:
    """Appends whole JSON lines to one ledger file (one writer per file)."""

    def __init__(self, path: Path, who: str) -> None:
        self.path = path
        self.who = who
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def write(self, op: str, **fields: Any) -> Entry:
        entry: Entry = {"t": round(time.time(), 6), "who": self.who, "op": op, **fields}
        data = (json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
        os.write(self._fd, data)
        return entry

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def read_entries(directory: Path) -> Iterator[Entry]:
    """Every whole line of every ``*.jsonl`` ledger in ``directory`` (a torn last line is skipped)."""
    for path in sorted(directory.glob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                yield entry


@dataclass
class Ledger:
    """The entries of a run, sorted by time and indexed the way the checker asks."""

    entries: list[Entry] = field(default_factory=list)
    _memo: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False)

    def _cached(self, what: str, key: str, make: Any) -> Any:
        if (what, key) not in self._memo:
            self._memo[(what, key)] = make()
        return self._memo[(what, key)]

    @classmethod
    def load(cls, directory: Path) -> Ledger:
        return cls(sorted(read_entries(directory), key=lambda e: float(e.get("t", 0.0))))

    def ops(self, *ops: str) -> list[Entry]:
        return [e for e in self.entries if e.get("op") in ops]

    def accepted(self, kind: str | None = None) -> list[Entry]:
        return [e for e in self.ops("accepted") if kind is None or e.get("kind") == kind]

    def secrets(self) -> set[str]:
        """Every secret value any actor planted (in transcripts, records or raw jobs)."""
        out: set[str] = set()
        for e in self.entries:
            out.update(str(s) for s in e.get("secrets") or ())
        return out

    def forget_names(self, memory_dir: str) -> dict[str, set[str]]:
        """job id → names, for the forget jobs clients had accepted in ``memory_dir``."""
        return self._cached("forget", memory_dir, lambda: {  # type: ignore[no-any-return]
            str(e["job_id"]): set(e.get("names") or ())
            for e in self.accepted("forget")
            if e.get("memory_dir") == memory_dir
        })

    def hand_deleted(self, memory_dir: str) -> set[str]:
        """Files the chaos deleted by hand in ``memory_dir``."""
        return self._cached("deleted", memory_dir, lambda: {  # type: ignore[no-any-return]
            str(e["file"])
            for e in self.ops("hand_delete")
            if e.get("memory_dir") == memory_dir
        })

    def hand_written(self, memory_dir: str) -> set[str]:
        """Files the chaos created or edited by hand (their bytes are not dreamd's)."""
        return self._cached("written", memory_dir, lambda: {  # type: ignore[no-any-return]
            str(e["file"])
            for e in self.ops("hand_create", "hand_edit", "hand_symlink")
            if e.get("memory_dir") == memory_dir
        })
