"""File primitives: the only place that knows how to write a file safely and read one warily.

Every write in dreamd goes through one of these helpers so the crash-safety rules live in one
place: data is fsynced before it becomes visible under its final name, final names are made
visible with ``link`` (never clobbers) or ``os.replace`` (atomic), and the directory is fsynced
after the name changes so the rename itself survives a power cut. A write that fails (a full
disk) names the path it was writing, never just the error.

Every read of a file inside a directory dreamd does not trust (a memory directory arrives by
git, from a teammate or an attacker; a spool may be someone else's) goes through
:func:`open_regular`, and every directory dreamd writes into below one through
:func:`ensure_dir` / :func:`check_dir` (DESIGN §2, "A directory is not trusted"):

* a symbolic link is never followed (``O_NOFOLLOW``; ``lstat`` for directories);
* only a regular file is read, and opening never blocks (``O_NONBLOCK`` until ``fstat`` says
  it is regular: a FIFO or a device under a dreamd file name is refused, not waited on);
* every read has a size cap, checked on ``fstat`` before a byte is read (a 3 GiB sparse file
  costs one syscall) and again while reading (a file that grows);
* a file read is owned by this user (a record, manifest or ``MEMORY.md`` another uid planted
  in a shared or group-writable directory is refused like a link; git writes what it checks out
  as the user who runs it, so a synced directory passes; root is held to the same rule and
  reads only files root owns);
* a directory where dreamd keeps its own state is a real directory owned by this user (and,
  for the spool, writable by no one else).

A file or directory that fails is refused with :class:`~memory.errors.UnsafeFileError`: one
line naming the path and what is wrong with it. Nothing here imports more than ``os``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

from memory.errors import UnsafeFileError

TMP_PREFIX = ".tmp-"


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """fsync a directory so renames and links inside it are durable."""
    fd = os.open(os.fspath(path), os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def write_temp(
    directory: Path,
    data: bytes,
    *,
    mode: int = 0o644,
    prefix: str = TMP_PREFIX,
    final: Path | None = None,
    durable: bool = True,
) -> Path:
    """Create a fresh temp file in ``directory`` (O_EXCL), write ``data`` and fsync it.

    An OSError from writing or syncing (ENOSPC, EIO, EDQUOT) carries no file name of its own;
    it is raised again naming ``final`` (the name the bytes were meant for), else the temp file,
    and the temp file is removed. ``durable=False`` skips the fsync: a cache that is rebuilt
    when lost, or a caller that makes many files durable with one ``syncfs``.
    """
    while True:
        tmp = directory / f"{prefix}{os.urandom(8).hex()}"  # not secrets: it costs the hook path imports
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
        except FileExistsError:
            continue
        break
    try:
        _write_all(fd, data)
        if durable:
            os.fsync(fd)
    except BaseException as exc:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename is None:
            raise OSError(exc.errno, exc.strerror or str(exc), str(final or tmp)) from None
        raise
    os.close(fd)
    return tmp


def write_new(path: Path, data: bytes, *, mode: int = 0o644, sync_dir: bool = True) -> None:
    """Create ``path`` with ``data``; fail with FileExistsError rather than overwrite.

    The bytes are durable before the name appears (temp + fsync + link), so a reader never
    sees a partial file under the final name.
    """
    tmp = write_temp(path.parent, data, mode=mode, final=path)
    try:
        os.link(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    if sync_dir:
        fsync_dir(path.parent)


def replace_atomic(
    path: Path,
    data: bytes,
    *,
    mode: int = 0o644,
    sync_dir: bool = True,
    before_replace: Callable[[], None] | None = None,
    durable: bool = True,
) -> None:
    """Atomically replace ``path`` with ``data`` (temp + fsync + os.replace + dir fsync);
    ``durable=False`` and ``sync_dir=False`` for a cache (atomic, not flushed: rebuilt when lost)."""
    tmp = write_temp(path.parent, data, mode=mode, final=path, durable=durable)
    try:
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if sync_dir:
        fsync_dir(path.parent)


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISLNK, "a symbolic link"),
)


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words ("a FIFO", "a symbolic link"), from its ``st_mode``."""
    return next((text for test, text in _KINDS if test(mode)), "not a regular file")


