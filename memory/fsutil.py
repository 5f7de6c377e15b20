"""Durable file primitives: the only place that knows how to write a file safely.

Every write in dreamd goes through one of these helpers so the crash-safety rules live in one
place: data is fsynced before it becomes visible under its final name, final names are made
visible with ``link`` (never clobbers) or ``os.replace`` (atomic), and the directory is fsynced
after the name changes so the rename itself survives a power cut.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

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


def write_temp(directory: Path, data: bytes, *, mode: int = 0o644, prefix: str = TMP_PREFIX) -> Path:
    """Create a fresh temp file in ``directory`` (O_EXCL), write ``data`` and fsync it."""
    while True:
        tmp = directory / f"{prefix}{os.urandom(8).hex()}"  # not secrets: it costs the hook path imports
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        except FileExistsError:
            continue
        break
    try:
        _write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    return tmp


def write_new(path: Path, data: bytes, *, mode: int = 0o644, sync_dir: bool = True) -> None:
    """Create ``path`` with ``data``; fail with FileExistsError rather than overwrite.

    The bytes are durable before the name appears (temp + fsync + link), so a reader never
    sees a partial file under the final name.
    """
    tmp = write_temp(path.parent, data, mode=mode)
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
) -> None:
    """Atomically replace ``path`` with ``data`` (temp + fsync + os.replace + dir fsync)."""
    tmp = write_temp(path.parent, data, mode=mode)
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

