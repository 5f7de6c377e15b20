"""A full disk names the path it could not write (issue 21, "Done means"; DESIGN §2).

``os.write`` and ``fsync`` raise ENOSPC with no file name of their own, so a write that does not
go through :func:`memory.fsutil.write_temp` surfaced as ``dreamd: : No space left on device``
(a first ``dreamd sync`` clone wrote its records with a bare ``os.write``). Each write path is
driven here with ENOSPC injected at ``os.write`` for the files under one directory only (so the
test's own output and git, a child process, are untouched): the store's commit, ``dreamd
submit``, the hook's caches and sync. The hook's caches are also checked on a real, full tmpfs
(they were written through Python file objects, which an ``os.write`` injection never sees).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore
from tests.sync_helpers import bare_remote, isolate_git

REPO = Path(__file__).resolve().parents[1]
ENOSPC = "No space left on device"


@contextlib.contextmanager
def disk_full_under(root: Path, monkeypatch: pytest.MonkeyPatch, *, starting: bytes = b"") -> Iterator[list[str]]:
    """ENOSPC from ``os.write`` for every descriptor of a file below ``root`` (and, with
    ``starting``, only for writes of bytes that start so: the disk fills at that file); yields
    the paths refused, so a test can tell the injection was reached."""
    real = os.write
    refused: list[str] = []
    prefix = os.path.realpath(root) + os.sep

    def write(fd: int, data: bytes | memoryview) -> int:  # type: ignore[override]
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if target.startswith(prefix) and bytes(data[: len(starting)]) == starting:
            refused.append(target)
            raise OSError(errno.ENOSPC, ENOSPC)
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    try:
        yield refused
    finally:
        monkeypatch.setattr(os, "write", real)


def _no_temp_files(directory: Path) -> None:
    left = [str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file() and (".tmp" in p.name)]
    assert left == []


def test_a_commit_names_the_record_it_could_not_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    from dreamd.cli.main import main

    d = tmp_path / "p" / ".memory"
    MemoryStore.init(d)
    with disk_full_under(d, monkeypatch) as refused:
        code = main(["remember", str(d), "--name", "x", "--type", "user", "--description", "x", "--body", "y"])
    assert code == 1 and refused
    err = capsys.readouterr().err
    assert re.fullmatch(rf"dreamd: {re.escape(str(d))}/x-[0-9a-f]{{10}}\.md: {ENOSPC}\n", err), err
    _no_temp_files(d)


def test_submit_names_the_job_it_could_not_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """It named ``spool/tmp/<id>.<random>``, a name nobody will find; now the job's own name."""
    from dreamd.cli.main import main

    d = tmp_path / "code" / "app" / ".memory"
    MemoryStore.init(d)
    spool = tmp_path / "spool"
    config = tmp_path / "config.toml"
    config.write_text(f'[daemon]\nspool = "{spool}"\nroots = ["{tmp_path / "code"}/*/.memory"]\n')
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"type":"user","message":{"role":"user","content":"remember: we deploy on Fridays"}}\n')
    monkeypatch.setenv("DREAMD_CONFIG", str(config))
    monkeypatch.delenv("DREAMD_SPOOL", raising=False)
    with disk_full_under(spool, monkeypatch) as refused:
        code = main(["submit", "--memory-dir", str(d), str(transcript)])
    assert code == 1 and refused
    err = capsys.readouterr().err
    assert re.fullmatch(rf"dreamd: {re.escape(str(spool))}/new/\d{{8}}T\d{{6}}\.\d{{6}}Z-[0-9a-f]{{10}}\.json: {ENOSPC}\n", err), err
    assert os.listdir(spool / "tmp") == [] and os.listdir(spool / "new") == []


def test_the_hook_caches_name_the_file_and_leave_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dreamd.hook.context import save_session
    from dreamd.hook.transcript import read_conversation

    state = tmp_path / "state"
    with disk_full_under(state, monkeypatch) as refused, pytest.raises(OSError) as exc:
        save_session(state, "s1", {"used_bytes": 10, "surfaced": []})
    assert refused and exc.value.filename == str(state / "hook-sessions" / "s1.json")
    assert exc.value.errno == errno.ENOSPC
    session = tmp_path / "s.jsonl"
    session.write_text(
        '{"type":"user","uuid":"u1","sessionId":"s1","message":{"role":"user","content":"remember: ruff before pushing"}}\n'
    )
    with disk_full_under(state, monkeypatch) as refused:
        lines, _ = read_conversation(session, cache_dir=state / "hook-transcripts")
    assert refused and lines  # the cache is lost, the turn is not
    assert os.listdir(state / "hook-transcripts") == []
    _no_temp_files(state)


