"""What arrives from a remote is validated before anything is written (issue 12, faults)."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from dreamd.sync.flow import SyncError, sync
from memory.store.transaction import MemoryStore
from tests.sync_helpers import bare_remote, git, isolate_git, record_set, remember


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once: a remote, machine a (one record, pushed) and machine b (cloned, one local
    record not pushed yet). Each test gets its own copy: copying is much cheaper than syncing."""
    base = tmp_path_factory.mktemp("hostile-template")
    with pytest.MonkeyPatch.context() as mp:
        isolate_git(base, mp)
        remote = bare_remote(base / "remote.git")
        a = base / "a" / ".memory"
        MemoryStore.init(a)
        remember(a, "base")
        sync(a, remote=remote)
        b = base / "b" / ".memory"
        sync(b, remote=remote)
        remember(b, "local-work")
    return base


@pytest.fixture
def setup(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path, Path]:
    import shutil

    isolate_git(tmp_path, monkeypatch)
    for part in ("remote.git", "a", "b"):
        shutil.copytree(template / part, tmp_path / part, symlinks=True)
    remote = str(tmp_path / "remote.git")
    a, b = tmp_path / "a" / ".memory", tmp_path / "b" / ".memory"
    for d in (a, b):
        git(d, "remote", "set-url", "origin", remote)
    return remote, a, b


def push_by_hand(tmp_path: Path, remote: str, edit: Callable[[Path], None]) -> None:
    """What a person or a broken tool pushes with plain git."""
    work = tmp_path / "hand"
    subprocess.run(["git", "clone", "-q", remote, str(work)], check=True)
    edit(work)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "by hand")
    git(work, "push", "-q", "origin", "HEAD:main")
    subprocess.run(["rm", "-rf", str(work)], check=True)


def add_entry(work: Path, file: str, data: bytes, *, sha: str | None = None, name: str = "evil") -> None:
    (work / file).write_bytes(data)
    m = json.loads((work / "manifest.json").read_text())
    m["generation"] += 1
    m["records"].append({
        "name": name, "type": "project", "description": "x", "file": file,
        "sha256": sha or hashlib.sha256(data).hexdigest(), "created_at": "", "updated_at": "", "sources": [],
    })
    (work / "manifest.json").write_text(json.dumps(m))


def assert_nothing_applied(b: Path, before: bytes) -> None:
    assert (b / "manifest.json").read_bytes() == before
    assert set(record_set(b)) == {"base", "local-work"}


CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "record over the body limit": (
        lambda w: add_entry(w, "big-0123456789.md", b"---\nname: big\ntype: user\ndescription: d\n---\n" + b"x" * 70_000),
        "body over 65536 bytes",
    ),
    "record file over the size cap": (
        lambda w: add_entry(w, "huge-0123456789.md", b"---\nname: huge\n---\n" + b"x" * 300_000),
        "over the 74752-byte limit",
    ),
    "record with a YAML alias bomb": (
        lambda w: add_entry(w, "bomb-0123456789.md", b"---\na: &a [1]\nb: *a\nname: bomb\n---\nbody\n"),
        "aliases are not allowed",
    ),
    "record that is not UTF-8": (
        lambda w: add_entry(w, "bin-0123456789.md", b"---\nname: bin\ntype: user\ndescription: d\n---\n\xff\xfe\n"),
        "not valid UTF-8",
    ),
    "manifest sha256 that does not match the file": (
        lambda w: add_entry(w, "lie-0123456789.md", b"---\nname: lie\ntype: user\ndescription: d\n---\nbody\n", sha="0" * 64),
        "sha256 does not match",
    ),
    "manifest naming a file the commit lacks": (
        lambda w: (add_entry(w, "ghost-0123456789.md", b"x"), (w / "ghost-0123456789.md").unlink()),
        "the commit has no such file",
    ),
    "manifest with a path as file name": (
        lambda w: (w / "manifest.json").write_text((w / "manifest.json").read_text().replace('"file":"', '"file":"../')),
        "is not a bare .md file name",
    ),
    "manifest with git conflict markers": (
        lambda w: (w / "manifest.json").write_text("<<<<<<< HEAD\n{}\n=======\n{}\n>>>>>>> other\n"),
        "conflict markers",
    ),
    "manifest of an unknown format": (
        lambda w: (w / "manifest.json").write_text(json.dumps({"format": 9, "generation": 1})),
        "unsupported manifest format",
    ),
    "file name with a newline": (
        lambda w: add_entry(w, "two\nlines-0123456789.md", b"---\nname: two\ntype: user\ndescription: d\n---\nb\n", name="two"),
        "control characters",
    ),
    "record name ending in a newline": (
        lambda w: add_entry(w, "evil-0123456789.md", b"---\nname: evil\ntype: user\ndescription: d\n---\nb\n", name="evil\n"),
        "is not a valid name",
    ),
    "change summary of the wrong shape": (
        lambda w: (w / "manifest.json").write_text(
            json.dumps({**json.loads((w / "manifest.json").read_text()), "generation": 99, "change": {"added": 5}})
        ),
        "change.added is not a list of names",
    ),
    "consolidated_at that is not a timestamp": (
        lambda w: (w / "manifest.json").write_text(
            json.dumps({**json.loads((w / "manifest.json").read_text()), "generation": 99, "consolidated_at": 12})
        ),
        "consolidated_at 12 is not a timestamp",
    ),
    "commit without a manifest": (lambda w: (w / "manifest.json").unlink(), "has no manifest.json"),
    "two entries with one name": (
        lambda w: add_entry(w, "dup-0123456789.md", b"---\nname: base\ntype: user\ndescription: d\n---\nb\n", name="base"),
        "appears twice",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_remote_content_is_refused_and_nothing_is_applied(
    setup: tuple[str, Path, Path], tmp_path: Path, case: str
) -> None:
    remote, _a, b = setup
    edit, message = CASES[case]
    push_by_hand(tmp_path, remote, edit)
    before = (b / "manifest.json").read_bytes()
    with pytest.raises(SyncError, match=message) as info:
        sync(b)
    assert "\n" not in str(info.value)
    assert_nothing_applied(b, before)
    status_error = json.loads((b / ".git" / "dreamd-sync.json").read_text())["last_error"]
    assert message.split()[0] in status_error


def test_a_hand_edited_but_valid_remote_manifest_is_merged_not_refused(setup: tuple[str, Path, Path], tmp_path: Path) -> None:
    remote, _a, b = setup
    data = b"---\nname: handmade\ntype: reference\ndescription: added by hand\n---\nThe wiki lives at the usual place.\n"
    push_by_hand(tmp_path, remote, lambda w: add_entry(w, "handmade.md", data, name="handmade"))
    report = sync(b)
    assert report.merged and report.pushed
    assert set(record_set(b)) == {"base", "local-work", "handmade"}
    assert (b / "handmade.md").read_bytes() == data


# ----------------------------------------------------------------------------- the local directory (issue 21 §1)

REPO = Path(__file__).resolve().parents[1]
_SYNC_CHILD = (
    "import sys\nfrom pathlib import Path\nfrom dreamd.sync.flow import sync\n"
    "try:\n    sync(Path(sys.argv[1]))\nexcept Exception as exc:\n    print(f'{type(exc).__name__}: {exc}')\n    sys.exit(1)\n"
)


def sync_in_child(directory: Path) -> subprocess.CompletedProcess[str]:
    """``sync`` in a child with a timeout: a read that blocks on a FIFO fails the test, never hangs it."""
    import os
    import sys

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", _SYNC_CHILD, str(directory)], capture_output=True, text=True,
                          env=env, timeout=60)  # fmt: skip


def _incoming(a: Path, tmp_path: Path) -> tuple[str, bytes]:
    remember(a, "incoming")
    sync(a)
    [entry] = [e for e in MemoryStore(a).read().records if e.name == "incoming"]
    return entry.file, (a / entry.file).read_bytes()


@pytest.mark.parametrize("kind", ["fifo", "link to an outside copy"])
def test_a_fifo_or_link_where_a_remote_record_lands_is_never_read_or_taken_as_the_record(
    setup: tuple[str, Path, Path], tmp_path: Path, kind: str
) -> None:
    import os

    _remote, a, b = setup
    file, data = _incoming(a, tmp_path)
    outside = tmp_path / "outside.md"
    outside.write_bytes(data)  # the same bytes: following the link would pass every hash check
    if kind == "fifo":
        os.mkfifo(b / file)
    else:
        (b / file).symlink_to(outside)
    proc = sync_in_child(b)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [entry] = [e for e in MemoryStore(b).read().records if e.name == "incoming"]
    assert entry.file != file  # installed beside the planted file, under a fresh name
    assert not (b / entry.file).is_symlink() and (b / entry.file).read_bytes() == data
    assert (b / file).is_fifo() if kind == "fifo" else (b / file).is_symlink()
    assert outside.read_bytes() == data


def test_a_local_record_swapped_for_a_fifo_is_never_read_or_pushed(setup: tuple[str, Path, Path]) -> None:
    import os

    remote, _a, b = setup
    [entry] = [e for e in MemoryStore(b).read().records if e.name == "local-work"]
    (b / entry.file).unlink()
    os.mkfifo(b / entry.file)
    proc = sync_in_child(b)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [line] = proc.stdout.strip().splitlines()
    assert str(b / entry.file) in line
    assert entry.file not in git(Path(remote), "ls-tree", "-r", "--name-only", "main")


def test_a_fifo_sync_state_file_does_not_hold_sync(setup: tuple[str, Path, Path]) -> None:
    import os

    _remote, _a, b = setup
    (b / ".git" / "dreamd-sync.json").unlink()
    os.mkfifo(b / ".git" / "dreamd-sync.json")
    proc = sync_in_child(b)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert set(record_set(b)) == {"base", "local-work"}
    assert (b / ".git" / "dreamd-sync.json").is_file()