_kind = file_kind


def open_regular(
    path: str | os.PathLike[str],
    *,
    max_bytes: int,
    dir_fd: int | None = None,
    oversize: str = "refuse",
    single_link: bool = False,
    owned: bool = True,
) -> bytes:
    """The bytes of the regular file ``path`` (relative to ``dir_fd`` when given), at most
    ``max_bytes`` of them.

    Never follows a symbolic link (``O_NOFOLLOW``), never blocks opening a FIFO
    (``O_NONBLOCK``, cleared once ``fstat`` shows a regular file), and checks the size before
    reading. ``oversize="refuse"`` raises for a file over ``max_bytes``; ``"truncate"`` returns
    its first ``max_bytes`` (callers that want a prefix or a tail bound themselves).
    ``single_link`` refuses a file with more than one hard link (its bytes may belong to a file
    outside the directory). ``owned`` (the default) refuses a file another uid owns.
    UnsafeFileError names the path and the reason; FileNotFoundError and other OSErrors (naming
    the path) pass through.
    """
    _, data = read_regular_stat(
        path, max_bytes=max_bytes, dir_fd=dir_fd, oversize=oversize, single_link=single_link, owned=owned
    )
    assert data is not None  # no ``unchanged`` given: always read
    return data


def read_regular_stat(
    path: str | os.PathLike[str],
    *,
    max_bytes: int,
    dir_fd: int | None = None,
    oversize: str = "refuse",
    single_link: bool = False,
    unchanged: Callable[[os.stat_result], bool] | None = None,
    owned: bool = True,
) -> tuple[os.stat_result, bytes | None]:
    """:func:`open_regular` that also returns the file's ``fstat``; with ``unchanged``, the
    bytes are not read (None) when it says the file is one the caller already has (a cache
    keyed on inode, mtime and size)."""
    where = os.fspath(path)
    fd, st = open_checked(path, max_bytes=max_bytes, dir_fd=dir_fd, oversize=oversize, single_link=single_link, owned=owned)
    try:
        if unchanged is not None and unchanged(st):
            return st, None
        chunks: list[bytes] = []
        left = max_bytes + (1 if oversize == "refuse" else 0)
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
    except OSError as exc:
        if exc.filename is None:
            raise OSError(exc.errno, exc.strerror or str(exc), where) from None
        raise
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise UnsafeFileError(f"{where}: grew over the {max_bytes}-byte limit while read; not read")
    return st, data


