"""The chaos: faults the harness injects while clients submit and the daemon works.

Everything here acts on the real directories of a run and writes what it did to the chaos
ledger *before or as* it does it, so the checker can tell a loss dreamd caused from one the
chaos caused (a file deleted by hand is the person's doing; the daemon must drop it from the
set with a logged reconcile, not resurrect it or lose anything else).

Faults:

* hostile spool input (:func:`hostile_cases`): oversize, path escapes (``..``, relative,
  a symlink out of the roots), a symlinked job file, non-UTF-8, deeply nested JSON, huge
  numbers, lone surrogates, wrong types and kinds, empty and torn files, names that are not job
  names, jobs for unmanaged or missing directories, YAML-bomb and frontmatter-injection text in
  records, and raw jobs carrying secrets past the client's own redaction;
* hand edits of memory directories (:class:`HandEditor`): well-formed new files (adopted),
  malformed ones (YAML bombs, no frontmatter, non-UTF-8: left in place), in-place edits of
  record files, deletions, foreign edits of ``MEMORY.md``;
* a full disk (:class:`DiskFiller`): one memory directory is a small tmpfs that gets filled
  to the last byte with ballast and freed again.

Daemon and client kills live in :mod:`tests.torture.run`, which owns those processes.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.fsutil import write_temp
from memory.spool.jobs import new_job_id
from tests.torture.clients import fake_secret
from tests.torture.ledger import LedgerWriter

YAML_BOMB = (
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
)


@dataclass(frozen=True)
class Hostile:
    """One hostile spool entry: its file name in ``new/``, how to create it, what must happen."""

    case: str
    file: str
    data: bytes | None
    """The bytes to drop (None: a special entry, see ``link_to``)."""
    expect: str
    """``failed`` (rejected with a reason) or ``done`` (valid: must be applied, secrets redacted)."""
    job_id: str | None = None
    link_to: str | None = None
    special: str | None = None
    """``fifo`` or ``dir``: a FIFO or a directory under a job name."""
    kind: str | None = None
    memory_dir: str | None = None
    name: str | None = None
    description: str | None = None
    """A remember's description: with ``secrets``, what the checker derives the stored name from."""
    secrets: tuple[str, ...] = ()


def _job(kind: str, memory_dir: Any, **fields: Any) -> tuple[str, dict[str, Any]]:
    job_id = new_job_id()
    job: dict[str, Any] = {
        "format": 1,
        "id": job_id,
        "kind": kind,
        "memory_dir": memory_dir,
        "session_id": None,
        "submitted_at": "2026-11-29T10:00:00.000000Z",
        **fields,
    }
    return job_id, job


def _enc(job: dict[str, Any]) -> bytes:
    return json.dumps(job, ensure_ascii=False).encode("utf-8", "surrogatepass")


