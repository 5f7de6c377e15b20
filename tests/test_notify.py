"""sd_notify: exact datagrams on a test-owned AF_UNIX socket; no socket means no-op."""

from __future__ import annotations

import os
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dreamd.notify import Notifier, watchdog_interval


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    """A bound datagram socket standing in for the service manager's NOTIFY_SOCKET."""
    with tempfile.TemporaryDirectory(prefix="dn") as short:
        # sun_path holds ~107 bytes; a deep tmp_path would not fit.
        path = tmp_path / "n.sock" if len(str(tmp_path)) < 90 else Path(short) / "n.sock"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(str(path))
        sock.settimeout(2.0)
        try:
            yield sock, str(path)
        finally:
            sock.close()


def test_ready_status_watchdog_stopping_send_exact_bytes(
    receiver: tuple[socket.socket, str],
) -> None:
    sock, path = receiver
    n = Notifier.from_env({"NOTIFY_SOCKET": path})
    assert n.enabled
    assert n.ready() is True
    assert sock.recv(4096) == b"READY=1\n"
    assert n.status("2 dirs, 0 jobs queued") is True
    assert sock.recv(4096) == b"STATUS=2 dirs, 0 jobs queued\n"
    assert n.watchdog() is True
    assert sock.recv(4096) == b"WATCHDOG=1\n"
    assert n.stopping() is True
    assert sock.recv(4096) == b"STOPPING=1\n"
    assert n.ready("serving") is True
    assert sock.recv(4096) == b"READY=1\nSTATUS=serving\n"


def test_reloading_carries_monotonic_usec_close_to_now(receiver: tuple[socket.socket, str]) -> None:
    sock, path = receiver
    before = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    assert Notifier.from_env({"NOTIFY_SOCKET": path}).reloading() is True
    after = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    data = sock.recv(4096)
    lines = data.decode().split("\n")
    assert lines[0] == "RELOADING=1"
    assert lines[1].startswith("MONOTONIC_USEC=")
    assert before <= int(lines[1].removeprefix("MONOTONIC_USEC=")) <= after
    assert lines[2:] == [""]


def test_status_with_newline_cannot_inject_a_field(receiver: tuple[socket.socket, str]) -> None:
    sock, path = receiver
    Notifier.from_env({"NOTIFY_SOCKET": path}).status("line one\nREADY=1")
    assert sock.recv(4096) == b"STATUS=line one READY=1\n"


def test_abstract_namespace_socket() -> None:
    name = f"dreamd-test-{os.getpid()}-{time.monotonic_ns()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(2.0)
    try:
        n = Notifier.from_env({"NOTIFY_SOCKET": "@" + name})
        assert n.address == "\0" + name
        assert n.watchdog() is True
        assert sock.recv(4096) == b"WATCHDOG=1\n"
    finally:
        sock.close()


def test_without_notify_socket_every_call_is_a_noop() -> None:
    n = Notifier.from_env({})
    assert not n.enabled
    assert n.ready() is False
    assert n.status("x") is False
    assert n.watchdog() is False
    assert n.stopping() is False
    assert n.reloading() is False


def test_unsupported_address_is_disabled() -> None:
    assert Notifier.from_env({"NOTIFY_SOCKET": "vsock:2:1234"}).enabled is False


def test_failed_send_returns_false_and_never_raises(tmp_path: Path) -> None:
    n = Notifier.from_env({"NOTIFY_SOCKET": str(tmp_path / "gone.sock")})
    assert n.enabled
    assert n.ready() is False
    assert n.watchdog() is False


def test_a_receiver_that_never_reads_cannot_hang_the_sender(
    receiver: tuple[socket.socket, str],
) -> None:
    _, path = receiver
    try:
        queue = int(Path("/proc/sys/net/unix/max_dgram_qlen").read_text())
    except (OSError, ValueError):
        queue = 10
    n = Notifier(path, timeout=0.02)
    started = time.monotonic()
    results = [n.watchdog() for _ in range(min(queue, 500) + 5)]  # past the kernel's queue
    assert time.monotonic() - started < 5
    assert results[0] is True
    assert results[-1] is False


def test_watchdog_interval_is_half_of_watchdog_usec() -> None:
    assert watchdog_interval({"WATCHDOG_USEC": "60000000"}) == 30.0
    assert watchdog_interval({"WATCHDOG_USEC": "1000000"}) == 0.5
    assert watchdog_interval({}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "0"}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "soon"}) is None


def test_watchdog_interval_respects_watchdog_pid() -> None:
    env = {"WATCHDOG_USEC": "20000000", "WATCHDOG_PID": str(os.getpid())}
    assert watchdog_interval(env) == 10.0
    assert watchdog_interval(env, pid=os.getpid() + 1) is None
    assert watchdog_interval({"WATCHDOG_USEC": "20000000", "WATCHDOG_PID": "x"}) is None


def _read_until(sock: socket.socket, wanted: bytes, deadline: float) -> list[bytes]:
    """Datagrams received until one contains ``wanted`` (or the deadline passes)."""
    got: list[bytes] = []
    while time.monotonic() < deadline:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            data = sock.recv(4096)
        except TimeoutError:
            break
        got.append(data)
        if wanted in data:
            return got
    raise AssertionError(f"no {wanted!r} datagram; got {got!r}")


def test_real_daemon_speaks_sd_notify_through_its_lifecycle(
    tmp_path: Path, receiver: tuple[socket.socket, str]
) -> None:
    """`dreamd run` under a fake service manager: READY with STATUS, WATCHDOG pings at half
    of WATCHDOG_USEC, RELOADING+MONOTONIC_USEC then READY on SIGHUP, STOPPING on SIGTERM."""
    import signal
    import subprocess
    import sys

    sock, path = receiver
    repo = Path(__file__).resolve().parents[1]
    config = tmp_path / "config.toml"
    config.write_text(
        f'[daemon]\nspool = "{tmp_path / "spool"}"\nroots = ["{tmp_path}/code/*/.memory"]\n'
        'log_format = "json"\n'
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(repo),
        "NOTIFY_SOCKET": path,
        "WATCHDOG_USEC": "400000",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "dreamd", "run", "--config", str(config)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        got = _read_until(sock, b"READY=1", time.monotonic() + 30)
        ready = got[-1].decode()
        assert ready.startswith("READY=1\nSTATUS=0 queued, ")
        _read_until(sock, b"WATCHDOG=1", time.monotonic() + 5)
        proc.send_signal(signal.SIGHUP)
        reloading = _read_until(sock, b"RELOADING=1", time.monotonic() + 10)[-1].decode()
        assert reloading.startswith("RELOADING=1\nMONOTONIC_USEC=")
        _read_until(sock, b"READY=1", time.monotonic() + 10)
        proc.send_signal(signal.SIGTERM)
        _read_until(sock, b"STOPPING=1", time.monotonic() + 10)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()