def test_a_first_sync_clone_names_the_record_it_could_not_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """A clone of 20 records takes the bulk path (one syncfs for all the files), which wrote
    with a bare ``os.write``: ``dreamd: : No space left on device``."""
    from dreamd.cli.main import main
    from dreamd.sync.install import BULK_FILES

    isolate_git(tmp_path, monkeypatch)
    remote = bare_remote(tmp_path / "remote.git")
    src = tmp_path / "src" / ".memory"
    store = MemoryStore.init(src)
    store.commit(Change(add=[make_record(f"fact-{i}", "project", f"Fact {i}", f"Body {i}.") for i in range(BULK_FILES + 4)]))
    assert main(["sync", str(src), "--remote", remote]) == 0
    clone = tmp_path / "clone" / ".memory"
    capsys.readouterr()
    with disk_full_under(clone, monkeypatch, starting=b"---\n") as refused:  # at the first record file
        code = main(["sync", str(clone), "--remote", remote])
    assert code == 1 and refused
    err = capsys.readouterr().err
    assert re.fullmatch(rf"dreamd: {re.escape(str(clone))}/fact-\d+-[0-9a-f]{{10}}\.md: {ENOSPC}\n", err), err
    assert not [n for n in os.listdir(clone) if n.startswith(".tmp-")]


# ----------------------------------------------------------------------------- a real full disk


@pytest.fixture
def full_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs filled to the last block (needs root, as the torture run's disk fault does;
    under CI a machine that cannot mount one fails this test instead of skipping it)."""
    mnt = tmp_path / "full"
    mnt.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", str(mnt)], capture_output=True, text=True)
    if proc.returncode != 0:
        if os.environ.get("CI"):
            pytest.fail(f"cannot mount a tmpfs for the full-disk test: {proc.stderr.strip()}")
        pytest.skip(f"cannot mount a tmpfs: {proc.stderr.strip()}")
    try:
        (mnt / "state" / "dreamd" / "hook-transcripts").mkdir(parents=True, mode=0o700)
        with contextlib.suppress(OSError), open(mnt / "filler", "wb", buffering=0) as f:
            while True:
                f.write(b"\0" * 4096)
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_the_stop_hook_on_a_full_state_disk_still_queues_the_session_and_leaves_no_partial_cache(
    tmp_path: Path, full_tmpfs: Path
) -> None:
    """The state directory (hook caches, hook.log) is full; the spool is on another disk. The
    session is still queued, and the transcript cache leaves nothing behind: the old hook left
    one empty, world-readable ``.<cache>.<pid>.tmp`` per call."""
    project = tmp_path / "p"
    MemoryStore.init(project / ".memory")
    session = tmp_path / "s.jsonl"
    session.write_text(
        '{"type":"user","uuid":"u1","sessionId":"s1","message":{"role":"user","content":"remember: we deploy on Fridays"}}\n'
        '{"type":"assistant","uuid":"a1","sessionId":"s1","message":{"role":"assistant","content":[{"type":"text","text":"Noted."}]}}\n'
    )
    spool = tmp_path / "spool"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DREAMD_", "XDG_", "CLAUDE_"))}
    env.update(PYTHONPATH=str(REPO), HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "cfg"),
               XDG_STATE_HOME=str(full_tmpfs / "state"), DREAMD_SPOOL=str(spool))  # fmt: skip
    payload = {"hook_event_name": "Stop", "session_id": "s1", "cwd": str(project), "transcript_path": str(session)}
    for _ in range(2):
        ran = subprocess.run([sys.executable, "-m", "dreamd", "hook"], input=json.dumps(payload).encode(),
                             capture_output=True, env=env, cwd=tmp_path, timeout=60)  # fmt: skip
        assert ran.returncode == 0, ran.stderr.decode()
    assert len(os.listdir(spool / "new")) >= 1
    assert os.listdir(full_tmpfs / "state" / "dreamd" / "hook-transcripts") == []
    assert shutil.disk_usage(full_tmpfs).free < 8192  # it really was full


def test_the_mcp_servers_early_answer_cache_on_a_full_disk_leaves_no_partial_file(full_tmpfs: Path) -> None:
    """``dreamd mcp`` keeps the SDK's first answers for the next start; on a full disk the old
    write left an empty ``.<cache>.<pid>.tmp`` behind each start. Never raises, leaves nothing."""
    from dreamd.mcp import early

    cache = full_tmpfs / "state" / "dreamd" / "mcp-early.json"
    early.remember(cache, "key", "initialize", {"protocolVersion": "2025-06-18", "serverInfo": {"name": "dreamd"}})
    assert not cache.exists() and sorted(os.listdir(cache.parent)) == ["hook-transcripts"]