def hostile_cases(
    rng: random.Random, *, mem_root: Path, managed: list[Path], outside: Path, max_job_bytes: int
) -> list[Hostile]:
    """Every kind of hostile entry once (fresh ids, fresh secrets)."""
    d = str(rng.choice(managed))
    out: list[Hostile] = []

    def add(case: str, kind: str, memory_dir: Any, expect: str, **fields: Any) -> None:
        job_id, job = _job(kind, memory_dir, **fields)
        out.append(Hostile(case, f"{job_id}.json", _enc(job), expect, job_id=job_id, kind=kind,
                           memory_dir=str(memory_dir)))

    transcript = {"format": "text", "content": "User: we deploy on Fridays.\n"}
    add("oversize", "extract", d, "failed",
        transcript={"format": "text", "content": "x" * (max_job_bytes + 1024)})
    add("path-escape-dotdot", "extract", f"{d}/../../outside", "failed", transcript=transcript)
    add("path-relative", "extract", "mem/d0", "failed", transcript=transcript)
    add("path-symlink-out", "extract", f"{mem_root}/d0/.escape-link", "failed", transcript=transcript)
    add("path-nul", "extract", f"{d}\x00/etc", "failed", transcript=transcript)
    add("dir-missing", "remember", f"{mem_root}/ghost",  "failed",
        records=[{"name": "ghost", "type": "user", "description": "d", "body": "b"}])
    add("dir-unmanaged", "remember", f"{mem_root}/unmanaged", "failed",
        records=[{"name": "unmanaged", "type": "user", "description": "d", "body": "b"}])
    add("unknown-kind", "explode", d, "failed")
    add("records-not-list", "remember", d, "failed", records={"name": "x"})
    add("record-extra-field", "remember", d, "failed",
        records=[{"name": "x", "type": "user", "description": "d", "body": "b", "path": "/etc/passwd"}])
    add("record-bad-name", "remember", d, "failed",
        records=[{"name": "../../etc/passwd", "type": "user", "description": "d", "body": "b"}])
    add("forget-lone-surrogate", "forget", d, "failed", names=["\ud800"])
    add("forget-huge-number", "forget", d, "failed", names=[10**400])
    add("transcript-bad-format", "extract", d, "failed", transcript={"format": "pickle", "content": "x"})

    job_id, job = _job("extract", d, transcript=transcript)
    job["format"] = 2
    out.append(Hostile("format-2", f"{job_id}.json", _enc(job), "failed", job_id=job_id))

    # YAML bombs and frontmatter injection as record text: valid jobs; the text must stay text
    n = rng.randrange(10**6)
    name = f"hostile-yaml-{n}"
    job_id, job = _job("remember", d, records=[{
        "name": name, "type": "reference", "description": f"YAML-looking text {n}",
        "body": "---\nname: evil\ntype: user\n---\n" + YAML_BOMB}])
    out.append(Hostile("yaml-bomb-record", f"{job_id}.json", _enc(job), "done", job_id=job_id,
                       kind="remember", memory_dir=d, name=name))

    # secrets that never went through the client's redaction
    s1, s2, s3 = fake_secret(rng), fake_secret(rng), fake_secret(rng)
    job_id, job = _job("extract", d, transcript={
        "format": "text",
        "content": f"User: remember that the prod token is {s1} and always use it.\n"
                   f"Assistant: ok.\nUser: the backup key is {s2}; remember it.\n"})
    out.append(Hostile("secret-raw-extract", f"{job_id}.json", _enc(job), "done", job_id=job_id,
                       kind="extract", memory_dir=d, secrets=(s1, s2)))
    name = f"hostile-secret-{n}"
    job_id, job = _job("remember", d, records=[{
        "name": name, "type": "reference", "description": f"The staging key is {s3}",
        "body": f"Use {s3} for staging deploys."}])
    out.append(Hostile("secret-raw-remember", f"{job_id}.json", _enc(job), "done", job_id=job_id,
                       kind="remember", memory_dir=d, name=name, description=f"The staging key is {s3}",
                       secrets=(s3,)))

    job_id = new_job_id()
    out.append(Hostile("non-utf8", f"{job_id}.json",
                       b'{"format":1,"id":"' + job_id.encode() + b'","kind":"extract","memory_dir":"'
                       + d.encode() + b'","transcript":{"format":"text","content":"\xff\xfe\xc3("}}',
                       "failed", job_id=job_id))
    job_id = new_job_id()
    out.append(Hostile("deep-json", f"{job_id}.json", b"[" * 200_000 + b"]" * 200_000, "failed",
                       job_id=job_id))
    job_id = new_job_id()
    out.append(Hostile("deep-json-object", f"{job_id}.json",
                       b'{"format":1,"id":"' + job_id.encode() + b'","kind":"forget","memory_dir":"'
                       + d.encode() + b'","names":' + b'{"a":' * 50_000 + b"1" + b"}" * 50_000 + b"}",
                       "failed", job_id=job_id))
    job_id = new_job_id()
    out.append(Hostile("not-an-object", f"{job_id}.json", b'"just a string"\n', "failed", job_id=job_id))
    job_id = new_job_id()
    out.append(Hostile("empty-file", f"{job_id}.json", b"", "failed", job_id=job_id))
    job_id, job = _job("remember", d, records=[{"name": "torn", "type": "user", "description": "d", "body": "b"}])
    torn = _enc(job)
    out.append(Hostile("torn-file", f"{job_id}.json", torn[: len(torn) // 2], "failed", job_id=job_id))
    job_id = new_job_id()
    out.append(Hostile("symlink-job-file", f"{job_id}.json", None, "failed", job_id=job_id,
                       link_to="/etc/passwd"))
    job_id = new_job_id()
    out.append(Hostile("fifo-job-file", f"{job_id}.json", None, "failed", job_id=job_id, special="fifo"))
    job_id = new_job_id()
    out.append(Hostile("directory-job-file", f"{job_id}.json", None, "failed", job_id=job_id, special="dir"))
    out.append(Hostile("not-a-job-name", f"notajob-{rng.randrange(10**6)}.txt", b"{}", "failed"))
    return out


def drop(new_dir: Path, tmp_dir: Path, h: Hostile) -> None:
    """Put one hostile entry into ``new/`` the way a (careless) submitter would."""
    target = new_dir / h.file
    if h.link_to is not None:
        os.symlink(h.link_to, target)
        return
    if h.special == "fifo":  # reading it would block forever: must be refused, not opened
        os.mkfifo(target, 0o600)
        return
    if h.special == "dir":
        os.mkdir(target, 0o700)
        return
    assert h.data is not None
    if h.case == "torn-file":  # written in place, not via tmp/ + link: a broken submitter
        with open(target, "xb") as f:
            f.write(h.data)
        return
    tmp = write_temp(tmp_dir, h.data, mode=0o600, prefix="hostile.")
    try:
        os.link(tmp, target)
    finally:
        os.unlink(tmp)


# ---------------------------------------------------------------------------- hand edits


WELL_FORMED = "---\nname: {name}\ndescription: {desc}\ntype: {type}\n---\n{body}\n"
MALFORMED: tuple[tuple[str, bytes], ...] = (
    ("no-frontmatter", b"just some notes, no frontmatter at all\n"),
    ("yaml-bomb", ("---\n" + YAML_BOMB + "name: bomb\ndescription: x\ntype: user\n---\nbody\n").encode()),
    ("non-utf8", b"---\nname: latin\ndescription: caf\xe9\ntype: user\n---\n\xff\xfe\n"),
    ("deep-yaml", ("---\nname: deep\ndescription: " + "[" * 5000 + "]" * 5000 + "\ntype: user\n---\nx\n").encode()),
    ("unclosed", b"---\nname: unclosed\ndescription: never closed\ntype: user\n"),
)


class HandEditor:
    """A person (or another tool) editing memory directories behind dreamd's back."""

    def __init__(self, ledger: LedgerWriter, rng: random.Random) -> None:
        self.ledger = ledger
        self.rng = rng
        self.n = 0

    def _current_files(self, memory_dir: Path) -> list[tuple[str, str]]:
        try:
            data = json.loads((memory_dir / "manifest.json").read_bytes())
            return [(str(r["name"]), str(r["file"])) for r in data.get("records", [])]
        except (OSError, ValueError, KeyError, TypeError):
            return []

    def create(self, memory_dir: Path) -> str:
        self.n += 1
        stem = f"hand-{self.n}-{self.rng.randrange(10**6)}"
        text = WELL_FORMED.format(name=stem, desc=f"A note written by hand ({self.n})",
                                  type=self.rng.choice(("user", "project")), body="Written by a person.")
        self.ledger.write("hand_create", memory_dir=str(memory_dir), file=f"{stem}.md", malformed=False)
        (memory_dir / f"{stem}.md").write_text(text, encoding="utf-8")
        return "create"

    def create_malformed(self, memory_dir: Path) -> str:
        self.n += 1
        case, data = self.rng.choice(MALFORMED)
        file = f"hand-bad-{case}-{self.n}.md"
        self.ledger.write("hand_create", memory_dir=str(memory_dir), file=file, malformed=True, case=case)
        (memory_dir / file).write_bytes(data)
        return f"malformed:{case}"

    def edit(self, memory_dir: Path) -> str | None:
        files = self._current_files(memory_dir)
        if not files:
            return None
        name, file = self.rng.choice(files)
        self.ledger.write("hand_edit", memory_dir=str(memory_dir), file=file, name=name)
        try:
            with open(memory_dir / file, "r+", encoding="utf-8") as f:  # edit, never re-create
                text = f.read()
                if self.rng.random() < 0.15:  # a slip that breaks the frontmatter
                    text = text.replace("---", "- - -", 1)
                f.seek(0)
                f.write(text + f"\nEdited by hand ({self.rng.randrange(10**6)}).\n")
                f.truncate()
        except (FileNotFoundError, UnicodeDecodeError):
            return None
        return "edit"

    def delete(self, memory_dir: Path) -> str | None:
        files = self._current_files(memory_dir)
        if not files:
            return None
        name, file = self.rng.choice(files)
        self.ledger.write("hand_delete", memory_dir=str(memory_dir), file=file, name=name)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(memory_dir / file)
        return "delete"

    def symlink(self, memory_dir: Path) -> str:
        """A ``.md`` symlink to a well-formed record outside the directory (or to /etc/passwd)."""
        self.n += 1
        outside = memory_dir.parent.parent / "outside-notes"
        outside.mkdir(exist_ok=True)
        stem = f"linked-{self.n}-{self.rng.randrange(10**6)}"
        target = outside / f"{stem}.md"
        target.write_text(WELL_FORMED.format(name=stem, desc="A note that lives outside the directory",
                                             type="reference", body="Outside content."), encoding="utf-8")
        if self.rng.random() < 0.3:
            target = Path("/etc/passwd")
        self.ledger.write("hand_symlink", memory_dir=str(memory_dir), file=f"{stem}.md", target=str(target))
        os.symlink(target, memory_dir / f"{stem}.md")
        return "symlink"

    def edit_index(self, memory_dir: Path) -> str:
        self.ledger.write("hand_edit_index", memory_dir=str(memory_dir), file="MEMORY.md")
        with contextlib.suppress(FileNotFoundError), open(memory_dir / "MEMORY.md", "a", encoding="utf-8") as f:
            f.write("\n- a line a person added to the index by hand\n")
        return "edit-index"


# ---------------------------------------------------------------------------- disk full


def try_mount_tmpfs(path: Path, size: str) -> bool:
    """Mount a tmpfs of ``size`` on ``path`` (needs root); False when not possible."""
    import subprocess

    path.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path)],
                              capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def umount(path: Path) -> None:
    import subprocess

    subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=10)


