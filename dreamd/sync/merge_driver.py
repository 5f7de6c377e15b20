"""The git merge driver for ``manifest.json``: a ``.memory`` directory tracked in a project's own
repository merges on a plain ``git pull`` with the same three-way manifest merge as ``dreamd
sync`` (:mod:`memory.store.merge`). Record files merge on their own (new, uniquely named files);
MEMORY.md keeps one side's copy and is rebuilt by the next reconcile.

A ``.gitattributes`` line pushed after dreamd's (``manifest.json merge=union``) wins in git, and
git then merges the manifest as text into invalid JSON: the store names that line in the error
it raises reading such a manifest (:func:`memory.store.layout.manifest_merge_attribute`), and
:func:`install_merge_driver` puts dreamd's line last again.
"""

from __future__ import annotations

from pathlib import Path

from dreamd.sync.flow import GITIGNORE
from dreamd.sync.git import Git, SyncError
from memory.fsutil import open_regular, replace_atomic
from memory.store.index import render_index
from memory.store.layout import MAX_MANIFEST_BYTES, manifest_merge_attribute
from memory.store.manifest import Manifest, utcnow_iso
from memory.store.merge import merge_manifests
from memory.store.records import sha256_hex

GITATTRIBUTES = """\
# dreamd: manifest.json gets the three-way manifest merge; MEMORY.md is derived (dreamd rebuilds it)
manifest.json merge=dreamd-manifest
MEMORY.md merge=dreamd-index
"""


def merge_driver(base_path: Path, ours_path: Path, theirs_path: Path) -> int:
    """``git merge`` driver for ``manifest.json`` (``%O %A %B``): the merged manifest goes to %A.

    For a ``.memory`` directory tracked in a project's own repository, where git itself merges
    the record files (new, uniquely named files never conflict). Exit 0 merged, 1 refused (git
    then reports a conflict and leaves %A as it was). ``index_sha256`` is set for the index the
    merged set renders to; git keeps one side's MEMORY.md (``merge=dreamd-index`` is ``true``),
    which the next reconcile sees as stale and rebuilds.
    """

    def load(path: Path, *, allow_empty: bool) -> Manifest | None:
        # git's temp files are read like every file of a directory dreamd does not trust: a
        # link is not followed, a FIFO not waited on, a file over the manifest cap not read
        # (UnsafeFileError, one line, exit 1: git then reports a conflict).
        data = open_regular(path, max_bytes=MAX_MANIFEST_BYTES)
        if allow_empty and not data.strip():
            return None
        return Manifest.loads(data, where=str(path))

    base = load(base_path, allow_empty=True)
    ours = load(ours_path, allow_empty=False)
    theirs = load(theirs_path, allow_empty=False)
    assert ours is not None and theirs is not None
    result = merge_manifests(base, ours, theirs, now=utcnow_iso(), note="merged by the git merge driver")
    m = result.manifest
    # git merges the record files itself: two versions of one file under two names cannot both
    # exist, so the renamed one is dropped here and git's own merge of that file decides.
    files: set[str] = set()
    m.records = [e for e in m.records if not (e.file in files or files.add(e.file))]  # type: ignore[func-returns-value]
    m.index_sha256 = sha256_hex(render_index(m.records))
    replace_atomic(ours_path, m.dumps(), sync_dir=False)
    return 0


def install_merge_driver(memory_dir: Path, *, command: str = "dreamd") -> list[str]:
    """Configure the merge driver in the repository that tracks ``memory_dir`` (its
    ``.git/config``: git never takes drivers from a repository's content, so every clone runs
    this once) and mark ``memory_dir``'s files to use it; also a ``.gitignore`` there so
    ``.history/`` and the locks stay out of the project's commits."""
    probe = Git(memory_dir)
    proc = probe.run("rev-parse", "--show-toplevel", check=False)
    if proc.returncode != 0:
        raise SyncError(f"{memory_dir}: not inside a git repository; the merge driver is for a .memory a project repository tracks")
    git = Git(Path(proc.stdout.decode().strip()))
    git.run("config", "merge.dreamd-manifest.name", "dreamd three-way manifest merge")
    git.run("config", "merge.dreamd-manifest.driver", f"{command} merge-driver %O %A %B")
    git.run("config", "merge.dreamd-index.name", "dreamd: MEMORY.md is derived, keep ours")
    git.run("config", "merge.dreamd-index.driver", "true")
    attrs = memory_dir / ".gitattributes"
    try:
        existing = open_regular(attrs, max_bytes=256 * 1024).decode("utf-8")
    except FileNotFoundError:
        existing = ""
    # A line someone pushed after ours (``manifest.json merge=union``) wins in git and has every
    # pull merge the manifest as text: ours goes last again, so the last matching line is ours.
    if "merge=dreamd-manifest" not in existing or manifest_merge_attribute(memory_dir) is not None:
        replace_atomic(attrs, (existing + ("\n" if existing and not existing.endswith("\n") else "") + GITATTRIBUTES).encode())
    written = [str(attrs)]
    ignore = memory_dir / ".gitignore"
    if not ignore.exists():
        replace_atomic(ignore, GITIGNORE.replace("/.*\n", "/.*\n!/.gitattributes\n!/.gitignore\n").encode())
        written.append(str(ignore))
    return written


__all__ = ["GITATTRIBUTES", "install_merge_driver", "merge_driver"]
