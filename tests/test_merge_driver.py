"""The git merge driver: a .memory tracked in a project's own repository merges on plain git."""

from __future__ import annotations

import os
import resource
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from dreamd.sync.merge_driver import install_merge_driver
from memory.store.manifest import Manifest
from memory.store.records import sha256_hex
from memory.store.transaction import MemoryStore
from tests.sync_helpers import git, isolate_git, record_set, remember, replace


def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    isolate_git(tmp_path, monkeypatch)
    repo = tmp_path / "app"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    mem = repo / ".memory"
    MemoryStore.init(mem)
    command = f"{shlex.quote(sys.executable)} -m dreamd"
    written = install_merge_driver(mem, command=command)
    assert str(mem / ".gitattributes") in written
    remember(mem, "base")
    remember(mem, "edited")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memory")
    return repo, mem


def test_plain_git_merge_of_two_branches_unites_their_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, mem = project(tmp_path, monkeypatch)
    tracked = git(repo, "ls-files").split()
    assert not any("/.history" in p or p.endswith(".lock") for p in tracked)
    git(repo, "checkout", "-q", "-b", "feature")
    remember(mem, "from-feature")
    replace(mem, "edited", "changed on the feature branch")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "feature memory")
    git(repo, "checkout", "-q", "main")
    remember(mem, "from-main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "main memory")
    git(repo, "merge", "-q", "--no-edit", "feature")
    m = Manifest.loads((mem / "manifest.json").read_bytes(), where="merged")
    assert {e.name for e in m.records} == {"base", "edited", "from-feature", "from-main"}
    assert m.change["actor"] == "merge"
    for e in m.records:
        assert sha256_hex((mem / e.file).read_bytes()) == e.sha256
    store = MemoryStore(mem)
    report = store.reconcile()
    assert report.index_rebuilt and not report.changed
    assert "from-feature" in (mem / "MEMORY.md").read_text() and "from-main" in (mem / "MEMORY.md").read_text()
    edited = next(r for e, r in store.records() if e.name == "edited")
    assert edited.body == "changed on the feature branch\n"
    assert set(record_set(mem)) == {"base", "edited", "from-feature", "from-main"}


def test_without_the_driver_the_same_merge_conflicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, mem = project(tmp_path, monkeypatch)
    (mem / ".gitattributes").unlink()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "no driver")
    git(repo, "checkout", "-q", "-b", "feature")
    remember(mem, "from-feature")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "f")
    git(repo, "checkout", "-q", "main")
    remember(mem, "from-main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "m")
    import subprocess

    proc = subprocess.run(["git", "merge", "--no-edit", "feature"], cwd=repo, capture_output=True)
    assert proc.returncode != 0 and b"CONFLICT" in proc.stdout


def test_the_merge_driver_needs_a_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dreamd.sync.flow import SyncError

    isolate_git(tmp_path, monkeypatch)
    mem = tmp_path / "loose" / ".memory"
    MemoryStore.init(mem)
    with pytest.raises(SyncError, match="not inside a git repository"):
        install_merge_driver(mem)


def test_a_pushed_union_merge_attribute_is_named_in_the_error_and_reinstall_puts_ours_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21 §1: a teammate pushes ``manifest.json merge=union``; the next pull merges the
    manifest as text into invalid JSON. The error says which line did it and how to get out."""
    import subprocess

    from memory.errors import StoreError

    repo, mem = project(tmp_path, monkeypatch)
    with open(mem / ".gitattributes", "a", encoding="utf-8") as f:
        f.write("manifest.json merge=union\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "union")
    git(repo, "checkout", "-q", "-b", "feature")
    remember(mem, "from-feature")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "f")
    git(repo, "checkout", "-q", "main")
    remember(mem, "from-main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "m")
    subprocess.run(["git", "merge", "--no-edit", "feature"], cwd=repo, capture_output=True, check=False)
    with pytest.raises(StoreError) as exc:
        MemoryStore(mem).read()
    message = str(exc.value)
    assert "\n" not in message
    assert "not valid JSON" in message and "'manifest.json merge=union'" in message
    assert "--install-merge-driver" in message
    install_merge_driver(mem, command="dreamd")
    from memory.store.layout import manifest_merge_attribute

    assert manifest_merge_attribute(mem) is None
    assert (mem / ".gitattributes").read_text().rstrip().endswith("MEMORY.md merge=dreamd-index")


def _driver(tmp_path: Path, base: Path, ours: Path, theirs: Path) -> subprocess.CompletedProcess[str]:
    """``dreamd merge-driver %O %A %B`` as git runs it, in a child with a timeout (a FIFO that
    blocks fails the test instead of hanging it) and a 1.5 GiB address space (an unbounded read
    of a 3 GiB file fails with MemoryError instead of eating the machine)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024 * 1024,) * 2)

    env = {k: v for k, v in os.environ.items() if not k.startswith(("DREAMD_", "XDG_"))}
    env.update(HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "cfg"), XDG_STATE_HOME=str(tmp_path / "state"),
               PYTHONPATH=str(Path(__file__).resolve().parents[1]))  # fmt: skip
    return subprocess.run([sys.executable, "-m", "dreamd", "merge-driver", str(base), str(ours), str(theirs)],
                          capture_output=True, text=True, env=env, timeout=60, preexec_fn=limit)  # fmt: skip


def _plant_fifo(p: Path) -> None:
    os.mkfifo(p)


def _plant_link(p: Path) -> None:
    (p.parent / "outside.json").write_bytes(p.parent.joinpath("good.json").read_bytes())
    os.symlink(p.parent / "outside.json", p)


def _plant_sparse(p: Path) -> None:
    with open(p, "wb") as f:
        f.write(p.parent.joinpath("good.json").read_bytes())
        f.truncate(3 * 1024**3)


@pytest.mark.parametrize(
    ("which", "plant", "says"),
    [("base", _plant_fifo, "is a FIFO"), ("theirs", _plant_fifo, "is a FIFO"),
     ("ours", _plant_link, "is a symbolic link"), ("theirs", _plant_sparse, "-byte limit")],
    ids=["base-fifo", "theirs-fifo", "ours-link", "theirs-sparse-3gib"],
)
def test_the_merge_driver_never_follows_waits_on_or_reads_unbounded_git_temp_files(
    tmp_path: Path, which: str, plant: Callable[[Path], None], says: str
) -> None:
    mem = tmp_path / "m" / ".memory"
    MemoryStore.init(mem)
    remember(mem, "base")
    files = tmp_path / "git-temp"
    files.mkdir()
    (files / "good.json").write_bytes((mem / "manifest.json").read_bytes())
    paths = {w: files / f".merge_file_{w}" for w in ("base", "ours", "theirs")}
    for w, p in paths.items():
        if w == which:
            plant(p)
        else:
            p.write_bytes((files / "good.json").read_bytes())
    ours_before = os.lstat(paths["ours"])
    proc = _driver(tmp_path, paths["base"], paths["ours"], paths["theirs"])
    assert proc.returncode == 1, proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"dreamd: {paths[which]}: ") and says in line
    after = os.lstat(paths["ours"])
    assert (after.st_ino, after.st_mode) == (ours_before.st_ino, ours_before.st_mode)  # %A left as it was
