"""The ``git`` executable, run on one repository: one small wrapper so every call has the same
environment (no terminal prompts, C locale, the caller's GIT_DIR/GIT_WORK_TREE ignored) and every
failure becomes one clear line (:class:`SyncError`; :class:`SyncTransient` when worth retrying).

dreamd runs the real ``git`` so users' remotes, SSH config and credential helpers just work.
"""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
from collections.abc import Sequence
from pathlib import Path

from memory.errors import DreamdError, TransientError


class SyncError(DreamdError):
    """Sync cannot go on as asked (bad remote content, rewritten history, refused push)."""


class SyncTransient(SyncError, TransientError):
    """The remote could not be reached or answered with an error: retry later, work goes on."""


class Git:
    """The ``git`` executable run on one repository, with errors turned into one clear line."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = Path(os.path.abspath(workdir))
        env = dict(os.environ)
        env["GIT_TERMINAL_PROMPT"] = "0"
        env["LC_ALL"] = "C"
        env.pop("GIT_DIR", None)
        env.pop("GIT_WORK_TREE", None)
        env.pop("GIT_INDEX_FILE", None)
        self.env = env
        self._identity: list[str] | None = None

    @property
    def git_dir(self) -> Path:
        return self.workdir / ".git"

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        check: bool = True,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            proc = subprocess.run(
                ["git", *args],
                cwd=self.workdir,
                input=input,
                capture_output=True,
                env={**self.env, **(env or {})},
                check=False,
                timeout=timeout,
            )
        except FileNotFoundError:
            raise SyncError("git: executable not found on PATH (dreamd sync runs the real git)") from None
        except subprocess.TimeoutExpired:
            raise SyncTransient(f"{self.workdir}: git {args[0]} did not finish in {timeout:g} s") from None
        if check and proc.returncode != 0:
            raise SyncError(f"{self.workdir}: git {args[0]} failed: {first_line(proc.stderr)}")
        return proc

    def out(self, *args: str, input: bytes | None = None) -> str:
        return self.run(*args, input=input).stdout.decode().strip()

    def rev(self, ref: str) -> str | None:
        proc = self.run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def is_ancestor(self, a: str, b: str) -> bool:
        return self.run("merge-base", "--is-ancestor", a, b, check=False).returncode == 0

    def merge_base(self, a: str, b: str) -> str | None:
        proc = self.run("merge-base", a, b, check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def identity(self) -> list[str]:
        """``-c user.name=… -c user.email=…`` only when the user configured none."""
        if self._identity is None:
            ident: list[str] = []
            if not self.run("config", "user.name", check=False).stdout.strip():
                ident += ["-c", "user.name=dreamd"]
            if not self.run("config", "user.email", check=False).stdout.strip():
                ident += ["-c", f"user.email=dreamd@{socket.gethostname() or 'localhost'}"]
            self._identity = ident
        return self._identity

    def tree(self, commit: str) -> dict[str, tuple[str, str, str]]:
        """path -> (mode, type, object id) of a commit's top-level tree (no recursion)."""
        raw = self.run("ls-tree", "-z", commit).stdout
        out: dict[str, tuple[str, str, str]] = {}
        for item in raw.split(b"\0"):
            if not item:
                continue
            meta, _, path = item.partition(b"\t")
            mode, kind, oid = meta.decode().split()
            out[path.decode("utf-8", "surrogateescape")] = (mode, kind, oid)
        return out

    def sizes(self, oids: Sequence[str]) -> dict[str, int]:
        if not oids:
            return {}
        raw = self.run("cat-file", "--batch-check", input="\n".join(oids).encode() + b"\n").stdout
        out: dict[str, int] = {}
        for line in raw.decode().splitlines():
            parts = line.split()
            if len(parts) == 3:
                out[parts[0]] = int(parts[2])
        return out

    def blobs(self, oids: Sequence[str]) -> dict[str, bytes]:
        """Many blobs in one ``cat-file --batch`` call."""
        if not oids:
            return {}
        raw = self.run("cat-file", "--batch", input="\n".join(oids).encode() + b"\n").stdout
        out: dict[str, bytes] = {}
        pos = 0
        while pos < len(raw):
            nl = raw.index(b"\n", pos)
            header = raw[pos:nl].decode().split()
            if len(header) != 3:
                raise SyncError(f"{self.workdir}: git cat-file: unexpected answer {header!r}")
            oid, size = header[0], int(header[2])
            out[oid] = raw[nl + 1 : nl + 1 + size]
            pos = nl + 1 + size + 1
        return out

    def hash_paths(self, paths: Sequence[Path]) -> list[str]:
        if not paths:
            return []
        data = "\n".join(str(p) for p in paths).encode("utf-8", "surrogateescape") + b"\n"
        return self.out("hash-object", "-w", "--no-filters", "--stdin-paths", input=data).split()

    def hash_bytes(self, data: bytes) -> str:
        return self.out("hash-object", "-w", "--no-filters", "--stdin", input=data)


def first_line(stderr: bytes) -> str:
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    useful = [ln for ln in lines if not ln.startswith(("hint:", "To "))]
    for ln in useful:
        if ln.startswith(("fatal:", "error:", "remote: error:")):
            return ln
    return (useful or lines or ["(no message)"])[0]


def git_blob_id(data: bytes) -> str:
    """The object id git gives ``data`` as a blob (sha1), without running git."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


__all__ = ["Git", "SyncError", "SyncTransient", "first_line", "git_blob_id"]
