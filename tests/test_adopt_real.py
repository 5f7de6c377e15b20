"""``dreamd adopt`` on every real memory directory we have (DESIGN §2.4): nothing is lost.

Each directory is copied to ``tmp_path`` (the originals are read-only) and adopted. Afterwards
every original file is still there byte for byte (MEMORY.md is archived into ``.history/`` byte
for byte before the derived index replaces it), and every line a person wrote in the old
MEMORY.md is either a pointer to an adopted file or can be found in some record of the set.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from memory.errors import StoreError, UnmanagedError
from memory.store.adopt import adopt
from memory.store.records import sha256_hex
from memory.store.transaction import HISTORY, INDEX, Change, MemoryStore

LINK = re.compile(r"^\s*[-*]\s*\[[^\]]*\]\(([^)\s#]+)")
LCC = re.compile(r"^\s*[-*]\s*([A-Za-z0-9_.-]+)\s*:\s.*\[(user|feedback|project|reference)\]\s*$")


def real_dirs(shared_data: Path) -> list[Path]:
    dirs = sorted(p for p in (shared_data / "memory_dirs").iterdir() if p.is_dir())
    assert len(dirs) >= 5
    return dirs


def copy_dir(src: Path, dst: Path) -> Path:
    dst.mkdir(parents=True)
    for p in src.iterdir():
        shutil.copyfile(p, dst / p.name)
        (dst / p.name).chmod(0o644)
    return dst


def is_pointer(line: str, files: set[str]) -> bool:
    link = LINK.match(line)
    if link and link.group(1) in files:
        return True
    lcc = LCC.match(line)
    return bool(lcc and f"{lcc.group(1)}.md" in files)


@pytest.fixture(params=["4444J99", "9dianbiqi", "JinxinWu", "Xiangx520", "ZBIGBEAR"])
def adopted(request: pytest.FixtureRequest, shared_data: Path, tmp_path: Path) -> tuple[Path, Path]:
    [src] = [p for p in real_dirs(shared_data) if request.param in p.name]
    return src, copy_dir(src, tmp_path / src.name)


def test_adopt_keeps_every_file_byte_for_byte_and_archives_the_old_index(adopted: tuple[Path, Path]) -> None:
    src, d = adopted
    report = adopt(d)
    assert report.generation == 0
    assert report.malformed == []
    for original in src.iterdir():
        if original.name == INDEX:
            assert report.index_archived is not None
            assert (d / report.index_archived).read_bytes() == original.read_bytes()
            assert report.index_archived.startswith(HISTORY + "/")
        else:
            assert (d / original.name).read_bytes() == original.read_bytes(), original.name
    store = MemoryStore(d)
    manifest = store.read()
    by_file = {e.file: e for e in manifest.records}
    for original in src.glob("*.md"):
        if original.name != INDEX:
            assert by_file[original.name].sha256 == sha256_hex(original.read_bytes())
    for entry in manifest.records:
        assert sha256_hex((d / entry.file).read_bytes()) == entry.sha256
    names = [e.name for e in manifest.records]
    assert len(names) == len(set(names))
    assert manifest.change["actor"] == "adopted"
    # The derived index now lists every record and matches the manifest: reconcile is a no-op.
    index = (d / INDEX).read_text()
    for entry in manifest.records:
        assert f"]({entry.file})" in index
    again = store.reconcile()
    assert not again.changed and again.index_archived is None
    assert store.read().generation == 0


def test_every_free_text_line_of_the_old_index_survives(adopted: tuple[Path, Path]) -> None:
    src, d = adopted
    adopt(d)
    store = MemoryStore(d)
    files = {e.file for e in store.read().records}
    texts = [(d / f).read_text(encoding="utf-8") for f in files]
    old_index = (src / INDEX).read_text(encoding="utf-8")
    free = [ln for ln in old_index.splitlines() if ln.strip() and not is_pointer(ln, files)]
    if all(ln.lstrip().startswith("#") for ln in free):
        free = []  # a bare "# Memory Index" title says nothing (the old file is archived anyway)
    for line in free:
        assert any(line.strip() in t for t in texts), f"lost from MEMORY.md: {line!r}"
    checked = len(free)
    if "4444J99" in src.name:
        assert checked > 60  # sections, bullets, dangling links to the 37 files not copied
    if "9dianbiqi" in src.name:
        assert checked == 1  # the dangling "- [test](test.md) ? test memory" line


def test_real_directory_specifics(shared_data: Path, tmp_path: Path) -> None:
    def find(part: str) -> Path:
        [found] = [p for p in real_dirs(shared_data) if part in p.name]
        return found

    d = copy_dir(find("application-pipeline"), tmp_path / "pipeline")
    report = adopt(d)
    store = MemoryStore(d)
    by_name = store.read().by_name()
    hygiene = store.read_record(by_name["feedback_data_hygiene"])
    assert hygiene.title == "Data hygiene — dynamic vs observation" and hygiene.type == "feedback"
    assert by_name["user_engineering_timeline"].type == "user"
    assert by_name["reference_openclaw_setup_2026-03-31"].type == "reference"
    assert report.notes == ["memory-index-notes"]
    assert len(report.adopted) == 17 + 1

    # learn-claude-code s09 index lines are pointers; nothing else in that index, so no notes.
    d = copy_dir(find("ZBIGBEAR"), tmp_path / "zbigbear")
    report = adopt(d)
    assert sorted(report.adopted) == ["alex_basketball", "alex_volleyball"]
    assert report.notes == []

    # An index that is only a dangling pointer: kept as a note, nothing invented.
    d = copy_dir(find("9dianbiqi"), tmp_path / "broken")
    report = adopt(d)
    assert report.adopted == ["memory-index-notes"]
    note = MemoryStore(d).records()[0][1]
    assert note.body == "- [test](test.md) ? test memory\n"


def test_unmanaged_directory_is_refused_until_adopted(shared_data: Path, tmp_path: Path) -> None:
    src = real_dirs(shared_data)[0]
    d = copy_dir(src, tmp_path / "copy")
    store = MemoryStore(d)
    assert not store.is_managed()
    with pytest.raises(UnmanagedError, match="dreamd adopt"):
        store.read()
    with pytest.raises(UnmanagedError):
        store.commit(Change(add=[]))
    with pytest.raises(StoreError, match="already holds record files"):
        MemoryStore.init(d)
    with pytest.raises(UnmanagedError):
        store.reconcile()
    # Nothing was written to the unmanaged directory, not even a lock file.
    assert {p.name for p in d.iterdir()} == {p.name for p in src.iterdir()}
    adopt(d)
    with pytest.raises(StoreError, match="already managed"):
        adopt(d)


def test_adopt_leaves_a_malformed_file_in_place_and_reports_it(shared_data: Path, tmp_path: Path) -> None:
    src = next(p for p in real_dirs(shared_data) if "Xiangx520" in p.name)
    d = copy_dir(src, tmp_path / "copy")
    (d / "broken.md").write_bytes(b"---\nname: [unclosed\n---\nbody\n")
    (d / "latin1.md").write_bytes(b"---\nname: x\ndescription: caf\xe9\ntype: user\n---\nb\n")
    report = adopt(d)
    assert sorted(f for f, _ in report.malformed) == ["broken.md", "latin1.md"]
    assert any("latin1.md: not valid UTF-8" in why for _, why in report.malformed)
    assert (d / "broken.md").read_bytes() == b"---\nname: [unclosed\n---\nbody\n"
    assert sorted(report.adopted) == ["indentation_preference", "python_file_creation_preference", "user_name"]
    assert [f for f, _ in MemoryStore(d).scan_malformed()] == ["broken.md", "latin1.md"]