def make_room(path: Path, want: int) -> str | None:
    """Grow the tmpfs on ``path`` so at least ``want`` bytes are free (the operator freeing
    space before the final drain). Returns what was done, or None when nothing had to be."""
    import subprocess

    st = os.statvfs(path)
    free = st.f_bavail * st.f_frsize
    if free >= want:
        return None
    size = st.f_blocks * st.f_frsize + 2 * want
    proc = subprocess.run(["mount", "-o", f"remount,size={size}", str(path)], capture_output=True, timeout=10)
    after = os.statvfs(path)
    return (f"remount to {size >> 20} MiB: exit {proc.returncode} {proc.stderr.decode().strip()}; "
            f"free {free >> 10} KiB before, {(after.f_bavail * after.f_frsize) >> 10} KiB after")


class DiskFiller:
    """Fills a small filesystem to the last byte with ballast, and frees it again."""

    def __init__(self, directory: Path, ledger: LedgerWriter) -> None:
        self.directory = directory
        self.ledger = ledger
        self.files: list[Path] = []
        self.full = False

    def fill(self) -> int:
        """Write ballast until the filesystem refuses even one more byte; returns bytes written."""
        written = 0
        path = self.directory / f".ballast-{len(self.files)}"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        self.files.append(path)
        chunk = b"\0" * (1 << 20)
        try:
            for size in (1 << 20, 1 << 12, 1):
                try:
                    while True:
                        written += os.write(fd, chunk[:size])
                except OSError as exc:
                    if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                        raise
        finally:
            os.close(fd)
        self.full = True
        self.ledger.write("disk_full", memory_dir=str(self.directory), bytes=written)
        return written

    def free(self) -> None:
        for path in self.files:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        self.files.clear()
        if self.full:
            self.ledger.write("disk_free", memory_dir=str(self.directory))
        self.full = False