def open_checked(
    path: str | os.PathLike[str],
    *,
    max_bytes: int,
    dir_fd: int | None = None,
    oversize: str = "refuse",
    single_link: bool = False,
    owned: bool = True,
) -> tuple[int, os.stat_result]:
    """A blocking read-only descriptor of the regular file ``path`` and its ``fstat``, after every
    check of :func:`open_regular` that needs no byte read (link, kind, owner, hard links, size);
    for a reader that reads only parts of a file (a manifest's head and tail). The caller
    closes it; UnsafeFileError names the path and the reason."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    where = printable(path)
    try:
        fd = os.open(path, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFileError(f"{where}: is a symbolic link; dreamd does not follow links here") from None
        if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP):  # a socket (or a device) cannot be opened
            with contextlib.suppress(OSError):
                mode = os.lstat(path, dir_fd=dir_fd).st_mode
                if not stat.S_ISREG(mode):
                    raise UnsafeFileError(f"{where}: is {_kind(mode)}, not a regular file; left alone") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFileError(f"{where}: is {_kind(st.st_mode)}, not a regular file; left alone")
        if owned and st.st_uid != (euid := os.geteuid()):
            raise UnsafeFileError(f"{where}: owned by uid {st.st_uid}, not by this user (uid {euid}); not read")
        if single_link and st.st_nlink > 1:
            raise UnsafeFileError(
                f"{where}: has {st.st_nlink} hard links; its bytes may be a file outside this directory, so it is not taken in"
            )
        if st.st_size > max_bytes and oversize == "refuse":
            raise UnsafeFileError(f"{where}: is {st.st_size} bytes, over the {max_bytes}-byte limit; not read")
        os.set_blocking(fd, True)
    except BaseException as exc:
        os.close(fd)
        if isinstance(exc, OSError) and exc.filename is None:
            raise OSError(exc.errno, exc.strerror or str(exc), where) from None
        raise
    return fd, st


def read_regular_or_none(path: str | os.PathLike[str], *, max_bytes: int, oversize: str = "refuse") -> bytes | None:
    """:func:`open_regular`, None when the file is missing."""
    try:
        return open_regular(path, max_bytes=max_bytes, oversize=oversize)
    except (FileNotFoundError, NotADirectoryError):
        return None


TEXT_MAX_REPLACEMENTS = 3
"""Invalid UTF-8 a text may hold and still be text: a cut at a byte cap splits one sequence."""


def text_problem(text: str) -> str | None:
    """Why ``text`` (decoded with ``errors="replace"``) is not text to put before a model, or
    None: NUL bytes, other control characters (tab, line breaks and form feed are text), or more
    than :data:`TEXT_MAX_REPLACEMENTS` invalid UTF-8 sequences. A file dreamd did not write may
    be a binary or a terminal escape planted to steer the agent (DESIGN §2)."""
    import re

    if "\0" in text:
        return f"holds {min(text.count(chr(0)), 10**6)} NUL byte(s), not text"
    control = re.search(r"[\x01-\x08\x0b\x0e-\x1f\x7f-\x9f]", text)
    if control is not None:
        return f"holds control character U+{ord(control.group()):04X}, not text"
    bad = text.count("\ufffd")
    if bad > TEXT_MAX_REPLACEMENTS:
        return f"is not valid UTF-8 ({bad} invalid sequences), not text"
    return None


def printable(name: object) -> str:
    """``name`` for a message line: control characters escaped (``\\n``, ``\\x1b``), so a file
    name holding a line break still prints as one line; no quotes, no ``PosixPath(...)``."""
    text = os.fspath(name) if isinstance(name, os.PathLike) else str(name)
    if text.isprintable():
        return text
    with contextlib.suppress(UnicodeError):  # bytes that are not UTF-8 as ``\\xe9``
        text = os.fsencode(text).decode("utf-8", "backslashreplace")
    return "".join(
        ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape", "backslashreplace").decode("ascii")
        for ch in text
    )


def check_dir(path: str | os.PathLike[str], *, private: bool = False, owned: bool = True) -> bool:
    """Whether ``path`` exists as a directory dreamd may use: False when it is missing;
    UnsafeFileError when it is a symbolic link or not a directory, when ``owned`` and another
    user owns it, or when ``private`` and group or others may write to it."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    describe_dir(path, st, private=private, owned=owned)
    return True


def describe_dir(path: str | os.PathLike[str], st: os.stat_result, *, private: bool, owned: bool) -> None:
    """The checks of :func:`check_dir` on an ``lstat`` result already taken."""
    where = os.fspath(path)
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeFileError(f"{where}: is a symbolic link; dreamd keeps its files only in a real directory (remove the link)")
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeFileError(f"{where}: is {_kind(st.st_mode)}, where dreamd expects a directory")
    euid = os.geteuid()
    if owned and st.st_uid != euid:
        raise UnsafeFileError(f"{where}: owned by uid {st.st_uid}, not by this user (uid {euid}); refused")
    if private and st.st_mode & 0o022:
        raise UnsafeFileError(
            f"{where}: writable by group or others (mode {stat.S_IMODE(st.st_mode):o}); run chmod go-w on it"
        )


def ensure_dir(path: str | os.PathLike[str], *, mode: int = 0o755, private: bool = False, owned: bool = True) -> Path:
    """``path`` as a directory dreamd may write into (:func:`check_dir`), created (and made
    durable in its parent) when missing. Its parent is the caller's to trust."""
    p = Path(path)
    if not check_dir(p, private=private, owned=owned):
        with contextlib.suppress(FileExistsError):
            os.mkdir(p, mode)
            fsync_dir(p.parent)
        check_dir(p, private=private, owned=owned)
    return p
