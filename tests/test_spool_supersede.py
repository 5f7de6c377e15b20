"""A newer extract job of a growing session supersedes the unclaimed older ones it contains
(issue 13, item 3): queued bytes stay a small multiple of the transcript, nothing is lost."""

from __future__ import annotations

import json
from pathlib import Path

from memory.client import submit
from memory.spool.queue import Spool


def _grow(n: int) -> str:
    return "".join(f"user: turn {i} about the deploy pipeline\nassistant: ok {i}\n" for i in range(n))


def test_each_stop_supersedes_the_queued_prefix_of_its_session(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    mdir = tmp_path / "app" / ".memory"
    ids = []
    for stop in range(1, 13):  # twelve Stop hooks of one growing session
        ids.append(submit(_grow(stop * 20), memory_dir=mdir, session_id="s1", format="text", spool=spool.root))
        gone = spool.supersede(ids[-1])
        assert gone == ([ids[-2]] if stop > 1 else [])
    assert spool.pending() == [ids[-1]]
    queued = sum(p.stat().st_size for p in (spool.root / "new").iterdir())
    assert queued <= 1.2 * len(_grow(240).encode())
    stub = json.loads((spool.root / "done" / f"{ids[0]}.json").read_text())
    assert stub["superseded_by"] == ids[1] and stub["session_id"] == "s1" and "transcript" not in stub


def test_other_sessions_directories_formats_and_deltas_are_left_alone(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    a, b = tmp_path / "a" / ".memory", tmp_path / "b" / ".memory"
    keep = [
        submit(_grow(5), memory_dir=a, session_id="other", format="text", spool=spool.root),
        submit(_grow(5), memory_dir=b, session_id="s1", format="text", spool=spool.root),
        submit(_grow(5), memory_dir=a, session_id="s1", format="openai", spool=spool.root),
        submit("user: a delta that is not a prefix\n", memory_dir=a, session_id="s1", format="text", spool=spool.root),
    ]
    newer = submit(_grow(9), memory_dir=a, session_id="s1", format="text", spool=spool.root)
    assert spool.supersede(newer) == []
    assert spool.pending() == [*keep, newer]


def test_a_claimed_older_job_is_not_touched(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    mdir = tmp_path / "app" / ".memory"
    older = submit(_grow(3), memory_dir=mdir, session_id="s1", format="text", spool=spool.root)
    assert spool.claim(older) is not None
    newer = submit(_grow(6), memory_dir=mdir, session_id="s1", format="text", spool=spool.root)
    assert spool.supersede(newer) == []
    assert (spool.root / "cur" / f"{older}.json").is_file()
    assert not (spool.root / "done" / f"{older}.json").exists()
